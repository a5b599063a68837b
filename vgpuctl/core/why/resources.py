"""The resource names Volcano's generic resource check leaves out: the device families' `GetIgnoredDevices`.

volcano-sh/volcano `pkg/scheduler/api/resource_info.go` `NewResource` (master at ed72c7c81) turns a resource
list — a pod's requests as well as a node's allocatable — into scalars, skipping every name on
`IgnoredDevicesList`, which `api/node_info.go setNodeOthersResource` fills from the enabled device models'
`GetIgnoredDevices`: Ascend HAMi ignores its `<resourceName>-memory` and `<resourceName>-core`
(`ascend/hami/device_info.go`); vGPU ignores nothing (`nvidia/vgpu/device_info.go`), so from 1.13 on
`volcano.sh/vgpu-number`, `-memory`, `-cores` and `-memory-percentage` are compared like any other resource —
and the percentage, which the vGPU device plugin never advertises (Project-HAMi/volcano-vgpu-device-plugin
`pkg/rm/rm.go`), fails on every node (VGP006). Before 1.13 the vGPU names were ignored
(`versions.checks_vgpu_resources_generically`). gpushare and MindCluster ignore nothing.

The check itself (every requested resource against the node's idle allocatable) is `nodefit.py`'s.
"""

from __future__ import annotations

from vgpuctl.core.versions import checks_vgpu_resources_generically
from vgpuctl.core.why.scheduler_env import WhyEnv


def ignored_resources(env: WhyEnv) -> frozenset[str]:
    """The names `NewResource` skips under `env` (its enabled families, device config and Volcano version)."""
    ignored: set[str] = set()
    if env.deviceshare.ascend_hami:
        for vnpu in env.device_config.vnpus:
            ignored.update(n for n in (vnpu.resource_memory_name, f"{vnpu.resource_name}-core") if n)
    if env.volcano_version is not None and not checks_vgpu_resources_generically(env.volcano_version):
        nv = env.device_config.nvidia
        ignored.update(n for n in (nv.resource_count_name, nv.resource_memory_name, nv.resource_core_name,
                                   nv.resource_memory_percentage_name) if n)
    return frozenset(ignored)
