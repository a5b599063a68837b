"""Pod rules for Ascend vNPU in HAMi mode (`VGH`, docs/contracts.md#finding-families, docs/ascend.md#ascend-hami)."""

from __future__ import annotations

from vgpuctl.core import spec
from vgpuctl.core.catalogue.pods import case_hint
from vgpuctl.core.deviceconfig import VnpuConfig, VnpuTrim, trim_vnpu_memory
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
    """One container's request for one vNPU type: its count, memory and core resources, by the rules below."""
    by_role = {r.role: r for r in group}
    count_res, memory_res, core_res = by_role.get("count"), by_role.get("memory"), by_role.get("core")
    count, count_ok = _count(ctx, c, count_res)
    memory, memory_ok = _memory(ctx, c, memory_res)
    if core_res is not None:
        _core(ctx, c, core_res.name, hami_core)
    vnpu = group[0].vnpu
    cw = vnpu.common_word if vnpu else group[0].count_name.removeprefix("huawei.com/")
    if hami_core:
        _hami_core_memory(ctx, c, cw, memory_res, memory)
    elif vnpu is not None:
        # A count or memory Volcano cannot read (VGH007) makes VGH009 describe the wrong request; a core-only
        # request is invisible to Volcano (VGH002, `defaults.py`).
        described = count_ok and memory_ok and (count_res is not None or memory_res is not None)
        _template(ctx, c, vnpu, cw, memory_res, count, memory, described)


def _count(ctx: PodContext, c: ContainerView, res: AscendResource | None) -> tuple[int | None, bool]:
    """VGH007: the count resource is a whole number ≥ 1. Returns the count and whether it was readable."""
    if res is None:
        return None, True
    w = whole_number(c.get(res.name))
    if w.value is None or w.value < 1:
        ctx.emit_for(c, "VGH007", ERROR, f"{res.name} {w.problem or f'{w.value} is not ≥ 1'}")
        return None, False
    return w.value, True


def _memory(ctx: PodContext, c: ContainerView, res: AscendResource | None) -> tuple[int | None, bool]:
    """VGH007: the memory resource is a plain positive number of MiB (no unit suffix). Returns the memory
    and whether it was readable."""
    if res is None:
        return None, True
    raw = c.get(res.name)
    w = whole_number(raw)
    if w.unit:
        ctx.emit_for(c, "VGH007", ERROR, f"{res.name} {show(raw)} carries a unit suffix; the value is plain MiB")
    elif w.value is None or w.value <= 0:
        ctx.emit_for(c, "VGH007", ERROR,
                     f"{res.name} {w.problem or f'{w.value} is not a positive number of MiB'}")
    else:
        return w.value, True
    return None, False


def _core(ctx: PodContext, c: ContainerView, name: str, hami_core: bool) -> None:
    """VGH005: in hami-core mode the core resource is a percent of one NPU, 0..100. VGH006: in template mode
    it is not supported at all (the template fixes the AI cores)."""
    if not hami_core:
        ctx.emit_for(c, "VGH006", ERROR,
                     f"{name} is only supported with {spec.ANN_VNPU_MODE}: hami-core; in template "
                     "mode the template fixes the AI cores")
        return
    w = whole_number(c.get(name))
    if w.value is None or not 0 <= w.value <= 100:
        ctx.emit_for(c, "VGH005", ERROR,
                     f"{name} {w.problem or f'{w.value} is outside 0..100 (percent of one NPU)'}")


def _hami_core_memory(ctx: PodContext, c: ContainerView, cw: str, res: AscendResource | None,
                      memory: int | None) -> None:
    """VGH005: in hami-core mode the memory fits the largest device of that type on any node."""
    largest = ctx.facts.ascend_max_memory(cw)
    if res is not None and memory is not None and largest is not None and memory > largest:
        ctx.emit_for(c, "VGH005", ERROR,
                     f"{res.name}: {memory} MiB is more than any {cw} device has ({largest} MiB)")


def _template(ctx: PodContext, c: ContainerView, vnpu: VnpuConfig, cw: str, res: AscendResource | None,
              count: int | None, memory: int | None, described: bool) -> None:
    """Template mode, in the order Volcano's trim reads the request: VGH003 (memory over the chip's
    memoryCapacity), VGH004 (several devices with partial-card memory), else VGH009 (which template or
    whole card the request becomes)."""
    if res is not None and memory is not None and memory > vnpu.memory_capacity:
        ctx.emit_for(c, "VGH003", ERROR,
                     f"{res.name}: {memory} MiB exceeds {cw} memoryCapacity "
                     f"({vnpu.memory_capacity}); Volcano trims it to 0 and hands out the smallest template",
                     case_hint("VGH003", "over-memory-capacity", resource=res.name, capacity=vnpu.memory_capacity,
                               chip=cw))
        return
    trim = trim_vnpu_memory(vnpu, memory) if memory is not None else None
    if count is not None and count > 1 and trim is not None and trim.memory != vnpu.memory_allocatable:
        part = trim.template.name if trim.template else f"{trim.memory} MiB"
        ctx.emit_for(c, "VGH004", ERROR,
                     f"{count} × {cw} with {memory} MiB each; a partial card ({part}) is not allowed "
                     "when requesting several devices (omit the memory for whole cards)")
        return
    if described:
        _placement(ctx, c, vnpu, cw, trim, count, memory)


def _placement(ctx: PodContext, c: ContainerView, vnpu: VnpuConfig, cw: str, trim: VnpuTrim | None,
               count: int | None, memory: int | None) -> None:
    """VGH009: what the request becomes: whole cards, or the template the memory rounds up to."""
    if trim is None or trim.whole_card:
        n = count or 1
        ctx.emit_for(c, "VGH009", INFO,
                     f"{n} whole {cw} card{'s' if n > 1 else ''} ({vnpu.memory_allocatable} MiB each)")
    elif trim.template is not None:
        ctx.emit_for(c, "VGH009", INFO,
                     f"{memory} MiB → template {trim.template.name} ({trim.template.memory} MiB) on {cw}")
