"""Build a `ClusterSnapshot` from plain Kubernetes objects (a snapshot file or a live read).

One pass over the objects: partition by kind, find the device config Volcano really reads (through the
scheduler's `deviceshare` arguments), decode every node's registration into devices, then add the usage
of every pod bound to a node that is not Succeeded/Failed. Decoding problems become node findings with
the codec's finding code; nothing here raises on malformed objects.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.cluster.model import ClusterSnapshot, DeviceState, NodeState
from vgpuctl.core.codecs import (
    CodecProblem,
    decode_ascend_allocations,
    decode_ascend_register,
    decode_gpu_index,
    decode_gpu_unhealthy_ids,
    decode_npu_core,
    decode_vgpu_ids,
    decode_vgpu_register,
)
from vgpuctl.core.deviceconfig import (
    DeviceConfig,
    DeviceConfigDocumentError,
    VnpusForm,
    default_device_config,
    parse_device_config,
    payload_from_document,
)
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.quantity import int_value as _int
from vgpuctl.core.schedconf import SchedulerConf, SchedulerConfError, deviceshare_args, parse_scheduler_conf
from vgpuctl.core.versions import Version, accepts_vnpus_wrapper, requires_six_field_register

_EMPTY: Mapping[str, Any] = {}
_DONE_PHASES = ("Succeeded", "Failed")
# No real node has more; a garbage capacity must not make us build millions of devices.
MAX_DEVICES_PER_NODE = 1024
_ALLOCATED_SUFFIX = "-devices-allocated"


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else _EMPTY


def _name(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = _m(obj.get("metadata"))
    ns, name = meta.get("namespace"), meta.get("name")
    return (ns if isinstance(ns, str) else "", name if isinstance(name, str) else "")


def _finding(problem: CodecProblem, subject: str, severity: Severity | None = None) -> Finding:
    from vgpuctl.core.catalogue import lookup

    return Finding(problem.code, severity or lookup(problem.code).severity, subject, problem.message,
                   hint_for(problem.code))


def build_snapshot(
    objects: Iterable[Mapping[str, Any]],
    server_version: str | None = None,
    *,
    volcano_version: Version | None = None,
) -> ClusterSnapshot:
    nodes: list[Mapping[str, Any]] = []
    pods: list[Mapping[str, Any]] = []
    configmaps: dict[tuple[str, str], Mapping[str, Any]] = {}
    daemonsets: list[Mapping[str, Any]] = []
    deployments: list[Mapping[str, Any]] = []
    for obj in objects:
        if not isinstance(obj, dict):
            continue
        kind = obj.get("kind")
        if kind == "Pod":
            pods.append(obj)
        elif kind == "Node":
            nodes.append(obj)
        elif kind == "ConfigMap":
            configmaps[_name(obj)] = obj
        elif kind == "DaemonSet":
            daemonsets.append(obj)
        elif kind == "Deployment":
            deployments.append(obj)

    findings: list[Finding] = []
    scheduler_conf = _scheduler_conf(configmaps, findings)
    args = deviceshare_args(scheduler_conf.plugin(spec.PLUGIN_DEVICESHARE) if scheduler_conf else None)
    device_config, source = _device_config(configmaps, args.geometries_cm_namespace, args.geometries_cm_name,
                                           volcano_version)
    six = volcano_version is None or requires_six_field_register(volcano_version)
    factor = device_config.nvidia.memory_factor

    states = [_node_state(obj, factor, six) for obj in nodes]
    by_name = {n.name: n for n in states}
    for pod in pods:
        _add_usage(pod, by_name, factor)
    return ClusterSnapshot(
        nodes=states, pods=pods, configmaps=configmaps, daemonsets=daemonsets, deployments=deployments,
        server_version=server_version, scheduler_conf=scheduler_conf, deviceshare=args,
        device_config=device_config, device_config_source=source, findings=findings,
    )


def _scheduler_conf(configmaps: Mapping[tuple[str, str], Mapping[str, Any]],
                    findings: list[Finding]) -> SchedulerConf | None:
    cm = configmaps.get((spec.SCHEDULER_NAMESPACE, spec.SCHEDULER_CONFIGMAP))
    if cm is None:
        return None
    text = _m(cm.get("data")).get(spec.SCHEDULER_CONF_KEY)
    subject = f"configmap/{spec.SCHEDULER_NAMESPACE}/{spec.SCHEDULER_CONFIGMAP}"
    if not isinstance(text, str):
        findings.append(Finding("VGC001", Severity.ERROR, subject, f"has no data key {spec.SCHEDULER_CONF_KEY!r}",
                                hint_for("VGC001")))
        return None
    try:
        return parse_scheduler_conf(text)
    except SchedulerConfError as exc:
        findings.append(Finding("VGC001", Severity.ERROR, subject, f"{spec.SCHEDULER_CONF_KEY}: {exc}",
                                hint_for("VGC001")))
        return None


def _device_config(configmaps: Mapping[tuple[str, str], Mapping[str, Any]], namespace: str,
                   name: str, volcano_version: Version | None) -> tuple[DeviceConfig, str]:
    cm = configmaps.get((namespace, name))
    if cm is None:
        return default_device_config(), f"built-in defaults (configmap {namespace}/{name} not found)"
    try:
        parsed = parse_device_config(payload_from_document(cm))
    except DeviceConfigDocumentError as exc:
        return default_device_config(), f"built-in defaults (configmap {namespace}/{name}: {exc})"
    if parsed.config is None:
        return default_device_config(), f"built-in defaults (configmap {namespace}/{name} does not parse)"
    if (volcano_version is not None and parsed.config.vnpus_form is VnpusForm.WRAPPER
            and not accepts_vnpus_wrapper(volcano_version)):
        return default_device_config(), (f"built-in defaults (configmap {namespace}/{name} uses the vnpus wrapper "
                                          f"form, which Volcano {volcano_version} cannot decode)")
    return parsed.config, f"configmap {namespace}/{name}"


def _node_state(obj: Mapping[str, Any], factor: int, six_fields: bool) -> NodeState:
    meta = _m(obj.get("metadata"))
    name = meta.get("name") if isinstance(meta.get("name"), str) else ""
    node = NodeState(name=str(name), obj=obj)
    annotations = _m(meta.get("annotations"))
    subject = f"node/{node.name}"
    register = annotations.get(spec.NODE_VGPU_REGISTER)
    if register is not None:
        decoded = decode_vgpu_register(register, volcano_six_fields=six_fields)
        node.findings.extend(_finding(p, subject) for p in decoded.problems)
        if decoded.devices:
            node.families.append(spec.Family.VGPU)
            for index, device in enumerate(decoded.devices):
                node.devices.append(DeviceState(
                    id=device.uuid, index=index, family=spec.Family.VGPU, type=device.type, mode=device.mode,
                    health=device.health, memory_total=device.memory * factor, cores_total=100,
                    slots_total=device.split,
                ))
            node.mode = decoded.devices[-1].mode  # Volcano: the node takes the last device's mode
    _gpushare(node)
    _ascend(node, annotations, subject)
    _mindcluster(node)
    return node


def _gpushare(node: NodeState) -> None:
    memory, number = _int(node.capacity.get(spec.GPU_MEMORY)), _int(node.capacity.get(spec.GPU_NUMBER))
    if not memory or not number or number <= 0:
        return
    node.families.append(spec.Family.GPUSHARE)
    unhealthy = set(decode_gpu_unhealthy_ids(node.annotations.get(spec.NODE_GPU_UNHEALTHY_IDS)).indexes)
    for index in range(min(number, MAX_DEVICES_PER_NODE)):
        node.devices.append(DeviceState(
            id=str(index), index=index, family=spec.Family.GPUSHARE, type="NVIDIA", mode="gpushare",
            health=index not in unhealthy, memory_total=memory // number, cores_total=0, slots_total=0,
        ))


def _ascend(node: NodeState, annotations: Mapping[str, Any], subject: str) -> None:
    for key, value in annotations.items():
        if not isinstance(key, str) or not key.startswith(spec.NODE_ASCEND_REGISTER_PREFIX):
            continue
        common_word = key[len(spec.NODE_ASCEND_REGISTER_PREFIX):]
        decoded = decode_ascend_register(value, common_word)
        node.findings.extend(_finding(p, subject, Severity.ERROR) for p in decoded.problems)
        if not decoded.devices:
            continue
        if spec.Family.ASCEND_HAMI not in node.families:
            node.families.append(spec.Family.ASCEND_HAMI)
        for device in decoded.devices:
            node.devices.append(DeviceState(
                id=device.uuid, index=device.index, family=spec.Family.ASCEND_HAMI, type=common_word,
                mode="hami-core" if annotations.get(spec.NODE_HAMI_VNPU_CORE) == "true" else "template",
                health=device.health, memory_total=device.memory, cores_total=device.cores,
                slots_total=device.count,
            ))


def _mindcluster(node: NodeState) -> None:
    cores = _int(node.capacity.get(spec.NPU_CORE))
    if not cores or cores <= 0:
        return
    node.families.append(spec.Family.ASCEND_MINDCLUSTER)
    servertype = node.labels.get("servertype")
    per_chip = spec.DEFAULT_CORES_PER_310P_CHIP
    parts = servertype.split("-") if isinstance(servertype, str) else []
    if len(parts) > 1 and parts[1].isascii() and parts[1].isdigit() and 0 < int(parts[1]) <= 64:
        per_chip = int(parts[1])
    chip_type = node.labels.get("node.kubernetes.io/npu.chip.name")
    for index in range(min(cores // per_chip, MAX_DEVICES_PER_NODE)):
        node.devices.append(DeviceState(
            id=str(index), index=index, family=spec.Family.ASCEND_MINDCLUSTER,
            type=chip_type if isinstance(chip_type, str) else "Ascend310P", mode="mindcluster", health=True,
            memory_total=0, cores_total=per_chip, slots_total=0,
        ))


def _add_usage(pod: Mapping[str, Any], nodes: Mapping[str, NodeState], factor: int) -> None:
    spec_ = _m(pod.get("spec"))
    node = nodes.get(spec_.get("nodeName"))  # type: ignore[arg-type]
    if node is None or not node.devices or _m(pod.get("status")).get("phase") in _DONE_PHASES:
        return
    meta = _m(pod.get("metadata"))
    annotations = _m(meta.get("annotations"))
    pod_name = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
    ids = annotations.get(spec.ANN_VGPU_IDS_NEW)
    if ids is not None:
        devices = {d.id: d for d in node.devices if d.family is spec.Family.VGPU}
        for container in decode_vgpu_ids(ids).containers:
            for alloc in container:
                device = devices.get(alloc.uuid)
                if device is None:
                    continue  # a UUID not on this node: the doctor's VGX002
                device.memory_used += alloc.memory * factor
                device.cores_used += alloc.cores
                device.slots_used += 1
                if alloc.mig is not None:
                    device.slices.append(f"{alloc.mig.group}-{alloc.mig.position}")
                if pod_name not in device.pods:
                    device.pods.append(pod_name)
    index = annotations.get(spec.ANN_GPU_INDEX)
    if index is not None:
        _gpushare_usage(node, pod_name, spec_, decode_gpu_index(index).indexes)
    for key, value in annotations.items():
        if isinstance(key, str) and key.startswith("hami.io/") and key.endswith(_ALLOCATED_SUFFIX):
            _ascend_usage(node, pod_name, value)
    npu = annotations.get(spec.ANN_NPU_CORE)
    if npu is not None and spec.Family.ASCEND_MINDCLUSTER in node.families:
        _mindcluster_usage(node, pod_name, npu)


def _pod_total(spec_: Mapping[str, Any], resource: str) -> int:
    def limit(c: Any) -> int:
        return _int(_m(_m(_m(c).get("resources")).get("limits")).get(resource)) or 0

    containers = spec_.get("containers") if isinstance(spec_.get("containers"), list) else []
    inits = spec_.get("initContainers") if isinstance(spec_.get("initContainers"), list) else []
    return max(sum(limit(c) for c in containers or []), max((limit(c) for c in inits or []), default=0))


def _gpushare_usage(node: NodeState, pod_name: str, spec_: Mapping[str, Any], indexes: tuple[int, ...]) -> None:
    cards = {d.index: d for d in node.devices if d.family is spec.Family.GPUSHARE}
    memory = _pod_total(spec_, spec.GPU_MEMORY)
    for i in indexes:
        card = cards.get(i)
        if card is None:
            continue
        card.memory_used += memory if memory else card.memory_total  # gpu-number books whole cards
        if pod_name not in card.pods:
            card.pods.append(pod_name)


def _ascend_usage(node: NodeState, pod_name: str, value: Any) -> None:
    devices = {d.id: d for d in node.devices if d.family is spec.Family.ASCEND_HAMI}
    for container in decode_ascend_allocations(value).containers:
        for alloc in container:
            device = devices.get(alloc.uuid)
            if device is None:
                continue
            device.memory_used += alloc.memory
            device.cores_used += alloc.cores
            device.slots_used += 1
            if pod_name not in device.pods:
                device.pods.append(pod_name)


def _mindcluster_usage(node: NodeState, pod_name: str, value: Any) -> None:
    decoded = decode_npu_core(value)
    chips = {d.index: d for d in node.devices if d.family is spec.Family.ASCEND_MINDCLUSTER}
    for chip_id in decoded.chips:
        chip = chips.get(chip_id)
        if chip is None:
            continue
        if decoded.template:
            chip.slices.append(decoded.template)
            digits = "".join(ch for ch in decoded.template[3:5] if ch.isdigit())  # vir02_1c → 2 cores
            chip.cores_used += int(digits) if digits else 0
        else:
            chip.cores_used = chip.cores_total
        if pod_name not in chip.pods:
            chip.pods.append(pod_name)
