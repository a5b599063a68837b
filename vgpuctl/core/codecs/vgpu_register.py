"""`volcano.sh/node-vgpu-register`: the GPUs a node offers to Volcano's vGPU path (docs/vgpu.md#vgpu-node-registration,
docs/device-plugins.md#vgpu-plugin-node-annotations).

Format, written by the device plugin's `EncodeNodeDevices` and read by Volcano's `decodeNodeDevices`
(`pkg/scheduler/api/devices/nvidia/vgpu/utils.go`): `<uuid>,<count>,<devmem>,<type>,<health>,<mode>:`
per GPU, each entry terminated by `:`. Volcano's reading, reproduced here:

- no `:` anywhere → no device, the node is not a vGPU node;
- pieces without a `,` are skipped (the trailing empty piece, stray `::`);
- ≥ v1.12: one piece with fewer than 6 fields drops the whole node (`wrong Node GPU info`); device plugin
  v1.9.x wrote 5 (no mode). Before v1.12 there was no check and a piece with < 5 fields panics the
  scheduler (it indexes field 5 unchecked);
- count/devmem through `strconv.Atoi` (an error reads 0, a negative wraps through `uint`), health through
  `ParseBool` (an error reads false, and health is never checked anyway), mode: exactly `mig` is MIG,
  anything else hami-core;
- pod usage is matched to a GPU with `strings.Contains(podDeviceID, gpuUUID)`, so an empty UUID matches
  every allocation on the node.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from vgpuctl.core.codecs._common import (
    CodecProblem,
    Problems,
    go_parse_bool,
    go_parse_int,
    not_a_string,
    quote,
)
from vgpuctl.core.facts import GpuDevice
from vgpuctl.core.spec import VgpuMode

VGN002 = "VGN002"
VGN003 = "VGN003"
REGISTER_FIELDS = 6
LEGACY_REGISTER_FIELDS = 5  # device plugin v1.9.x: no mode


@dataclass(frozen=True, slots=True)
class VgpuRegister:
    devices: tuple[GpuDevice, ...]
    field_counts: tuple[int, ...]  # fields per entry, in order (entries Volcano skips are not counted)
    problems: Problems
    node_usable: bool  # False when Volcano would decode no vGPU device model for the node

    @property
    def node_mode(self) -> str | None:
        """The node's sharing mode as Volcano sets it: the mode of the *last* device (before MIG-geometry fallback)."""
        return self.devices[-1].mode if self.devices else None

    @property
    def modes(self) -> frozenset[str]:
        return frozenset(d.mode for d in self.devices)


def sharing_mode(registered: str) -> str:
    """Volcano's `getSharingMode`: exactly `mig` is MIG; everything else (`mps`, `MIG`, empty) is hami-core."""
    return VgpuMode.MIG.value if registered == VgpuMode.MIG.value else VgpuMode.HAMI_CORE.value


def decode_vgpu_register(value: object, *, volcano_six_fields: bool = True) -> VgpuRegister:
    """Decode a register annotation; never raises. `None` (annotation absent) gives no devices and no problems.

    `volcano_six_fields`: the reading of Volcano ≥ 1.12 (the default) — fewer than 6 fields drops the node.
    """
    if value is None:
        return VgpuRegister((), (), (), False)
    if not isinstance(value, str):
        return VgpuRegister((), (), (not_a_string(VGN003, "the register annotation", value),), False)
    if ":" not in value:
        message = (
            "the register annotation is empty; Volcano finds no GPU and ignores the node"
            if not value.strip()
            else f"the register annotation {quote(value)} has no ':' separator; Volcano decodes no GPU "
            "and ignores the node (every entry must end with ':')"
        )
        return VgpuRegister((), (), (CodecProblem(VGN003, message),), False)

    devices: list[GpuDevice] = []
    counts: list[int] = []
    problems: list[CodecProblem] = []
    usable = True
    seen: dict[str, int] = {}
    entry_no = 0
    for piece in value.split(":"):
        if "," not in piece:
            if piece.strip():
                problems.append(
                    CodecProblem(VGN003, f"piece {quote(piece)} has no ',' and is skipped by Volcano; not a GPU entry")
                )
            continue
        entry_no += 1
        items = piece.split(",")
        counts.append(len(items))
        usable &= _check_field_count(entry_no, piece, len(items), volcano_six_fields, problems)
        if len(items) < LEGACY_REGISTER_FIELDS:
            continue
        device = _decode_entry(entry_no, piece, items, problems)
        if device.uuid in seen and device.uuid:
            problems.append(
                CodecProblem(
                    VGN003,
                    f"entry {entry_no}: UUID {quote(device.uuid)} is also entry {seen[device.uuid]}; Volcano "
                    "books the pods of both on whichever it meets first",
                )
            )
        seen.setdefault(device.uuid, entry_no)
        devices.append(device)
    if not devices:
        usable = False
        if entry_no == 0:
            problems.append(
                CodecProblem(VGN003, f"the register annotation {quote(value)} holds no GPU; Volcano ignores the node")
            )
    return VgpuRegister(tuple(devices), tuple(counts), tuple(problems), usable)


def _check_field_count(entry_no: int, piece: str, n: int, six: bool, problems: list[CodecProblem]) -> bool:
    if six and n < REGISTER_FIELDS:
        hint = " (the 5-field form of device plugin v1.9.x: upgrade the plugin)" if n == LEGACY_REGISTER_FIELDS else ""
        problems.append(
            CodecProblem(
                VGN002,
                f"entry {entry_no} {quote(piece)} has {n} fields; Volcano ≥ 1.12 needs 6 and ignores the whole "
                f"node{hint}",
            )
        )
        return False
    if not six and n < LEGACY_REGISTER_FIELDS:
        problems.append(
            CodecProblem(
                VGN003,
                f"entry {entry_no} {quote(piece)} has {n} fields; Volcano < 1.12 reads field 5 unchecked and the "
                "scheduler panics (index out of range)",
            )
        )
        return False
    if n > REGISTER_FIELDS:
        problems.append(
            CodecProblem(
                VGN003,
                f"entry {entry_no} {quote(piece)} has {n} fields; Volcano reads fields by position, so a ',' "
                "inside a field shifts type, health and mode",
            )
        )
    return True


def _decode_entry(entry_no: int, piece: str, items: list[str], problems: list[CodecProblem]) -> GpuDevice:
    uuid, raw_count, raw_mem, gpu_type, raw_health = items[:5]
    registered_mode = items[5] if len(items) >= REGISTER_FIELDS else None
    where = f"entry {entry_no} {quote(piece)}"
    if not uuid:
        problems.append(
            CodecProblem(
                VGN003,
                f"{where}: empty UUID; Volcano matches every pod allocation on the node to it (substring match)",
            )
        )
    count = _register_int(where, "count", raw_count, problems)
    memory = _register_int(where, "devmem", raw_mem, problems)
    if "NVIDIA" not in gpu_type:
        problems.append(
            CodecProblem(
                VGN003, f"{where}: type {quote(gpu_type)} lacks 'NVIDIA'; Volcano never places a vGPU pod on this GPU"
            )
        )
    health = go_parse_bool(raw_health)
    if health is None:
        problems.append(
            CodecProblem(VGN003, f"{where}: health {quote(raw_health)} is not a Go bool; Volcano reads it as false")
        )
    return GpuDevice(
        uuid=uuid,
        type=gpu_type,
        memory=memory,
        mode=sharing_mode(registered_mode if registered_mode is not None else ""),
        split=count,
        health=bool(health),
        registered_mode=registered_mode,
    )


def _register_int(where: str, name: str, raw: str, problems: list[CodecProblem]) -> int:
    parsed = go_parse_int(raw)
    if parsed is None:
        problems.append(
            CodecProblem(VGN003, f"{where}: {name} {quote(raw)} is not an integer; Volcano reads 0, no pod fits")
        )
        return 0
    if parsed <= 0:
        effect = "wraps to a huge unsigned number" if parsed < 0 else "is 0, so no pod ever fits"
        problems.append(CodecProblem(VGN003, f"{where}: {name} {parsed} {effect}"))
    return parsed


def encode_vgpu_register(devices: Iterable[GpuDevice]) -> str:
    """The exact upstream encoding (`EncodeNodeDevices`): 6 fields per GPU, each entry ending with `:`."""
    return "".join(
        f"{d.uuid},{d.split},{d.memory},{d.type},{'true' if d.health else 'false'},"
        f"{d.registered_mode if d.registered_mode is not None else d.mode}:"
        for d in devices
    )
