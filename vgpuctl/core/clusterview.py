"""A watched cluster as immutable values: derived node by node, merged into facts and a fit index.

The cluster-aware webhook keeps the nodes and bound pods it watches. A change re-derives only the nodes
it touched (`build_node_parts`: the cluster model's `build_snapshot` + `facts_from_snapshot` on just
those nodes and their pods, exactly as `lint --snapshot` derives facts from a whole snapshot), and
`assemble` merges every node's part into one `ClusterView`: the `ClusterFacts` the pod rules read and
the `FitIndex` the "fits now" check walks. Nothing here is mutated after it is built, so request
threads read a view without a lock while the next one is being built.

The webhook watches nodes and pods only, not the scheduler's ConfigMap: which families `deviceshare`
enables and its policy are unknown here, so the simulation turns every family on (a family the pod asks
for and the scheduler has off is the doctor's VGC finding, not a capacity question) and uses the default
device order, which decides where a pod goes but not whether it fits.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.model import NodeState
from vgpuctl.core.cluster.rule_facts import NodeFacts, combine, node_facts
from vgpuctl.core.deviceconfig import DeviceConfig, default_device_config
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.scheduler_config import DeviceshareArgs
from vgpuctl.core.versions import Version
from vgpuctl.core.why.anyfit import FitIndex, NodeSummary, build_index, summarize
from vgpuctl.core.why.scheduler_env import WhyEnv

ALL_FAMILIES = DeviceshareArgs(gpu_sharing=True, gpu_number=True, vgpu=True, ascend_mindcluster=True,
                               ascend_hami=True)
_EMPTY: Mapping[str, Any] = {}


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else _EMPTY


def pod_key(obj: Mapping[str, Any]) -> str:
    meta = _m(obj.get("metadata"))
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


# ---- per-node parts --------------------------------------------------------------------------------

@dataclass
class WatchedEnv(WhyEnv):
    """A `WhyEnv` whose pod look-ups come from indexes kept per node: the base class indexes its flat pod
    list on first use, ~0.2 s for 40,000 pods on every new view; here a view costs a dict of its nodes. The
    index by ns/name is merged from the nodes' on first use only (a spread-policy pod's simulation asks for it),
    not copied at every view: a view built for a few changed nodes must not cost a copy of 40,000 entries."""

    by_key: Mapping[str, Mapping[str, Any]] | None = None
    by_node: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)

    def pod(self, key: str) -> Mapping[str, Any] | None:
        by_key = self.by_key
        if by_key is None:  # two threads may both merge: the same value, and either result serves
            merged: dict[str, Mapping[str, Any]] = {}
            for pods in self.by_node.values():
                merged.update(pods)
            self.by_key = by_key = merged
        return by_key.get(key)

    def pods_on(self, node: str) -> list[Mapping[str, Any]]:
        # Only bound pods that are not Succeeded/Failed are kept (`slim_pod`): exactly what the base returns.
        return list(self.by_node.get(node, _EMPTY).values())


def simulation_env(config: DeviceConfig | None, volcano_version: Version | None, *,
                   by_node: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None) -> WatchedEnv:
    """The simulator's settings for a watched cluster: every family on, no node locks (no clock), and only
    the device pods known (`core/slim.py`): the usage they give is a lower bound, so a resource shortage is
    still proven ("at least") and never guessed the other way. The pods by ns/name are merged from `by_node`
    when first asked."""
    return WatchedEnv(device_config=config or default_device_config(), deviceshare=ALL_FAMILIES,
                      volcano_version=volcano_version, now=None, by_node=by_node or {}, all_pods=False)


@dataclass(frozen=True, slots=True)
class NodePart:
    """One node's share of a view: its model (with usage), its facts and its fit summary."""

    state: NodeState
    facts: NodeFacts
    summary: NodeSummary
    pods: Mapping[str, Mapping[str, Any]]  # ns/name → the bound pods counted on it (never mutated)


def build_node_parts(nodes: Iterable[Mapping[str, Any]], pods_by_node: Mapping[str, Sequence[Mapping[str, Any]]],
                     env: WhyEnv) -> dict[str, NodePart]:
    """Parts of `nodes`, each with the usage of its pods in `pods_by_node`; `env` from `simulation_env`
    (its pod indexes are not used here)."""
    node_list = list(nodes)
    names = [str(_m(n.get("metadata")).get("name") or "") for n in node_list]
    pods = [p for name in names for p in pods_by_node.get(name, ())]
    snapshot = build_snapshot([*node_list, *pods], volcano_version=env.volcano_version,
                              device_config=env.device_config)
    factor = snapshot.device_config.nvidia.memory_factor
    parts: dict[str, NodePart] = {}
    for state in snapshot.nodes:
        facts = node_facts(state, factor, snapshot.device_config.hami_vnpu_core)
        mine = {pod_key(p): p for p in pods_by_node.get(state.name, ())}
        parts[state.name] = NodePart(state, facts, summarize(state, env), mine)
    return parts


@dataclass(frozen=True)
class ClusterView:
    """One consistent picture of the watched cluster."""

    facts: ClusterFacts  # base facts + node facts: what cluster-aware pod rules read
    index: FitIndex  # what the fits-now check walks
    base: ClusterFacts  # the base the facts were merged onto (the webhook compares it with its current one)
    nodes: int
    pods: int


def assemble(parts: Mapping[str, NodePart], base: ClusterFacts, config: DeviceConfig | None,
             volcano_version: Version | None, *, facts: ClusterFacts | None = None) -> ClusterView:
    """Merge node parts (built with the same config and version) into a view (its pods by ns/name are merged
    from the parts when first asked). `facts`: the facts of a view of the same nodes, with this base, whose
    parts' facts these equal (`same_node_facts`): kept as they are, with what was derived from them and
    memoised in them."""
    ordered = [parts[name] for name in sorted(parts)]
    env = simulation_env(config, volcano_version, by_node={p.state.name: p.pods for p in ordered})
    index = build_index(((p.state, p.summary) for p in ordered), env)
    counted = sum(len(p.pods) for p in ordered)
    if facts is None:
        facts = combine((p.facts for p in ordered), base)
    return ClusterView(facts, index, base, len(ordered), counted)


def same_node_facts(before: Mapping[str, NodePart], after: Mapping[str, NodePart], names: Iterable[str]) -> bool:
    """Whether the nodes `names` are in both and add the same facts in each. A node's facts come from its
    registration and capacity, never from its pods: pods coming and going change none, and a view built for
    them can keep the facts (and the largest GPU, every GPU's memory… derived from them) of the last one."""
    for name in names:
        old, new = before.get(name), after.get(name)
        if old is None or new is None or old.facts != new.facts:
            return False
    return True
