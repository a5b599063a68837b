"""Ascend pod allocations written by the scheduler (docs/ascend.md#ascend-hami-keys, docs/ascend.md#mindcluster-pod,
docs/device-plugins.md#ascend-plugin-annotations, docs/hami.md#hami-pod-annotations).

- `hami.io/<CW>-devices-allocated` / `-devices-to-allocate` (`EncodePodSingleDevice`,
  `pkg/scheduler/api/devices/device_info.go`): per device `<id>,<CW>,<mem>,<cores>:`, and **every**
  container block ends with `;`. Volcano's `DecodeContainerDevices` rejects the whole value when a device
  piece has a `,` but fewer than 4 fields (the pod's usage is then not counted at all) and reads
  unparseable numbers (`ParseInt(…, 10, 32)`) as 0. Decoded here: one tuple per block, empty blocks kept
  (HAMi keeps them to preserve container positions; Volcano skips them), the terminator's empty tail not.
- `huawei.com/<CW>` (`CreateAnnotations`): JSON `[{"UUID","temp"}]` in template mode (`temp` omitted for a
  whole card), `[{"UUID","memory","core"}]` in hami-core mode (HEAD); all fields `omitempty`, so a
  hami-core entry with memory and core 0 is indistinguishable from a whole card.
- MindCluster `huawei.com/npu-core`: `<chipID>` or `<id>,<id>` for whole cards, `<chipID>-<template>`
  (e.g. `0-vir02_1c`) for a vNPU. Volcano splits on `-`: exactly two parts is a vNPU, anything else is
  read as whole card(s) named by the first part.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from vgpuctl.core.codecs._common import (
    INT32_MAX,
    INT32_MIN,
    INT64_MAX,
    INT64_MIN,
    CodecProblem,
    Problems,
    device_pieces,
    go_json_dumps,
    go_json_int,
    go_json_loads,
    go_json_str,
    go_parse_int,
    int32_field,
    json_field,
    not_a_string,
    quote,
    too_long,
)

VGX002 = "VGX002"


# ---- hami.io/<CW>-devices-allocated ----------------------------------------------------------------

_ALLOCATED_PREFIX, _ALLOCATED_SUFFIX = "hami.io/", "-devices-allocated"


def allocated_annotation(common_word: str) -> str:
    """The name of the annotation holding a pod's allocations of that chip: `hami.io/<CW>-devices-allocated`."""
    return f"{_ALLOCATED_PREFIX}{common_word}{_ALLOCATED_SUFFIX}"


def allocated_common_word(key: object) -> str | None:
    """The chip's common word when `key` is an annotation name `hami.io/<CW>-devices-allocated`, else None."""
    if isinstance(key, str) and key.startswith(_ALLOCATED_PREFIX) and key.endswith(_ALLOCATED_SUFFIX):
        return key[len(_ALLOCATED_PREFIX):-len(_ALLOCATED_SUFFIX)]
    return None


@dataclass(frozen=True, slots=True)
class AscendDeviceAllocation:
    uuid: str
    common_word: str
    memory: int  # MiB
    cores: int


@dataclass(frozen=True, slots=True)
class AscendPodAllocation:
    containers: tuple[tuple[AscendDeviceAllocation, ...], ...]
    problems: Problems
    usable: bool  # Volcano counts this pod's usage (False when it rejects the whole value)

    @property
    def devices(self) -> tuple[AscendDeviceAllocation, ...]:
        return tuple(d for c in self.containers for d in c)


def decode_ascend_allocations(value: object) -> AscendPodAllocation:
    """Decode `hami.io/<CW>-devices-allocated`; never raises. `None`/"" → no containers."""
    if value is None or value == "":
        return AscendPodAllocation((), (), True)
    if not isinstance(value, str):
        return AscendPodAllocation((), (not_a_string(VGX002, "the devices-allocated annotation", value),), False)
    if (long := too_long(VGX002, "the devices-allocated annotation", value)) is not None:
        return AscendPodAllocation((), (long,), False)
    blocks = value.split(";")
    if blocks[-1] == "":
        blocks.pop()
    problems: list[CodecProblem] = []
    usable = True
    containers: list[tuple[AscendDeviceAllocation, ...]] = []
    for c_no, block in enumerate(blocks, start=1):
        devices: list[AscendDeviceAllocation] = []
        for piece, items in device_pieces(c_no, block, VGX002, problems):
            if len(items) < 4:
                problems.append(
                    CodecProblem(
                        VGX002,
                        f"container {c_no}: device {quote(piece)} has {len(items)} fields, not 4; Volcano rejects "
                        "the whole annotation and does not count this pod's usage",
                    )
                )
                usable = False
                continue
            memory = _int32(c_no, piece, "memory", items[2], problems)
            cores = _int32(c_no, piece, "cores", items[3], problems)
            devices.append(AscendDeviceAllocation(items[0], items[1], memory, cores))
        containers.append(tuple(devices))
    return AscendPodAllocation(tuple(containers), tuple(problems), usable)


def _int32(c_no: int, piece: str, name: str, raw: str, problems: list[CodecProblem]) -> int:
    return int32_field(c_no, piece, name, raw, VGX002, problems) or 0


def encode_ascend_allocations(containers: Iterable[Iterable[AscendDeviceAllocation]]) -> str:
    """`EncodePodSingleDevice`: `<id>,<CW>,<mem>,<cores>:` per device, every container block ending with `;`."""
    return "".join("".join(f"{d.uuid},{d.common_word},{d.memory},{d.cores}:" for d in c) + ";" for c in containers)


# ---- huawei.com/<CW> ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class AscendRuntimeEntry:
    uuid: str
    template: str = ""  # template mode: the vNPU template; "" = a whole card (or hami-core mode)
    memory: int = 0  # hami-core mode: MiB
    core: int = 0  # hami-core mode: % of the chip

    @property
    def hami_core(self) -> bool:
        return self.memory > 0 or self.core > 0


@dataclass(frozen=True, slots=True)
class AscendRuntimeInfo:
    entries: tuple[AscendRuntimeEntry, ...]
    problems: Problems


def decode_ascend_runtime_info(value: object) -> AscendRuntimeInfo:
    """Decode the `huawei.com/<CW>` pod annotation (a JSON list); never raises. `None`/`null` → no entries."""
    if value is None:
        return AscendRuntimeInfo((), ())
    if not isinstance(value, str):
        return AscendRuntimeInfo((), (not_a_string(VGX002, "the huawei.com/<CW> annotation", value),))
    data, error = go_json_loads(value)
    if error is not None:
        return AscendRuntimeInfo((), (CodecProblem(VGX002, f"huawei.com/<CW> is not valid JSON ({error})"),))
    if data is None:
        return AscendRuntimeInfo((), ())
    if not isinstance(data, list):
        message = f"huawei.com/<CW> is a JSON {type(data).__name__}, not a list"
        return AscendRuntimeInfo((), (CodecProblem(VGX002, message),))
    entries: list[AscendRuntimeEntry] = []
    problems: list[CodecProblem] = []
    for n, item in enumerate(data, start=1):
        if not isinstance(item, dict):
            problems.append(CodecProblem(VGX002, f"huawei.com/<CW>: entry {n} is not an object; the plugin rejects it"))
            continue
        uuid = go_json_str(json_field(item, "UUID")[1])
        template = go_json_str(json_field(item, "temp")[1])
        memory = go_json_int(json_field(item, "memory")[1], lo=INT64_MIN, hi=INT64_MAX)
        core = go_json_int(json_field(item, "core")[1], lo=INT32_MIN, hi=INT32_MAX)
        bad = [
            name
            for name, parsed in (("UUID", uuid), ("temp", template), ("memory", memory), ("core", core))
            if parsed is None
        ]
        if bad:
            problems.append(
                CodecProblem(VGX002, f"huawei.com/<CW>: entry {n}: {', '.join(bad)} of the wrong JSON type")
            )
        if not uuid:
            problems.append(CodecProblem(VGX002, f"huawei.com/<CW>: entry {n} has no UUID"))
        entries.append(AscendRuntimeEntry(uuid or "", template or "", memory or 0, core or 0))
    return AscendRuntimeInfo(tuple(entries), tuple(problems))


def encode_ascend_runtime_info(entries: Iterable[AscendRuntimeEntry]) -> str:
    """`json.Marshal([]RuntimeInfo)`: compact, `omitempty` on every field, `null` when empty."""
    out: list[dict[str, object]] = []
    for e in entries:
        item: dict[str, object] = {}
        for key, val in (("UUID", e.uuid), ("temp", e.template), ("memory", e.memory), ("core", e.core)):
            if val:
                item[key] = val
        out.append(item)
    if not out:
        return "null"  # Go marshals the scheduler's nil slice as null
    return go_json_dumps(out)


# ---- MindCluster huawei.com/npu-core ----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NpuCoreAllocation:
    chips: tuple[int, ...]  # physical chip ids
    template: str | None  # the vNPU template (`vir02_1c`…), None for whole cards
    problems: Problems


def decode_npu_core(value: object) -> NpuCoreAllocation:
    """Decode the MindCluster `huawei.com/npu-core` pod annotation; never raises. `None` → nothing."""
    if value is None:
        return NpuCoreAllocation((), None, ())
    if not isinstance(value, str):
        return NpuCoreAllocation((), None, (not_a_string(VGX002, "huawei.com/npu-core", value),))
    if (long := too_long(VGX002, "huawei.com/npu-core", value)) is not None:
        return NpuCoreAllocation((), None, (long,))
    parts = value.split("-")
    problems: list[CodecProblem] = []
    if len(parts) == 2:
        chip = go_parse_int(parts[0])
        if chip is None or chip < 0:
            problems.append(_npu_problem(value, f"chip {quote(parts[0])} is not a chip id"))
        if not parts[1]:
            problems.append(CodecProblem(VGX002, f"huawei.com/npu-core {quote(value)} names no vNPU template"))
        return NpuCoreAllocation(() if chip is None else (chip,), parts[1] or None, tuple(problems))
    if len(parts) > 2:
        problems.append(
            CodecProblem(
                VGX002,
                f"huawei.com/npu-core {quote(value)} has {len(parts) - 1} '-'; Volcano reads it as whole card(s) "
                f"{quote(parts[0])}",
            )
        )
    chips: list[int] = []
    for token in parts[0].split(","):
        chip = go_parse_int(token)
        if chip is None or chip < 0:
            problems.append(_npu_problem(value, f"{quote(token)} is not a chip id"))
        else:
            chips.append(chip)
    return NpuCoreAllocation(tuple(chips), None, tuple(problems))


def _npu_problem(value: str, why: str) -> CodecProblem:
    return CodecProblem(VGX002, f"huawei.com/npu-core {quote(value)}: {why}")


def encode_npu_core(chips: Iterable[int], template: str | None = None) -> str:
    ids = [str(c) for c in chips]
    return f"{ids[0]}-{template}" if template is not None and len(ids) == 1 else ",".join(ids)
