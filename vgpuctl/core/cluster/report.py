"""The `nodes` report: which nodes to show, and the NodeReport document (SPEC §3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core.cluster.model import ClusterSnapshot, NodeState
from vgpuctl.core.findings import Finding, Report
from vgpuctl.core.selector import Selector
from vgpuctl.core.spec import Family

API_VERSION = "vgpuctl.io/v1alpha1"


@dataclass
class NodeReport:
    nodes: list[NodeState]
    source: str
    problems: list[Finding] = field(default_factory=list)  # cluster-level (VGK001 read problems, VGC001…)
    missing: list[str] = field(default_factory=list)  # names asked for that are not in the cluster

    @property
    def report(self) -> Report:
        return Report([*self.problems, *(f for n in self.nodes for f in n.findings)])

    def to_dict(self) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": "NodeReport",
            "source": self.source,
            "nodes": [n.to_dict() for n in self.nodes],
            "findings": [f.to_dict() for f in self.problems],
        }


def select_nodes(
    snapshot: ClusterSnapshot,
    *,
    names: tuple[str, ...] = (),
    families: tuple[Family, ...] = (),
    selector: Selector | None = None,
    device_nodes_only: bool = True,
) -> tuple[list[NodeState], list[str]]:
    """Nodes matching every filter, sorted by name; plus the asked-for names that do not exist."""
    wanted = set(names)
    chosen = []
    for node in snapshot.nodes:
        if wanted and node.name not in wanted:
            continue
        if families and not any(f in node.families for f in families):
            continue
        if selector is not None and not selector.matches(node.labels):
            continue
        if device_nodes_only and not wanted and not node.families and not node.findings:
            continue  # a plain CPU node has nothing to show unless named
        chosen.append(node)
    present = {n.name for n in snapshot.nodes}
    return sorted(chosen, key=lambda n: n.name), sorted(wanted - present)
