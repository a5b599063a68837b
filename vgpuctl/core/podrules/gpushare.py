"""Pod rules for gpushare (`volcano.sh/gpu-memory`) and gpu-number (`VGS`, docs/contracts.md#finding-families,
docs/vgpu.md#gpushare)."""

from __future__ import annotations

from vgpuctl.core import spec
from vgpuctl.core.catalogue.pods import case_hint
from vgpuctl.core.findings import Severity
from vgpuctl.core.podrules.context import PodContext, show
from vgpuctl.core.podrules.resources import whole_number

ERROR, WARNING = Severity.ERROR, Severity.WARNING


def check(ctx: PodContext) -> None:
    _user_set_annotations(ctx)
    totals: dict[str, tuple[int, int]] = {}  # resource → (sum over app containers, max over init)
    for resource in (spec.GPU_MEMORY, spec.GPU_NUMBER):
        app_sum, init_max, seen = 0, 0, False
        for c in ctx.containers:
            if c.kind == "ephemeralContainers" or not c.has(resource):
                continue
            seen = True
            w = whole_number(c.get(resource))
            if w.unit:
                ctx.emit("VGS001", ERROR, ctx.container_subject(c),
                         f"{ctx.container_where(c)}: {resource} {show(c.get(resource))} carries a unit suffix; "
                         f"the value is a plain {'number of MiB' if resource == spec.GPU_MEMORY else 'card count'}")
                continue
            if w.value is None or w.value <= 0:
                why = w.problem or f"{w.value} is not a positive integer"
                ctx.emit("VGS001", ERROR, ctx.container_subject(c), f"{ctx.container_where(c)}: {resource} {why}")
                continue
            if c.is_app:
                app_sum += w.value
            else:
                init_max = max(init_max, w.value)
        if seen:
            totals[resource] = (app_sum, init_max)
    if spec.GPU_MEMORY in totals and spec.GPU_NUMBER in totals:
        ctx.emit("VGS002", ERROR, "spec.containers",
                 f"{ctx.pod_where()}: uses both {spec.GPU_MEMORY} and {spec.GPU_NUMBER}; the two modes cannot "
                 "be enabled together, so one request is never served")
    limits = {spec.GPU_MEMORY: ctx.facts.max_gpushare_card_memory, spec.GPU_NUMBER: ctx.facts.max_gpushare_cards}
    for resource, (app_sum, init_max) in totals.items():
        largest = limits[resource]
        pod_total = max(app_sum, init_max)
        if largest is not None and pod_total > largest:
            what, unit = (("per-card memory", "card") if resource == spec.GPU_MEMORY
                          else ("healthy card count", "node"))
            ctx.emit("VGS003", ERROR, "spec.containers",
                     f"{ctx.pod_where()}: {resource} for the whole pod is {pod_total}, more than the largest "
                     f"{what} of any node ({largest}); the whole pod must fit on one {unit}",
                     case_hint("VGS003", "gpu-memory" if resource == spec.GPU_MEMORY else "gpu-number",
                               largest=largest))


def _user_set_annotations(ctx: PodContext) -> None:
    """VGS004: these are the scheduler's bookkeeping; a user-set value over-books cards."""
    if ctx.existing:
        return
    node_name = ctx.target.spec.get("nodeName")
    for key in (spec.ANN_GPU_INDEX, spec.ANN_PREDICATE_TIME):
        if key not in ctx.annotations:
            continue
        if node_name:
            ctx.emit("VGS004", ERROR, f"annotation/{key}",
                     f"{ctx.pod_where()}: sets {key} and spec.nodeName; the pod bypasses the scheduler and "
                     "is counted on those cards, over-booking them")
        else:
            ctx.emit("VGS004", WARNING, f"annotation/{key}",
                     f"{ctx.pod_where()}: sets {key}, which the scheduler writes itself; remove it")
