"""`why` for a pod already bound: what it got, read back from the allocation annotations Volcano wrote."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.cluster.model import NodeState
from vgpuctl.core.codecs.ascend_pod import allocated_common_word, decode_ascend_allocations, decode_npu_core
from vgpuctl.core.codecs.pod_alloc import decode_gpu_index, decode_vgpu_ids
from vgpuctl.core.why.model import DeviceChoice, Placement, WhyReport
from vgpuctl.core.why.request import quantity_value
from vgpuctl.core.why.scheduler_env import WhyEnv, mapping


def describe_bound(report: WhyReport, pod: Mapping[str, Any], node: str, env: WhyEnv,
                   state: NodeState | None = None) -> None:
    annotations = mapping(mapping(pod.get("metadata")).get("annotations"))
    report.bound_node = node
    types = {d.id: d.type for d in state.devices} if state is not None else {}
    devices = [*_vgpu(annotations, types, env), *_gpushare(pod, annotations), *_ascend(annotations),
               *_mindcluster(annotations)]
    report.fits = [Placement(node, tuple(devices))]
    if devices:
        report.hints.append(f"bound to {node}; the devices are read from the allocation annotations Volcano wrote "
                            f"at bind time ({len(devices)} device{'s' if len(devices) != 1 else ''})")
    else:
        report.hints.append(f"bound to {node} with no device allocation annotation: Volcano booked no device for "
                            "it (no device request, the family disabled, or the pod bypassed the scheduler)")
    phase = annotations.get(spec.ANN_BIND_PHASE)
    if isinstance(phase, str) and phase != "success":
        report.hints.append(f"{spec.ANN_BIND_PHASE} is {phase!r}: the device plugin has not confirmed the "
                            "allocation")


def _vgpu(annotations: Mapping[str, Any], types: Mapping[str, str], env: WhyEnv) -> list[DeviceChoice]:
    raw = annotations.get(spec.ANN_VGPU_IDS_NEW)
    if raw is None:
        return []
    factor = env.factor
    nvidia = env.device_config.nvidia
    choices = []
    for alloc in decode_vgpu_ids(raw, skips_bad_entries=env.skips_malformed_vgpu_ids).devices:
        profile = None
        if alloc.mig is not None:
            device_type = types.get(alloc.uuid, "")
            geometry = nvidia.geometry_for(device_type) if device_type else (
                nvidia.known_mig_geometries[0] if len(nvidia.known_mig_geometries) == 1 else None)
            group = next((g for g in geometry.groups if g.name == alloc.mig.group), None) if geometry else None
            if group is not None:
                total = 0
                for inst in group.instances:
                    if alloc.mig.position < total + inst.count:
                        profile = inst.name
                        break
                    total += inst.count
        choices.append(DeviceChoice(alloc.device_id, alloc.memory * factor, alloc.cores, slice=profile))
    return choices


def _gpushare(pod: Mapping[str, Any], annotations: Mapping[str, Any]) -> list[DeviceChoice]:
    raw = annotations.get(spec.ANN_GPU_INDEX)
    if raw is None:
        return []
    containers = mapping(pod.get("spec")).get("containers") or []
    memory = sum(quantity_value(mapping(mapping(mapping(c).get("resources")).get("limits")).get(spec.GPU_MEMORY))
                 for c in containers)
    return [DeviceChoice(str(i), memory or None, None) for i in decode_gpu_index(raw).indexes]


def _ascend(annotations: Mapping[str, Any]) -> list[DeviceChoice]:
    choices = []
    for key, value in annotations.items():
        common_word = allocated_common_word(key)
        if common_word is None:
            continue
        templates = _runtime_templates(annotations.get(f"huawei.com/{common_word}"))
        for alloc in decode_ascend_allocations(value).devices:
            choices.append(DeviceChoice(alloc.uuid, alloc.memory, alloc.cores, template=templates.get(alloc.uuid)))
    return choices


def _runtime_templates(raw: Any) -> dict[str, str]:
    try:
        entries = json.loads(raw) if isinstance(raw, str) else []
    except ValueError:
        return {}
    out = {}
    for entry in entries if isinstance(entries, list) else []:
        if isinstance(entry, dict) and isinstance(entry.get("UUID"), str) and entry.get("temp"):
            out[entry["UUID"]] = str(entry["temp"])
    return out


def _mindcluster(annotations: Mapping[str, Any]) -> list[DeviceChoice]:
    raw = annotations.get(spec.ANN_NPU_CORE)
    if raw is None:
        return []
    decoded = decode_npu_core(raw)
    return [DeviceChoice(str(c), None, None, template=decoded.template) for c in decoded.chips]
