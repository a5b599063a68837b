"""`why -f`: the answer for a manifest not yet created — one pod, or a whole workload as a gang.

The manifest is judged by the pod rules first (`explain`, on the whole object, as `lint` judges it); a
rejected one is not simulated. A Volcano Job or a replicated workload some pod of which asks for a device then
gets the gang what-if (`gang.py`): every task's replicas placed one by one in Volcano's order, each booking what
it takes, the pods that ask for no device included, and the gang plugin's rule deciding whether it starts.
The report's own pod is the workload's first in Volcano's order; its `families` are those of every task.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import cache
from typing import TYPE_CHECKING, Any

from vgpuctl.core import spec
from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.cluster.rule_facts import facts_from_snapshot
from vgpuctl.core.versions import Version
from vgpuctl.core.why.blocked import cluster_cause
from vgpuctl.core.why.model import WhyReport
from vgpuctl.core.why.request import parse_pod
from vgpuctl.core.why.scheduler_env import WhyEnv
from vgpuctl.core.why.shared_gpus import note_shared_gpus
from vgpuctl.core.why.simulate import env_from_snapshot, explain, requested_families

if TYPE_CHECKING:
    from vgpuctl.core.facts import ClusterFacts
    from vgpuctl.core.why.gang import Scheduler, Workload


def explain_what_if(source: Mapping[str, Any], pod: Mapping[str, Any], snapshot: ClusterSnapshot, *,
                    namespace: str = "default", volcano_version: Version | None = None,
                    now: datetime | None = None) -> WhyReport:
    """`pod` is the manifest's (first) pod; `source` the object it came from (the same for a Pod)."""
    env = env_from_snapshot(snapshot, volcano_version=volcano_version, now=now)
    facts = facts_from_snapshot(snapshot, volcano_version=volcano_version)
    if source.get("kind") == "Pod":
        # No workload (`workload_of` says None for a Pod): gang.py is imported only for a workload, which saves
        # `why` ~3 ms of start-up, -f pod.yaml or not (python -X importtime -m vgpuctl why …, benchmarks/scale.py)
        return _one_pod(pod, snapshot, env, facts, source, now, volcano_version)
    from vgpuctl.core.why.gang import priority_classes, replay, scheduler_of, workload_of

    sched = scheduler_of(snapshot.scheduler_conf, volcano_version)
    workload = workload_of(source, namespace, classes=cache(lambda: priority_classes(snapshot.pods)),
                           by_priority=sched.by_priority)
    if workload is None:
        return _one_pod(pod, snapshot, env, facts, source, now, volcano_version)
    families = _families(workload, env) if workload.replicas else requested_families(parse_pod(pod, env))
    first = workload.replicas[0].pod if workload.replicas else pod
    report = explain(first, snapshot.nodes, env, what_if=True, facts=facts, source=source,
                     as_gang_member=len(workload.tasks) > 1 and bool(families))
    if report.rejected or report.cause is not None or not families:
        return report
    report.families = families
    report.cause = cluster_cause(families, env)  # a family only a later task asks for may be off
    if report.cause is not None:
        report.fits, report.unfit, report.closest, report.suggestions, report.notes = [], [], [], [], []
        return report
    report.gang = replay(workload, snapshot.nodes, env, facts, sched)
    report.notes.extend(_notes(workload, sched, snapshot))
    note_shared_gpus(report, snapshot, now=now, volcano_version=volcano_version)
    return report


def _one_pod(pod: Mapping[str, Any], snapshot: ClusterSnapshot, env: WhyEnv, facts: ClusterFacts,
             source: Mapping[str, Any], now: datetime | None, volcano_version: Version | None) -> WhyReport:
    report = explain(pod, snapshot.nodes, env, what_if=True, facts=facts, source=source)
    note_shared_gpus(report, snapshot, now=now, volcano_version=volcano_version)
    return report


def _families(workload: Workload, env: WhyEnv) -> tuple[spec.Family, ...]:
    """The device families any of the workload's pods asks for, in Volcano's registration order."""
    found: set[spec.Family] = set()
    seen: set[str] = set()
    for replica in workload.replicas:
        if replica.task not in seen:
            seen.add(replica.task)
            found.update(requested_families(parse_pod(replica.pod, env)))
    return tuple(f for f in _REGISTRATION if f in found)


_REGISTRATION = (spec.Family.GPUSHARE, spec.Family.GPUNUMBER, spec.Family.VGPU, spec.Family.ASCEND_MINDCLUSTER,
                 spec.Family.ASCEND_HAMI)  # `requested_families`' order


def _notes(workload: Workload, sched: Scheduler, snapshot: ClusterSnapshot) -> list[str]:
    out = list(workload.notes)
    if snapshot.scheduler_conf is not None and not sched.gang and workload.min_available > 1:
        out.append("the scheduler config has no gang plugin: Volcano does not hold the pods back until "
                   f"minAvailable ({workload.min_available}) of them fit, it places each one that fits; the answer "
                   "says whether the minimum fits at once")
    return out
