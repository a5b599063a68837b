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
    list on first use, ~0.2 s for 40,000 pods on every new view; here a view costs a dict merge."""

    by_key: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    by_node: Mapping[str, Mapping[str, Mapping[str, Any]]] = field(default_factory=dict)

    def pod(self, key: str) -> Mapping[str, Any] | None:
        return self.by_key.get(key)

    def pods_on(self, node: str) -> list[Mapping[str, Any]]:
        # Only bound pods that are not Succeeded/Failed are kept (`slim_pod`): exactly what the base returns.
        return list(self.by_node.get(node, _EMPTY).values())


def simulation_env(config: DeviceConfig | None, volcano_version: Version | None, *,
                   by_key: Mapping[str, Mapping[str, Any]] | None = None,
                   by_node: Mapping[str, Mapping[str, Mapping[str, Any]]] | None = None) -> WatchedEnv:
    """The simulator's settings for a watched cluster: every family on, no node locks (no clock), and only
    the device pods known (`core/slim.py`): the usage they give is a lower bound, so a resource shortage is
    still proven ("at least") and never guessed the other way."""
    return WatchedEnv(device_config=config or default_device_config(), deviceshare=ALL_FAMILIES,
                      volcano_version=volcano_version, now=None, by_key=by_key or {}, by_node=by_node or {},
                      all_pods=False)


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
             volcano_version: Version | None, *, pods: Mapping[str, Mapping[str, Any]] | None = None) -> ClusterView:
    """Merge node parts (built with the same config and version) into a view. `pods`: every counted pod
    by ns/name, when the caller keeps that index already (else it is merged from the parts)."""
    ordered = [parts[name] for name in sorted(parts)]
    if pods is None:
        merged: dict[str, Mapping[str, Any]] = {}
        for part in ordered:
            merged.update(part.pods)
        pods = merged
    env = simulation_env(config, volcano_version, by_key=pods, by_node={p.state.name: p.pods for p in ordered})
    index = build_index(((p.state, p.summary) for p in ordered), env)
    counted = sum(len(p.pods) for p in ordered)
    return ClusterView(combine((p.facts for p in ordered), base), index, base, len(ordered), counted)
