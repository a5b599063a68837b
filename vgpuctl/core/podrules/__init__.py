"""`review`: the one verdict on a pod-bearing object, shared by the webhook, `lint` and `doctor`.

`review(obj, facts)` applies the mutating defaults to a cheap view of every pod inside `obj`, runs all
pod rules (docs/contracts.md#finding-families) on the defaulted view, and returns the findings, the add-only JSON Patch
that
carries the defaults, and `allowed` — the verdict after the defaults apply. It never raises on any
JSON-shaped input; what it cannot read it reports.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.facts import NO_FACTS, ClusterFacts
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.patch import PatchOp, add_ops
from vgpuctl.core.podrules import ascend, defaults, gpushare, hami_annotations, mindcluster, stacks, vgpu, workloads
from vgpuctl.core.podrules.context import ASCEND, DEVICE, GPUSHARE, NPU_CORE, VGPU, VOLCANO, build_context
from vgpuctl.core.podrules.targets import is_volcano_job, pod_targets


@dataclass(frozen=True, slots=True)
class Review:
    allowed: bool
    findings: tuple[Finding, ...]
    patch: tuple[PatchOp, ...]
    checked: bool = True  # False: not a kind vgpuctl checks (skipped, allowed)


SKIPPED = Review(True, (), (), checked=False)
CLEAN = Review(True, (), ())  # checked, nothing to say: shared, since most pods request no device at all
_GPUSHARE_ANNOTATIONS = frozenset({spec.ANN_GPU_INDEX, spec.ANN_PREDICATE_TIME})
_VNPU_MODE = spec.ANN_VNPU_MODE  # a module global: one lookup per pod, not two (benchmarks/review_throughput.py)


def review(
    obj: Any,
    facts: ClusterFacts | None = None,
    *,
    apply_defaults: bool = True,
    existing: bool = False,
) -> Review:
    """Review a Pod, a Volcano Job or a workload with a pod template.

    `apply_defaults=False` is the validating webhook's view: settings the mutating webhook would have
    filled in are errors. `existing=True` is the doctor's view of pods already in the cluster:
    annotations the scheduler writes are expected there, and nothing is defaulted.
    """
    if type(obj) is not dict and not isinstance(obj, Mapping):  # dict first (benchmarks/review_throughput.py)
        return SKIPPED
    targets = pod_targets(obj)
    if targets is None:
        return SKIPPED
    facts = facts if facts is not None else NO_FACTS
    mutate = apply_defaults and not existing
    findings: list[Finding] = []
    additions = []
    task_labels: list[Mapping[str, Any]] = []  # each target's labels once the defaults are in (for VGW001)
    # Targets carry their Volcano Job: the object is read again only when there are none.
    job = targets[0].volcano_job is not None if targets else is_volcano_job(obj)
    if job and not targets:
        findings.append(_malformed("spec.tasks", "Volcano Job has no tasks with a pod template"))
    for target in targets:
        ctx = build_context(target, facts, mutate, existing, devices_only=True)
        if ctx.malformed:
            findings.append(_malformed(target.subject_prefix + "spec",
                                       "containers, initContainers or ephemeralContainers is not a list "
                                       "of container objects"))
        elif ctx.empty:
            findings.append(_malformed(target.subject_prefix + "spec.containers", "the pod has no containers"))
        # The families the pod's resources touch, before any default: most pods in a cluster request no
        # device, and a GPU pod rarely touches more than one family, so the rest is skipped on the
        # admission hot path.
        kinds = ctx.kinds
        # Every default is about a device resource (none is triggered by an annotation alone).
        if kinds & (DEVICE | VOLCANO):
            defaults.apply_defaults(ctx, kinds)
        if kinds & VGPU:
            vgpu.check(ctx)
            stacks.other_stacks(ctx)
        if kinds & (VGPU | NPU_CORE | ASCEND):
            vgpu.privileged(ctx)
        annotations = ctx.annotations  # often empty: then no rule an annotation triggers is asked
        if annotations and kinds & (VGPU | ASCEND):
            hami_annotations.check(ctx)
        if kinds & GPUSHARE or (annotations and not _GPUSHARE_ANNOTATIONS.isdisjoint(annotations)):
            gpushare.check(ctx)
        if kinds & ASCEND or (annotations and _VNPU_MODE in annotations):
            ascend.check(ctx)
        if kinds & NPU_CORE:
            mindcluster.check(ctx)
        if target.spec.get("resourceClaims"):
            stacks.claims(ctx, obj)
        if ctx.findings:
            findings.extend(ctx.findings)
        if ctx.additions:
            additions.extend(ctx.additions)
        task_labels.append(ctx.labels)
    if job:
        findings.extend(workloads.job_metadata(obj, targets, task_labels))
    if not findings and not additions:
        return CLEAN
    allowed = not any(f.severity is Severity.ERROR for f in findings)
    patch = tuple(add_ops(obj, additions)) if additions else ()
    return Review(allowed, tuple(findings), patch)


def _malformed(subject: str, message: str) -> Finding:
    return Finding("VGL001", Severity.ERROR, subject, message, hint_for("VGL001"))


__all__ = ["Review", "review"]
