"""VGP018: pod annotations HAMi's scheduler reads and Volcano's deviceshare ignores.

Users moving from HAMi bring its annotations along. Checked against volcano-sh/volcano (master ed72c7c81,
after v1.16.0-alpha.1): the vGPU code reads `nvidia.com/use-gputype`, `nvidia.com/nouse-gputype`,
`volcano.sh/vgpu-use-gpuuuid`, `volcano.sh/vgpu-nouse-gpuuuid`, `volcano.sh/vgpu-mode` and
`volcano.sh/vgpu-podgroup-policy` (`pkg/scheduler/api/devices/nvidia/vgpu/type.go`, `utils.go`); the
Ascend HAMi code reads `huawei.com/vnpu-mode` and builds `hami.io/use-<commonWord>-uuid` /
`hami.io/no-use-<commonWord>-uuid` names into each device (`pkg/scheduler/api/devices/ascend/hami/
device_info.go` InitDevices) but never reads a pod annotation by them. None of `pkg/scheduler/` mentions
`nvidia.com/use-gpuuuid`, `nvidia.com/nouse-gpuuuid`, `nvidia.com/vgpu-mode`, `nvidia.com/numa-bind`,
`hami.io/gpu-scheduler-policy` or `hami.io/node-scheduler-policy`. A pod carrying one is scheduled as if it
were absent.
"""

from __future__ import annotations

import re
from typing import Final

from vgpuctl.core import spec
from vgpuctl.core.findings import Severity
from vgpuctl.core.podrules.context import PodContext
from vgpuctl.core.versions import NEWEST_VOLCANO, has_gpu_uuid_filter

WARNING = Severity.WARNING
_POLICY = "`deviceshare.SchedulePolicy` in volcano-scheduler.conf (cluster-wide, no per-pod setting)"

# HAMi's annotation → (what it asks for, what Volcano reads for the same wish, or None).
IGNORED: Final[dict[str, tuple[str, str | None]]] = {
    "nvidia.com/use-gpuuuid": ("the GPUs it pins", spec.ANN_USE_GPUUUID),
    "nvidia.com/nouse-gpuuuid": ("the GPUs it excludes", spec.ANN_NOUSE_GPUUUID),
    "nvidia.com/vgpu-mode": ("the GPU mode it asks for", f"{spec.ANN_VGPU_MODE} (hami-core or mig)"),
    "nvidia.com/numa-bind": ("NUMA binding", None),
    "hami.io/gpu-scheduler-policy": ("the per-pod GPU policy", _POLICY),
    "hami.io/node-scheduler-policy": ("the per-pod node policy", _POLICY),
}
_NPU_UUID = re.compile(r"hami\.io/(no-)?use-(.+)-uuid")


def _ignored(key: str) -> tuple[str, str | None] | None:
    """(what `key` asks HAMi for, what Volcano reads instead or None) when Volcano ignores `key`, else None."""
    known = IGNORED.get(key)
    if known is not None or not key.startswith("hami.io/"):
        return known
    match = _NPU_UUID.fullmatch(key)
    if match is None:
        return None
    return f"the {match.group(2)} NPUs it {'excludes' if match.group(1) else 'pins'}", None


def is_ignored(key: str) -> bool:
    """Whether `key` is an annotation VGP018 reports (for the doctor's per-shape review key)."""
    return _ignored(key) is not None


def check(ctx: PodContext) -> None:
    """VGP018 on a pod that requests vGPU or an Ascend device."""
    for key in ctx.annotations:
        found = _ignored(key) if isinstance(key, str) else None
        if found is None:
            continue
        wish, instead = found
        if instead in (spec.ANN_USE_GPUUUID, spec.ANN_NOUSE_GPUUUID):
            version = ctx.facts.volcano_version or NEWEST_VOLCANO
            if not has_gpu_uuid_filter(version):
                instead = f"{instead} (from Volcano 1.16; {version} has no GPU UUID filter)"
        then = f"; Volcano reads {instead}" if instead else "; Volcano has no equivalent"
        ctx.emit("VGP018", WARNING, f"annotation/{key}",
                 f"{ctx.pod_where()}: {key} is read by HAMi's scheduler, not by Volcano, which silently ignores "
                 f"{wish}{then}")
