"""From a `ClusterSnapshot` to the `ClusterFacts` that cluster-aware pod rules read.

`lint --snapshot`, the doctor's review of existing pods and the cluster-aware webhook (node by node:
`node_facts`, then `combine`) all take their facts from here, so a rule sees the same cluster whatever
the entry point. The device config is always the one Volcano runs on (the cluster model resolves its
built-in config when the ConfigMap is unusable), so it counts as given. The DRA facts (`cluster/dra.py`) come
from a snapshot's DeviceClasses, claims and templates and whether its Volcano allocates claims; the webhook
watches none of them, so its facts have none.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, fields, replace
from typing import Any, Final

from vgpuctl.core import spec
from vgpuctl.core.cluster.dra import dra_facts_of, scheduler_dra
from vgpuctl.core.cluster.model import ClusterSnapshot, DeviceState, NodeState
from vgpuctl.core.facts import AscendDevice, AscendNode, ClusterFacts, GpuDevice, GpushareNode, VgpuNode
from vgpuctl.core.findings import Severity
from vgpuctl.core.versions import Version, VersionError, parse_version


def _image_tags(objects: Iterable[Mapping[str, Any]], is_component: Callable[[str], bool]) -> list[str]:
    """The tags of the container images of these workloads whose repository name (the last path element,
    without tag or digest) `is_component`; "" for an untagged image."""
    tags: list[str] = []
    for obj in objects:
        pod_spec = _mapping(_mapping(_mapping(obj.get("spec")).get("template")).get("spec"))
        containers = pod_spec.get("containers")
        for container in containers if isinstance(containers, list) else ():
            image = container.get("image") if isinstance(container, dict) else None
            if not isinstance(image, str):
                continue
            name, _, tag = image.split("@", 1)[0].rsplit("/", 1)[-1].partition(":")
            if is_component(name):
                tags.append(tag)
    return tags


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def detect_volcano_version(snapshot: ClusterSnapshot) -> Version | None:
    """The Volcano version from the `vc-scheduler` image tag (Deployments), if one is visible."""
    for tag in _image_tags(snapshot.deployments, lambda name: "vc-scheduler" in name):
        try:
            return parse_version(tag)
        except VersionError:
            continue
    return None


def detect_ascend_plugin_tags(snapshot: ClusterSnapshot) -> tuple[str, ...]:
    """The image tags of the Project-HAMi ascend-device-plugin DaemonSets (the HAMi-mode plugin; MindCluster's
    is `ascend-k8sdeviceplugin`), in snapshot order; `ClusterFacts.ascend_runtimeclass_required` reads them."""
    return tuple(_image_tags(snapshot.daemonsets, lambda name: name == "ascend-device-plugin"))


@dataclass(frozen=True, slots=True)
class NodeFacts:
    """One node's contribution to `ClusterFacts` (the cluster-aware webhook keeps one per watched node)."""

    vgpu: VgpuNode | None = None
    gpushare: GpushareNode | None = None
    ascend: AscendNode | None = None
    npu_cores: int | None = None  # MindCluster: the node's total AI cores
    cores_per_chip: int | None = None
    resources: frozenset[str] = frozenset()


def node_facts(node: NodeState, factor: int, hami_core_default: bool = False) -> NodeFacts:
    """What `node` adds to the cluster's facts; `factor` is the device config's gpuMemoryFactor and
    `hami_core_default` its `vnpus.hamiVnpuCore` (a node without the `hami-vnpu-core` annotation has that)."""
    # One pass over the devices, the GPUs apart, positional constructors and list displays: per node of the
    # cluster, 40,000 GPUs on a fleet of 5,000 nodes (benchmarks/why_scale.py, benchmarks/doctor_scale.py).
    gpus: list[DeviceState] = []
    by_family: dict[spec.Family, list[DeviceState]] = {}
    for d in node.devices:
        if d.family is _VGPU:
            gpus.append(d)
        else:
            by_family.setdefault(d.family, []).append(d)
    cards = by_family.get(spec.Family.GPUSHARE, [])
    npus = by_family.get(spec.Family.ASCEND_HAMI, [])
    chips = by_family.get(spec.Family.ASCEND_MINDCLUSTER, [])
    return NodeFacts(
        vgpu=VgpuNode(node.name, _gpu_devices(gpus, factor)) if gpus else None,
        gpushare=GpushareNode(node.name, cards[0].memory_total, sum(1 for c in cards if c.health)) if cards else None,
        ascend=AscendNode(node.name, tuple(
            AscendDevice(common_word=d.type, memory=d.memory_total, cores=d.cores_total, uuid=d.id, index=d.index,
                         count=d.slots_total, health=d.health) for d in npus),
            hami_vnpu_core=_hami_core(node, hami_core_default)) if npus else None,
        npu_cores=sum(c.cores_total for c in chips) if chips else None,
        cores_per_chip=chips[0].cores_total if chips else None,
        resources=frozenset([k for k in node.allocatable if isinstance(k, str)]),
    )


_VGPU: Final = spec.Family.VGPU
# The slots of the frozen `GpuDevice`, set directly (`_gpu_devices`).
_GPU_SET: Final = {f.name: getattr(GpuDevice, f.name).__set__ for f in fields(GpuDevice)}
_new = object.__new__


def _gpu_devices(gpus: Iterable[DeviceState], factor: int) -> tuple[GpuDevice, ...]:
    """`GpuDevice(d.id, d.type, d.memory_total // factor, d.mode, d.slots_total, d.health)` of each GPU, made by
    setting the slots: the frozen dataclass's `__init__` sets each field through `object.__setattr__`, and 40,000
    GPUs on a fleet of 5,000 nodes cost 45–60 ms that way, 20 this way (benchmarks/why_scale.py --phases, rule
    facts); tests/unit/test_cluster_decode_speed.py holds the two equal."""
    set_uuid, set_type, set_memory, set_mode = _GPU_SET["uuid"], _GPU_SET["type"], _GPU_SET["memory"], _GPU_SET["mode"]
    set_split, set_health, set_registered = _GPU_SET["split"], _GPU_SET["health"], _GPU_SET["registered_mode"]
    made: list[GpuDevice] = []
    for d in gpus:
        gpu: GpuDevice = _new(GpuDevice)
        set_uuid(gpu, d.id)
        set_type(gpu, d.type)
        set_memory(gpu, d.memory_total // factor)
        set_mode(gpu, d.mode)
        set_split(gpu, d.slots_total)
        set_health(gpu, d.health)
        set_registered(gpu, None)  # the field's default: the cluster model keeps Volcano's reading only
        made.append(gpu)
    return tuple(made)


def _hami_core(node: NodeState, default: bool) -> bool:
    """`ascend/hami getNodeDevices`: the node's `hami-vnpu-core` wins (only "true" is true); absent, the config's."""
    value = node.annotations.get(spec.NODE_HAMI_VNPU_CORE)
    return value == "true" if value is not None else default


def combine(parts: Iterable[NodeFacts], base: ClusterFacts) -> ClusterFacts:
    """`base` (device config, version, scheduler names, policy) with the node facts of `parts`, in order."""
    vgpu: list[VgpuNode] = []
    share: list[GpushareNode] = []
    ascend: list[AscendNode] = []
    npu_cores: list[int] = []
    cores_per_chip: int | None = None
    resources: set[str] = set()
    for part in parts:
        if part.vgpu is not None:
            vgpu.append(part.vgpu)
        if part.gpushare is not None:
            share.append(part.gpushare)
        if part.ascend is not None:
            ascend.append(part.ascend)
        if part.npu_cores is not None:
            npu_cores.append(part.npu_cores)
        cores_per_chip = cores_per_chip or part.cores_per_chip
        resources.update(part.resources)
    return replace(base, vgpu_nodes=tuple(vgpu), gpushare_nodes=tuple(share), ascend_nodes=tuple(ascend),
                   npu_core_capacities=tuple(npu_cores), cores_per_310p_chip=cores_per_chip,
                   node_resources=frozenset(resources))


def facts_from_snapshot(
    snapshot: ClusterSnapshot,
    *,
    scheduler_names: tuple[str, ...] = spec.DEFAULT_SCHEDULER_NAMES,
    volcano_version: Version | None = None,
    privileged_severity: Severity = Severity.ERROR,
) -> ClusterFacts:
    factor = snapshot.device_config.nvidia.memory_factor
    version = volcano_version or detect_volcano_version(snapshot)
    base = ClusterFacts(device_config=snapshot.device_config,
                        volcano_version=version,
                        scheduler_names=scheduler_names, privileged_severity=privileged_severity,
                        ascend_plugin_tags=detect_ascend_plugin_tags(snapshot),
                        dra=dra_facts_of(snapshot), dra_blocked=dra_blocked(snapshot, version))
    hami_core = snapshot.device_config.hami_vnpu_core
    return combine((node_facts(node, factor, hami_core) for node in snapshot.nodes), base)


def dra_blocked(snapshot: ClusterSnapshot, version: Version | None) -> str | None:
    """Why the snapshot's Volcano cannot allocate DRA claims (VGC014), or None when it can or nobody knows."""
    support = scheduler_dra(snapshot, version)
    if support is None or support.allocates is not False:
        return None
    return "; ".join(support.missing)
