"""What would make the pod fit on a node: a change to the request, replayed before it is offered.

A hint with a number is a claim ("ask for ≤ 12288 MiB"), and a claim must hold: Volcano does not book what
the user writes. Ascend HAMi raises a memory request to the smallest template that covers it, or to the
whole chip's `memoryAllocatable` when none does (`trimMemory`, volcano-sh/volcano
`pkg/scheduler/api/devices/ascend/hami/device_info.go`): on a 310P anything from 12289 to 24576 MiB books
21527, so "the free memory" is no answer. MIG books a slice, MindCluster a template, several containers
share devices. So no filter computes a number here: each strategy below proposes values for one field
of the request (largest first, or by bisection where Volcano's booking grows with the value), and a
value is offered only once the edited pod, parsed again, passes `simulate_node` on that node and the rule
core accepts it. A `Suggestion` therefore always fits where it says, by construction.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.cluster.model import NodeState
from vgpuctl.core.deviceconfig import VnpuConfig
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.podrules.context import quantity
from vgpuctl.core.why import vgpu as vgpu_filter
from vgpuctl.core.why.model import Edit, NodeVerdict, Reason, Suggestion
from vgpuctl.core.why.request import PERCENT_UNSET, PodRequest, parse_pod
from vgpuctl.core.why.rules import judge
from vgpuctl.core.why.scheduler_env import WhyEnv
from vgpuctl.core.why.simulate import simulate_node

_SEARCH_LIMIT = 1 << 20  # bisection ceiling when the request gives none (MiB or units)


def _node_resource(key: str) -> bool:
    """A resource the kubelet accounts by request (cpu, memory, ephemeral-storage, hugepages): an edit lowers the
    request, or the limit where no request is set (the API server copies it to the request)."""
    return key in (spec.RESOURCE_CPU, spec.RESOURCE_MEMORY, spec.RESOURCE_EPHEMERAL_STORAGE) or \
        key.startswith("hugepages-")


def apply_edits(pod_obj: Mapping[str, Any], edits: Iterable[Edit]) -> dict[str, Any]:
    """A copy of `pod_obj` with `edits` applied: a device or extended resource in the limits (and the requests
    where the container has it there), a node resource (`_node_resource`) in its request, else its limit."""
    pod = copy.deepcopy(dict(pod_obj))
    for edit in edits:
        if edit.container is None:
            meta = pod.setdefault("metadata", {})
            annotations = dict(meta.get("annotations") or {})
            if edit.value is None:
                annotations.pop(edit.key, None)
            else:
                annotations[edit.key] = edit.value
            meta["annotations"] = annotations
            continue
        for c in (pod.get("spec") or {}).get("containers") or []:
            if not isinstance(c, dict) or c.get("name") != edit.container:
                continue
            resources = c.setdefault("resources", {})
            requested = isinstance(resources.get("requests"), dict) and edit.key in resources["requests"]
            for part in ("limits", "requests"):
                values = resources.get(part)
                if part == "requests" and not requested:
                    continue
                if part == "limits" and _node_resource(edit.key) and requested:
                    continue
                values = dict(values or {})
                if edit.value is None:
                    values.pop(edit.key, None)
                else:
                    values[edit.key] = edit.value
                resources[part] = values
    return pod


class _Replay:
    def __init__(self, pod_obj: Mapping[str, Any], node: NodeState, env: WhyEnv, facts: ClusterFacts,
                 existing: bool) -> None:
        self.pod_obj, self.node, self.env, self.facts, self.existing = pod_obj, node, env, facts, existing

    def fits(self, edits: tuple[Edit, ...]) -> bool:
        edited = apply_edits(self.pod_obj, edits)
        return simulate_node(parse_pod(edited, self.env), self.node, self.env).fits

    def accepted(self, edits: tuple[Edit, ...]) -> bool:
        return not judge(apply_edits(self.pod_obj, edits), self.facts, existing=self.existing).rejected


def _largest(lo: int, hi: int, fits: Callable[[int], bool]) -> int | None:
    """The largest v in lo..hi with fits(v), for a `fits` that holds up to some value and not above it."""
    if hi < lo or not fits(lo):
        return None
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if fits(mid):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _first(candidates: Iterable[int], fits: Callable[[int], bool]) -> int | None:
    return next((v for v in candidates if fits(v)), None)


def suggest(pod_obj: Mapping[str, Any], pod: PodRequest, verdict: NodeVerdict, node: NodeState, env: WhyEnv,
            facts: ClusterFacts, *, existing: bool) -> Suggestion | None:
    """A replayed change that makes `pod` fit on `node` (where `verdict` is its miss), or None."""
    if verdict.fits or verdict.reason is None:
        return None
    replay = _Replay(pod_obj, node, env, facts, existing)
    proposals = (_resource(verdict, replay) if verdict.reason is Reason.INSUFFICIENT_RESOURCE
                 else _proposals(pod, verdict, node, env, replay))
    for edits, note in proposals:
        if replay.accepted(edits):
            return Suggestion(node.name, verdict.reason, edits, note)
    return None


Proposal = tuple[tuple[Edit, ...], str]


def _proposals(pod: PodRequest, verdict: NodeVerdict, node: NodeState, env: WhyEnv,
               replay: _Replay) -> Iterable[Proposal]:
    reason, family, container = verdict.reason, verdict.family, verdict.container

    def one(key: str, c: str | None) -> Callable[[int], bool]:
        return lambda v: replay.fits((Edit(c, key, str(v)),))

    if family is spec.Family.VGPU:
        yield from _vgpu(pod, reason, container, node, env, replay, one)
    elif family is spec.Family.ASCEND_HAMI:
        yield from _ascend(pod, reason, container, node, env, replay, one)
    elif family in (spec.Family.GPUSHARE, spec.Family.GPUNUMBER):
        yield from _gpushare(pod, reason, pod_containers(replay.pod_obj, (spec.GPU_MEMORY, spec.GPU_NUMBER)), one)
    elif family is spec.Family.ASCEND_MINDCLUSTER and reason is Reason.INSUFFICIENT_CORES:
        holders = pod_containers(replay.pod_obj, (spec.NPU_CORE,))
        if pod.mindcluster is not None and holders:
            per_chip = next((d.cores_total for d in node.devices if d.family is family),
                            spec.DEFAULT_CORES_PER_310P_CHIP)
            valid = sorted({1, 2, 4, *(k * per_chip for k in range(1, pod.mindcluster.cores // max(per_chip, 1)
                                                                    + 1))}, reverse=True)
            found = _first((v for v in valid if v < pod.mindcluster.cores), one(spec.NPU_CORE, holders[0]))
            if found is not None:
                yield (Edit(holders[0], spec.NPU_CORE, str(found)),), ""


def _resource(verdict: NodeVerdict, replay: _Replay) -> Iterable[Proposal]:
    """A smaller request of the resource the node is short of (the allocate action's check), in the app container
    asking most of it: cpu in millicores, memory and ephemeral-storage in MiB, an extended resource in units.
    (Where the node is short of several, or also fails another check, no one value makes the pod fit: none.)"""
    if not verdict.resources or verdict.resources[0] == spec.RESOURCE_PODS:
        return
    key = verdict.resources[0]
    if key.startswith("hugepages-"):  # a multiple of the page size: no value to bisect
        return
    best: tuple[int, str, bool] | None = None
    for c in (replay.pod_obj.get("spec") or {}).get("containers") or []:
        resources = (c.get("resources") or {}) if isinstance(c, Mapping) else {}
        requests, limits = resources.get("requests") or {}, resources.get("limits") or {}
        raw = requests.get(key) if isinstance(requests, Mapping) and key in requests else \
            limits.get(key) if isinstance(limits, Mapping) else None
        amount = _amount_of(key, raw)
        if amount is not None and isinstance(c.get("name"), str) and (best is None or amount > best[0]):
            best = (amount, c["name"], isinstance(requests, Mapping) and key in requests)
    if best is None:
        return
    current, container, requested = best
    unit, show = _units(key)
    found = _largest(1, min((current - 1) // unit, _SEARCH_LIMIT * 1024),
                     lambda v: replay.fits((Edit(container, key, show(v)),)))
    if found is None:
        return
    note = ("its request" if requested and _node_resource(key) else
            "its limit, which the API server copies to the unset request" if _node_resource(key) else "")
    yield (Edit(container, key, show(found)),), note


def _amount_of(key: str, raw: Any) -> int | None:
    """`raw` in the bisection's base unit for `key`: millicores for cpu, bytes for memory and storage, else the
    whole number."""
    if raw is None or isinstance(raw, bool):
        return None
    q = quantity(raw)
    if q is None:
        return None
    return q.milli_value_rounded_up() if key == spec.RESOURCE_CPU else q.value_rounded_up()


def _units(key: str) -> tuple[int, Callable[[int], str]]:
    """The step of a suggested value for `key` in `_amount_of`'s unit, and how it is written."""
    if key == spec.RESOURCE_CPU:
        return 1, lambda m: str(m // 1000) if m % 1000 == 0 else f"{m}m"
    if key in (spec.RESOURCE_MEMORY, spec.RESOURCE_EPHEMERAL_STORAGE):
        return 1 << 20, lambda mib: f"{mib}Mi"
    return 1, str


def pod_containers(pod_obj: Mapping[str, Any], keys: tuple[str, ...]) -> list[str]:
    """Names of the app containers whose limits name one of `keys`."""
    names = []
    for c in (pod_obj.get("spec") or {}).get("containers") or []:
        limits = ((c.get("resources") or {}).get("limits") or {}) if isinstance(c, Mapping) else {}
        if isinstance(limits, Mapping) and any(k in limits for k in keys) and isinstance(c.get("name"), str):
            names.append(c["name"])
    return names


def _vgpu(pod: PodRequest, reason: Reason | None, container: str, node: NodeState, env: WhyEnv, replay: _Replay,
          one: Callable[[str, str | None], Callable[[int], bool]]) -> Iterable[Proposal]:
    nv = env.device_config.nvidia
    if reason is Reason.MODE_MISMATCH:
        edit = (Edit(None, spec.ANN_VGPU_MODE, vgpu_filter.node_mode(node, env)),)
        if replay.fits(edit):
            yield edit, ""
        return
    req = next((r for r in pod.vgpu if r.container == container), None)
    if req is None:
        return
    if reason is Reason.TOO_MANY_DEVICES and nv.resource_count_name:
        found = _largest(1, req.nums - 1, one(nv.resource_count_name, container))
        if found is not None:
            yield (Edit(container, nv.resource_count_name, str(found)),), ""
    elif reason in (Reason.INSUFFICIENT_MEMORY, Reason.NO_MIG_SLICE):
        pct = nv.resource_memory_percentage_name
        if pct and container in pod_containers(replay.pod_obj, (pct,)) and req.percentage != PERCENT_UNSET:
            found = _largest(1, min(req.percentage, 101) - 1, one(pct, container))
            if found is not None:
                yield (Edit(container, pct, str(found)),), "% of each GPU's memory"
        elif nv.resource_memory_name:
            top = req.memory - 1 if req.memory > 0 else max(
                (d.memory_total // env.factor for d in node.devices if d.family is spec.Family.VGPU), default=0)
            found = _largest(1, min(top, _SEARCH_LIMIT), one(nv.resource_memory_name, container))
            if found is not None:
                yield (Edit(container, nv.resource_memory_name, str(found)),), \
                    f"{found * env.factor} MiB per GPU" if env.factor != 1 else "MiB per GPU"
    elif reason in (Reason.INSUFFICIENT_CORES, Reason.EXCLUSIVE_IN_USE) and nv.resource_core_name and req.cores > 1:
        found = _largest(1, min(req.cores, 101) - 1, one(nv.resource_core_name, container))
        if found is not None:
            yield (Edit(container, nv.resource_core_name, str(found)),), ""


def _ascend(pod: PodRequest, reason: Reason | None, container: str, node: NodeState, env: WhyEnv, replay: _Replay,
            one: Callable[[str, str | None], Callable[[int], bool]]) -> Iterable[Proposal]:
    if reason is Reason.HAMI_CORE_UNSUPPORTED:
        edit = (Edit(None, spec.ANN_VNPU_MODE, None),)
        if replay.fits(edit):
            yield edit, "template mode"
        return
    req = next((r for r in pod.ascend if r.container == container), None)
    if req is None:
        return
    vnpu = req.vnpu
    if reason is Reason.PARTIAL_MULTI_DEVICE and vnpu.resource_memory_name:
        edit = (Edit(container, vnpu.resource_memory_name, None),)
        if replay.fits(edit):
            yield edit, "whole cards"
    elif reason is Reason.TOO_MANY_DEVICES:
        found = _largest(1, req.nums - 1, one(vnpu.resource_name, container))
        if found is not None:
            yield (Edit(container, vnpu.resource_name, str(found)),), ""
    elif reason is Reason.INSUFFICIENT_MEMORY and vnpu.resource_memory_name:
        current = req.memory if req.memory > 0 else max(
            (d.memory_total for d in node.devices if d.family is spec.Family.ASCEND_HAMI), default=0)
        fits = one(vnpu.resource_memory_name, container)
        if pod.ascend_hami_core:  # hami-core books the request as written: the fit shrinks with it
            found = _largest(1, min(current - 1, _SEARCH_LIMIT), fits)
        else:  # template mode books a template or the whole chip: only those values mean anything
            found = _first((v for v in _bookable(vnpu) if v < current), fits)
        if found is not None:
            yield (Edit(container, vnpu.resource_memory_name, str(found)),), _booked(vnpu, found, pod.ascend_hami_core)


def _bookable(vnpu: VnpuConfig) -> list[int]:
    """The largest request for each distinct booking `trimMemory` makes, largest first."""
    return sorted({*(t.memory for t in vnpu.templates), vnpu.memory_capacity}, reverse=True)


def _booked(vnpu: VnpuConfig, memory: int, hami_core: bool) -> str:
    if hami_core:
        return "hami-core books it as written"
    template = next((t for t in vnpu.templates if t.memory >= memory), None)
    if template is not None:
        return f"template {template.name}"
    return f"no template covers it: books the whole chip, {vnpu.memory_allocatable} MiB"


def _gpushare(pod: PodRequest, reason: Reason | None, holders: list[str],
              one: Callable[[str, str | None], Callable[[int], bool]]) -> Iterable[Proposal]:
    if len(holders) != 1:  # the pod's total is what a card must hold: one container is what we can change
        return
    if reason is Reason.INSUFFICIENT_MEMORY and pod.gpushare_memory > 1:
        found = _largest(1, pod.gpushare_memory - 1, one(spec.GPU_MEMORY, holders[0]))
        if found is not None:
            yield (Edit(holders[0], spec.GPU_MEMORY, str(found)),), "MiB on one card"
    elif reason is Reason.SLOTS_EXHAUSTED and pod.gpushare_number > 1:
        found = _largest(1, pod.gpushare_number - 1, one(spec.GPU_NUMBER, holders[0]))
        if found is not None:
            yield (Edit(holders[0], spec.GPU_NUMBER, str(found)),), ""


__all__ = ["apply_edits", "suggest"]
