"""Node checks (`VGN`, docs/contracts.md#finding-families): one GPU, one owner (docs/stacks.md).

Volcano builds its vGPU model from `volcano.sh/node-vgpu-register` alone and books only the pods it allocated
itself (`volcano.sh/vgpu-ids-new`): nothing in `pkg/scheduler/api/devices` or the deviceshare plugin reads
`nvidia.com/gpu`, another plugin's register or a ResourceClaim (docs/stacks.md#what-volcano-counts). So every
other stack that offers the same GPUs hands them out a second time. The stacks of a node come from
`cluster/stacks.py` (`stacks_of`, shared with VGN012 and the `nodes` report); same conventions as `nodes`:
subject `node/<name>`, no node name in the message.
"""

from __future__ import annotations

from collections.abc import Iterator

from vgpuctl.core import spec
from vgpuctl.core.cluster.stacks import (
    DRA_PREFIX,
    HAMI_FORMS,
    STACK_HAMI,
    STACK_VGPU,
    Stack,
    gpushare_capacity,
    stacks_of,
)
from vgpuctl.core.doctor.checks.nodes import CAT, ERROR, WARNING, node_finding, registered
from vgpuctl.core.doctor.framework import DoctorContext, SkipCheck, check
from vgpuctl.core.findings import Finding

_NVIDIA_RESOURCES = (spec.NVIDIA_GPU, spec.NVIDIA_GPU_SHARED)
_NEVER_COUNTED = (f"Volcano never counts {spec.NVIDIA_GPU} pods when it places vGPU pods, so both hand out the "
                  "same GPUs")
#: The codes of the checks here and VGN012: a node where one of them holds has a GPU two stacks hand out.
STACK_CODES = ("VGN012", "VGN020", "VGN021", "VGN022")


def _shown(uuids: list[str], limit: int = 4) -> str:
    more = f" and {len(uuids) - limit} more" if len(uuids) > limit else ""
    return ", ".join(uuids[:limit]) + more


@check("nodes.nvidia-device-plugin", CAT, "VGN020", "NVIDIA's device plugin does not offer the vGPU plugin's GPUs",
       reads=("nodes",))
def nvidia_device_plugin(ctx: DoctorContext) -> Iterator[Finding]:
    for node in ctx.snapshot.nodes:
        allocatable = node.allocatable
        if not registered(node) or not any(r in allocatable for r in _NVIDIA_RESOURCES):
            continue  # most nodes: two look-ups
        found = stacks_of(ctx.snapshot, node)
        vgpu, nvidia = found.get(STACK_VGPU), found.nvidia
        ours = len(vgpu.gpus or ()) if vgpu is not None else 0
        if nvidia is None or not ours:
            continue  # nvidia.com/gpu is HAMi's or the vGPU plugin's own; a register without GPUs is VGN001–003's
        operator = (f" (deployed by gpu-operator: {spec.LABEL_GPU_OPERATOR_DEVICE_PLUGIN}=true)"
                    if nvidia.operator else "")
        head = (f"NVIDIA's device plugin{operator} advertises {nvidia.describe()} while {spec.NODE_VGPU_REGISTER} "
                f"registers {ours} GPU(s)")
        physical = found.physical
        if physical is not None and ours + nvidia.gpus > physical:
            both = min(ours + nvidia.gpus - physical, ours, nvidia.gpus)
            yield node_finding("VGN020", ERROR, node, f"{head}, on a node with {physical} GPU(s) "
                                                      f"({spec.LABEL_NVIDIA_GPU_COUNT}): at least {both} GPU(s) are "
                                                      f"offered by both; {_NEVER_COUNTED}")
        elif physical is None:
            yield node_finding("VGN020", WARNING, node, f"{head}; without {spec.LABEL_NVIDIA_GPU_COUNT} (GPU feature "
                                                        "discovery) it cannot be told whether they are the same "
                                                        f"GPUs, and {_NEVER_COUNTED} if they are")
        else:
            yield node_finding("VGN020", WARNING, node, f"{head}, together no more than the node's {physical} "
                                                        f"({spec.LABEL_NVIDIA_GPU_COUNT}): a disjoint split "
                                                        "(filterdevices) is possible but the labels cannot prove it, "
                                                        f"and {_NEVER_COUNTED} if they overlap")


def _writer(stack: Stack, hami_form: str | None) -> str:
    if stack.name == STACK_VGPU:
        return f"{spec.NODE_VGPU_REGISTER} (Volcano's vGPU device plugin)"
    form = HAMI_FORMS.get(hami_form or "")
    return f"{spec.NODE_HAMI_NVIDIA_REGISTER} (HAMi's NVIDIA device plugin{f', {form}' if form else ''})"


@check("nodes.dra-slices", CAT, "VGN021", "No DRA driver offers GPUs a device plugin also offers",
       reads=("nodes", "resourceslices"))
def dra_slices(ctx: DoctorContext) -> Iterator[Finding]:
    by_node = ctx.snapshot.slices_by_node
    if by_node is None:
        raise SkipCheck("ResourceSlices were not collected (a snapshot without them, a cluster without "
                        "resource.k8s.io, or the webhook's watch): add resourceslices to the kubectl get, or use "
                        "vgpuctl snapshot save")
    for node in ctx.snapshot.nodes:
        if node.name not in by_node:
            continue
        found = stacks_of(ctx.snapshot, node)
        drivers = [s for s in found.stacks if s.name.startswith(DRA_PREFIX)]
        if not drivers:
            continue  # slices of other devices (NICs, …)
        plugins = [s for s in (found.get(STACK_VGPU), found.get(STACK_HAMI)) if s is not None and s.gpus]
        for plugin in plugins:
            for dra in drivers:
                offered = set(dra.gpus or ())
                both = [u for u in plugin.gpus or () if u in offered]
                if both:
                    driver = dra.name[len(DRA_PREFIX):]
                    yield node_finding("VGN021", ERROR, node, f"ResourceSlices of DRA driver {driver} offer "
                                                              f"{_shown(both)} (the GPU or MIG devices cut from it), "
                                                              f"which {_writer(plugin, found.hami_form)} also "
                                                              "registers: the DRA driver and the device plugin each "
                                                              "hand these GPUs out, and neither sees the other's "
                                                              "pods")
        if found.nvidia is not None:
            names = ", ".join(d.name[len(DRA_PREFIX):] for d in drivers)
            count = sum(d.count or 0 for d in drivers)
            yield node_finding("VGN021", ERROR, node, f"ResourceSlices of DRA driver {names} offer {count} GPU(s) "
                                                      f"on a node where NVIDIA's device plugin advertises "
                                                      f"{found.nvidia.describe()}: the device plugin publishes no "
                                                      "UUIDs, so which GPUs both hand out cannot be named, but "
                                                      "NVIDIA's DRA driver must not run beside the device plugin on "
                                                      "one node")


@check("nodes.gpushare-vgpu", CAT, "VGN022", "gpushare and vGPU do not share a node", reads=("nodes",))
def gpushare_vgpu(ctx: DoctorContext) -> Iterator[Finding]:
    for node in ctx.snapshot.nodes:
        if not registered(node):
            continue
        share = gpushare_capacity(node)
        if share is None:
            continue
        resource, amount = share
        yield node_finding("VGN022", ERROR, node, f"capacity {resource}: {amount} (the gpushare device plugin, "
                                                  f"volcano-sh/devices) next to {spec.NODE_VGPU_REGISTER} (the vGPU "
                                                  "device plugin): both ship the DaemonSet "
                                                  "kube-system/volcano-device-plugin, so one replaced the other and "
                                                  "left its registration behind, or both run; Volcano cannot turn "
                                                  "gpushare and vGPU on together (VGC004), so one of the two "
                                                  "families is handed out here without Volcano counting it")
