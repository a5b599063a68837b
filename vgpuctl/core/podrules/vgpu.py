"""Pod rules for NVIDIA vGPU: HAMi-core slicing and dynamic MIG (`VGP`, docs/contracts.md#finding-families,
docs/vgpu.md#nvidia-vgpu)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.catalogue.pods import case_hint
from vgpuctl.core.deviceconfig import mig_fit_in_geometry, mig_request_mib
from vgpuctl.core.facts import GpuDevice
from vgpuctl.core.findings import Severity
from vgpuctl.core.memo import MISSING, store
from vgpuctl.core.podrules.context import (
    ABSENT,
    ASCEND,
    GPUSHARE,
    NPU_CORE,
    VGPU,
    ContainerView,
    PodContext,
    quantity,
    show,
)
from vgpuctl.core.podrules.resources import whole_number
from vgpuctl.core.podrules.vgpu_pairing import pairing
from vgpuctl.core.versions import (
    NEWEST_VOLCANO,
    checks_vgpu_resources_generically,
    has_gpu_uuid_filter,
    has_podgroup_policy,
)

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
_MODES = tuple(m.value for m in spec.VgpuMode)
_MIG = spec.VgpuMode.MIG.value  # read once: enum member access is a descriptor call (benchmarks/review_throughput.py)
# A vgpu-memory this large (≥ 1 TiB) is bytes, not MiB: no GPU has it (docs/checks.md#check-index-vgpu-pods V5).
_NEVER_FITS = 2**20
_GPU_UUID = re.compile(r"^GPU-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$")


def check(ctx: PodContext) -> None:
    n = ctx.names
    gpu_containers = []  # the app containers that request vGPU
    init_vgpu = []  # init containers that do: kubelet allocates them before any app container
    for c in ctx.containers:
        if not c.kinds & VGPU:
            continue
        if c.kind == "containers":
            gpu_containers.append(c)
        else:
            found = sorted(r for r in (*c.limits, *c.requests) if r in n.vgpu_all)
            ctx.emit_for(c, "VGP007", ERROR,
                         f"requests {', '.join(dict.fromkeys(found))}; Volcano ignores {c.kind} but the device "
                         "plugin would consume an app container's allocation")
            if c.kind == "initContainers":
                init_vgpu.append(c)
    if ctx.kinds & GPUSHARE:
        _mixing(ctx)
    if not gpu_containers:
        return  # not a vGPU pod: Volcano never compares its vgpu-mode with a node's (docs/vgpu.md#vgpu-filter step 1)
    mode = _mode(ctx)
    pairing(ctx, gpu_containers, init_vgpu)
    for c in gpu_containers:
        _container(ctx, c, mode)
    if not _POD_ANNOTATIONS.isdisjoint(ctx.annotations):  # most vGPU pods set none (benchmarks/review_throughput.py)
        _gputype(ctx)
        _gpuuuid(ctx)
        _podgroup(ctx)


def _mode(ctx: PodContext) -> str | None:
    """VGP001; returns the mode when it is one Volcano knows, else None."""
    raw = ctx.annotations.get(spec.ANN_VGPU_MODE)
    if raw is None:
        return None
    if raw in _MODES:
        return str(raw)
    text = str(raw).strip().lower()
    guess = next((m for m in _MODES if m == text or m.replace("-", "") == text.replace("-", "")), None)
    mean = f" (did you mean {guess!r}?)" if guess else ""
    ctx.emit("VGP001", ERROR, f"annotation/{spec.ANN_VGPU_MODE}",
             f"{ctx.pod_where()}: {spec.ANN_VGPU_MODE}: {show(raw)} is not hami-core or mig{mean}; it can "
             "never equal a node's mode, so the pod stays Pending on every node")
    return None


def _mixing(ctx: PodContext) -> None:
    """VGP008: gpushare and vGPU cannot be enabled together, so a pod mixing them never schedules."""
    n = ctx.names
    share = sorted({r for c in ctx.containers for r in (*c.limits, *c.requests) if r in n.gpushare_all})
    if not share:
        return
    vgpu = sorted({r for c in ctx.containers for r in (*c.limits, *c.requests) if r in n.vgpu_all})
    if vgpu and share:
        ctx.emit("VGP008", ERROR, "spec.containers",
                 f"{ctx.pod_where()}: mixes gpushare ({', '.join(share)}) with vGPU ({', '.join(vgpu)}); "
                 "the scheduler exits if both families are enabled, so one of them is always off")


def _container(ctx: PodContext, c: ContainerView, mode: str | None) -> None:
    n = ctx.names
    values = c.effective()  # one mapping for the four names below, rather than a `lookup` call each
    count = None
    raw = values.get(n.vgpu_count, ABSENT)
    if raw is not ABSENT:
        w = whole_number(raw)
        if w.value is None or w.value < 1:
            why = w.problem or f"{w.value} is not ≥ 1"
            ctx.emit_for(c, "VGP003", ERROR, f"{n.vgpu_count} {why}")
        else:
            count = w.value
            most = ctx.facts.max_gpus_per_node
            if most is not None and count > most:
                ctx.emit_for(c, "VGP003", ERROR,
                             f"{n.vgpu_count}: {count} exceeds the most GPUs on any vGPU node ({most}); "
                             "one container never gets the same GPU twice, so no node fits",
                             case_hint("VGP003", "more-than-any-node", resource=n.vgpu_count, most=most))
    cores = None
    raw = values.get(n.vgpu_cores, ABSENT)
    if raw is not ABSENT:
        w = whole_number(raw)
        if w.value is None or not 0 <= w.value <= 100:
            why = w.problem or f"{w.value} is outside 0..100 (percent of one GPU)"
            ctx.emit_for(c, "VGP004", ERROR, f"{n.vgpu_cores} {why}")
        else:
            cores = w.value
    raw_percentage = values.get(n.vgpu_percentage, ABSENT)
    raw = values.get(n.vgpu_memory, ABSENT)
    memory = (_memory(ctx, c, mode, raw, raw_percentage is not ABSENT and _percentage_read(ctx, raw_percentage))
              if raw is not ABSENT else None)
    percentage = (_percentage(ctx, c, raw_percentage, memory is not None) if raw_percentage is not ABSENT
                  else None)
    if mode == _MIG:
        _mig(ctx, c, values, memory, percentage, cores)
    _resolution(ctx, c, values, count, cores, memory, percentage, mode)


def _percentage_read(ctx: PodContext, raw: Any) -> bool:
    """Whether Volcano books the container's memory from its vgpu-memory-percentage `raw` instead of its
    vgpu-memory: the device config names the percentage resource and the value is a whole number
    (`ExtractResourceRequest`; `checkNodeGPUSharingPredicateAndScore` then ignores the memory)."""
    config = ctx.facts.device_config
    if config is not None and config.nvidia.resource_memory_percentage_name != ctx.names.vgpu_percentage:
        return False
    return whole_number(raw).value is not None


def _memory(ctx: PodContext, c: ContainerView, mode: str | None, raw: Any, overridden: bool) -> int | None:
    """VGP005 on the container's vgpu-memory `raw`; returns it when it is a usable count. When a percentage
    `overridden` it, its size is not compared with the GPUs: Volcano books the percentage of each GPU."""
    n = ctx.names
    w = whole_number(raw)
    if w.unit:
        factor = _memory_factor(ctx)
        if w.value is not None and w.value < _NEVER_FITS:  # e.g. "3k" reads as 3000: it may fit, by accident
            outcome = f"; write {w.value} if that is what you mean"
        else:
            outcome = " and can never fit" + _suggest_mib(raw, factor)
        ctx.emit_for(c, "VGP005", ERROR,
                     f"{n.vgpu_memory} {show(raw)} carries a unit suffix; the value is a count of {_unit(factor)}, "
                     f"so it reads as {w.value if w.value is not None else 'a fraction'}{outcome}")
        return None
    if w.value is None or w.value <= 0:
        why = w.problem or f"{w.value} is not a positive number of {_unit(_memory_factor(ctx))}"
        ctx.emit_for(c, "VGP005", ERROR, f"{n.vgpu_memory} {why}")
        return None
    if mode != _MIG and not overridden and ctx.facts.gpu_devices:  # GPUs known: else nothing to compare with
        largest = largest_eligible_memory(ctx)
        if largest is not None and w.value > largest:
            ctx.emit_for(c, "VGP005", ERROR,
                         f"{n.vgpu_memory}: {w.value} is more than any eligible GPU has (largest: {largest}); "
                         "no node fits", _larger_than_every_gpu(ctx, largest))
    return w.value


def _larger_than_every_gpu(ctx: PodContext, largest: int) -> str:
    """VGP005's hint when the memory is more than every eligible GPU has: the largest, and the larger GPUs the
    pod's gputype / UUID annotations leave out, if any."""
    overall = max((d.memory for d in ctx.facts.gpu_devices or ()), default=largest)
    left_out = [k for k in _FILTER_ANNOTATIONS if k in ctx.annotations]
    wider = (f", or let the pod use the larger GPUs its {' / '.join(left_out)} annotation"
             f"{'s' if len(left_out) > 1 else ''} leave{'' if len(left_out) > 1 else 's'} out (up to {overall})"
             if overall > largest and left_out else "")
    return case_hint("VGP005", "larger-than-every-gpu", resource=ctx.names.vgpu_memory, largest=largest,
                     unit=_unit(_memory_factor(ctx)), wider=wider)


def _memory_factor(ctx: PodContext) -> int:
    return ctx.facts.device_config.nvidia.memory_factor if ctx.facts.device_config else 1


def _unit(factor: int) -> str:
    """What one vgpu-memory unit is, for messages."""
    return "MiB" if factor == 1 else f"units of {factor} MiB (gpuMemoryFactor)"


def _suggest_mib(raw: object, factor: int) -> str:
    q = quantity(raw)
    if q is None or q.value <= 0:
        return ""
    mib = q.value / (1024 * 1024)
    units = mib / factor
    if units >= 1 and units == int(units):
        return f"; write {int(units)}"
    return ""


def _percentage(ctx: PodContext, c: ContainerView, raw: Any, has_memory: bool) -> int | None:
    """VGP006 on the container's vgpu-memory-percentage `raw`; returns it when Volcano uses it."""
    n = ctx.names
    config = ctx.facts.device_config
    if config is not None and config.nvidia.resource_memory_percentage_name != n.vgpu_percentage:
        # Whatever its value: `ExtractResourceRequest` never reads it. With a memory, Volcano places the pod as
        # that memory says, and 100 % is the whole GPU it books anyway: a mistake to say, not a pod to refuse.
        # Without either, the pod gets whole GPUs instead of its share: refused.
        ctx.emit_for(c, "VGP006", WARNING if has_memory or whole_number(raw).value == 100 else ERROR,
                     f"{n.vgpu_percentage} is not enabled: the device config does not set "
                     "nvidia.resourceMemoryPercentageName, so Volcano ignores it and books "
                     + (f"the {n.vgpu_memory} instead" if has_memory else "whole GPUs"))
        return None
    w = whole_number(raw)
    if w.value is None or not 1 <= w.value <= 100:
        why = w.problem or f"{w.value} is outside 1..100"
        ctx.emit_for(c, "VGP006", ERROR, f"{n.vgpu_percentage} {why}")
        return None
    # With nodes known but no version, the newest Volcano is assumed, as `why` and `doctor` assume it.
    version, advertised = ctx.facts.volcano_version or NEWEST_VOLCANO, ctx.facts.node_resources
    if (advertised is not None and checks_vgpu_resources_generically(version)
            and n.vgpu_percentage not in advertised):
        ctx.emit_for(c, "VGP006", ERROR,
                     f"no node advertises {n.vgpu_percentage}; Volcano {version} checks it against "
                     "allocatable, so the pod fails with Insufficient resources everywhere")
        return None
    if has_memory:
        ctx.emit_for(c, "VGP006", WARNING,
                     f"sets both {n.vgpu_memory} and {n.vgpu_percentage}; Volcano uses the percentage "
                     "and ignores the memory")
    return w.value


def _mig(ctx: PodContext, c: ContainerView, values: Mapping[str, Any], memory: int | None, percentage: int | None,
         cores: int | None) -> None:
    n = ctx.names
    if n.vgpu_memory not in values and percentage is None:
        _whole_card(ctx, c)
    config = ctx.facts.device_config
    if config is not None and memory is not None:
        geometries = config.nvidia.known_mig_geometries
        request = mig_request_mib(config.nvidia, memory)
        if not geometries:
            ctx.emit_for(c, "VGP009", ERROR,
                         "vgpu-mode mig but the device config has no knownMigGeometries; Volcano runs "
                         "every GPU as hami-core, so no node ever matches mig")
        elif not _mig_fits_some_model(ctx, request):
            largest = config.nvidia.largest_mig_instance
            ctx.emit_for(c, "VGP009", ERROR,
                         f"{n.vgpu_memory}: {memory} ({request} MiB) is larger than every MIG instance "
                         f"of every known model (largest: {largest} MiB)")
    if cores:
        ctx.emit_for(c, "VGP009", WARNING,
                     f"{n.vgpu_cores}: {cores} with vgpu-mode mig is booked but not enforced; a MIG "
                     "instance's compute is fixed by its profile")


def _whole_card(ctx: PodContext, c: ContainerView) -> None:
    """VGP009 for a MIG request without memory: Volcano asks for 100 % of each GPU's registered memory (× the
    factor), and `mig.go pickFromGroup` places it only on a GPU with an instance at least that large — an
    A100-40GB's `7g.40gb` (40960 ≥ 40960 MiB) or an A30's `4g.24gb` take it, an A100-80GB's `7g.80gb` (80896 <
    81920 MiB) never does. An error when the cluster's MIG GPUs are known and none takes it; a warning
    when they are not known."""
    n = ctx.names
    config = ctx.facts.device_config
    if config is not None and not config.nvidia.known_mig_geometries:
        ctx.emit_for(c, "VGP009", ERROR,
                     "vgpu-mode mig but the device config has no knownMigGeometries; Volcano runs "
                     "every GPU as hami-core, so no node ever matches mig")
        return
    prefix = f"vgpu-mode mig without {n.vgpu_memory} asks for each GPU's whole registered memory"
    if not ctx.facts.gpu_devices:
        ctx.emit_for(c, "VGP009", WARNING,
                     f"{prefix}: only a MIG GPU with an instance that large takes it (an A100-40GB's 7g.40gb "
                     "does; an A100-80GB registers 81920 MiB and its largest instance is 80896: the full-card "
                     "trap, it never fits there)")
        return
    takers, traps = _whole_card_gpus(ctx)
    if takers or not traps:  # some MIG GPU takes it, or none is eligible at all (no MIG node: not a MIG matter)
        return
    shown = "; ".join(f"{t} registers {mib} MiB, its largest instance is {largest} MiB"
                      for t, (mib, largest) in sorted(traps.items()))
    ctx.emit_for(c, "VGP009", ERROR,
                 f"{prefix}, which no instance of the cluster's MIG GPUs has (full-card trap): {shown}")


def _whole_card_gpus(ctx: PodContext) -> tuple[int, dict[str, tuple[int, int]]]:
    """Of the GPUs the pod's filters allow on nodes Volcano runs in MIG mode (the last GPU registered `mig`
    with a known model, `decodeNodeDevices`), registered `mig` themselves with a known model: how many have
    an instance at least their registered memory (× gpuMemoryFactor), and for the others, type → (that
    memory, their largest instance). Memoised per facts and filter."""

    def compute() -> tuple[int, dict[str, tuple[int, int]]]:
        nvidia = ctx.facts.volcano_device_config.nvidia
        factor = nvidia.memory_factor
        takers, traps = 0, {}
        for node in ctx.facts.vgpu_nodes or ():
            last = node.devices[-1] if node.devices else None
            if last is None or last.mode != _MIG or nvidia.geometry_for(last.type) is None:
                continue  # a hami-core node: a mig pod never matches its mode
            for d in _eligible(ctx, node.devices):
                geometry = nvidia.geometry_for(d.type) if d.mode == _MIG else None
                if geometry is None:
                    continue
                if geometry.largest_instance >= d.memory * factor:
                    takers += 1
                else:
                    traps[d.type] = (d.memory * factor, geometry.largest_instance)
        return takers, traps

    found: tuple[int, dict[str, tuple[int, int]]] = _memoised(ctx, "mig-whole-card", compute)
    return found


def _resolution(ctx: PodContext, c: ContainerView, values: Mapping[str, Any], count: int | None, cores: int | None,
                memory: int | None, percentage: int | None, mode: str | None) -> None:
    """VGP017: say what the request resolves to when it is not obvious."""
    if cores == 100:
        ctx.emit_for(c, "VGP017", INFO,
                     f"{ctx.names.vgpu_cores}: 100 makes {_gpus(count)} exclusive: no other pod may share it")
    config = ctx.facts.device_config
    if mode == _MIG and memory is not None and config is not None:
        request = mig_request_mib(config.nvidia, memory)
        slices = _mig_slices(ctx, request)
        if slices:
            ctx.emit_for(c, "VGP017", INFO, f"MIG request of {request} MiB per GPU gets " + "; ".join(slices))
    elif mode is None and ctx.names.vgpu_memory not in values and ctx.names.vgpu_percentage not in values:
        several = (count or 0) > 1
        ctx.emit_for(c, "VGP017", INFO,
                     f"no {ctx.names.vgpu_memory}: {_gpus(count)} {'are' if several else 'is'} booked with all "
                     f"of {'their' if several else 'its'} memory")


def _gpus(count: int | None) -> str:
    """The GPUs a container is booked, for messages."""
    return f"{count} GPU" + ("s" if (count or 0) > 1 else "") if count else "the GPU"


def _mig_fits_some_model(ctx: PodContext, request: int) -> bool:
    """Whether a MIG request of `request` MiB fits an instance of any known model (memoised per request)."""
    geometries = ctx.facts.device_config.nvidia.known_mig_geometries if ctx.facts.device_config else ()
    # Memoised per request size (benchmarks/review_throughput.py --device-config FILE).
    fits: bool = _memo(ctx, ("mig-fits", request), lambda: any(mig_fit_in_geometry(g, request) for g in geometries))
    return fits


def _mig_slices(ctx: PodContext, request: int) -> tuple[str, ...]:
    """Where a MIG request of `request` MiB lands on each known model, memoised per facts and request
    (a handful of sizes recur across every MIG pod)."""
    geometries = ctx.facts.device_config.nvidia.known_mig_geometries if ctx.facts.device_config else ()

    def slices() -> tuple[str, ...]:
        fits = ((g, mig_fit_in_geometry(g, request)) for g in geometries)
        return tuple(f"{fit.instance.name} ({fit.group.name}) on {g.models[0]}" for g, fit in fits
                     if fit is not None and g.models)

    # Memoised per request size (benchmarks/review_throughput.py --device-config FILE).
    found: tuple[str, ...] = _memo(ctx, ("mig-slices", request), slices)
    return found


def eligible_devices(ctx: PodContext) -> tuple[GpuDevice, ...] | None:
    """GPUs the pod's type and UUID filters allow (None when the cluster's GPUs are unknown).

    Memoised per facts and filter: the doctor reviews 40,000 pods against 40,000 GPUs, and most pods
    share the same (usually empty) filters. The tuple is shared: never copied per review.
    """
    devices = ctx.facts.gpu_devices
    if devices is None:
        return None
    cached: tuple[GpuDevice, ...] = _memoised(ctx, "eligible-gpus", lambda: _eligible(ctx, devices))
    return cached


def largest_eligible_memory(ctx: PodContext) -> int | None:
    """The most memory any GPU the pod's filters allow has (None: GPUs unknown or none allowed)."""
    devices = eligible_devices(ctx)
    if not devices:
        return None
    largest: int = _memoised(ctx, "largest-eligible", lambda: max(d.memory for d in devices))
    return largest


def _memoised(ctx: PodContext, what: str, compute: Callable[[], Any]) -> Any:
    """`_memo` per facts and the pod's GPU filter annotations."""
    # Per facts, not per pod: the facts can hold 40,000 GPUs (benchmarks/cluster_aware.py).
    return _memo(ctx, (what, *(str(ctx.annotations.get(k, "\0")) for k in _FILTER_ANNOTATIONS)), compute)


def _memo(ctx: PodContext, key: Any, compute: Callable[[], Any]) -> Any:
    """`compute()`, remembered in the facts' memo under `key`. Keys come from user annotations and request
    sizes, so the memo is bounded (cleared when full); it is read once per call, because the webhook
    shares one facts value between request threads and another may clear it meanwhile."""
    memo = ctx.facts.memo
    value = memo.get(key, MISSING)
    return store(memo, key, compute()) if value is MISSING else value


_FILTER_ANNOTATIONS = (spec.ANN_USE_GPUTYPE, spec.ANN_NOUSE_GPUTYPE, spec.ANN_USE_GPUUUID, spec.ANN_NOUSE_GPUUUID)
# What _gputype, _gpuuuid and _podgroup read: a pod with none of these has nothing for them to judge.
_POD_ANNOTATIONS = frozenset({*_FILTER_ANNOTATIONS, spec.ANN_PODGROUP_POLICY})


def _eligible(ctx: PodContext, devices: tuple[GpuDevice, ...]) -> tuple[GpuDevice, ...]:
    use = _tokens(ctx.annotations.get(spec.ANN_USE_GPUTYPE))
    nouse = _tokens(ctx.annotations.get(spec.ANN_NOUSE_GPUTYPE))
    allow = {t.strip() for t in _tokens(ctx.annotations.get(spec.ANN_USE_GPUUUID)) if t.strip()}
    deny = {t.strip() for t in _tokens(ctx.annotations.get(spec.ANN_NOUSE_GPUUUID)) if t.strip()}
    result = []
    for d in devices:
        kind = d.type.lower()
        if use and not any(t and t.lower() in kind for t in use):
            continue
        if not use and nouse and any(t and t.lower() in kind for t in nouse):
            continue
        if d.uuid in deny or (allow and d.uuid not in allow):
            continue
        result.append(d)
    return tuple(result)


def _tokens(raw: object) -> list[str]:
    return str(raw).split(",") if raw is not None else []


def _gputype(ctx: PodContext) -> None:
    """VGP010."""
    use_raw = ctx.annotations.get(spec.ANN_USE_GPUTYPE)
    nouse_raw = ctx.annotations.get(spec.ANN_NOUSE_GPUTYPE)
    for key, raw in ((spec.ANN_USE_GPUTYPE, use_raw), (spec.ANN_NOUSE_GPUTYPE, nouse_raw)):
        if raw is not None and any(not t.strip() for t in _tokens(raw)):
            ctx.emit("VGP010", ERROR, f"annotation/{key}",
                     f"{ctx.pod_where()}: {key}: {show(raw)} has an empty entry, which matches (or, in nouse, "
                     "excludes) every GPU type")
    if use_raw is not None and nouse_raw is not None:
        ctx.emit("VGP010", WARNING, f"annotation/{spec.ANN_NOUSE_GPUTYPE}",
                 f"{ctx.pod_where()}: both {spec.ANN_USE_GPUTYPE} and {spec.ANN_NOUSE_GPUTYPE} are set; "
                 f"Volcano ignores {spec.ANN_NOUSE_GPUTYPE} when {spec.ANN_USE_GPUTYPE} is present")
    devices = ctx.facts.gpu_devices
    if devices and (use_raw is not None or nouse_raw is not None) and not eligible_devices(ctx):
        key = spec.ANN_USE_GPUTYPE if use_raw is not None else spec.ANN_NOUSE_GPUTYPE
        types = _memoised(ctx, "gpu-types", lambda: ", ".join(sorted({d.type for d in devices})))
        ctx.emit("VGP010", WARNING, f"annotation/{key}",
                 f"{ctx.pod_where()}: {key}: {show(use_raw if use_raw is not None else nouse_raw)} leaves no "
                 f"GPU in the cluster (types: {types})")


def _gpuuuid(ctx: PodContext) -> None:
    """VGP011."""
    version = ctx.facts.volcano_version
    known = ctx.facts.gpu_uuids
    lists: dict[str, list[str]] = {}
    for key in (spec.ANN_USE_GPUUUID, spec.ANN_NOUSE_GPUUUID):
        raw = ctx.annotations.get(key)
        if raw is None:
            continue
        # Volcano trims each entry and drops the empty ones (parseGPUUUIDList): "" or "GPU-…," is no
        # constraint, or the listed UUIDs only, never a malformed entry.
        lists[key] = [t for t in (t.strip() for t in _tokens(raw)) if t]
        if not lists[key]:
            continue
        subject = f"annotation/{key}"
        bad = [t for t in lists[key] if not _GPU_UUID.match(t)]
        if bad:
            shown = ", ".join(repr(t) for t in bad)
            ctx.emit("VGP011", WARNING, subject,
                     f"{ctx.pod_where()}: {key} has entries that are not GPU UUIDs (GPU-xxxxxxxx-…): {shown}")
        if known is not None:
            unknown = [t for t in lists[key] if _GPU_UUID.match(t) and t not in known]
            if unknown:
                ctx.emit("VGP011", WARNING, subject,
                         f"{ctx.pod_where()}: {key} names GPUs no node registers: {', '.join(unknown)}")
        if version is not None and not has_gpu_uuid_filter(version):
            ctx.emit("VGP011", WARNING, subject,
                     f"{ctx.pod_where()}: {key} is ignored by Volcano {version} (needs ≥ 1.16)")
    allow, deny = lists.get(spec.ANN_USE_GPUUUID), lists.get(spec.ANN_NOUSE_GPUUUID)
    if allow and deny and set(allow) <= set(deny):
        ctx.emit("VGP011", WARNING, f"annotation/{spec.ANN_NOUSE_GPUUUID}",
                 f"{ctx.pod_where()}: {spec.ANN_NOUSE_GPUUUID} denies every GPU that "
                 f"{spec.ANN_USE_GPUUUID} allows (deny wins), so no GPU is left")


def _podgroup(ctx: PodContext) -> None:
    """VGP012."""
    raw = ctx.annotations.get(spec.ANN_PODGROUP_POLICY)
    if raw is None:
        return
    subject = f"annotation/{spec.ANN_PODGROUP_POLICY}"
    if raw != spec.PODGROUP_POLICY_SPREAD:
        ctx.emit("VGP012", WARNING, subject,
                 f"{ctx.pod_where()}: {spec.ANN_PODGROUP_POLICY}: {show(raw)} has no effect; only "
                 f"{spec.PODGROUP_POLICY_SPREAD!r} is implemented")
    elif ctx.target.volcano_job is None and not (
        ctx.annotations.get(spec.ANN_GROUP_NAME_K8S) or ctx.annotations.get(spec.ANN_GROUP_NAME_VOLCANO)
    ):
        ctx.emit("VGP012", WARNING, subject,
                 f"{ctx.pod_where()}: {spec.ANN_PODGROUP_POLICY}: spread without a PodGroup annotation "
                 f"({spec.ANN_GROUP_NAME_K8S}) has nothing to spread from")
    version = ctx.facts.volcano_version
    if version is not None and not has_podgroup_policy(version):
        ctx.emit("VGP012", WARNING, subject,
                 f"{ctx.pod_where()}: {spec.ANN_PODGROUP_POLICY} is ignored by Volcano {version} (needs ≥ 1.15)")


def privileged(ctx: PodContext) -> None:
    """VGP016: a privileged container sees every device on the node, so slicing isolates nothing."""
    for c in ctx.containers:
        if c.privileged and c.kinds & (VGPU | NPU_CORE | ASCEND):
            ctx.emit_for(c, "VGP016", ctx.facts.privileged_severity,
                         "is privileged and requests a shared GPU/NPU; it sees every device on the node, so the "
                         "slice's isolation is void")
