"""NVIDIA pod allocations: `volcano.sh/vgpu-ids-new` (docs/vgpu.md#vgpu-mig, docs/vgpu.md#vgpu-allocation,
docs/device-plugins.md#vgpu-plugin-pod-annotations) and gpushare `volcano.sh/gpu-index` (docs/vgpu.md#gpushare).

`vgpu-ids-new` (Volcano `encodePodDevices` / `decodePodDevices`, `nvidia/vgpu/utils.go`): per device
`<id>,NVIDIA,<usedmem>,<usedcores>:`, containers joined with `;` and no trailing `;`; only containers that
request vGPU get an entry, so positions are not container indexes. `<id>` is the GPU UUID, or for MIG
`<uuid>[<group>-<position>]` (`encodeMIGID`). Volcano's reading:

- before 1.16, a device piece with a `,` but fewer than 4 fields is indexed unchecked: the scheduler panics;
  memory and cores go through `ParseInt(…, 10, 32)`: an error reads 0, a negative value wraps as a uint;
- from 1.16 (8b6d2c482) such a piece, or one whose memory or cores `ParseUint(…, 10, 32)` rejects, is logged
  and skipped (`decode_vgpu_ids(…, skips_bad_entries=True)`);
- the GPU is found with `strings.Contains(id, gpuUUID)`;
- on a MIG node `decodeMIGID` takes the text between the first `[` and the first `]`, splits it on `-`
  and needs exactly two parts with an integer position; anything else (a group name containing `-`)
  fails and the pod's usage is never recorded.

`gpu-index` (`gpushare/share.go GetGPUIndex`): comma-separated card indexes; one bad token and Volcano
reads none of them (the pod's card usage is not counted). The node annotation `gpu-unhealthy-ids` has the
same shape but Volcano skips bad tokens one by one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from vgpuctl.core.codecs._common import (
    CodecProblem,
    Problems,
    device_pieces,
    go_parse_int,
    int32_field,
    not_a_string,
    quote,
    too_long,
)

VGX002 = "VGX002"  # an existing pod's allocation annotation Volcano misreads
VGM007 = "VGM007"  # a MIG group name containing '-' (the root cause of an undecodable MIG id)
VGS004 = "VGS004"  # a gpu-index Volcano cannot use (in practice a user-set one)
VGN014 = "VGN014"  # a malformed gpushare node annotation
NVIDIA_REQUEST_TYPE = "NVIDIA"


@dataclass(frozen=True, slots=True)
class MigSlot:
    group: str
    position: int  # Σ count of the instance types listed before this one in the group + the free slot index


@dataclass(frozen=True, slots=True)
class DeviceAllocation:
    uuid: str  # the GPU UUID (the text before `[` for a MIG id)
    mig: MigSlot | None
    memory: int  # MiB ÷ gpuMemoryFactor (for MIG: the instance's memory)
    cores: int
    type: str = NVIDIA_REQUEST_TYPE  # the request type Volcano writes, not the device type

    @property
    def device_id(self) -> str:
        return encode_device_id(self.uuid, self.mig)


@dataclass(frozen=True, slots=True)
class VgpuPodAllocation:
    containers: tuple[tuple[DeviceAllocation, ...], ...]
    problems: Problems

    @property
    def devices(self) -> tuple[DeviceAllocation, ...]:
        return tuple(d for c in self.containers for d in c)


@dataclass(frozen=True, slots=True)
class MigIdParse:
    uuid: str
    mig: MigSlot | None
    problems: Problems


@dataclass(frozen=True, slots=True)
class GpuIndex:
    indexes: tuple[int, ...]  # what Volcano reads: empty when any token is bad
    problems: Problems


def encode_device_id(uuid: str, mig: MigSlot | None) -> str:
    return uuid if mig is None else f"{uuid}[{mig.group}-{mig.position}]"


def decode_mig_id(device_id: str) -> MigIdParse:
    """Split a device id into the GPU UUID and, for `<uuid>[<group>-<pos>]`, the MIG slot; never raises."""
    start = device_id.find("[")
    if start == -1:
        if "]" in device_id:
            return MigIdParse(device_id, None, (_mig_problem(VGX002, device_id, "has ']' without '['"),))
        return MigIdParse(device_id, None, ())
    uuid = device_id[:start]
    end = device_id.find("]")
    if end == -1 or end < start:
        return MigIdParse(uuid, None, (_mig_problem(VGX002, device_id, "has no ']' after '['"),))
    parts = device_id[start + 1 : end].split("-")
    problems: list[CodecProblem] = []
    if end != len(device_id) - 1:
        problems.append(_mig_problem(VGX002, device_id, f"has text {quote(device_id[end + 1 :])} after ']'"))
    if len(parts) != 2:
        code = VGM007 if len(parts) > 2 else VGX002
        why = (
            f"splits into {len(parts)} parts on '-' (a group name containing '-')"
            if len(parts) > 2
            else "has no '-' between group and position"
        )
        problems.append(_mig_problem(code, device_id, why))
        return MigIdParse(uuid, None, tuple(problems))
    position = go_parse_int(parts[1])
    if position is None or not parts[0]:
        why = f"position {quote(parts[1])} is not an integer" if position is None else "has an empty group name"
        problems.append(_mig_problem(VGX002, device_id, why))
        return MigIdParse(uuid, None, tuple(problems))
    return MigIdParse(uuid, MigSlot(parts[0], position), tuple(problems))


def _mig_problem(code: str, device_id: str, why: str) -> CodecProblem:
    return CodecProblem(
        code,
        f"MIG id {quote(device_id)} {why}; Volcano's decodeMIGID fails and never records this pod's MIG usage",
    )


def decode_vgpu_ids(value: object, *, skips_bad_entries: bool = False) -> VgpuPodAllocation:
    """Decode `volcano.sh/vgpu-ids-new` (or `devices-to-allocate`); never raises. `None`/"" → no containers.

    `skips_bad_entries`: read it as Volcano ≥ 1.16 does (volcano-sh/volcano 8b6d2c482, `decodeContainerDevices`):
    a device with fewer than 4 fields, or whose memory or cores `ParseUint(…, 10, 32)` rejects, is logged and
    skipped, so its usage is never counted. Without it, the older reading: a short device panics the
    scheduler, a bad number reads 0 and a negative one wraps.
    """
    if value is None:
        return VgpuPodAllocation((), ())
    if not isinstance(value, str):
        return VgpuPodAllocation((), (not_a_string(VGX002, "vgpu-ids-new", value),))
    if not value:
        return VgpuPodAllocation((), ())
    if (long := too_long(VGX002, "vgpu-ids-new", value)) is not None:
        return VgpuPodAllocation((), (long,))
    containers: list[tuple[DeviceAllocation, ...]] = []
    problems: list[CodecProblem] = []
    for c_no, block in enumerate(value.split(";"), start=1):
        devices: list[DeviceAllocation] = []
        for piece, items in device_pieces(c_no, block, VGX002, problems):
            if len(items) < 4:
                outcome = (_SKIPPED if skips_bad_entries
                           else "Volcano indexes them unchecked and the scheduler panics (index out of range)")
                problems.append(CodecProblem(
                    VGX002, f"container {c_no}: device {quote(piece)} has {len(items)} fields, not 4; {outcome}"))
                continue
            if skips_bad_entries:
                bad = [f"{name} {quote(raw)}" for name, raw in (("memory", items[2]), ("cores", items[3]))
                       if not (raw.isascii() and raw.isdigit() and int(raw) < 2**32)]
                if bad:
                    problems.append(CodecProblem(
                        VGX002, f"container {c_no}: device {quote(piece)}: {' and '.join(bad)} "
                                f"{'is' if len(bad) == 1 else 'are'} not an unsigned 32-bit number; {_SKIPPED}"))
                    continue
            if len(items) > 4:
                problems.append(
                    CodecProblem(
                        VGX002, f"container {c_no}: device {quote(piece)} has {len(items)} fields, Volcano reads 4"
                    )
                )
            parsed = decode_mig_id(items[0])
            problems.extend(parsed.problems)
            if not parsed.uuid:
                problems.append(
                    CodecProblem(
                        VGX002,
                        f"container {c_no}: device {quote(piece)} has an empty id; Volcano books it on every GPU",
                    )
                )
            if skips_bad_entries:  # both checked above as Volcano ≥ 1.16 reads them (uint32)
                memory, cores = int(items[2]), int(items[3])
            else:
                memory = _int32(c_no, piece, "memory", items[2], problems)
                cores = _int32(c_no, piece, "cores", items[3], problems)
            devices.append(DeviceAllocation(parsed.uuid, parsed.mig, memory, cores, items[1]))
        containers.append(tuple(devices))
    return VgpuPodAllocation(tuple(containers), tuple(problems))


# What Volcano ≥ 1.16 does with a malformed device entry (`decodeContainerDevices`, 8b6d2c482).
_SKIPPED = ("Volcano logs and skips it, so this pod's usage of that GPU is not counted and the GPU can be "
            "over-subscribed")


def _int32(c_no: int, piece: str, name: str, raw: str, problems: list[CodecProblem]) -> int:
    parsed = int32_field(c_no, piece, name, raw, VGX002, problems)
    if parsed is None:
        return 0
    if parsed < 0:
        problems.append(
            CodecProblem(VGX002, f"container {c_no}: device {quote(piece)}: {name} {parsed} is negative (uint wrap)")
        )
    return parsed


def encode_vgpu_ids(containers: Iterable[Iterable[DeviceAllocation]]) -> str:
    """Volcano's `encodePodDevices`: `<id>,<type>,<mem>,<cores>:` per device, containers joined by `;`."""
    return ";".join("".join(f"{d.device_id},{d.type},{d.memory},{d.cores}:" for d in c) for c in containers)


def decode_gpu_index(value: object) -> GpuIndex:
    """Decode gpushare `volcano.sh/gpu-index` (`0` or `0,2`); never raises. `None` → no indexes, no problems."""
    if value is None:
        return GpuIndex((), ())
    if not isinstance(value, str):
        return GpuIndex((), (not_a_string(VGS004, "gpu-index", value),))
    if (long := too_long(VGS004, "gpu-index", value)) is not None:
        return GpuIndex((), (long,))
    indexes: list[int] = []
    problems: list[CodecProblem] = []
    for token in value.split(","):
        parsed = go_parse_int(token)
        if parsed is None:
            problems.append(
                CodecProblem(
                    VGS004,
                    f"gpu-index {quote(value)}: {quote(token)} is not an integer; Volcano ignores the whole annotation "
                    "and does not count this pod on any card",
                )
            )
            return GpuIndex((), tuple(problems))
        if parsed < 0:
            problems.append(CodecProblem(VGS004, f"gpu-index {quote(value)}: {parsed} names no card"))
        indexes.append(parsed)
    if len(set(indexes)) != len(indexes):
        problems.append(CodecProblem(VGS004, f"gpu-index {quote(value)} names a card twice"))
    return GpuIndex(tuple(indexes), tuple(problems))


def decode_gpu_unhealthy_ids(value: object) -> GpuIndex:
    """Decode the gpushare node annotation `volcano.sh/gpu-unhealthy-ids`; never raises.

    Unlike `gpu-index`, Volcano's `getUnhealthyGPUs` skips a bad token (with a warning) and keeps the rest;
    the cards named are removed from the node.
    """
    if value is None:
        return GpuIndex((), ())
    if not isinstance(value, str):
        return GpuIndex((), (not_a_string(VGN014, "gpu-unhealthy-ids", value),))
    indexes: list[int] = []
    problems: list[CodecProblem] = []
    for token in value.split(","):
        parsed = go_parse_int(token)
        if parsed is None:
            problems.append(
                CodecProblem(
                    VGN014,
                    f"gpu-unhealthy-ids {quote(value)}: {quote(token)} is not a card index; Volcano skips it and "
                    "keeps that card in service",
                )
            )
        else:
            indexes.append(parsed)
    return GpuIndex(tuple(indexes), tuple(problems))


def encode_gpu_index(indexes: Iterable[int]) -> str:
    return ",".join(str(i) for i in indexes)
