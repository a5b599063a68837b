"""Pod rules for Ascend vNPU in HAMi mode (`VGH`, docs/contracts.md#finding-families, docs/ascend.md#ascend-hami)."""

from __future__ import annotations

from vgpuctl.core import spec
from vgpuctl.core.deviceconfig import trim_vnpu_memory
from vgpuctl.core.findings import Severity
from vgpuctl.core.podrules.context import ContainerView, PodContext, show
from vgpuctl.core.podrules.resources import AscendResource, ascend_resources, whole_number
from vgpuctl.core.versions import has_vnpu_hami_core

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
_RUNTIME_CLASS = "ascend"  # the RuntimeClass ascend-device-plugin ships (`ascend-runtimeclass.yaml`)


def check(ctx: PodContext) -> None:
    per_container = [(c, ascend_resources(ctx, c)) for c in ctx.apps]
    per_container = [(c, r) for c, r in per_container if r]
    hami_core = _mode(ctx, bool(per_container))
    if any(res.declared for _, resources in per_container for res in resources):
        _runtime_class(ctx)
    for c, resources in per_container:
        groups: dict[str, list[AscendResource]] = {}
        for res in resources:
            if not res.declared:
                ctx.emit("VGH008", ERROR, ctx.container_subject(c),
                         f"{ctx.container_where(c)}: {res.name} is not declared by any vnpus entry of the "
                         "device config; Volcano registers no device type for it")
                continue
            groups.setdefault(res.count_name, []).append(res)
        for group in groups.values():
            _request(ctx, c, group, hami_core)


def _mode(ctx: PodContext, has_request: bool) -> bool:
    """VGH001; True when the pod asks for hami-core soft slicing."""
    raw = ctx.annotations.get(spec.ANN_VNPU_MODE)
    if raw is None:
        return False
    subject = f"annotation/{spec.ANN_VNPU_MODE}"
    if raw != spec.VNPU_MODE_HAMI_CORE:
        ctx.emit("VGH001", ERROR, subject,
                 f"{ctx.pod_where()}: {spec.ANN_VNPU_MODE}: {show(raw)} is not {spec.VNPU_MODE_HAMI_CORE!r}; "
                 "Volcano silently uses template mode instead")
        return False
    if not has_request:
        return True
    version = ctx.facts.volcano_version
    if version is not None and not has_vnpu_hami_core(version):
        ctx.emit("VGH001", ERROR, subject,
                 f"{ctx.pod_where()}: {spec.ANN_VNPU_MODE}: hami-core needs Volcano ≥ 1.16 (running {version})")
    elif ctx.facts.hami_vnpu_core_node_count == 0:
        ctx.emit("VGH001", ERROR, subject,
                 f"{ctx.pod_where()}: {spec.ANN_VNPU_MODE}: hami-core but no node has "
                 f'{spec.NODE_HAMI_VNPU_CORE}: "true"; the pod fits nowhere')
    return True


def _runtime_class(ctx: PodContext) -> None:
    """VGH010: an Ascend HAMi pod without `runtimeClassName`. The plugin's Allocate hands the container only
    ASCEND_VISIBLE_DEVICES; the Ascend container runtime (RuntimeClass `ascend`, shipped since plugin v1.3.0)
    mounts the NPU from it. Any name counts as set: the plugin's chart lets the RuntimeClass be renamed."""
    if ctx.target.spec.get("runtimeClassName"):
        return
    required = ctx.facts.ascend_runtimeclass_required
    if required is False:
        return  # only plugins older than the RuntimeClass run: they expect the Ascend runtime as the default
    subject, where = "spec.runtimeClassName", ctx.pod_where()
    if required:
        tags = ", ".join(t for t in ctx.facts.ascend_plugin_tags or () if t)
        ctx.emit("VGH010", WARNING, subject,
                 f"{where}: no runtimeClassName; the ascend-device-plugin in use ({tags}) requires "
                 f"runtimeClassName: {_RUNTIME_CLASS} on every Ascend pod, else the container gets no NPU device")
    else:
        ctx.emit("VGH010", INFO, subject,
                 f"{where}: no runtimeClassName; ascend-device-plugin v1.3.0 and later require "
                 f"runtimeClassName: {_RUNTIME_CLASS} on every Ascend pod (set it unless your plugin is older)")


def _request(ctx: PodContext, c: ContainerView, group: list[AscendResource], hami_core: bool) -> None:
    where, subject = ctx.container_where(c), ctx.container_subject(c)
    by_role = {r.role: r for r in group}
    vnpu = group[0].vnpu
    count = memory = None
    invalid = False  # a count or memory Volcano cannot read: VGH009 would describe the wrong request
    if "count" in by_role:
        name = by_role["count"].name
        w = whole_number(c.get(name))
        if w.value is None or w.value < 1:
            invalid = True
            ctx.emit("VGH007", ERROR, subject, f"{where}: {name} {w.problem or f'{w.value} is not ≥ 1'}")
        else:
            count = w.value
    if "memory" in by_role:
        name = by_role["memory"].name
        raw = c.get(name)
        w = whole_number(raw)
        invalid = invalid or w.unit != "" or w.value is None or w.value <= 0
        if w.unit:
            ctx.emit("VGH007", ERROR, subject,
                     f"{where}: {name} {show(raw)} carries a unit suffix; the value is plain MiB")
        elif w.value is None or w.value <= 0:
            ctx.emit("VGH007", ERROR, subject,
                     f"{where}: {name} {w.problem or f'{w.value} is not a positive number of MiB'}")
        else:
            memory = w.value
    if "core" in by_role:
        name = by_role["core"].name
        w = whole_number(c.get(name))
        if hami_core:
            if w.value is None or not 0 <= w.value <= 100:
                ctx.emit("VGH005", ERROR, subject,
                         f"{where}: {name} {w.problem or f'{w.value} is outside 0..100 (percent of one NPU)'}")
        else:
            ctx.emit("VGH006", ERROR, subject,
                     f"{where}: {name} is only supported with {spec.ANN_VNPU_MODE}: hami-core; in template "
                     "mode the template fixes the AI cores")
    cw = vnpu.common_word if vnpu else group[0].count_name.removeprefix("huawei.com/")
    if hami_core:
        largest = ctx.facts.ascend_max_memory(cw)
        if memory is not None and largest is not None and memory > largest:
            ctx.emit("VGH005", ERROR, subject,
                     f"{where}: {by_role['memory'].name}: {memory} MiB is more than any {cw} device has "
                     f"({largest} MiB)")
        return
    if vnpu is None:
        return
    if memory is not None and memory > vnpu.memory_capacity:
        ctx.emit("VGH003", ERROR, subject,
                 f"{where}: {by_role['memory'].name}: {memory} MiB exceeds {cw} memoryCapacity "
                 f"({vnpu.memory_capacity}); Volcano trims it to 0 and hands out the smallest template")
        return
    trim = trim_vnpu_memory(vnpu, memory) if memory is not None else None
    if count is not None and count > 1 and trim is not None and trim.memory != vnpu.memory_allocatable:
        part = trim.template.name if trim.template else f"{trim.memory} MiB"
        ctx.emit("VGH004", ERROR, subject,
                 f"{where}: {count} × {cw} with {memory} MiB each; a partial card ({part}) is not allowed "
                 "when requesting several devices (omit the memory for whole cards)")
        return
    if invalid or ("count" not in by_role and "memory" not in by_role):
        return  # VGH007 already said why; a core-only request is invisible to Volcano (VGH002)
    if trim is None or trim.whole_card:
        n = count or 1
        ctx.emit("VGH009", INFO, subject,
                 f"{where}: {n} whole {cw} card{'s' if n > 1 else ''} ({vnpu.memory_allocatable} MiB each)")
    elif trim.template is not None:
        ctx.emit("VGH009", INFO, subject,
                 f"{where}: {memory} MiB → template {trim.template.name} ({trim.template.memory} MiB) on {cw}")
