"""Volcano's node-level checks: what a node must pass besides the device filters (docs/volcano.md#allocate-predicate).

In Volcano's order, each from volcano-sh/volcano (v1.9.0 … v1.16.0-alpha.1, master at ed72c7c81):

1. **The node is in the session** (`node-not-ready`). Before 1.11 `api/node_info.go setNodeState` marks a node
   whose `Ready` condition is not True NotReady and the cache's `Snapshot` leaves it out; from 1.11 it ignores
   conditions and a NotReady node is kept off only by its `node.kubernetes.io/not-ready`/`unreachable` taints
   (step 3). `versions.judges_readiness_by_taints`.
2. **The allocate action's resource check** (`insufficient-resource`): `actions/allocate/allocate.go
   (alloc *Action) predicate` first runs `task.InitResreq.LessEqualWithResourcesName(node.FutureIdle(),
   api.Zero)`. The request is `api/pod_info.go GetPodResourceRequest`: the app containers' requests summed, each
   init container's (plus the restartable sidecars before it) as a maximum, the sidecars added, `pods: 1`, plus
   `spec.overhead`. Requests only — a manifest the API server has not defaulted (`why -f`) first gets requests =
   limits where a request is unset, as `SetDefaults_Pod` does. `FutureIdle` is the node's allocatable less the
   requests of the pods bound to it — every scheduler's, not only Volcano's — that are not Succeeded/Failed
   (`cache/event_handlers.go addTask`) nor Releasing (a `deletionTimestamp` while Running/Pending,
   `api/helpers.go getTaskStatus`: `api/node_info.go AddTask` adds those to `Releasing`, which `FutureIdle`
   gives back). `api/resource_info.go NewResource`: cpu in millicores, memory in bytes, `pods` a count,
   ephemeral-storage and every other scalar (extended, hugepages, `*kubernetes.io/*`) in thousandths, minus the
   device families' ignored names (`resources.py`); `LessEqual` compares cpu, memory and each requested scalar
   with 0.1 of slack, a scalar the node lacks counting 0 (`api.Zero`). The failure reads `Insufficient <first
   name>` (`api/unschedule_info.go WrapInsufficientResourceReason`): cpu, then memory, then the scalars. The
   request and the node's usage are `usage.py`'s.
3. **The plugins' predicates**, in the scheduler config's tier and plugin order (`framework/session_plugins.go
   PredicateFn`): `deviceshare`'s device filters (the family modules) and `plugins/predicates/predicates.go`'s,
   whose own order is: the pod count (`node.Allocatable.MaxTaskNum <= len(nodeInfo.Pods)`: every pod on the
   node, Releasing ones included), then NodeUnschedulable (`node-unschedulable`: `spec.unschedulable` unless the
   pod tolerates `node.kubernetes.io/unschedulable:NoSchedule`), NodeAffinity (`node-selector`: `nodeSelector`
   and the required node affinity, if `predicate.NodeAffinityEnable`), TaintToleration (`taint`: every
   NoSchedule/NoExecute taint tolerated, if `predicate.TaintTolerationEnable`) — from v1.14.2 the
   `StableFilterOrder`; v1.14.0 and v1.14.1 walk those three as a Go map, in no fixed order, and this replay keeps
   the listed one — then NodePorts, InterPodAffinity, the volume filters, PodTopologySpread and DRA, which are
   **not replayed** (`_unreplayed`, `notes`). Without a `predicates` plugin none of its filters runs; the resource
   check still does.

Nodes a device filter would also refuse are still run through it (it costs what it always did): a node-level
miss's `progress` says how close the node is, so "closest node" keeps its meaning (`_progress`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from vgpuctl.core import spec
from vgpuctl.core.cluster.model import NodeState
from vgpuctl.core.why.model import Miss, NodeVerdict, Reason
from vgpuctl.core.why.resources import ignored_resources
from vgpuctl.core.why.scheduler_env import WhyEnv
from vgpuctl.core.why.usage import (
    CPU,
    EPHEMERAL,
    MEMORY,
    PODS,
    add_resources,
    is_scalar,
    node_usage,
    pod_resources,
    resource_amount,
)

# The resources every kubelet reports. A node object listing none of cpu, memory and pods was not written by a
# kubelet (a hand-made snapshot): those four are not judged on it rather than read as 0 (`reports_base`).
BASE: Final = (CPU, MEMORY, PODS)
KUBELET_REPORTED: Final = frozenset({CPU, MEMORY, PODS, EPHEMERAL})
_SLACK: Final = 0.1  # `minResource`: LessEqual's tolerance, in each resource's own unit

# ---- progress ----------------------------------------------------------------------------------------------
# `Miss.progress` orders "closest to fitting". Device misses sit in [0, 20) and a node lock at 50 (the family
# modules). A node-level check that runs before the device filters sits below every device miss, each check
# below the next one in Volcano's order: the node got less far through Volcano than any node a device filter
# refused. Within one check, nodes are ranked by how their devices fare (the device filters are run anyway):
# a node whose devices fit ranks first, so the closest tainted node is the one where a toleration is all that
# is missing, and a group's example (and its replayed suggestion) is that node. Checks that run after the device
# filters (the config lists `deviceshare` before `predicates`) sit between the device misses and the node lock.
_BEFORE: Final = {Reason.NODE_NOT_READY: -100.0, Reason.INSUFFICIENT_RESOURCE: -80.0, "pod-count": -70.0,
                  Reason.NODE_UNSCHEDULABLE: -60.0, Reason.NODE_SELECTOR: -50.0, Reason.TAINT: -40.0}
_AFTER: Final = {"pod-count": 30.0, Reason.NODE_UNSCHEDULABLE: 32.0, Reason.NODE_SELECTOR: 34.0, Reason.TAINT: 36.0}
_DEVICES_FIT: Final = 9.99  # within-check share of a node whose devices fit (the next check starts 10 higher)


def _progress(stage: float, device: NodeVerdict | None) -> float:
    if device is None:
        return stage
    return stage + (_DEVICES_FIT if device.fits else min(max(device.progress, 0.0), 19.9) / 2)


# ---- what the pod asks of a node ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Toleration:
    key: str
    operator: str
    value: str
    effect: str

    def tolerates(self, taint: Mapping[str, Any]) -> bool:
        """Kubernetes' `Toleration.ToleratesTaint`: effect empty matches all, key empty (with Exists) every key,
        operator empty means Equal."""
        if self.effect and self.effect != taint.get("effect"):
            return False
        if self.key and self.key != taint.get("key"):
            return False
        if self.operator in ("", "Equal"):
            return self.value == (taint.get("value") or "")
        return self.operator == "Exists"


@dataclass(frozen=True, slots=True)
class NodeRequest:
    """What the pod asks of a node besides devices, read as Volcano and Kubernetes read it."""

    resources: Mapping[str, int]  # `InitResreq`: cpu, memory, the scalars by name, pods (see the module doc)
    tolerations: tuple[Toleration, ...] = ()
    node_selector: Mapping[str, str] | None = None  # `spec.nodeSelector` (None: not set)
    affinity: tuple[Any, ...] | None = None  # required node affinity terms as written (None: not set)
    defaulted: frozenset[str] = frozenset()  # resources whose request was taken from the limit
    unreplayed: tuple[tuple[str, str], ...] = ()  # (predicates switch, what the pod uses) no replayed filter judges


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _ordered(resources: Mapping[str, int]) -> dict[str, int]:
    """cpu and memory (always compared), the other scalars by name, pods last: the order messages name them
    (Volcano names cpu, then memory, then the scalars in Go's map order, which is random)."""
    out = {CPU: resources.get(CPU, 0), MEMORY: resources.get(MEMORY, 0)}
    for name in sorted(resources):
        if name not in out and name != PODS:
            out[name] = resources[name]
    out[PODS] = resources.get(PODS, 1)
    return out


def _tolerations(raw: Any) -> tuple[Toleration, ...]:
    out = []
    for t in _l(raw):
        if isinstance(t, Mapping):
            out.append(Toleration(*(str(t.get(k)) if isinstance(t.get(k), str) else ""
                                    for k in ("key", "operator", "value", "effect"))))
    return tuple(out)


def _unreplayed(pod_spec: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """What of the pod the not-replayed filters of the predicates plugin would judge."""
    found: list[tuple[str, str]] = []
    ports: list[int] = sorted({p["hostPort"] for c in (*_l(pod_spec.get("containers")),
                                                       *_l(pod_spec.get("initContainers")))
                               if isinstance(c, Mapping) for p in _l(c.get("ports"))
                               if isinstance(p, Mapping) and isinstance(p.get("hostPort"), int) and p["hostPort"] > 0})
    if ports:
        found.append(("node_ports", f"host port{'s' if len(ports) > 1 else ''} {', '.join(map(str, ports))} "
                                    "(NodePorts)"))
    affinity = _m(pod_spec.get("affinity"))
    kinds = [k for k in ("podAffinity", "podAntiAffinity")
             if _l(_m(affinity.get(k)).get("requiredDuringSchedulingIgnoredDuringExecution"))]
    if kinds:
        found.append(("pod_affinity", f"required {' and '.join(kinds)} (InterPodAffinity)"))
    if any(isinstance(c, Mapping) and c.get("whenUnsatisfiable", "DoNotSchedule") == "DoNotSchedule"
           for c in _l(pod_spec.get("topologySpreadConstraints"))):
        found.append(("topology_spread", "topologySpreadConstraints with DoNotSchedule (PodTopologySpread)"))
    volumes = sorted({k for v in _l(pod_spec.get("volumes")) if isinstance(v, Mapping)
                      for k in ("persistentVolumeClaim", "ephemeral", "csi") if k in v})
    if volumes:
        found.append(("volumes", f"{', '.join(volumes)} volumes (VolumeBinding, VolumeZone, NodeVolumeLimits)"))
    if _l(pod_spec.get("resourceClaims")):
        found.append(("enabled", "resourceClaims (DynamicResources)"))
    return tuple(found)


def parse_node_request(pod: Mapping[str, Any], env: WhyEnv) -> NodeRequest:
    """The node-level request of a pod (Volcano's units; requests defaulted from limits as the API server does —
    a no-op on a pod the API server stored)."""
    pod_spec = _m(pod.get("spec"))
    defaulted: set[str] = set()
    resources = pod_resources(pod_spec, ignored_resources(env), defaults=True, defaulted=defaulted)
    selector = pod_spec.get("nodeSelector")
    node_affinity = _m(_m(pod_spec.get("affinity")).get("nodeAffinity"))
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    return NodeRequest(
        resources=_ordered(resources), tolerations=_tolerations(pod_spec.get("tolerations")),
        node_selector={str(k): str(v) for k, v in selector.items()} if isinstance(selector, Mapping) and selector
        else None,
        affinity=tuple(_l(required.get("nodeSelectorTerms"))) if isinstance(required, Mapping) else None,
        defaulted=frozenset(defaulted), unreplayed=_unreplayed(pod_spec))


# ---- the checks -------------------------------------------------------------------------------------------------

def reports_base(node: NodeState) -> bool:
    """Whether the node reports cpu, memory or pods (allocatable, else capacity): see `BASE`."""
    advertised = node.allocatable or node.capacity
    return any(k in advertised for k in BASE)


def _allocatable(node: NodeState, names: Iterable[str]) -> dict[str, int]:
    # Volcano reads status.allocatable; a hand-written node with only a capacity stands for both (`shortages` too).
    advertised = node.allocatable or node.capacity
    out: dict[str, int] = {}
    add_resources(out, {k: advertised[k] for k in names if k in advertised})
    return out


def _show(name: str, amount: int) -> str:
    """An amount in Volcano's unit for `name`, as a quantity a person writes."""
    if name == CPU:
        return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"
    if name in (MEMORY, EPHEMERAL) or name.startswith("hugepages-"):
        value = amount if name == MEMORY else amount // 1000
        for unit, size in (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)):
            if value and value % size == 0:
                return f"{value // size}{unit}"
        return str(value)
    if name == PODS:
        return str(amount)
    return str(amount // 1000) if amount % 1000 == 0 else f"{amount}m"


@dataclass(frozen=True, slots=True)
class Short:
    name: str
    wanted: int
    idle: int
    allocatable: int
    used: int


def shortages(req: NodeRequest, node: NodeState, env: WhyEnv) -> list[Short]:
    """The resources whose request does not fit the node's idle allocatable, in the order Volcano names them."""
    advertised = node.allocatable or node.capacity
    if not advertised:  # no resource reported at all: nothing to judge
        return []
    base = not advertised.keys().isdisjoint(BASE)
    used = node_usage(node.name, env).used
    out = []
    # Each advertised amount read in place, no dict of them per node (5,000 nodes: benchmarks/why_scale.py)
    for name, want in req.resources.items():
        if not base and name in KUBELET_REPORTED:
            continue
        alloc = resource_amount(name, advertised[name]) if name in advertised else None
        if alloc is None:
            alloc = 0
        taken = used.get(name, 0)
        idle = alloc - taken
        if not (want < idle or abs(want - idle) < _SLACK):
            out.append(Short(name, want, idle, alloc, taken))
    return out


def _resource_miss(shorts: Sequence[Short], node: NodeState, env: WhyEnv) -> Miss:
    first = shorts[0]
    name = first.name
    if first.allocatable == 0 and first.used == 0:
        why = " (the vGPU device plugin never advertises it)" if name == spec.VGPU_MEMORY_PERCENTAGE else ""
        text = f"Insufficient {name}: the pod requests {_show(name, first.wanted)}, the node does not advertise it{why}"
    else:
        idle = _show(name, first.idle) if first.idle >= 0 else "-" + _show(name, -first.idle)
        text = (f"Insufficient {name}: the pod requests {_show(name, first.wanted)}; the node has "
                f"{_show(name, first.allocatable)} allocatable, {idle} idle")
        usage = node_usage(node.name, env)
        if first.used:
            text += f" ({'at least ' if not env.all_pods else ''}{_show(name, first.used)} requested by its pods"
            text += (f"; {usage.releasing} being deleted not counted)" if usage.releasing and name != PODS else ")")
    if len(shorts) > 1:
        text += f"; short of {', '.join(s.name for s in shorts[1:])} too"
    hint = (f"ask for {spec.VGPU_MEMORY} (MiB per GPU) instead of {name}" if name == spec.VGPU_MEMORY_PERCENTAGE else
            "the node holds no more pods" if name == PODS else
            f"lower the pod's {name} request, or free {name} on the node" if first.allocatable else
            f"use nodes that advertise {name}")
    return Miss(Reason.INSUFFICIENT_RESOURCE, text, _BEFORE[Reason.INSUFFICIENT_RESOURCE], hint)


def _pod_count_miss(node: NodeState, env: WhyEnv) -> Miss | None:
    usage = node_usage(node.name, env)
    # Without pods being deleted the count is the allocate action's `pods` check again, which already said it.
    if not usage.releasing or not reports_base(node):
        return None
    limit = _allocatable(node, (PODS,)).get(PODS, 0)
    if limit > usage.pods:
        return None
    at_least = "" if env.all_pods else "at least "
    return Miss(Reason.INSUFFICIENT_RESOURCE,
                f"node(s) pod number exceeded: {at_least}{usage.pods} pods on the node ({usage.releasing} being "
                f"deleted, which the predicates plugin still counts), allocatable pods {limit}", 0.0,
                "wait for the pods being deleted to go, or use another node")


def _taint_text(taint: Mapping[str, Any]) -> str:
    key, value, effect = (str(taint.get(k) or "") for k in ("key", "value", "effect"))
    return f"{key}{'=' + value if value else ''}:{effect}"


def _toleration_hint(taint: Mapping[str, Any]) -> str:
    key, value, effect = (str(taint.get(k) or "") for k in ("key", "value", "effect"))
    if value:
        return f"tolerate it: {{key: {key}, operator: Equal, value: {value}, effect: {effect}}} in spec.tolerations"
    return f"tolerate it: {{key: {key}, operator: Exists, effect: {effect}}} in spec.tolerations"


def _tolerated(tolerations: Sequence[Toleration], taint: Mapping[str, Any]) -> bool:
    return any(t.tolerates(taint) for t in tolerations)


_UNSCHEDULABLE: Final = Miss(
    Reason.NODE_UNSCHEDULABLE, "node(s) were unschedulable: the node is cordoned (spec.unschedulable)", 0.0,
    f"uncordon the node, or tolerate {spec.TAINT_UNSCHEDULABLE}:NoSchedule")


def _unschedulable_miss(req: NodeRequest, node: NodeState) -> Miss | None:
    if not node.unschedulable or _tolerated(req.tolerations, {"key": spec.TAINT_UNSCHEDULABLE,
                                                              "effect": "NoSchedule"}):
        return None
    return _UNSCHEDULABLE


def _taint_miss(req: NodeRequest, node: NodeState) -> tuple[Miss, str] | None:
    for taint in node.taints:  # `FindMatchingUntoleratedTaint`: the first, in the node's order
        if taint.get("effect") in spec.TAINT_EFFECTS_FILTERED and not _tolerated(req.tolerations, taint):
            text = _taint_text(taint)
            return Miss(Reason.TAINT, f"node(s) had untolerated taint {text}", 0.0, _toleration_hint(taint)), \
                f"taint {text}"
    return None


_INT: Final = re.compile(r"[+-]?[0-9]+")


def _int64(text: Any) -> int | None:
    """Go's `strconv.ParseInt(text, 10, 64)` (how `Gt`/`Lt` read a label and their value), None when it fails."""
    if not isinstance(text, str) or not _INT.fullmatch(text):
        return None
    value = int(text)
    return value if -(1 << 63) <= value < (1 << 63) else None


def _requirement(expr: Any, labels: Mapping[str, Any]) -> bool | None:
    """One `matchExpressions` entry against the node's labels; None when Kubernetes cannot parse it (the term
    then matches nothing)."""
    if not isinstance(expr, Mapping):
        return None
    key, op, values = expr.get("key"), expr.get("operator"), _l(expr.get("values"))
    if not isinstance(key, str) or not key or not all(isinstance(v, str) for v in values):
        return None
    present = key in labels
    value = labels.get(key)
    if op in ("In", "NotIn"):
        if not values:
            return None
        inside = present and value in values
        return inside if op == "In" else not inside
    if op in ("Exists", "DoesNotExist"):
        if values:
            return None
        return present if op == "Exists" else not present
    if op in ("Gt", "Lt"):
        bound = _int64(values[0]) if len(values) == 1 else None
        if bound is None:
            return None
        have = _int64(value) if present else None
        if have is None:
            return False
        return have > bound if op == "Gt" else have < bound
    return None


def _field(expr: Any, name: str) -> bool | None:
    """One `matchFields` entry (In/NotIn with one value; the node's only field is `metadata.name`)."""
    if not isinstance(expr, Mapping):
        return None
    key, op, values = expr.get("key"), expr.get("operator"), _l(expr.get("values"))
    if op not in ("In", "NotIn") or len(values) != 1 or not isinstance(values[0], str):
        return None
    have = name if key == "metadata.name" else ""
    return (have == values[0]) if op == "In" else (have != values[0])


def _term(term: Any, node: NodeState) -> bool:
    """A node selector term: its expressions and fields ANDed; an empty or unparseable term matches nothing."""
    if not isinstance(term, Mapping):
        return False
    exprs, fields = _l(term.get("matchExpressions")), _l(term.get("matchFields"))
    if not exprs and not fields:
        return False
    results = [_requirement(e, node.labels) for e in exprs] + [_field(f, node.name) for f in fields]
    return all(r is True for r in results) if None not in results else False


def _selector_miss(req: NodeRequest, node: NodeState) -> tuple[Miss, str] | None:
    """NodeAffinity (`component-helpers/scheduling/corev1/nodeaffinity` `RequiredNodeAffinity.Match`): every
    nodeSelector label equal, then the required terms ORed."""
    labels = node.labels
    if req.node_selector is not None:
        wrong = [(k, v) for k, v in req.node_selector.items() if labels.get(k) != v]
        if wrong:
            k, v = wrong[0]
            have = f"it has {k}={labels[k]}" if k in labels else "it has no such label"
            return Miss(Reason.NODE_SELECTOR, f"node(s) didn't match Pod's node affinity/selector: nodeSelector "
                                              f"{k}={v}, {have}", 0.0,
                        f"label the node {k}={v}, or change the pod's nodeSelector"), f"nodeSelector {k}={v}"
    if req.affinity is not None and not any(_term(t, node) for t in req.affinity):
        count = len(req.affinity)
        return Miss(Reason.NODE_SELECTOR, "node(s) didn't match Pod's node affinity/selector: no term of the required "
                                          f"node affinity matches the node's labels ({count} term"
                                          f"{'s' if count != 1 else ''})", 0.0,
                    "change the pod's required node affinity, or the node's labels"), "required node affinity"
    return None


@dataclass(frozen=True, slots=True)
class Failure:
    stage: Any  # a `Reason`, or "pod-count": the key of `_BEFORE`/`_AFTER`
    miss: Miss
    brief: str  # a few words for another failure's message ("taint gpu=yes:NoSchedule")
    resources: tuple[str, ...] = ()  # insufficient-resource: the resources short, first first


@dataclass(frozen=True, slots=True)
class NodeMisses:
    """A node's node-level failures, each list in Volcano's order: `before` the device filters and `after` them
    (the predicates plugin's when the config lists `deviceshare` first)."""

    before: tuple[Failure, ...] = ()
    after: tuple[Failure, ...] = ()


def node_misses(req: NodeRequest, node: NodeState, env: WhyEnv) -> NodeMisses:
    """Every node-level check the node fails (not only the first: a message names the others too)."""
    before: list[Failure] = []
    if not env.judges_readiness_by_taints and node.not_ready:
        before.append(Failure(Reason.NODE_NOT_READY, Miss(
            Reason.NODE_NOT_READY, "the node's Ready condition is not True: Volcano before 1.11 leaves it out of the "
                                   "scheduling session", 0.0, "wait until the node is Ready again"), "NotReady"))
    shorts = shortages(req, node, env)
    if shorts:
        before.append(Failure(Reason.INSUFFICIENT_RESOURCE, _resource_miss(shorts, node, env),
                              f"Insufficient {shorts[0].name}", tuple(s.name for s in shorts)))
    predicates: list[Failure] = []
    conf = env.predicates
    if conf.enabled:
        count = _pod_count_miss(node, env)
        if count is not None:
            predicates.append(Failure("pod-count", count, "pod number exceeded", (PODS,)))
        if _unschedulable_miss(req, node) is not None:
            predicates.append(Failure(Reason.NODE_UNSCHEDULABLE, _UNSCHEDULABLE, "cordoned"))
        selector = _selector_miss(req, node) if conf.node_affinity else None
        if selector is not None:
            predicates.append(Failure(Reason.NODE_SELECTOR, selector[0], selector[1]))
        taint = _taint_miss(req, node) if conf.taint_toleration else None
        if taint is not None:
            predicates.append(Failure(Reason.TAINT, taint[0], taint[1]))
    if conf.before_devices:
        return NodeMisses(tuple(before + predicates), ())
    return NodeMisses(tuple(before), tuple(predicates))


def node_level_verdict(node: str, failures: Sequence[Failure], device: NodeVerdict | None, *,
                       after_devices: bool = False) -> NodeVerdict:
    """The node's verdict from its first node-level failure; the message names the others and, for checks that
    run before the device filters, how its devices would fare."""
    first = failures[0]
    message = first.miss.message
    if len(failures) > 1:
        message += "; then also " + ", ".join(f"{f.miss.reason.value} ({f.brief})" for f in failures[1:])
    if device is not None and not after_devices:
        message += ("; its devices would fit" if device.fits else
                    f"; its devices would not fit either ({device.reason.value if device.reason else 'other'}: "
                    f"{device.message})")
    progress = _AFTER[first.stage] if after_devices else _progress(_BEFORE[first.stage], device)
    return NodeVerdict(node, False, None, first.miss.reason, message, (), progress, first.miss.hint,
                       resources=first.resources)


# ---- notes: what the replay assumed or could not replay --------------------------------------------------------

def notes(req: NodeRequest, nodes: Sequence[NodeState], fits: Iterable[str], env: WhyEnv, *,
          what_if: bool) -> list[str]:
    """What the report should say it did not replay or assumed, for this pod on these nodes."""
    out: list[str] = []
    conf = env.predicates
    if what_if:
        core = sorted(n for n in req.defaulted if n in KUBELET_REPORTED or not is_scalar(n))
        if core:
            out.append(f"requests taken from the limits for {', '.join(core)} (the API server defaults an unset "
                       "request to the limit when the pod is created)")
    if conf.enabled:
        used = [what for switch, what in req.unreplayed if getattr(conf, switch)]
        if used:
            out.append(f"not replayed: the predicates plugin's filters for the pod's {'; '.join(used)}: a node "
                       "shown as fitting may still fail them")
        if conf.pod_affinity:
            guarded = [n for n in fits if node_usage(n, env).anti_affinity]
            if guarded:
                out.append(f"not replayed: InterPodAffinity against the required pod anti-affinity of pods already "
                           f"on {len(guarded)} of the fitting nodes (e.g. {guarded[0]}): they may refuse this pod")
    else:
        out.append("the scheduler config has no predicates plugin: no node-level filter runs (node selectors, "
                   "taints, cordons are ignored by Volcano); the allocate action's resource check still does")
    blind = [n.name for n in nodes if not reports_base(n)]
    if blind:
        out.append(f"{len(blind)} node{'s' if len(blind) != 1 else ''} (e.g. {blind[0]}) report no cpu, memory or "
                   "pods in status.allocatable (not written by a kubelet): those resources — every resource, where "
                   "the node reports none — were not judged there, where Volcano would count them 0")
    return out
