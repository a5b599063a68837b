"""What a pod asks each device family for, read the way Volcano reads it (docs/vgpu.md#vgpu-pod-request,
docs/vgpu.md#gpushare, docs/ascend.md#ascend-hami-pod-request, docs/ascend.md#mindcluster-pod).

The container views and quantity parsing are the pod rules' (`podrules.context`, `resources`,
`mindcluster`); this module only adds Volcano's extraction quirks: init containers ignored for vGPU and
Ascend, `Nums = 1` when only memory is given, percentage 101 meaning "not set" and 100 meaning "the whole
card", int32 truncation of memory, the Ascend template trimming, the MindCluster template table. What the
pod asks of the node itself (cpu, memory, tolerations, selectors) is `nodefit.py`'s, in `PodRequest.node`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.deviceconfig import VnpuConfig
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.podrules.context import ContainerView, PodContext, build_context, quantity
from vgpuctl.core.podrules.mindcluster import npu_core_request
from vgpuctl.core.podrules.resources import whole_number
from vgpuctl.core.podrules.targets import PodTarget, as_mapping
from vgpuctl.core.why.nodefit import NodeRequest, parse_node_request
from vgpuctl.core.why.scheduler_env import WhyEnv

PERCENT_UNSET = 101  # Volcano's "no percentage given"
_UINT64 = 2**64


def go_int32(n: int) -> int:
    """Go's `int32(x)`: wraps."""
    return (n + 2**31) % 2**32 - 2**31


def go_uint(n: int) -> int:
    """Go's `uint(x)` of a negative int: wraps to a huge number (nothing ever has that much free)."""
    return n % _UINT64 if n < 0 else n


def as_int64(raw: Any) -> int:
    """`Quantity.AsInt64()` with its ok flag dropped, as Volcano does: not a whole number → 0."""
    if raw is None:
        return 0
    value = whole_number(raw).value
    return value if value is not None else 0


def quantity_value(raw: Any) -> int:
    """`Quantity.Value()`: rounded to a whole number away from zero, as Go does; unreadable → 0."""
    q = quantity(raw)
    return 0 if q is None else q.value_rounded_up()


@dataclass(frozen=True, slots=True)
class VgpuRequest:
    container: str
    nums: int
    memory: int  # per GPU, in register units (MiB ÷ gpuMemoryFactor), int32 as Volcano holds it
    percentage: int  # PERCENT_UNSET, or % of each GPU's memory (100 when neither memory nor % is set)
    cores: int


@dataclass(frozen=True, slots=True)
class AscendRequest:
    vnpu: VnpuConfig
    container: str
    nums: int
    memory: int  # MiB as written (0: none given, i.e. 100 % of the device)
    cores: int


@dataclass(frozen=True, slots=True)
class MindClusterRequest:
    cores: int
    dvpp: str  # the label value as written ("null" when absent)
    level: str  # "low" | "high" (anything else reads as low)


@dataclass(frozen=True, slots=True)
class PodRequest:
    key: str  # ns/name
    annotations: Mapping[str, Any]
    labels: Mapping[str, Any]
    vgpu: tuple[VgpuRequest, ...] = ()
    vgpu_wanted: bool = False  # the pod names a vGPU resource in some app container's limits
    gpushare_memory: int = 0
    gpushare_number: int = 0
    ascend: tuple[AscendRequest, ...] = ()
    ascend_hami_core: bool = False
    mindcluster: MindClusterRequest | None = None
    mindcluster_wanted: bool = False  # npu-core in limits (whatever the ring-controller label says)
    node: NodeRequest = field(default_factory=lambda: NodeRequest({}))  # what it asks of the node (`nodefit.py`)

    @property
    def gpushare_wanted(self) -> bool:
        return self.gpushare_memory > 0 or self.gpushare_number > 0


def parse_pod(pod: Mapping[str, Any], env: WhyEnv) -> PodRequest:
    meta = as_mapping(pod.get("metadata"))
    target = PodTarget((), meta, as_mapping(pod.get("spec")), "", "")
    ctx = build_context(target, ClusterFacts(device_config=env.device_config), False, True)
    key = f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"
    apps = ctx.apps
    vgpu, vgpu_wanted = _vgpu(apps, env)
    share_mem, share_num = _gpushare(ctx)
    ascend = _ascend(apps, env)
    mind, mind_wanted = _mindcluster(ctx, apps)
    return PodRequest(
        key=key, annotations=ctx.annotations, labels=ctx.labels, vgpu=vgpu, vgpu_wanted=vgpu_wanted,
        gpushare_memory=share_mem, gpushare_number=share_num, ascend=ascend,
        ascend_hami_core=ctx.annotations.get(spec.ANN_VNPU_MODE) == spec.VNPU_MODE_HAMI_CORE,
        mindcluster=mind, mindcluster_wanted=mind_wanted, node=parse_node_request(pod, env),
    )


def _vgpu(apps: list[ContainerView], env: WhyEnv) -> tuple[tuple[VgpuRequest, ...], bool]:
    nv = env.device_config.nvidia
    count_name, memory_name = nv.resource_count_name, nv.resource_memory_name
    requests = []
    wanted = any(n in c.limits for c in apps for n in (spec.VGPU_NUMBER, spec.VGPU_MEMORY, count_name,
                                                      memory_name) if n)
    for c in apps:
        if count_name and count_name in c.limits:
            nums = as_int64(c.limits[count_name])
        elif memory_name and memory_name in c.limits:
            nums = 1
        else:
            continue
        memory = go_int32(as_int64(c.get(memory_name))) if memory_name else 0
        percentage = PERCENT_UNSET
        pct_name = nv.resource_memory_percentage_name
        if pct_name and c.get(pct_name) is not None:
            percentage = go_int32(as_int64(c.get(pct_name)))
        if percentage == PERCENT_UNSET and memory == 0:
            percentage = 100
        cores = go_int32(as_int64(c.get(nv.resource_core_name))) if nv.resource_core_name else 0
        requests.append(VgpuRequest(c.name, go_int32(nums), memory, percentage, cores))
    return tuple(requests), wanted


def _gpushare(ctx: PodContext) -> tuple[int, int]:
    """Pod total = max(sum over app containers, max over init containers), limits only (docs/vgpu.md#gpushare)."""
    def total(resource: str) -> int:
        app = sum(quantity_value(c.limits.get(resource)) for c in ctx.containers if c.kind == "containers")
        init = max((quantity_value(c.limits.get(resource)) for c in ctx.containers if c.kind == "initContainers"),
                   default=0)
        return max(app, init)

    return total(spec.GPU_MEMORY), total(spec.GPU_NUMBER)


def _ascend(apps: list[ContainerView], env: WhyEnv) -> tuple[AscendRequest, ...]:
    requests = []
    for vnpu in env.device_config.vnpus:
        for c in apps:
            if vnpu.resource_name in c.limits:
                nums = as_int64(c.limits[vnpu.resource_name])
            elif vnpu.resource_memory_name and vnpu.resource_memory_name in c.limits:
                nums = 1
            else:
                continue
            memory = go_int32(as_int64(c.get(vnpu.resource_memory_name))) if vnpu.resource_memory_name else 0
            cores = go_int32(as_int64(c.get(vnpu.core_resource_name)))
            requests.append(AscendRequest(vnpu, c.name, go_int32(nums), memory, cores))
    return tuple(requests)


def _mindcluster(ctx: PodContext, apps: list[ContainerView]) -> tuple[MindClusterRequest | None, bool]:
    wanted = any(spec.NPU_CORE in c.limits for c in apps)
    if not wanted or ctx.labels.get(spec.LABEL_RING_CONTROLLER) != spec.RING_CONTROLLER_310P:
        return None, wanted
    dvpp = ctx.labels.get(spec.LABEL_VNPU_DVPP)
    level = ctx.labels.get(spec.LABEL_VNPU_LEVEL)
    return MindClusterRequest(
        cores=npu_core_request(ctx) or 0,
        dvpp=dvpp if isinstance(dvpp, str) else ("null" if dvpp is None else str(dvpp)),
        level=level if level in spec.VNPU_LEVELS else "low",
    ), wanted
