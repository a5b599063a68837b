"""Where the pod fits on a node whose GPUs another stack also hands out, say so (docs/stacks.md).

Volcano places the pod by its own ledger; on a node where NVIDIA's device plugin, HAMi's plugin, a DRA driver or a
leftover gpushare registration offers the same GPUs, the device plugin or kubelet may then hand the GPU Volcano
chose to a second pod. Which nodes that is, is the doctor's verdict, not re-derived here: the node checks raising
the stack codes (`doctor/checks/stacks.py` `STACK_CODES`) run through `judge_nodes` — the function `vgpuctl nodes`
uses — over the fitting nodes only, and their findings are attached to the placements on those nodes.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.findings import Finding, by_severity
from vgpuctl.core.versions import Version
from vgpuctl.core.why.model import Placement, WhyReport

if TYPE_CHECKING:
    from vgpuctl.core.why.gangmodel import GangReport

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)  # the stack checks read no clock; `judge_nodes` wants a time


def stack_findings(snapshot: ClusterSnapshot, nodes: Iterable[str], *, now: datetime | None = None,
                   volcano_version: Version | None = None) -> dict[str, tuple[Finding, ...]]:
    """The doctor's stack findings (`STACK_CODES`) of each of `nodes` that has any, most severe first."""
    wanted = frozenset(nodes)
    if not wanted:
        return {}
    # The doctor and its checks are imported only when some node fits: a third of `why`'s start-up otherwise
    # (benchmarks/why_scale.py).
    from vgpuctl.core.doctor import judge_nodes
    from vgpuctl.core.doctor.checks.stacks import STACK_CODES

    scope = replace(snapshot, nodes=[n for n in snapshot.nodes if n.name in wanted])
    verdicts = judge_nodes(scope, now=now or _EPOCH, volcano_version=volcano_version, codes=STACK_CODES)
    found = {name: tuple(by_severity(f for f in findings if f.code in STACK_CODES))
             for name, findings in verdicts.findings.items()}
    return {name: findings for name, findings in found.items() if findings}


def _marked(placement: Placement, found: dict[str, tuple[Finding, ...]]) -> Placement:
    stacks = found.get(placement.node, ())
    return replace(placement, stacks=stacks) if stacks else placement


def note_shared_gpus(report: WhyReport, snapshot: ClusterSnapshot, *, now: datetime | None = None,
                     volcano_version: Version | None = None) -> None:
    """Attach the stack findings to the report's fits, and to the gang's placements."""
    gang: GangReport | None = report.gang
    nodes = {p.node for p in report.fits} | ({p.node for _, p in gang.placed} if gang is not None else set())
    found = stack_findings(snapshot, nodes, now=now, volcano_version=volcano_version)
    if not found:
        return
    report.fits = [_marked(p, found) for p in report.fits]
    if gang is not None:
        gang.placed = [(r, _marked(p, found)) for r, p in gang.placed]
