"""Ascend HAMi-mode node annotations: the device register and the `hami-vnpu-core` flag
(docs/ascend.md#ascend-hami-keys, docs/device-plugins.md#ascend-plugin-annotations).

Node side (written by the Ascend device plugin every 30 s, `internal/server/register.go`):

- `hami.io/node-register-<CW>`: `json.Marshal([]DeviceInfo)` with `omitempty` — `{"id","index","count",
  "devmem","devcore","type","numa","health","custominfo":{"NetworkID":n}}`; zero values are dropped, so a
  missing `health` is false and a missing `index` is 0. Volcano `json.Unmarshal`s it: any type error,
  invalid JSON or an empty list and the chip type is absent from the node; devices are keyed by `id`
  (a duplicate id hides the earlier device); a `null` element is dereferenced (scheduler panic).
- `hami-vnpu-core`: `"true"` / `"false"`; present, it overrides `vnpus.hamiVnpuCore` for the node and
  only the exact string `true` counts as true.

Pod allocations are in `ascend_pod`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from vgpuctl.core.codecs._common import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    UINT_MAX,
    CodecProblem,
    Problems,
    go_json_bool,
    go_json_dumps,
    go_json_int,
    go_json_loads,
    go_json_str,
    json_field,
    json_text,
    not_a_string,
    quote,
)
from vgpuctl.core.facts import AscendDevice

VGN015 = "VGN015"


# ---- node register -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AscendRegister:
    common_word: str
    devices: tuple[AscendDevice, ...]
    problems: Problems
    usable: bool  # Volcano registers this chip type on the node


_INT_FIELDS = (  # (JSON key, lo, hi) as typed in Go's DeviceInfo
    ("index", 0, UINT_MAX),
    ("count", INT32_MIN, INT32_MAX),
    ("devmem", INT32_MIN, INT32_MAX),
    ("devcore", INT32_MIN, INT32_MAX),
    ("numa", INT64_MIN, INT64_MAX),
)


def decode_ascend_register(value: object, common_word: str) -> AscendRegister:
    """Decode `hami.io/node-register-<common_word>`; never raises. `None` (absent) → unusable, no problems."""
    key = f"hami.io/node-register-{common_word}"
    if value is None:
        return AscendRegister(common_word, (), (), False)
    if not isinstance(value, str):
        return AscendRegister(common_word, (), (not_a_string(VGN015, key, value),), False)
    data, error = go_json_loads(value)
    if error is not None:
        return _unusable(common_word, f"{key} is not valid JSON ({error}); Volcano ignores {common_word} on this node")
    if data is None or data == []:
        return _unusable(common_word, f"{key} lists no device; Volcano ignores {common_word} on this node")
    if not isinstance(data, list):
        kind = type(data).__name__
        return _unusable(common_word, f"{key} is a JSON {kind}, not a list; Volcano ignores {common_word} on this node")
    devices: list[AscendDevice] = []
    problems: list[CodecProblem] = []
    usable = True
    seen: dict[str, int] = {}
    for n, item in enumerate(data, start=1):
        if item is None:
            problems.append(CodecProblem(VGN015, f"{key}: device {n} is null; Volcano dereferences it and panics"))
            usable = False
            continue
        if not isinstance(item, dict):
            problems.append(
                CodecProblem(VGN015, f"{key}: device {n} is not an object; Volcano ignores {common_word} on this node")
            )
            usable = False
            continue
        device, errors = _decode_device(item, common_word)
        for error in errors:
            problems.append(
                CodecProblem(VGN015, f"{key}: device {n}: {error}; Volcano ignores {common_word} on this node")
            )
        usable &= not errors
        if not errors:
            problems.extend(
                CodecProblem(VGN015, f"{key}: device {n}: {w}") for w in _warnings(device, item, common_word)
            )
        if device.uuid in seen:
            problems.append(
                CodecProblem(
                    VGN015,
                    f"{key}: device {n} repeats id {quote(device.uuid)} of device {seen[device.uuid]}; Volcano keys "
                    "devices by id and keeps only the last",
                )
            )
        seen.setdefault(device.uuid, n)
        devices.append(device)
    return AscendRegister(common_word, tuple(devices), tuple(problems), usable and bool(devices))


def _unusable(common_word: str, message: str) -> AscendRegister:
    return AscendRegister(common_word, (), (CodecProblem(VGN015, message),), False)


def _decode_device(item: dict[str, object], common_word: str) -> tuple[AscendDevice, list[str]]:
    errors: list[str] = []
    ints: dict[str, int] = {}
    for name, lo, hi in _INT_FIELDS:
        _, raw = json_field(item, name)
        parsed = go_json_int(raw, lo=lo, hi=hi)
        if parsed is None:
            errors.append(f"{name} {json_text(raw)} is not a Go {'uint' if lo == 0 else 'integer'}")
        ints[name] = parsed or 0
    _, raw_id = json_field(item, "id")
    uuid = go_json_str(raw_id)
    if uuid is None:
        errors.append(f"id {json_text(raw_id)} is not a string")
    _, raw_type = json_field(item, "type")
    if go_json_str(raw_type) is None:
        errors.append(f"type {json_text(raw_type)} is not a string")
    _, raw_health = json_field(item, "health")
    health = go_json_bool(raw_health)
    if health is None:
        errors.append(f"health {json_text(raw_health)} is not a JSON bool")
    _, custom = json_field(item, "custominfo")
    network_id: int | None = None
    if isinstance(custom, dict):
        found, raw_net = json_field(custom, "NetworkID")
        if found and isinstance(raw_net, (int, float)) and not isinstance(raw_net, bool) and raw_net == int(raw_net):
            network_id = int(raw_net)
    elif custom is not None:
        errors.append("custominfo is not an object")
    device = AscendDevice(
        common_word=common_word,
        memory=ints["devmem"],
        cores=ints["devcore"],
        uuid=uuid or "",
        index=ints["index"],
        count=ints["count"],
        numa=ints["numa"],
        health=bool(health),
        network_id=network_id,
    )
    return device, errors


def _warnings(device: AscendDevice, item: dict[str, object], common_word: str) -> list[str]:
    out: list[str] = []
    if not device.uuid:
        out.append("empty id")
    if device.count <= 0:
        out.append(f"count {device.count}: no vNPU slot, Volcano never places a pod on it")
    if device.memory <= 0:
        out.append(f"devmem {device.memory}: no memory, Volcano never places a pod that asks for memory on it")
    registered_type = go_json_str(json_field(item, "type")[1])
    if registered_type and registered_type != common_word:
        out.append(f"type {quote(registered_type)} differs from the annotation's {quote(common_word)}")
    return out


def encode_ascend_register(devices: Iterable[AscendDevice]) -> str:
    """`json.Marshal` of the plugin's DeviceInfo list: compact, Go field order, zero values omitted."""
    out: list[dict[str, object]] = []
    for d in devices:
        entry: dict[str, object] = {}
        for key, val in (
            ("id", d.uuid),
            ("index", d.index),
            ("count", d.count),
            ("devmem", d.memory),
            ("devcore", d.cores),
            ("type", d.common_word),
            ("numa", d.numa),
            ("health", d.health),
        ):
            if val:
                entry[key] = val
        if d.network_id is not None:
            entry["custominfo"] = {"NetworkID": d.network_id}
        out.append(entry)
    return go_json_dumps(out)


# ---- hami-vnpu-core ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class VnpuCoreFlag:
    value: bool | None  # Volcano's reading: None when absent (the device config's hamiVnpuCore decides)
    problems: Problems


def decode_hami_vnpu_core(value: object) -> VnpuCoreFlag:
    if value is None:
        return VnpuCoreFlag(None, ())
    if value in ("true", "false"):
        return VnpuCoreFlag(value == "true", ())
    return VnpuCoreFlag(
        False,
        (
            CodecProblem(
                VGN015,
                f'hami-vnpu-core is {quote(value)}, not "true" or "false"; Volcano reads it as false and '
                "overrides the device config's hamiVnpuCore for this node",
            ),
        ),
    )
