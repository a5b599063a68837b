"""Pod rules for Ascend 310P dynamic vNPU in MindCluster mode (`VGA`, docs/contracts.md#finding-families,
docs/ascend.md#mindcluster-pod)."""

from __future__ import annotations

from vgpuctl.core import spec
from vgpuctl.core.catalogue.pods import case_hint
from vgpuctl.core.findings import Severity
from vgpuctl.core.podrules.context import PodContext, show
from vgpuctl.core.podrules.resources import whole_number

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


def npu_core_request(ctx: PodContext) -> int | None:
    """The core count Volcano uses: the first app container with a non-zero npu-core (None: none set
    or not a whole number)."""
    seen = False
    for c in ctx.apps:
        raw = c.get(spec.NPU_CORE)
        if raw is None:
            continue
        seen = True
        value = whole_number(raw).value
        if value is None:
            return None
        if value != 0:
            return value
    return 0 if seen else None


def template_for(cores: int, dvpp: str, level: str, cores_per_chip: int) -> str | None:
    """The vNPU template for a request (the table in docs/ascend.md#mindcluster-pod); None: whole cards or no
    template."""
    level = level if level in spec.VNPU_LEVELS else "low"
    if cores == 1:
        return "vir01"
    if cores == 2:
        return "vir02" if level == "high" else "vir02_1c"
    if cores == 4:
        if dvpp == "yes":
            return "vir04_4c_dvpp"
        if dvpp == "no":
            return "vir04_3c_ndvpp"
        return "vir04" if level == "high" else "vir04_3c"
    return None


_DOWNGRADE = {"vir02": "vir02_1c", "vir04": "vir04_3c"}


def check(ctx: PodContext) -> None:
    holders = [c for c in ctx.containers if c.has(spec.NPU_CORE)]
    if not holders:
        return
    label = ctx.labels.get(spec.LABEL_RING_CONTROLLER)
    detected = label == spec.RING_CONTROLLER_310P
    if not detected:
        shown = "absent" if label is None else show(label)
        ctx.emit("VGA001", ERROR, f"label/{spec.LABEL_RING_CONTROLLER}",
                 f"{ctx.pod_where()}: requests {spec.NPU_CORE} but label {spec.LABEL_RING_CONTROLLER} is "
                 f"{shown}, not {spec.RING_CONTROLLER_310P!r}; deviceshare ignores the request")
    cores_per_chip = ctx.facts.cores_per_310p_chip or spec.DEFAULT_CORES_PER_310P_CHIP
    for c in holders:
        raw = c.get(spec.NPU_CORE)
        n = whole_number(raw)
        where = ctx.container_where(c)
        if n.value is None:
            ctx.emit("VGA002", ERROR, ctx.container_subject(c), f"{where}: {spec.NPU_CORE} {n.problem}")
        elif not _valid_cores(n.value, cores_per_chip):
            ctx.emit("VGA002", ERROR, ctx.container_subject(c),
                     f"{where}: {spec.NPU_CORE}: {n.value} has no vNPU template (valid: 1, 2, 4 or a multiple "
                     f"of {cores_per_chip} cores per chip); the pod would bind without any chip")
        else:
            capacity = ctx.facts.max_npu_core_capacity
            if capacity is not None and n.value > capacity:
                ctx.emit("VGA008", ERROR, ctx.container_subject(c),
                         f"{where}: {spec.NPU_CORE}: {n.value} exceeds the largest node capacity ({capacity})",
                         case_hint("VGA008", "more-than-any-node", capacity=capacity, per_chip=cores_per_chip))
    cores = npu_core_request(ctx)
    if cores is None or not _valid_cores(cores, cores_per_chip):
        return
    _labels(ctx, cores, cores_per_chip, ctx.container_subject(holders[0]), detected)


def _valid_cores(cores: int, per_chip: int) -> bool:
    return cores in spec.MINDCLUSTER_VNPU_CORES or (cores > 0 and cores % per_chip == 0)


def _label_text(raw: object, default: str) -> str:
    # A non-string value (YAML `vnpu-dvpp: yes` loads as a boolean) is never a valid label value.
    if raw is None:
        return default
    return raw if isinstance(raw, str) else show(raw)


def _labels(ctx: PodContext, cores: int, cores_per_chip: int, subject: str, detected: bool) -> None:
    """VGA003–VGA007; `detected` is False when VGA001 fired (Volcano ignores the request: no VGA007)."""
    dvpp_raw = ctx.labels.get(spec.LABEL_VNPU_DVPP)
    level_raw = ctx.labels.get(spec.LABEL_VNPU_LEVEL)
    dvpp = _label_text(dvpp_raw, "null")
    level = _label_text(level_raw, "low")
    where = ctx.pod_where()
    if cores not in spec.MINDCLUSTER_VNPU_CORES:  # whole card(s)
        for key, raw in ((spec.LABEL_VNPU_DVPP, dvpp_raw), (spec.LABEL_VNPU_LEVEL, level_raw)):
            if raw is not None:
                ctx.emit("VGA006", WARNING, f"label/{key}",
                         f"{where}: label {key} has no effect on a whole-card request ({cores} cores)")
        if not detected:
            return
        chips = cores // cores_per_chip
        ctx.emit("VGA007", INFO, subject,
                 f"{where}: {spec.NPU_CORE}: {cores} resolves to {chips} whole 310P chip(s)")
        return
    bad = False
    if dvpp_raw is not None and dvpp not in spec.VNPU_DVPP_VALUES:
        bad = True
        ctx.emit("VGA003", ERROR, f"label/{spec.LABEL_VNPU_DVPP}",
                 f"{where}: label {spec.LABEL_VNPU_DVPP}: {show(dvpp_raw)} is not one of yes, no, null; "
                 "Volcano fails this vNPU request on every node")
    if level_raw is not None and level not in spec.VNPU_LEVELS:
        bad = True
        ctx.emit("VGA004", ERROR, f"label/{spec.LABEL_VNPU_LEVEL}",
                 f"{where}: label {spec.LABEL_VNPU_LEVEL}: {show(level_raw)} is not low or high; "
                 "Volcano silently treats it as low")
    if cores in (1, 2) and dvpp in ("yes", "no"):
        bad = True
        ctx.emit("VGA005", ERROR, f"label/{spec.LABEL_VNPU_DVPP}",
                 f"{where}: label {spec.LABEL_VNPU_DVPP}: {dvpp} on a {cores}-core request; only the 4-core "
                 'templates carry DVPP, so the wish cannot be honoured (use "null")')
    if bad or not detected:
        return
    template = template_for(cores, dvpp, level, cores_per_chip)
    if template is not None:
        downgrade = _DOWNGRADE.get(template)
        extra = f" (downgraded to {downgrade} when the node is short of AI CPUs)" if downgrade else ""
        ctx.emit("VGA007", INFO, subject,
                 f"{where}: {spec.NPU_CORE}: {cores} (vnpu-level {level}, vnpu-dvpp {dvpp}) resolves to "
                 f"template {template}{extra}")
