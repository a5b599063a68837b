"""`geometry export`: the device config as Volcano understands it, written back out in upstream order.

The normalised document holds exactly what `parse_device_config` keeps (unknown keys are gone; a value
Volcano reads as zero is written only where its zero matters), in the key order of the upstream
ConfigMaps, with `vnpus` in the form asked for. Parsing it again gives the same model: export is the
identity on what Volcano sees, which is what makes it safe to review, diff and re-apply.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import yaml

from vgpuctl.core import spec
from vgpuctl.core.deviceconfig import DeviceConfig, MigGeometry, NvidiaConfig, VnpuConfig, VnpusForm

# nvidia keys written even when zero: their zero value is a finding (VGM004, VGM008), not a default.
_ALWAYS = ("resourceCountName", "resourceMemoryName", "resourceCoreName", "deviceSplitCount", "deviceCoreScaling",
           "gpuMemoryFactor")


def _number(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def _geometry(geometry: MigGeometry) -> dict[str, Any]:
    return {
        "models": list(geometry.models),
        "allowedGeometries": [
            {"group": group.name,
             "geometries": [{"name": i.name, "memory": i.memory, "count": i.count} for i in group.instances]}
            for group in geometry.groups
        ],
    }


def export_nvidia(nv: NvidiaConfig) -> dict[str, Any]:
    values: dict[str, Any] = {
        "resourceCountName": nv.resource_count_name,
        "resourceMemoryName": nv.resource_memory_name,
        "resourceMemoryPercentageName": nv.resource_memory_percentage_name,
        "resourceCoreName": nv.resource_core_name,
        "resourcePriorityName": nv.resource_priority_name,
        "overwriteEnv": nv.overwrite_env,
        "defaultMemory": nv.default_memory,
        "defaultCores": nv.default_cores,
        "defaultGPUNum": nv.default_gpu_num,
        "deviceSplitCount": nv.device_split_count,
        "deviceMemoryScaling": _number(nv.device_memory_scaling),
        "deviceCoreScaling": _number(nv.device_core_scaling),
        "disableCoreLimit": nv.disable_core_limit,
        "gpuMemoryFactor": nv.gpu_memory_factor,
    }
    out = {k: v for k, v in values.items() if k in _ALWAYS or v}
    if nv.known_mig_geometries:
        out["knownMigGeometries"] = [_geometry(g) for g in nv.known_mig_geometries]
    return out


def export_vnpu(vnpu: VnpuConfig) -> dict[str, Any]:
    return {
        "chipName": vnpu.chip_name,
        "commonWord": vnpu.common_word,
        "resourceName": vnpu.resource_name,
        "resourceMemoryName": vnpu.resource_memory_name,
        "memoryAllocatable": vnpu.memory_allocatable,
        "memoryCapacity": vnpu.memory_capacity,
        "aiCore": vnpu.ai_core,
        "aiCPU": vnpu.ai_cpu,
        "templates": [{"name": t.name, "memory": t.memory, "aiCore": t.ai_core, "aiCPU": t.ai_cpu}
                      for t in vnpu.templates],
    }


def shape_vnpus(entries: list[Any], form: VnpusForm, hami_vnpu_core: bool, extra: Mapping[str, Any] | None = None
                ) -> Any:
    """`vnpus` in `form`: the legacy list, or the wrapper `{hamiVnpuCore, configs}` (+ `extra` keys)."""
    if form is VnpusForm.LIST:
        return entries
    wrapper: dict[str, Any] = {"hamiVnpuCore": hami_vnpu_core, "configs": entries}
    wrapper.update({k: v for k, v in (extra or {}).items() if k not in wrapper})
    return wrapper


def export_payload(config: DeviceConfig, form: VnpusForm | None = None) -> dict[str, Any]:
    """The normalised `device-config.yaml` payload of `config`; `form` converts `vnpus` (None: keep it).

    Converting a wrapper with `hamiVnpuCore: true` to the list form loses that flag (the list cannot say
    it); callers that convert say so.
    """
    out: dict[str, Any] = {}
    if config.has_nvidia:
        out["nvidia"] = export_nvidia(config.nvidia)
    target = config.vnpus_form if form is None or config.vnpus_form is VnpusForm.ABSENT else form
    if target is not VnpusForm.ABSENT:
        entries = [export_vnpu(v) for v in config.vnpus]
        out["vnpus"] = shape_vnpus(entries, target, config.hami_vnpu_core and target is VnpusForm.WRAPPER)
    return out


class _BlockDumper(yaml.SafeDumper):
    """Writes multi-line strings as `|` blocks, the way ConfigMaps embed `device-config.yaml`."""


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_BlockDumper.add_representer(str, _str)


def dump_yaml(data: Any) -> str:
    """Deterministic YAML in insertion order, multi-line strings as blocks."""
    return yaml.dump(data, Dumper=_BlockDumper, sort_keys=False, allow_unicode=True, width=120,
                     default_flow_style=False)


def configmap_object(name: str, namespace: str, data: Mapping[str, str], *,
                     labels: Mapping[str, str] | None = None,
                     annotations: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A ConfigMap manifest with `data` (labels and annotations only when given)."""
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = dict(labels)
    if annotations:
        metadata["annotations"] = dict(annotations)
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata, "data": dict(data)}


def configmap(payload: Any, name: str, namespace: str, labels: Mapping[str, str] | None = None,
              annotations: Mapping[str, str] | None = None) -> dict[str, Any]:
    """A ConfigMap holding `payload` under `device-config.yaml`."""
    return configmap_object(name, namespace, {spec.DEVICE_CONFIG_KEY: dump_yaml(payload)}, labels=labels,
                            annotations=annotations)


def export_document(config: DeviceConfig, wrapped_in: Mapping[str, Any] | None = None,
                    form: VnpusForm | None = None) -> dict[str, Any]:
    """The normalised payload, re-wrapped in the input's ConfigMap (name, namespace, labels) if it had one."""
    payload = export_payload(config, form)
    if wrapped_in is None:
        return payload
    raw_meta = wrapped_in.get("metadata")
    meta: Mapping[str, Any] = raw_meta if isinstance(raw_meta, Mapping) else {}
    raw_labels = meta.get("labels")
    labels = raw_labels if isinstance(raw_labels, Mapping) else None
    return configmap(payload, str(meta.get("name") or spec.DEVICE_CONFIGMAP),
                     str(meta.get("namespace") or spec.DEVICE_CONFIGMAP_NAMESPACE), labels)
