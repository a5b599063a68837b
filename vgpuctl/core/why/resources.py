"""Volcano's allocate predicate on the pod's resources, for the extended resources a node does not advertise.

volcano-sh/volcano `pkg/scheduler/actions/allocate/allocate.go` (`predicate`, master at ed72c7c81): before
any plugin predicate, `task.InitResreq.LessEqualWithResourcesName(node.FutureIdle(), api.Zero)` compares
every scalar resource the pod requests with the node's idle resources; with `api.Zero` a resource the
node does not list counts as 0, so the node fails with `Insufficient <name>` (`WrapInsufficientResourceReason`
in `pkg/scheduler/api/unschedule_info.go`). Only the names a device family lists in `GetIgnoredDevices`
are left out (`pkg/scheduler/api/resource_info.go` `NewResource`): Ascend HAMi ignores its
`<resourceName>-memory` and `<resourceName>-core`; vGPU ignores nothing, so `volcano.sh/vgpu-memory-percentage`
— which the vGPU device plugin never advertises (Project-HAMi/volcano-vgpu-device-plugin `pkg/rm/rm.go`) —
fails on every node that does not (VGP006). Volcano reads the vGPU resources this way from 1.13.

`why` runs this after the device filters passed (a node that fails them is reported for that first) and
checks only whether the node advertises the resource at all; the quantities stay with the device filters.
"""

from __future__ import annotations

from collections.abc import Iterable

from vgpuctl.core import spec
from vgpuctl.core.cluster.model import NodeState
from vgpuctl.core.versions import checks_vgpu_resources_generically
from vgpuctl.core.why.model import Miss, NodeVerdict, Reason
from vgpuctl.core.why.scheduler_env import WhyEnv

PROGRESS = 20.0  # past every device check: closer to fitting than any device-level miss


def _ignored(env: WhyEnv) -> set[str]:
    ignored: set[str] = set()
    if env.deviceshare.ascend_hami:
        for vnpu in env.device_config.vnpus:
            ignored.update(n for n in (vnpu.resource_memory_name, f"{vnpu.resource_name}-core") if n)
    if env.volcano_version is not None and not checks_vgpu_resources_generically(env.volcano_version):
        nv = env.device_config.nvidia
        ignored.update(n for n in (nv.resource_count_name, nv.resource_memory_name, nv.resource_core_name,
                                   nv.resource_memory_percentage_name) if n)
    return ignored


def unadvertised(requested: Iterable[str], node: NodeState, env: WhyEnv, family: spec.Family) -> NodeVerdict | None:
    """The miss for the first requested extended resource `node` does not advertise, or None."""
    ignored = _ignored(env)
    # Volcano reads status.allocatable; a hand-written node with only a capacity stands for both.
    advertised = node.allocatable or node.capacity
    for name in sorted(requested):
        if name in ignored or name in advertised:
            continue
        why = (" (the vGPU device plugin never advertises it)" if name == spec.VGPU_MEMORY_PERCENTAGE else "")
        hint = (f"ask for {spec.VGPU_MEMORY} (MiB per GPU) instead of {name}" if name == spec.VGPU_MEMORY_PERCENTAGE
                else f"use nodes that advertise {name}")
        return NodeVerdict.miss(node.name, family,
                                Miss(Reason.OTHER, f"Insufficient {name}: the node does not advertise it{why}; "
                                                   "Volcano's allocate predicate compares every requested "
                                                   "resource with the node's idle resources", PROGRESS, hint))
    return None
