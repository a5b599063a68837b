"""Pods that ask two GPU stacks at once (docs/stacks.md#pods-mixing-stacks): VGP019, VGP020; and pods whose DRA
claims the cluster's Volcano cannot allocate (VGC014, docs/stacks.md#dra-in-volcano).

- VGP019: a container with Volcano's vGPU resources and another stack's GPU resources (`nvidia.com/gpu*`,
  `nvidia.com/mig-*`) that the device config does not name as vGPU resources.
- VGP020: a pod asking Volcano's device sharing for GPUs (vGPU, gpushare, gpu-number) with a `spec.resourceClaims`
  entry whose claim or template asks a GPU DeviceClass — resolved through `ClusterFacts.dra` only: a class that
  cannot be told is not reported (the cluster-aware webhook knows no claims, so there it never is).
- VGC014: a pod with claims, placed by Volcano, when the facts say the cluster's Volcano cannot allocate them
  (`ClusterFacts.dra_blocked`, from `lint --snapshot`). Existing pods are the doctor's own VGC014 check.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.codecs.dra import pod_claims
from vgpuctl.core.findings import Severity
from vgpuctl.core.podrules.context import GPUSHARE, SCHEDULED, VGPU, PodContext
from vgpuctl.core.podrules.targets import as_mapping

ERROR = Severity.ERROR
_PREFIXES = spec.NVIDIA_GPU_RESOURCE_PREFIXES


def other_stacks(ctx: PodContext) -> None:
    """VGP019, per container."""
    vgpu_all = ctx.names.vgpu_all
    for c in ctx.containers:
        if not c.kinds & VGPU:
            continue
        names = [*c.limits, *(r for r in c.requests if r not in c.limits)]
        others = [r for r in names if isinstance(r, str) and r.startswith(_PREFIXES) and r not in vgpu_all]
        if not others:
            continue
        ours = [r for r in names if r in vgpu_all]
        ctx.emit_for(c, "VGP019", ERROR, f"asks for {', '.join(others)} together with {', '.join(ours)}: two "
                                         "device plugins allocate GPUs for it, neither knowing of the other, and "
                                         "Volcano places it by the vGPU registration alone")


def claims(ctx: PodContext, obj: Mapping[str, Any]) -> None:
    """VGP020 and VGC014, for a pod with `spec.resourceClaims`."""
    refs = list(pod_claims(ctx.target.spec))
    if not refs:
        return
    facts = ctx.facts
    blocked = facts.dra_blocked
    if blocked and not ctx.existing and (
            ctx.target.spec.get("schedulerName") in facts.scheduler_names or ctx.kinds & SCHEDULED):
        ctx.emit("VGC014", ERROR, "spec.resourceClaims",
                 f"{ctx.pod_where()}: has DRA resourceClaims, but the cluster's Volcano cannot allocate them "
                 f"({blocked}): it binds the pod without its claims and the kubelet cannot start it")
    dra = facts.dra
    if dra is None or not ctx.kinds & (VGPU | GPUSHARE):
        return
    namespace = as_mapping(obj.get("metadata")).get("namespace")
    namespace = namespace if isinstance(namespace, str) and namespace else spec.DEFAULT_NAMESPACE
    for ref in refs:
        classes = dra.classes_of(ref.kind, namespace, ref.ref)
        gpu = [c for c in classes or () if dra.is_gpu_class(c)]
        if not gpu:
            continue  # unknown, or a claim of another device (a NIC): nothing to say
        what = "ResourceClaim" if ref.kind == "claim" else "ResourceClaimTemplate"
        ctx.emit("VGP020", ERROR, f"spec.resourceClaims[{ref.index}]",
                 f"{ctx.pod_where()}: claim {ref.name!r} ({what} {ref.ref}) asks DeviceClass {', '.join(gpu)} for a "
                 "GPU while the pod also asks Volcano's device sharing for GPUs: the DRA allocator and deviceshare "
                 "each give it a GPU, knowing nothing of each other")


__all__ = ["claims", "other_stacks"]
