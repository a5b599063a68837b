"""VGP013: can the device plugin pair each vGPU allocation block with the container it was booked for?

Volcano writes one `;`-separated block per app container that has `vgpu-number` or `vgpu-memory` in its
limits, in `spec.containers` order, skipping the others (volcano-sh/volcano
`pkg/scheduler/api/devices/util.go` ExtractResourceRequest). Kubelet sends one container per Allocate call;
the device plugin takes the first block still holding devices and pairs block i with `spec.containers[i]`
(Project-HAMi/volcano-vgpu-device-plugin `pkg/util/util.go` GetNextDeviceRequest, `pkg/plugin/server.go`
Allocate). The devices still go to the right container, in order; what follows the wrong container is the
per-container cache directory (`<hook>/vgpu/containers/<pod-uid>_<container>`, where HAMi-core keeps the
usage that the plugin's vgpu-monitor reports under that container's name, `pkg/monitor/nvidia/cudevshr.go`)
and the `CUDA_DISABLE_CONTROL` opt-out, read from that container's env.

So several vGPU containers listed first are fine; a container without vGPU listed before one with vGPU
shifts the pairing, and an init container with vGPU (VGP007) takes the first block before any app
container asks.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from vgpuctl.core.findings import Severity
from vgpuctl.core.podrules.context import ContainerView, PodContext

WARNING = Severity.WARNING


def pairing(ctx: PodContext, gpu_containers: Sequence[ContainerView], init_vgpu: Sequence[ContainerView]) -> None:
    """VGP013 on a pod whose app containers `gpu_containers` request vGPU (in spec order)."""
    n = ctx.names
    blocks = [c for c in gpu_containers if n.vgpu_count in c.limits or n.vgpu_memory in c.limits]
    if not blocks:
        return
    for init in init_vgpu:
        ctx.emit("VGP013", WARNING, f"spec.initContainers[{init.index}]",
                 f'{ctx.pod_where()}: initContainer "{init.name}" requests vGPU; kubelet allocates it first, so '
                 f'the device plugin hands it the block Volcano booked for container "{blocks[0].name}" and every '
                 "later container gets the next one (or none)")
    # Block i (the i-th container with a block) is paired with spec.containers[i]: right only while the
    # containers with a block are the first ones listed.
    shifted = next(((i, c) for i, c in enumerate(blocks) if c.index != i), None)
    if shifted is None:
        return
    i, c = shifted
    other = _container_name(ctx, i)
    ctx.emit("VGP013", WARNING, "spec.containers",
             f'{ctx.pod_where()}: container "{other}" has no vGPU but is listed before vGPU container "{c.name}"; '
             f'the device plugin pairs the i-th vGPU block with spec.containers[i], so "{c.name}"\'s GPU usage '
             f'cache directory is named after "{other}" and its CUDA_DISABLE_CONTROL is read from "{other}"; '
             "list the vGPU containers first")


def _container_name(ctx: PodContext, index: int) -> str:
    """The name of `spec.containers[index]` (views exist only for containers that request a device)."""
    raw = ctx.target.spec.get("containers")
    if isinstance(raw, list) and 0 <= index < len(raw) and isinstance(raw[index], Mapping):
        name = raw[index].get("name")
        if isinstance(name, str) and name:
            return name
    return f"#{index}"
