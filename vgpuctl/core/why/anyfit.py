"""Does a pod fit on some node right now? The admission webhook's question, answered by the `why` simulator.

`explain` simulates every node to group the reasons, which costs ~10 µs a node: 50 ms on a 5,000-node
cluster, far over an admission budget. Admission only needs *one* node that fits. So each node gets a
`NodeSummary` once per cluster change (in the background, never on the request path): which families it
can serve and, for vGPU and gpushare, the free memory, cores and slots of its usable devices. A request
then walks the nodes with the most headroom first, skips every node whose summary already proves a miss
(each test below is a necessary condition of Volcano's filter, as replayed by `vgpu.py` and
`gpushare.py`), stops walking at the first node with too little headroom (the order is by headroom), and
runs the exact simulator (`simulate_node`) on the rest until one fits.

Two budgets bound the worst case (many nodes with room on paper that the exact filter refuses): summary
tests and exact simulations per request. Past either the answer is `UNKNOWN`: a warning is a claim, and
this module never guesses one.
"""

from __future__ import annotations

import enum
from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.cluster.model import NodeState
from vgpuctl.core.why import vgpu as vgpu_filter
from vgpuctl.core.why.model import NodeVerdict
from vgpuctl.core.why.request import PERCENT_UNSET, PodRequest
from vgpuctl.core.why.scheduler_env import WhyEnv
from vgpuctl.core.why.simulate import requested_families, simulate_node

DEFAULT_BUDGET = 32  # exact simulations per request (~10-20 µs each)
DEFAULT_SCAN_BUDGET = 2000  # summary tests per request (~0.5-1 µs each)
_UNBOUNDED = 1 << 62  # "no limit": a key every request passes
_FULL_CORES = 100
_HAMI_CORE = spec.VgpuMode.HAMI_CORE.value
_MIG = spec.VgpuMode.MIG.value


class Outcome(str, enum.Enum):
    FITS = "fits"  # a node has room now
    NO_FIT = "no-fit"  # no node has room now (proven: every node ruled out or simulated)
    UNKNOWN = "unknown"  # the budget ran out before an answer: say nothing
    NO_DEVICE = "no-device"  # the pod asks for nothing deviceshare filters


@dataclass(frozen=True, slots=True)
class VgpuSlot:
    """One GPU that still takes a task (a free slot, cores below 100 %), in register units."""

    free: int  # memory units free (MiB ÷ gpuMemoryFactor)
    percent_cap: int  # no memory percentage above this can fit (see `_percent_cap`)
    free_cores: int
    tasks: int  # tasks on it (vgpu-cores 100 needs 0)
    type: str


_VGPU_ORDERS = ((False, False), (False, True), (True, False), (True, True))  # (idle GPUs only, percentage)


@dataclass(frozen=True, slots=True)
class NodeSummary:
    """What a node can offer, as far as cheap necessary conditions go. Built with the same env as the
    simulation (device model, mode and gpuMemoryFactor come from it), once per node change."""

    name: str
    vgpu: bool = False  # Volcano builds a vGPU device model for the node
    vgpu_mode: str = _HAMI_CORE
    vgpu_slots: tuple[VgpuSlot, ...] = ()  # usable GPUs, most free memory first
    vgpu_types: frozenset[str] = frozenset()  # types of the usable GPUs
    vgpu_keys: tuple[int, ...] = (-1, -1, -1, -1)  # `vgpu_key` for each of `_VGPU_ORDERS`
    share_cards: int = 0  # healthy gpushare cards
    share_free: int = 0  # MiB free on the emptiest healthy card
    share_idle: int = 0  # healthy cards with no pod
    ascend: frozenset[str] = frozenset()  # commonWords of registered Ascend HAMi devices
    mindcluster: bool = False


def vgpu_key(slots: Iterable[VgpuSlot], idle: bool, percent: bool) -> int:
    """The most one usable GPU offers (memory units, or a percentage cap), only idle GPUs if `idle`."""
    return max(((s.percent_cap if percent else s.free) for s in slots if s.tasks == 0 or not idle), default=-1)


def _percent_cap(free: int, memory: int) -> int:
    """The largest memory percentage `p` with `int(memory * p / 100) <= free`, plus one for float rounding.

    The simulator asks for `int(memory * p / 100)` units; exactly, that is ≤ free iff p·memory < (free+1)·100.
    One unit of slack covers a float product landing just below an integer."""
    if memory <= 0:
        return _UNBOUNDED
    return ((free + 2) * 100 - 1) // memory


def summarize(node: NodeState, env: WhyEnv) -> NodeSummary:
    """The node's summary under `env` (its device config, Volcano version and enabled families)."""
    vgpu = False
    mode = _HAMI_CORE
    slots: list[VgpuSlot] = []
    if any(d.family is spec.Family.VGPU for d in node.devices):
        vgpu = vgpu_filter.device_model_problem(node, env) is None
        if vgpu:
            mode = vgpu_filter.node_mode(node, env)
            factor = env.factor
            for d in node.devices:
                # vgpu.py skips a device whose slots are all taken or whose cores are used up.
                if d.family is not spec.Family.VGPU or d.slots_used >= d.slots_total or d.cores_used >= _FULL_CORES:
                    continue
                memory = d.memory_total // factor
                free = memory - d.memory_used // factor
                slots.append(VgpuSlot(free, _percent_cap(free, memory), _FULL_CORES - d.cores_used, d.slots_used,
                                      d.type))
            slots.sort(key=lambda s: -s.free)
    cards = [d for d in node.devices if d.family is spec.Family.GPUSHARE and d.health]
    return NodeSummary(
        name=node.name, vgpu=vgpu, vgpu_mode=mode, vgpu_slots=tuple(slots),
        vgpu_types=frozenset(s.type for s in slots),
        vgpu_keys=tuple(vgpu_key(slots, idle, percent) for idle, percent in _VGPU_ORDERS),
        share_cards=len(cards),
        share_free=max((max(c.memory_total - c.memory_used, 0) for c in cards), default=0),
        share_idle=sum(1 for c in cards if not c.pods),
        ascend=frozenset(d.type for d in node.devices if d.family is spec.Family.ASCEND_HAMI),
        mindcluster=any(d.family is spec.Family.ASCEND_MINDCLUSTER for d in node.devices),
    )


@dataclass(frozen=True, slots=True)
class _Order:
    """Node positions by headroom, most first, with their keys negated (ascending) for `bisect`."""

    positions: tuple[int, ...]
    neg_keys: tuple[int, ...]

    @staticmethod
    def of(positions: Sequence[int], keys: Sequence[int]) -> _Order:
        """`positions` ordered by their `keys` (aligned), highest first, ties in position order."""
        order = sorted(range(len(keys)), key=keys.__getitem__, reverse=True)  # stable, also reversed
        return _Order(tuple(positions[j] for j in order), tuple(-keys[j] for j in order))

    def at_least(self, floor: int | None) -> tuple[int, ...]:
        """The positions whose key is ≥ floor (all of them for None)."""
        if floor is None:
            return self.positions
        return self.positions[:bisect_right(self.neg_keys, -floor)]


TypeSet = frozenset[str]


@dataclass(frozen=True)
class FitIndex:
    """Nodes, their summaries, and walking orders by headroom; immutable, shared by every request.

    hami-core vGPU nodes are grouped by the GPU types of their usable GPUs (a cluster has a few models),
    so a `use-gputype` / `nouse-gputype` filter rules out a whole group at once, and ordered within a
    group four ways: by the most memory units or the highest percentage one GPU offers, counting every
    usable GPU or only idle ones (`vgpu-cores: 100` wants a GPU to itself)."""

    nodes: tuple[NodeState, ...]
    summaries: tuple[NodeSummary, ...]
    env: WhyEnv
    vgpu_groups: tuple[TypeSet, ...]
    vgpu: Mapping[tuple[TypeSet, bool, bool], _Order]  # (types, idle GPUs only, percentage) → order
    vgpu_all: _Order  # every hami-core vGPU node, most free memory on one GPU first
    vgpu_mig: tuple[int, ...]  # MIG nodes book slices, not memory: no headroom order
    share_free: _Order
    share_idle: _Order
    ascend: tuple[int, ...]
    mindcluster: tuple[int, ...]


def build_index(nodes: Iterable[tuple[NodeState, NodeSummary]], env: WhyEnv) -> FitIndex:
    """An index over (node, summary) pairs; summaries must come from `summarize(node, env)` with this env."""
    pairs = list(nodes)
    summaries = tuple(s for _, s in pairs)
    positions = range(len(pairs))
    hami = [i for i in positions if summaries[i].vgpu and summaries[i].vgpu_mode != _MIG]
    groups: dict[TypeSet, list[int]] = {}
    for i in hami:
        groups.setdefault(summaries[i].vgpu_types, []).append(i)
    share = [i for i in positions if summaries[i].share_cards]

    def vgpu_order(members: list[int], k: int) -> _Order:
        return _Order.of(members, [summaries[i].vgpu_keys[k] for i in members])

    return FitIndex(
        nodes=tuple(n for n, _ in pairs), summaries=summaries, env=env,
        vgpu_groups=tuple(g for g in groups if g),  # no usable GPU: no group to walk
        vgpu={(g, idle, percent): vgpu_order(members, k)
              for g, members in groups.items() if g for k, (idle, percent) in enumerate(_VGPU_ORDERS)},
        vgpu_all=vgpu_order(hami, 0),
        vgpu_mig=tuple(i for i in positions if summaries[i].vgpu and summaries[i].vgpu_mode == _MIG),
        share_free=_Order.of(share, [summaries[i].share_free for i in share]),
        share_idle=_Order.of(share, [summaries[i].share_idle for i in share]),
        ascend=tuple(i for i in positions if summaries[i].ascend),
        mindcluster=tuple(i for i in positions if summaries[i].mindcluster),
    )


@dataclass(frozen=True, slots=True)
class FitAnswer:
    outcome: Outcome
    node: str | None = None  # the node that fits (FITS)
    simulated: int = 0  # exact simulations run
    scanned: int = 0  # summaries tested
    candidates: int = 0  # nodes of the pod's family with the headroom its first request needs
    family_nodes: int = 0  # nodes of the pod's (first) family
    closest: NodeVerdict | None = None  # the miss that got furthest (NO_FIT / UNKNOWN), for the message


@dataclass(frozen=True, slots=True)
class _VgpuNeed:
    nums: int
    units: int | None  # memory units on each GPU, or None when asked as a percentage
    percent: int | None
    cores: int


def _vgpu_needs(pod: PodRequest) -> tuple[_VgpuNeed, ...] | None:
    """Per container what each GPU must offer; None when a value is out of range (let the simulator judge)."""
    needs = []
    for r in pod.vgpu:
        if r.nums <= 0 or r.cores < 0 or r.cores > _FULL_CORES:
            return None
        if r.percentage != PERCENT_UNSET:
            if not 0 <= r.percentage <= 100:
                return None
            needs.append(_VgpuNeed(r.nums, None, r.percentage, r.cores))
        else:
            if r.memory < 0:
                return None
            needs.append(_VgpuNeed(r.nums, r.memory, None, r.cores))
    return tuple(needs)


def type_allowed(annotations: Mapping[str, Any], device_type: str) -> bool:
    """Volcano's `checkType` + `checkGPUtype` for one GPU type, exactly as the simulator replays them."""
    return vgpu_filter.type_excluded(annotations, device_type) is None


class _Request:
    """A pod's request, pre-digested for the summary tests."""

    def __init__(self, pod: PodRequest) -> None:
        self.pod = pod
        self.vgpu = bool(pod.vgpu)
        self.vgpu_needs = _vgpu_needs(pod) if pod.vgpu else None
        self.wanted_mode = pod.annotations.get(spec.ANN_VGPU_MODE)
        self.share_memory = pod.gpushare_memory
        self.share_number = pod.gpushare_number
        self.ascend = frozenset(r.vnpu.common_word for r in pod.ascend)
        self.mindcluster = pod.mindcluster is not None
        self._types: dict[str, bool] = {}

    def _type_ok(self, device_type: str) -> bool:
        ok = self._types.get(device_type)
        if ok is None:
            ok = self._types[device_type] = type_allowed(self.pod.annotations, device_type)
        return ok

    def _takes(self, slot: VgpuSlot, need: _VgpuNeed, mig: bool) -> bool:
        if need.cores > slot.free_cores or (need.cores == _FULL_CORES and slot.tasks > 0):
            return False
        if not mig:
            if need.units is not None and slot.free < need.units:
                return False
            if need.percent is not None and need.percent > slot.percent_cap:
                return False
        return self._type_ok(slot.type)

    def _vgpu_may_fit(self, s: NodeSummary) -> bool:
        if not s.vgpu or (self.wanted_mode is not None and self.wanted_mode != s.vgpu_mode):
            return False
        needs = self.vgpu_needs
        if needs is None:
            return True
        mig = s.vgpu_mode == _MIG
        slots = s.vgpu_slots
        for need in needs:
            if need.nums > len(slots) or sum(1 for slot in slots if self._takes(slot, need, mig)) < need.nums:
                return False
        return True

    def may_fit(self, s: NodeSummary) -> bool:
        if self.vgpu and not self._vgpu_may_fit(s):
            return False
        if self.share_memory > 0 and (not s.share_cards or s.share_free < self.share_memory):
            return False
        if self.share_number > 0 and s.share_idle < self.share_number:
            return False
        if self.ascend and not self.ascend <= s.ascend:
            return False
        return not (self.mindcluster and not s.mindcluster)

    def walk(self, index: FitIndex) -> tuple[list[Sequence[int]], int, int | None]:
        """The node segments to walk (each most headroom first), how many nodes the pod's first family
        has, and the node with the most headroom (for a message when every node is ruled out)."""
        if self.vgpu:
            needs = self.vgpu_needs
            first = needs[0] if needs else None
            idle = first is not None and first.cores == _FULL_CORES
            percent = first is not None and first.units is None
            floor = None if first is None else first.units if first.units is not None else first.percent
            segments: list[Sequence[int]] = []
            if self.wanted_mode in (None, _HAMI_CORE):
                segments.extend(index.vgpu[(g, idle, percent)].at_least(floor) for g in index.vgpu_groups
                                if any(self._type_ok(t) for t in g))
            if self.wanted_mode in (None, _MIG):
                segments.append(index.vgpu_mig)
            everyone = index.vgpu_all.positions
            top = everyone[0] if everyone else index.vgpu_mig[0] if index.vgpu_mig else None
            return segments, len(everyone) + len(index.vgpu_mig), top
        if self.share_memory > 0 or self.share_number > 0:
            share = index.share_free if self.share_memory > 0 else index.share_idle
            floor = self.share_memory if self.share_memory > 0 else self.share_number
            top = share.positions[0] if share.positions else None
            return [share.at_least(floor)], len(share.positions), top
        plain = index.ascend if self.ascend else index.mindcluster
        return [plain], len(plain), plain[0] if plain else None


def first_fit(pod: PodRequest, index: FitIndex, *, budget: int = DEFAULT_BUDGET,
              scan_budget: int = DEFAULT_SCAN_BUDGET) -> FitAnswer:
    """The first node (most headroom first) where Volcano's device filters pass for `pod` right now."""
    if not requested_families(pod):
        return FitAnswer(Outcome.NO_DEVICE)
    request = _Request(pod)
    segments, family_nodes, top = request.walk(index)
    summaries, nodes, env = index.summaries, index.nodes, index.env
    candidates = sum(len(s) for s in segments)
    simulated = scanned = 0
    closest: NodeVerdict | None = None
    for segment in segments:
        for i in segment:
            if scanned >= scan_budget or simulated >= budget:
                return FitAnswer(Outcome.UNKNOWN, None, simulated, scanned, candidates, family_nodes, closest)
            scanned += 1
            if not request.may_fit(summaries[i]):
                continue
            verdict = simulate_node(pod, nodes[i], env)
            simulated += 1
            if verdict.fits:
                return FitAnswer(Outcome.FITS, verdict.node, simulated, scanned, candidates, family_nodes)
            if closest is None or verdict.progress > closest.progress:
                closest = verdict
    if closest is None and top is not None:
        # Every node was ruled out on its summary: simulate the one with the most headroom, so the warning
        # can say what is missing in Volcano's own terms.
        closest = simulate_node(pod, nodes[top], env)
        simulated += 1
        if closest.fits:  # a summary test stricter than the filter would be a bug: believe the filter
            return FitAnswer(Outcome.FITS, closest.node, simulated, scanned, candidates, family_nodes)
    return FitAnswer(Outcome.NO_FIT, None, simulated, scanned, candidates, family_nodes, closest)
