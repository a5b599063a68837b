"""`why -f`: the answer for a manifest not yet created — one pod, or a whole workload as a gang.

The manifest is judged by the pod rules first (`explain`, on the whole object, as `lint` judges it); a
rejected one is not simulated. A Volcano Job or a replicated workload then gets the gang what-if
(`gang.py`): its replicas placed one by one in Volcano's order, each booking what it takes.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.cluster.rule_facts import facts_from_snapshot
from vgpuctl.core.versions import Version
from vgpuctl.core.why.gang import Verdicts, gang_report, place_one, with_booking, workload_of
from vgpuctl.core.why.model import Placement, WhyReport
from vgpuctl.core.why.simulate import env_from_snapshot, explain


def explain_what_if(source: Mapping[str, Any], pod: Mapping[str, Any], snapshot: ClusterSnapshot, *,
                    namespace: str = "default", volcano_version: Version | None = None,
                    now: datetime | None = None) -> WhyReport:
    """`pod` is the manifest's (first) pod; `source` the object it came from (the same for a Pod)."""
    env = env_from_snapshot(snapshot, volcano_version=volcano_version, now=now)
    facts = facts_from_snapshot(snapshot, volcano_version=volcano_version)
    workload = workload_of(source, namespace)
    first = workload.replicas[0].pod if workload is not None and workload.replicas else pod
    report = explain(first, snapshot.nodes, env, what_if=True, facts=facts, source=source)
    if workload is None or report.rejected or not report.families:
        return report
    gang = gang_report(workload)
    nodes, state = list(snapshot.nodes), env
    full: set[str] = set()  # tasks a replica of which fitted nowhere: placements only take, so the rest fail too
    cache: Verdicts = {}
    for replica in workload.replicas:
        chosen = None if replica.task in full else place_one(replica, nodes, state, cache)
        if chosen is None:
            full.add(replica.task)
            gang.failed.append(replica)
            if gang.first_failure is None:
                gang.first_failure = replica
                failure = explain(replica.pod, nodes, state, what_if=True, facts=facts)
                gang.first_failure_unfit = failure.unfit
                gang.first_failure_hints = failure.hints
            continue
        gang.placed.append((replica, Placement(chosen.node, chosen.devices)))
        state, nodes = with_booking(state, nodes, chosen, replica, cache)
    report.gang = gang
    return report
