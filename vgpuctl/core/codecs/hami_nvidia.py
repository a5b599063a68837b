"""HAMi's own NVIDIA register, `hami.io/node-nvidia-register` (docs/hami.md#hami-node-annotations).

Seeing it on a Volcano cluster means HAMi's device plugin runs there (VGN012). Three encodings, by the
HAMi version of the plugin that wrote it (`pkg/util/util.go` ≤ v2.6, `pkg/device/devices.go` after):

- ≤ v2.4, 7 fields: `<id>,<count>,<devmem>,<devcore>,<type>,<numa>,<health>:` per GPU;
- v2.5–v2.7, 9 fields: the 7 plus `,<index>,<mode>` (the v2.5–v2.7 decoders accept 7 or 9, ≤ v2.4 exactly 7);
- ≥ v2.8: `json.Marshal([]DeviceInfo)` — `[{"id","index","count","devmem","devcore","type","numa","mode",
  "migProfiles","health"}]` with `omitempty` (a missing `health` is false); the ≥ v2.8 scheduler reads
  only JSON.

Unlike Volcano's register, `type` is the NVML name prefixed `NVIDIA-` only when it does not already start
with `NVIDIA`, and `devmem` is MiB × deviceMemoryScaling.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

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
    go_parse_bool,
    go_parse_int,
    json_field,
    not_a_string,
    quote,
)

VGN012 = "VGN012"
_KEY = "hami.io/node-nvidia-register"
HamiNvidiaForm = Literal["7-field", "9-field", "json", "unknown"]


@dataclass(frozen=True, slots=True)
class HamiGpu:
    uuid: str
    count: int
    devmem: int
    devcore: int
    type: str
    numa: int = 0
    health: bool = False
    index: int | None = None  # absent from the 7-field form
    mode: str = "hami-core"  # HAMi's default when the form has no mode
    mig_profiles: tuple[str, ...] = ()  # JSON form, MIG mode: profile names


@dataclass(frozen=True, slots=True)
class HamiNvidiaRegister:
    form: HamiNvidiaForm
    devices: tuple[HamiGpu, ...]
    problems: Problems


def decode_hami_nvidia_register(value: object) -> HamiNvidiaRegister:
    """Decode `hami.io/node-nvidia-register` in any of its forms; never raises. `None` → unknown, no problems."""
    if value is None:
        return HamiNvidiaRegister("unknown", (), ())
    if not isinstance(value, str):
        return HamiNvidiaRegister("unknown", (), (not_a_string(VGN012, "hami.io/node-nvidia-register", value),))
    stripped = value.lstrip()
    if stripped.startswith("[") or stripped == "null":
        return _decode_json(value)
    return _decode_fields(value)


def _decode_fields(value: str) -> HamiNvidiaRegister:
    problems: list[CodecProblem] = []
    devices: list[HamiGpu] = []
    if ":" not in value:
        message = f"{_KEY} {quote(value)} is neither JSON nor ':'-separated; HAMi reads no GPU"
        return HamiNvidiaRegister("unknown", (), (CodecProblem(VGN012, message),))
    counts: set[int] = set()
    for n, piece in enumerate((p for p in value.split(":") if "," in p), start=1):
        items = piece.split(",")
        if len(items) not in (7, 9):
            problems.append(
                CodecProblem(
                    VGN012,
                    f"hami.io/node-nvidia-register entry {n} {quote(piece)} has {len(items)} fields; HAMi reads only 7 "
                    "or 9 and rejects the whole annotation",
                )
            )
            continue
        counts.add(len(items))
        health = go_parse_bool(items[6])
        numbers = [go_parse_int(items[i], bits=32) for i in (1, 2, 3)]
        numa = go_parse_int(items[5])
        index = go_parse_int(items[7]) if len(items) == 9 else None
        if None in numbers or numa is None or health is None or (len(items) == 9 and index is None):
            problems.append(CodecProblem(VGN012, f"{_KEY} entry {n} {quote(piece)} has a bad number or bool"))
        count, devmem, devcore = (x or 0 for x in numbers)
        devices.append(
            HamiGpu(
                uuid=items[0],
                count=count,
                devmem=devmem,
                devcore=devcore,
                type=items[4],
                numa=numa or 0,
                health=bool(health),
                index=index if len(items) == 9 else None,
                mode=items[8] if len(items) == 9 else "hami-core",
            )
        )
    form: HamiNvidiaForm = "9-field" if 9 in counts else "7-field" if counts else "unknown"
    if counts == {7, 9}:
        problems.append(CodecProblem(VGN012, "hami.io/node-nvidia-register mixes 7- and 9-field entries"))
    return HamiNvidiaRegister(form, tuple(devices), tuple(problems))


_JSON_INTS = (
    ("index", 0, UINT_MAX),
    ("count", INT32_MIN, INT32_MAX),
    ("devmem", INT32_MIN, INT32_MAX),
    ("devcore", INT32_MIN, INT32_MAX),
    ("numa", INT64_MIN, INT64_MAX),
)


def _decode_json(value: str) -> HamiNvidiaRegister:
    data, error = go_json_loads(value)
    if error is not None:
        return HamiNvidiaRegister("json", (), (CodecProblem(VGN012, f"{_KEY}: invalid JSON ({error})"),))
    if not isinstance(data, list):
        return HamiNvidiaRegister("json", (), ())  # null: no devices
    devices: list[HamiGpu] = []
    problems: list[CodecProblem] = []
    for n, item in enumerate(data, start=1):
        if not isinstance(item, dict):
            problems.append(CodecProblem(VGN012, f"hami.io/node-nvidia-register: device {n} is not an object"))
            continue
        ints = {name: go_json_int(json_field(item, name)[1], lo=lo, hi=hi) for name, lo, hi in _JSON_INTS}
        strings = {name: go_json_str(json_field(item, name)[1]) for name in ("id", "type", "mode")}
        health = go_json_bool(json_field(item, "health")[1])
        bad = [k for k, v in (*ints.items(), *strings.items(), ("health", health)) if v is None]
        if bad:
            problems.append(CodecProblem(VGN012, f"{_KEY}: device {n}: {', '.join(bad)} of the wrong JSON type"))
        profiles = json_field(item, "migProfiles")[1]
        names = (
            tuple(p["name"] for p in profiles if isinstance(p, dict) and isinstance(p.get("name"), str))
            if isinstance(profiles, list)
            else ()
        )
        devices.append(
            HamiGpu(
                uuid=strings["id"] or "",
                count=ints["count"] or 0,
                devmem=ints["devmem"] or 0,
                devcore=ints["devcore"] or 0,
                type=strings["type"] or "",
                numa=ints["numa"] or 0,
                health=bool(health),
                index=ints["index"] or 0,
                mode=strings["mode"] or "",
                mig_profiles=names,
            )
        )
    return HamiNvidiaRegister("json", tuple(devices), tuple(problems))


def encode_hami_nvidia_register(devices: tuple[HamiGpu, ...], form: HamiNvidiaForm) -> str:
    """The plugin's encodings: `EncodeNodeDevices` (7 or 9 fields) or `MarshalNodeDevices` (JSON, ≥ v2.8)."""
    if form == "json":
        out: list[dict[str, object]] = []
        for d in devices:
            entry: dict[str, object] = {
                k: v
                for k, v in (
                    ("id", d.uuid),
                    ("index", d.index),
                    ("count", d.count),
                    ("devmem", d.devmem),
                    ("devcore", d.devcore),
                    ("type", d.type),
                    ("numa", d.numa),
                    ("mode", d.mode),
                )
                if v
            }
            if d.mig_profiles:
                entry["migProfiles"] = [{"name": p} for p in d.mig_profiles]
            if d.health:
                entry["health"] = True
            out.append(entry)
        return go_json_dumps(out)
    nine = form == "9-field"
    return "".join(
        f"{d.uuid},{d.count},{d.devmem},{d.devcore},{d.type},{d.numa},{'true' if d.health else 'false'}"
        + (f",{d.index or 0},{d.mode}" if nine else "")
        + ":"
        for d in devices
    )
