"""The `nodes` report: which nodes to show, and the NodeReport document (docs/contracts.md#interfaces).

A node's findings are the doctor's: `vgpuctl.core.doctor.judge_nodes` runs the doctor's node-judging
checks once over the snapshot (they surface the codec problems met while decoding, too) and the report
shows each finding on the node it names, so `nodes` and `doctor` never give a node two verdicts.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.cluster.model import ClusterSnapshot, NodeState
from vgpuctl.core.cluster.stacks import NodeStacks, may_share, stacks_of
from vgpuctl.core.findings import Finding, Report, Severity
from vgpuctl.core.selector import Selector
from vgpuctl.core.spec import Family

API_VERSION = "vgpuctl.io/v1alpha1"


@dataclass
class NodeReport:
    nodes: list[NodeState]
    source: str
    problems: list[Finding] = field(default_factory=list)  # cluster-level (VGK001 read problems, VGC001…)
    verdicts: Mapping[str, Sequence[Finding]] = field(default_factory=dict)  # node name → the doctor's findings
    # node name → its GPU stacks, for the nodes where more than one offers GPUs (`shared_stacks`)
    stacks: Mapping[str, NodeStacks] = field(default_factory=dict)

    def findings_of(self, node: NodeState) -> Sequence[Finding]:
        return self.verdicts.get(node.name, ())

    def worst(self, node: NodeState) -> Severity | None:
        """The most severe finding on the node, None when it has none."""
        return max((f.severity for f in self.findings_of(node)), key=lambda s: s.rank, default=None)

    @property
    def report(self) -> Report:
        return Report([*self.problems, *(f for n in self.nodes for f in self.findings_of(n))])

    def to_dict(self) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": "NodeReport",
            "source": self.source,
            "nodes": [n.to_dict(self.findings_of(n), self.stacks.get(n.name)) for n in self.nodes],
            "findings": [f.to_dict() for f in self.problems],
        }


def shared_stacks(snapshot: ClusterSnapshot, nodes: Sequence[NodeState]) -> dict[str, NodeStacks]:
    """The GPU stacks of those `nodes` where more than one stack offers GPUs (`cluster/stacks.py`, the value the
    node checks VGN012, VGN020–VGN022 read), or where HAMi's plugin registers GPUs Volcano has no device model
    for (a node with no device family: VGN012 says Volcano sees none, the stacks say how many there are): what
    `nodes` shows per node and per GPU."""
    by_node = snapshot.slices_by_node
    found: dict[str, NodeStacks] = {}
    for node in nodes:
        unseen = not node.families and spec.NODE_HAMI_NVIDIA_REGISTER in node.annotations
        if unseen or may_share(node, by_node):  # most nodes: a few look-ups
            stacks = stacks_of(snapshot, node)
            if stacks.shared or (unseen and stacks.stacks):
                found[node.name] = stacks
    return found


def select_nodes(
    snapshot: ClusterSnapshot,
    *,
    names: tuple[str, ...] = (),
    families: tuple[Family, ...] = (),
    selector: Selector | None = None,
    device_nodes_only: bool = True,
    flagged: Collection[str] = frozenset(),
) -> tuple[list[NodeState], list[str]]:
    """Nodes matching every filter, sorted by name; plus the asked-for names that do not exist.

    Without names, a node with no device family is shown only when it is in `flagged` (names of the nodes
    with findings): a plain CPU node has nothing to show, a flagged one must never look fine by its absence.
    """
    wanted = set(names)
    chosen = []
    for node in snapshot.nodes:
        if wanted and node.name not in wanted:
            continue
        if families and not any(f in node.families for f in families):
            continue
        if selector is not None and not selector.matches(node.labels):
            continue
        if device_nodes_only and not wanted and not node.families and node.name not in flagged:
            continue  # a plain CPU node has nothing to show unless named
        chosen.append(node)
    present = {n.name for n in snapshot.nodes}
    return sorted(chosen, key=lambda n: n.name), sorted(wanted - present)
