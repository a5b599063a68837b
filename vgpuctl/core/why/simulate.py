"""`why` for a whole cluster: every node through Volcano's checks, grouped into an answer.

`simulate_node` replays them in Volcano's order, the first miss deciding: the node-level checks that come
first (`nodefit.py`: the node in the session, the allocate action's resource check, and the predicates
plugin's filters where the scheduler config lists it before `deviceshare`), the device filters of the
families a pod asks for in Volcano's registration order (gpushare, vGPU, MindCluster 310P, Ascend HAMi —
`registerDevices`), the predicates plugin's filters where the config lists them after `deviceshare`, and then
the node lock Volcano's Allocate would trip on. `explain` groups the misses by reason (largest group first,
the nodes of a group closest-to-fitting first), lists the fits, says what would make the pod fit, and notes
what it did not replay.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.cluster.model import ClusterSnapshot, NodeState
from vgpuctl.core.cluster.rule_facts import facts_from_snapshot
from vgpuctl.core.codecs.locks import find_node_locks
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.versions import Version
from vgpuctl.core.why import gpushare, vgpu
from vgpuctl.core.why.blocked import cluster_cause, scheduler_cause
from vgpuctl.core.why.model import (
    PHASE_WHAT_IF,
    DeviceChoice,
    Miss,
    NodeVerdict,
    Placement,
    Reason,
    UnfitGroup,
    WhyReport,
)
from vgpuctl.core.why.nodefit import node_level_verdict, node_misses, notes
from vgpuctl.core.why.request import PodRequest, parse_pod
from vgpuctl.core.why.rules import judge
from vgpuctl.core.why.scheduler_env import WhyEnv, mapping, predicates_conf
from vgpuctl.core.why.usage import seed_usage

CLOSEST = 5
_LOCKS = {spec.Family.VGPU: spec.LOCK_VGPU, spec.Family.GPUSHARE: spec.LOCK_GPUSHARE,
          spec.Family.ASCEND_HAMI: spec.LOCK_ASCEND_HAMI}


def env_from_snapshot(snapshot: ClusterSnapshot, *, volcano_version: Version | None = None,
                      now: datetime | None = None) -> WhyEnv:
    env = WhyEnv(device_config=snapshot.device_config, deviceshare=snapshot.deviceshare,
                 volcano_version=volcano_version, now=now, pods=snapshot.pods,
                 predicates=predicates_conf(snapshot.scheduler_conf), scheduler_cause=scheduler_cause(snapshot))
    seed_usage(env, snapshot.pod_visitor)  # the build's tally of its pods, when it made one (`why -f`)
    return env


def requested_families(pod: PodRequest) -> tuple[spec.Family, ...]:
    """The families Volcano sees the pod asking for, in registration order."""
    families = []
    if pod.gpushare_memory > 0:
        families.append(spec.Family.GPUSHARE)
    if pod.gpushare_number > 0:
        families.append(spec.Family.GPUNUMBER)
    if pod.vgpu:
        families.append(spec.Family.VGPU)
    if pod.mindcluster is not None:
        families.append(spec.Family.ASCEND_MINDCLUSTER)
    if pod.ascend:
        families.append(spec.Family.ASCEND_HAMI)
    return tuple(families)


Filter = Callable[[PodRequest, NodeState, WhyEnv], NodeVerdict]


def _filters(pod: PodRequest) -> list[Filter]:
    filters: list[Filter] = []
    if pod.gpushare_wanted:
        filters.append(gpushare.simulate)
    if pod.vgpu:
        filters.append(vgpu.simulate)
    # The Ascend filters are imported when a pod asks for an NPU: a GPU pod's `why` does without them (~3 ms of
    # start-up, `python -X importtime`)
    if pod.mindcluster is not None:
        from vgpuctl.core.why import mindcluster

        filters.append(mindcluster.simulate)
    if pod.ascend:
        from vgpuctl.core.why import ascend

        filters.append(ascend.simulate)
    return filters


def simulate_node(pod: PodRequest, node: NodeState, env: WhyEnv) -> NodeVerdict:
    """Fit or the first miss of one pod on one node (its current usage included)."""
    checks = node_misses(pod.node, node, env)
    devices, families = _devices(pod, node, env)
    if checks.before:  # the device filters still ran: how they fare ranks the node (`nodefit._progress`)
        return node_level_verdict(node.name, checks.before, devices)
    if not devices.fits:
        return devices
    if checks.after:
        return node_level_verdict(node.name, checks.after, devices, after_devices=True)
    locked = _lock(node, families, env)
    if locked is not None:
        return locked
    return devices


def _devices(pod: PodRequest, node: NodeState, env: WhyEnv) -> tuple[NodeVerdict, list[spec.Family]]:
    """The device filters of the families the pod asks for, in registration order: the first miss, or the fit
    with every device chosen (its family the first family's), and the families that passed."""
    devices: list[DeviceChoice] = []
    families: list[spec.Family] = []
    for run in _filters(pod):
        verdict = run(pod, node, env)
        if not verdict.fits:
            return verdict, families
        devices.extend(verdict.devices)
        if verdict.family is not None:
            families.append(verdict.family)
    return NodeVerdict.fit(node.name, tuple(devices), families[0] if families else None), families


def _lock(node: NodeState, families: Iterable[spec.Family], env: WhyEnv) -> NodeVerdict | None:
    """Volcano's Allocate fails on a node lock younger than 5 minutes (docs/vgpu.md#node-locks), when NodeLockEnable is
    on."""
    if env.now is None or not env.deviceshare.node_lock:
        return None
    names = {_LOCKS[f]: f for f in families if f in _LOCKS}
    for lock in find_node_locks(node.annotations, now=env.now):
        if lock.name in names and lock.blocking:
            return NodeVerdict.miss(node.name, names[lock.name], Miss(
                Reason.NODE_LOCKED, f"node lock {lock.name} = {lock.raw} is younger than 5 minutes; Volcano's "
                                    "allocation on this node fails until it is released or goes stale", 50.0,
                "wait for the bind in progress, or delete a lock left behind"))
    return None


def explain(pod_obj: Mapping[str, Any], nodes: Iterable[NodeState], env: WhyEnv, *,
            what_if: bool = False, facts: ClusterFacts | None = None,
            source: Mapping[str, Any] | None = None, as_gang_member: bool = False) -> WhyReport:
    """The `why` answer for one pod across `nodes`.

    `facts` are what the rule core judges the request with (`facts_from_snapshot`, as `lint --snapshot`
    uses; by default just the env's device config and version); `source` is the object the pod came from
    (a workload for `-f deploy.yaml`), reviewed as `lint` reviews it. A rejected request is not simulated.
    `as_gang_member`: the pod is a replica of a workload whose gang asks for devices (`gang.py`); one that asks for
    none is still replayed through the node-level checks, which decide whether the gang can place it.
    """
    pod = parse_pod(pod_obj, env)
    phase = PHASE_WHAT_IF if what_if else str(mapping(pod_obj.get("status")).get("phase") or "Pending")
    families = requested_families(pod)
    report = WhyReport(pod=pod.key, families=families, phase=phase)
    bound = mapping(pod_obj.get("spec")).get("nodeName")
    if not what_if and isinstance(bound, str) and bound:
        from vgpuctl.core.why.bound import describe_bound

        nodes = list(nodes)
        describe_bound(report, pod_obj, bound, env, next((n for n in nodes if n.name == bound), None))
        return report
    if facts is None:
        facts = ClusterFacts(device_config=env.device_config, volcano_version=env.volcano_version)
    rules = judge(source if source is not None else pod_obj, facts, existing=not what_if)
    report.findings = list(rules.findings)
    if rules.rejected:
        report.rejected = True
        n = len(rules.blocking)
        codes = ", ".join(sorted({f.code for f in rules.blocking}))
        report.hints.append(f"the rule core rejects the request ({n} error{'s' if n != 1 else ''}: {codes}): "
                            + ("the webhook would deny it and lint fails it; " if what_if else "")
                            + "Volcano never places it as written, so no node was simulated. Fix the findings "
                              "and ask again")
        return report
    report.hints.extend(_unseen(pod, env))
    if not families and not as_gang_member:
        report.hints.append("the pod asks for no device Volcano's deviceshare filters; device sharing does not "
                            "decide where it lands")
        return report
    cause = cluster_cause(families, env) if families else None
    if cause is not None:  # said once, at the top: no node gets past it (`blocked.py`)
        report.cause = cause
        return report
    nodes = list(nodes)
    verdicts = [simulate_node(pod, node, env) for node in nodes]
    report.fits = [Placement(v.node, v.devices) for v in sorted((v for v in verdicts if v.fits),
                                                                 key=lambda v: v.node)]
    report.notes = notes(pod.node, nodes, [p.node for p in report.fits], env, what_if=what_if)
    misses = [v for v in verdicts if not v.fits]
    misses.sort(key=lambda v: (-v.progress, v.node))
    groups: dict[Reason, list[NodeVerdict]] = {}
    for v in misses:
        assert v.reason is not None
        groups.setdefault(v.reason, []).append(v)
    order = list(Reason)
    for reason, members in sorted(groups.items(), key=lambda kv: (-len(kv[1]), order.index(kv[0]))):
        head = members[0]
        report.unfit.append(UnfitGroup(reason, f"{head.node}: {head.message}", tuple(v.node for v in members),
                                       head.hint))
    report.closest = misses[:CLOSEST]
    if not report.fits:
        from vgpuctl.core.why.suggest import suggest

        by_name = {n.name: n for n in nodes}
        heads = {v.node: v for v in misses}
        for group in report.unfit[:3]:
            where = f"{group.reason.value} ({group.count} node{'s' if group.count != 1 else ''}): "
            found = suggest(pod_obj, pod, heads[group.nodes[0]], by_name[group.nodes[0]], env, facts,
                            existing=not what_if)
            if found is not None:
                report.suggestions.append(found)
                report.hints.append(where + found.text)
            elif group.hint:
                report.hints.append(where + group.hint)
        if misses:
            best = misses[0]
            report.hints.append(f"closest node: {best.node} ({best.reason.value if best.reason else ''}: "
                                f"{best.message})")
    return report


def _unseen(pod: PodRequest, env: WhyEnv) -> list[str]:
    """Device requests Volcano does not see as such (so no device filter runs for them)."""
    hints = []
    if pod.vgpu_wanted and not pod.vgpu:
        nv = env.device_config.nvidia
        hints.append(f"the pod names vGPU resources, but the device config Volcano reads counts "
                     f"{nv.resource_count_name or '(none)'} / {nv.resource_memory_name or '(none)'}; deviceshare "
                     "does not see a vGPU request")
    if pod.mindcluster_wanted and pod.mindcluster is None:
        hints.append(f"the pod requests {spec.NPU_CORE} without label {spec.LABEL_RING_CONTROLLER}: "
                     f"{spec.RING_CONTROLLER_310P}; deviceshare ignores the request")
    return hints


def explain_in_snapshot(pod_obj: Mapping[str, Any], snapshot: ClusterSnapshot, *, what_if: bool = False,
                        volcano_version: Version | None = None, now: datetime | None = None,
                        source: Mapping[str, Any] | None = None) -> WhyReport:
    """`explain` with the snapshot's env and the `ClusterFacts` it gives (the same facts `lint --snapshot`
    judges with), so `why` and `lint` cannot disagree on the request."""
    env = env_from_snapshot(snapshot, volcano_version=volcano_version, now=now)
    facts = facts_from_snapshot(snapshot, volcano_version=volcano_version)
    report = explain(pod_obj, snapshot.nodes, env, what_if=what_if, facts=facts, source=source)
    if report.fits:
        from vgpuctl.core.why.shared_gpus import note_shared_gpus  # the doctor's node checks: only for a fit

        note_shared_gpus(report, snapshot, now=now, volcano_version=volcano_version)
    return report
