"""The mutating defaults: the settings users forget that the webhook fills in (docs/contracts.md#findings).

Each default either repairs the pod (recorded as an addition and reported at `info`) or, when defaults
are not being applied (the validating path), reports the same rule as an `error`. Validation rules run
after these, on the defaulted view, so `allowed` is the verdict after the defaults apply.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.findings import Severity
from vgpuctl.core.podrules.context import (
    ASCEND,
    CONTAINER_KINDS,
    DEVICE,
    NPU_CORE,
    SCHEDULED,
    VGPU,
    PodContext,
    quantity,
    show,
)
from vgpuctl.core.podrules.mindcluster import npu_core_request
from vgpuctl.core.podrules.resources import ascend_resources
from vgpuctl.core.podrules.targets import as_list, as_mapping

INFO, ERROR = Severity.INFO, Severity.ERROR


def apply_defaults(ctx: PodContext, families: int) -> None:
    """Each default about one family runs only for pods with that family's resources (`families`: the
    pod's `kinds` before any default)."""
    request_to_limit(ctx)
    if families & VGPU:
        vgpu_number(ctx)
    if families & ASCEND:
        ascend_count(ctx)
    if families & NPU_CORE:
        mindcluster_labels(ctx)
    scheduler_name(ctx)


def _same_quantity(a: object, b: object) -> bool:
    # Shortcut before parsing any quantity (benchmarks/review_throughput.py).
    if type(a) is type(b) and type(a) in (str, int) and a == b:
        return True  # the common case, request == limit as written: same text, same quantity (or none)
    qa, qb = quantity(a), quantity(b)
    if qa is not None and qb is not None:
        return qa.value == qb.value
    return str(a).strip() == str(b).strip()


def request_to_limit(ctx: PodContext) -> None:
    """VGP014: extended resources need limits, and request must equal limit."""
    kinds = ctx.names.kinds
    for c in ctx.containers:
        if not c.requests or not c.kinds & DEVICE:
            continue
        for name, value in list(c.requests.items()):
            if not kinds(name) & DEVICE:
                continue
            if name not in c.limits:
                if ctx.apply_defaults:
                    ctx.add_limit(c, name, str(value) if not isinstance(value, str) else value)
                    ctx.emit_for(c, "VGP014", INFO, f"added limits {name}: {show(value)} (copied from requests)")
                else:
                    ctx.emit_for(c, "VGP014", ERROR,
                                 f"{name} is set in requests but not in limits; the API server rejects "
                                 "extended resources without a limit")
            elif not _same_quantity(value, c.limits[name]):
                ctx.emit_for(c, "VGP014", ERROR,
                             f"{name} request {show(value)} differs from limit {show(c.limits[name])}; "
                             "extended resources cannot be overcommitted, so the API server rejects the pod")


def vgpu_number(ctx: PodContext) -> None:
    """VGP002: vGPU memory/cores/percentage without a count is invisible or mis-allocated
    (docs/vgpu.md#vgpu-pod-request)."""
    n = ctx.names
    for c in ctx.apps:
        if not c.kinds & VGPU or c.has(n.vgpu_count):
            continue
        given = [r for r in (n.vgpu_memory, n.vgpu_cores, n.vgpu_percentage) if c.has(r)]
        if not given:
            continue
        if ctx.apply_defaults:
            default = ctx.facts.volcano_device_config.nvidia.default_gpu_num or 1  # built-in config: 1
            ctx.add_limit(c, n.vgpu_count, str(default))
            ctx.emit_for(c, "VGP002", INFO, f"added {n.vgpu_count}: {default}")
        else:
            ctx.emit_for(c, "VGP002", ERROR,
                         f"sets {', '.join(given)} but not {n.vgpu_count}; Volcano ignores cores-only "
                         "and percentage-only containers and the device plugin mis-assigns memory-only ones")


def ascend_count(ctx: PodContext) -> None:
    """VGH002: Ascend memory or cores without the count resource."""
    for c in ctx.apps:
        if not c.kinds & ASCEND:
            continue
        resources = ascend_resources(ctx, c)
        counts = {r.name for r in resources if r.role == "count"}
        for res in resources:
            if res.role == "count" or not res.declared or res.count_name in counts or c.has(res.count_name):
                continue  # undeclared names are VGH008's; never add a resource no vnpus entry declares
            has_memory = any(r.role == "memory" and r.count_name == res.count_name for r in resources)
            if res.role == "memory" and ctx.apply_defaults:
                ctx.add_limit(c, res.count_name, "1")
                ctx.emit_for(c, "VGH002", INFO, f"added {res.count_name}: 1")
                counts.add(res.count_name)
            elif res.role == "memory" or not has_memory:
                ctx.emit_for(c, "VGH002", ERROR,
                             f"sets {res.name} but not {res.count_name}; Volcano only sees Ascend "
                             "requests that carry the count (or memory) resource")
                counts.add(res.count_name)


def mindcluster_labels(ctx: PodContext) -> None:
    """VGA004 / VGA005: make the implicit `vnpu-level: low` and `vnpu-dvpp: "null"` explicit."""
    if not ctx.apply_defaults or ctx.existing:
        return
    cores = npu_core_request(ctx)
    if cores is None or cores not in spec.MINDCLUSTER_VNPU_CORES:
        return
    if ctx.labels.get(spec.LABEL_RING_CONTROLLER) != spec.RING_CONTROLLER_310P:
        return
    if spec.LABEL_VNPU_LEVEL not in ctx.labels:
        ctx.add_label(spec.LABEL_VNPU_LEVEL, "low")
        ctx.emit("VGA004", INFO, f"label/{spec.LABEL_VNPU_LEVEL}",
                 f"{ctx.pod_where()}: added label {spec.LABEL_VNPU_LEVEL}: low")
    if spec.LABEL_VNPU_DVPP not in ctx.labels:
        ctx.add_label(spec.LABEL_VNPU_DVPP, "null")
        ctx.emit("VGA005", INFO, f"label/{spec.LABEL_VNPU_DVPP}",
                 f'{ctx.pod_where()}: added label {spec.LABEL_VNPU_DVPP}: "null"')


def _requests_volcano_device(ctx: PodContext, resources: Iterable[str]) -> bool:
    """Whether any of `resources` is a device only a Volcano scheduler allocates (`SCHEDULED`)."""
    kinds = ctx.names.kinds
    return any(kinds(name) & SCHEDULED for name in resources)


def _spec_resources(pod_spec: Mapping[str, Any]) -> Iterator[str]:
    """Every resource name in the limits or requests of a raw pod spec's containers."""
    for kind in CONTAINER_KINDS:
        for raw in as_list(pod_spec.get(kind)):
            resources = as_mapping(as_mapping(raw).get("resources"))
            for field in ("limits", "requests"):
                yield from (k for k in as_mapping(resources.get(field)) if isinstance(k, str))


def _first_inheriting_task(ctx: PodContext, job: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The pod spec of the first task that requests a Volcano device and takes the Job's schedulerName."""
    for task in as_list(as_mapping(job.get("spec")).get("tasks")):
        pod_spec = as_mapping(as_mapping(as_mapping(task).get("template")).get("spec"))
        if not pod_spec.get("schedulerName") and _requests_volcano_device(ctx, _spec_resources(pod_spec)):
            return pod_spec
    return None


def scheduler_name(ctx: PodContext) -> None:
    """VGP015: only a Volcano scheduler writes the allocation annotations the device plugins need."""
    if not ctx.kinds & SCHEDULED:
        return  # existing pods are judged too (the doctor), never patched: apply_defaults is off for them
    names = ctx.facts.scheduler_names or spec.DEFAULT_SCHEDULER_NAMES
    own = ctx.target.spec.get("schedulerName")
    job = ctx.target.volcano_job
    if job is not None and not own:
        # A Volcano Job's pods inherit spec.schedulerName (Volcano's job webhook defaults it to volcano),
        # so the setting to judge and to repair is the Job's own.
        current = as_mapping(job.get("spec")).get("schedulerName")
        if not current or current in names:
            return
        if _first_inheriting_task(ctx, job) is not ctx.target.spec:
            return  # one Job-level setting: judged (and patched) once, on the first task that inherits it
        pointer: tuple[str | int, ...] = ("spec",)
        subject = "spec.schedulerName"
    else:
        if isinstance(own, str) and own in names:
            return
        current = own
        pointer = (*ctx.target.pointer, "spec")
        subject = ctx.target.subject_prefix + "spec.schedulerName"
    shown = "empty" if current in (None, "") else show(current)
    if current in (None, "", spec.KUBE_DEFAULT_SCHEDULER) and ctx.apply_defaults:
        ctx.set_spec_field("schedulerName", names[0], pointer)
        ctx.emit_at("VGP015", INFO, subject, f"{ctx.pod_where()}: set schedulerName to {names[0]} (was {shown})")
        return
    ctx.emit_at("VGP015", ERROR, subject,
                f"{ctx.pod_where()}: schedulerName is {shown}, not a Volcano scheduler ({', '.join(names)}); "
                "another scheduler binds it without device allocation annotations and the device plugin "
                "fails the pod at admission")
