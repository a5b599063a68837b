"""Checks on what a well-typed device config *means* (VGM004–VGM008), section by section.

They run on a section only once it decodes (a section with type errors is VGM002 and nothing here is
meaningful). MIG entries keep their config order in the model, so model indices are JSON-path indices;
vNPU templates are sorted by memory at load (as Volcano does), so template paths come from the raw list.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.deviceconfig import DeviceConfig, NvidiaConfig, VnpusForm
from vgpuctl.core.findings import Severity
from vgpuctl.core.geometry import keys
from vgpuctl.core.geometry.report import Emitter
from vgpuctl.core.versions import Version, requires_vgpu_allocatable

ERROR, WARNING = Severity.ERROR, Severity.WARNING

_RESOURCE_NAMES = (
    ("resourceCountName", "resource_count_name", spec.VGPU_NUMBER),
    ("resourceMemoryName", "resource_memory_name", spec.VGPU_MEMORY),
    ("resourceCoreName", "resource_core_name", spec.VGPU_CORES),
)


def check_nvidia(e: Emitter, nv: NvidiaConfig, raw: Any, version: Version) -> None:
    raw_map: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    for key, attr, default in _RESOURCE_NAMES:
        value = getattr(nv, attr)
        path = f"nvidia.{key}"
        if not value:
            e.emit("VGM004", ERROR, path, f"{key} is empty: Volcano does not merge with its defaults, so no pod "
                                          "is recognised as a vGPU pod and no GPU is booked")
        elif value != default and requires_vgpu_allocatable(version):
            e.emit("VGM005", WARNING, path,
                   f"{key} is {value!r}, but Volcano {version} accepts a vGPU node only if its allocatable has "
                   f"{default} > 0 (hard-coded); the device plugin advertises {value!r}, so every vGPU node is "
                   "dropped")
    _check_scaling(e, nv, raw_map)
    _check_mig(e, nv)


def _check_scaling(e: Emitter, nv: NvidiaConfig, raw: Mapping[str, Any]) -> None:
    checks = (
        ("gpuMemoryFactor", nv.gpu_memory_factor,
         "the vGPU device plugin divides device memory by it (integer division by zero)"),
        ("deviceSplitCount", nv.device_split_count,
         "the device plugin advertises volcano.sh/vgpu-number 0, and Volcano 1.14.3+/1.15.1+ drops such nodes"),
        ("deviceCoreScaling", nv.device_core_scaling,
         "the device plugin advertises volcano.sh/vgpu-cores 0, and Volcano 1.14.3+/1.15.1+ drops such nodes"),
    )
    for key, value, effect in checks:
        if value == 0:
            state = "is 0" if raw.get(key) is not None else "is absent (0: no merging with defaults)"
            e.emit("VGM008", ERROR, f"nvidia.{key}", f"{key} {state}: {effect}")


def _check_mig(e: Emitter, nv: NvidiaConfig) -> None:
    first_entry: dict[str, int] = {}
    for gi, geometry in enumerate(nv.known_mig_geometries):
        gpath = f"nvidia.knownMigGeometries[{gi}]"
        seen: dict[str, int] = {}
        for mi, model in enumerate(geometry.models):
            mpath = f"{gpath}.models[{mi}]"
            if model in seen:
                e.emit("VGM007", WARNING, mpath, f"model {model!r} is listed twice in this entry (also "
                                                 f"models[{seen[model]}]); harmless, the first match wins, but "
                                                 "likely a copy slip")
                continue
            seen[model] = mi
            if model in first_entry and first_entry[model] != gi:
                e.emit("VGM007", WARNING, mpath,
                       f"model {model!r} is also in knownMigGeometries[{first_entry[model]}], which comes first: "
                       "Volcano uses that entry for it and never this one")
            first_entry.setdefault(model, gi)
        groups: dict[str, int] = {}
        for ri, group in enumerate(geometry.groups):
            rpath = f"{gpath}.allowedGeometries[{ri}]"
            bad = sorted({c for c in group.name if c in keys.MIG_GROUP_FORBIDDEN})
            if bad:
                e.emit("VGM007", ERROR, f"{rpath}.group",
                       f"group name {group.name!r} contains {' '.join(repr(c) for c in bad)}: the MIG allocation id "
                       f"<uuid>[{group.name}-<pos>] cannot be decoded, so the booking is never recorded and the "
                       "GPU can be over-booked")
            if group.name in groups:
                e.emit("VGM007", ERROR, f"{rpath}.group",
                       f"group {group.name!r} is defined twice in this entry (also allowedGeometries"
                       f"[{groups[group.name]}]): MIG usage records name the group, so bookings become ambiguous")
            groups.setdefault(group.name, ri)
            for ii, instance in enumerate(group.instances):
                ipath = f"{rpath}.geometries[{ii}]"
                if instance.memory <= 0:
                    e.emit("VGM007", ERROR, f"{ipath}.memory",
                           f"instance {instance.name!r} has memory {instance.memory}: no request ever fits it")
                if instance.count < 1:
                    e.emit("VGM007", ERROR, f"{ipath}.count",
                           f"instance {instance.name!r} has count {instance.count}: it can never be allocated")


def _memory(raw: Any) -> int:
    return int(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else 0


def check_vnpus(e: Emitter, config: DeviceConfig, raw: Any, *, ascend_hami_enabled: bool) -> None:
    prefix = "vnpus.configs" if config.vnpus_form is VnpusForm.WRAPPER else "vnpus"
    entries = raw.get("configs") if isinstance(raw, Mapping) else raw
    raw_entries = entries if isinstance(entries, list) else []
    if not config.vnpus and ascend_hami_enabled:
        e.emit("VGM006", ERROR, prefix if raw is not None else "$",
               "AscendHAMiVNPUEnable is on but vnpus declares no chip: Volcano registers no Ascend device type")
    seen: dict[str, int] = {}
    for index, vnpu in enumerate(config.vnpus):
        path = f"{prefix}[{index}]"
        for key, value in (("commonWord", vnpu.common_word), ("resourceName", vnpu.resource_name),
                           ("resourceMemoryName", vnpu.resource_memory_name)):
            if not value:
                e.emit("VGM006", ERROR, f"{path}.{key}", f"{key} is empty: Volcano cannot register or recognise "
                                                         "this chip's resources")
        if vnpu.common_word and vnpu.common_word in seen:
            e.emit("VGM006", ERROR, f"{path}.commonWord",
                   f"commonWord {vnpu.common_word!r} is also used by {prefix}[{seen[vnpu.common_word]}]: both "
                   "entries share one device type and one node annotation")
        seen.setdefault(vnpu.common_word, index)
        if vnpu.memory_allocatable > vnpu.memory_capacity:
            e.emit("VGM006", ERROR, f"{path}.memoryAllocatable",
                   f"memoryAllocatable {vnpu.memory_allocatable} > memoryCapacity {vnpu.memory_capacity}: a "
                   "whole-card request books more memory than Volcano accepts for one card")
        raw_entry = raw_entries[index] if index < len(raw_entries) else {}
        templates = raw_entry.get("templates") if isinstance(raw_entry, Mapping) else None
        for t_index, template in enumerate(templates if isinstance(templates, list) else []):
            memory = _memory(template.get("memory")) if isinstance(template, Mapping) else 0
            name = template.get("name") if isinstance(template, Mapping) else None
            if memory <= 0 or memory > vnpu.memory_allocatable:
                limit = "<= 0" if memory <= 0 else f"> memoryAllocatable {vnpu.memory_allocatable}"
                e.emit("VGM006", ERROR, f"{path}.templates[{t_index}].memory",
                       f"template {name!r} memory {memory} {limit}: requests are rounded to a template the "
                       "card cannot provide")
