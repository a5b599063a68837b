"""What pods request and what the pods bound to a node use, in Volcano's units (docs/volcano.md#allocate-predicate).

`pod_resources` is `api/pod_info.go GetPodResourceRequest` (the app containers' requests summed, each init
container's — plus the restartable sidecars before it — as a maximum, the sidecars added, `pods: 1`, plus
`spec.overhead`), read through `api/resource_info.go NewResource` (`add_resources`). `node_usage` is what a
node's bound pods that are not Succeeded/Failed hold of its allocatable (`FutureIdle`), Releasing ones given
back, with the pod count and the pods with required anti-affinity. The checks that compare a request with it are
`nodefit.py`'s.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Final

from vgpuctl.core import spec
from vgpuctl.core.cluster.build import books_devices
from vgpuctl.core.podrules.context import quantity
from vgpuctl.core.why.scheduler_env import WhyEnv

CPU: Final = spec.RESOURCE_CPU
MEMORY: Final = spec.RESOURCE_MEMORY
PODS: Final = spec.RESOURCE_PODS
EPHEMERAL: Final = spec.RESOURCE_EPHEMERAL_STORAGE


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _l(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@lru_cache(maxsize=8192)
def _amount(text: str, milli: bool) -> int | None:
    q = quantity(text)
    if q is None:
        return None
    return q.milli_value_rounded_up() if milli else q.value_rounded_up()


def is_scalar(name: str) -> bool:
    """`v1helper.IsScalarResourceName` (extended, `*kubernetes.io/*`, hugepages, attachable volumes), less the
    `count/` quota names `NewResource` skips."""
    if name.startswith(("count/", "requests.")):
        return False
    return "/" in name or name.startswith(("hugepages-", "attachable-volumes-"))


def resource_amount(name: Any, raw: Any, ignored: frozenset[str] = frozenset()) -> int | None:
    """One entry of `NewResource(values)` in Volcano's unit (cpu, ephemeral storage and scalars in milli), or None
    when it counts nothing: a name `NewResource` skips or `ignored` holds, no value, a bool, or an unreadable
    quantity (which the API server refuses)."""
    if not isinstance(name, str) or raw is None or isinstance(raw, bool):
        return None
    if name in (CPU, EPHEMERAL):
        milli = True
    elif name in (MEMORY, PODS):
        milli = False
    elif is_scalar(name) and name not in ignored:
        milli = True
    else:
        return None
    return _amount(raw if isinstance(raw, str) else str(raw), milli)


def add_resources(into: dict[str, int], values: Mapping[str, Any], ignored: frozenset[str] = frozenset()) -> None:
    """`NewResource(values)` added into `into` (`resource_amount` of each entry)."""
    for name, raw in values.items():
        amount = resource_amount(name, raw, ignored)
        if amount is not None:
            into[name] = into.get(name, 0) + amount


def _max_into(into: dict[str, int], other: Mapping[str, int]) -> None:
    """`SetMaxResource`: each resource the larger of the two (a name only `other` has is added)."""
    for name, amount in other.items():
        into[name] = max(into.get(name, amount), amount)


def _requests(container: Mapping[str, Any], defaults: bool, defaulted: set[str] | None) -> Mapping[str, Any]:
    resources = _m(container.get("resources"))
    requests = _m(resources.get("requests"))
    if not defaults:
        return requests
    limits = _m(resources.get("limits"))
    missing = [k for k in limits if k not in requests]
    if not missing:
        return requests
    if defaulted is not None:
        defaulted.update(k for k in missing if isinstance(k, str))
    return {**requests, **{k: limits[k] for k in missing}}  # `SetDefaults_Pod`: requests default to limits


def pod_resources(pod_spec: Mapping[str, Any], ignored: frozenset[str] = frozenset(), *, defaults: bool = False,
                  defaulted: set[str] | None = None) -> dict[str, int]:
    """`GetPodResourceRequest` of a pod spec (see the module doc); `defaults`: the API server's request defaulting
    first, with the names it filled added to `defaulted`."""
    total: dict[str, int] = {}
    for c in _l(pod_spec.get("containers")):
        if isinstance(c, Mapping) and c.get("resources"):
            add_resources(total, _requests(c, defaults, defaulted), ignored)
    inits = _l(pod_spec.get("initContainers"))
    if inits:
        sidecars: dict[str, int] = {}
        init_max: dict[str, int] = {}
        for c in inits:
            if not isinstance(c, Mapping):
                continue
            own: dict[str, int] = {}
            add_resources(own, _requests(c, defaults, defaulted), ignored)
            if c.get("restartPolicy") == "Always":  # a sidecar: runs alongside everything after it
                add_resources(total, _requests(c, defaults, None), ignored)
                for k, v in own.items():
                    sidecars[k] = sidecars.get(k, 0) + v
                step = dict(sidecars)
            else:
                step = dict(own)
                for k, v in sidecars.items():
                    step[k] = step.get(k, 0) + v
            _max_into(init_max, step)
        _max_into(total, init_max)
    total[PODS] = total.get(PODS, 0) + 1
    overhead = _m(pod_spec.get("overhead"))
    if overhead:
        add_resources(total, overhead, ignored)
    return total


def with_default_requests(pod: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `pod` whose containers' (and init containers') unset requests are their limits, as the API
    server's `SetDefaults_Pod` stores a pod: what a replica the gang what-if books on a node requests there."""
    out = dict(pod)
    pod_spec = dict(_m(pod.get("spec")))
    for kind in ("containers", "initContainers"):
        containers = []
        for c in _l(pod_spec.get(kind)):
            if isinstance(c, Mapping) and _m(c.get("resources")).get("limits"):
                resources = dict(_m(c.get("resources")))
                resources["requests"] = dict(_requests(c, True, None))
                c = {**c, "resources": resources}
            containers.append(c)
        if kind in pod_spec:
            pod_spec[kind] = containers
    out["spec"] = pod_spec
    return out


# ---- what the pods on a node use ----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class NodeUsage:
    used: Mapping[str, int]  # the requests of the pods counted in FutureIdle (not Releasing)
    pods: int  # pods on the node, Releasing ones included (the predicates plugin's pod count)
    releasing: int
    anti_affinity: int  # pods with required pod anti-affinity (InterPodAffinity checks them against a new pod)


def _releasing(meta: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """A pod with a deletionTimestamp while Running or Pending (`getTaskStatus`): not Succeeded/Failed here."""
    return not books_devices(meta, pod.get("status"))


def _anti_affinity(pod_spec: Mapping[str, Any]) -> bool:
    anti = _m(_m(pod_spec.get("affinity")).get("podAntiAffinity"))
    return bool(_l(anti.get("requiredDuringSchedulingIgnoredDuringExecution")))


def _request_shape(pod_spec: dict[str, Any]) -> tuple[Any, ...] | None:
    """What `pod_resources(pod_spec)` depends on for a pod without overhead: its containers' `requests` items, in
    order, and its init containers' with their `restartPolicy` — None for any other pod or one whose parts are not
    JSON objects: such a pod is summed on its own. The quantities are not looked at here (`1`, `1.0` and `True`
    are equal keys but not equal requests): a shape is kept only when they are all strings (`_text_only`), so a
    key found again was made of the same strings. Plain dicts only, read without `_m`/`_l`: this runs for every
    pod of the cluster (benchmarks/why_scale.py)."""
    if pod_spec.get("overhead"):
        return None
    containers = pod_spec.get("containers")
    if type(containers) is not list:
        return None
    shape = _containers_shape(containers, False)
    inits = pod_spec.get("initContainers")
    if not inits or shape is None:
        return shape
    init_shape = _containers_shape(inits, True) if type(inits) is list else None
    return None if init_shape is None else ("init", shape, init_shape)  # no container's shape is a string


def _containers_shape(containers: list[Any], init: bool) -> tuple[Any, ...] | None:
    shape: list[tuple[Any, ...]] = []
    for c in containers:
        if type(c) is not dict:
            return None
        resources = c.get("resources")
        if resources is None:
            items: tuple[Any, ...] = ()
        elif type(resources) is not dict:
            return None
        else:
            requests = resources.get("requests")
            if requests is None:
                items = ()
            elif type(requests) is dict:
                items = tuple(requests.items())
            else:
                return None
        shape.append((c.get("restartPolicy") == "Always", items) if init else items)
    return tuple(shape)


def _text_only(pod_spec: dict[str, Any]) -> bool:
    """Whether every request quantity of the pod's containers and init containers is a string: only then may its
    `_request_shape` stand for other pods (their equal keys are then made of the same strings)."""
    for kind in ("containers", "initContainers"):
        for c in _l(pod_spec.get(kind)):
            requests = _m(_m(c).get("resources")).get("requests")
            if any(type(value) is not str for value in _m(requests).values()):
                return False
    return True


_NOTHING: Final = NodeUsage({}, 0, 0, 0)


def node_usage(node: str, env: WhyEnv) -> NodeUsage:
    """What the pods bound to `node` use (every pod `env` knows there), memoized on `env`.

    An env whose `pods_on` is the base index over `env.pods` gets every node's usage in one pass over its pods
    the first time (`why` asks for every node: benchmarks/why_scale.py); one with its own look-ups (the webhook's)
    or a node dropped from the memo (a gang booking, `WhyEnv.with_bound`) is tallied from `pods_on`."""
    memo = env._usage
    if memo is None:
        memo = env._usage = {}
        if type(env).pods_on is WhyEnv.pods_on:
            memo.update(_every_node(env.pods))
            memo[_ALL] = True
    found = memo.get(node)
    if isinstance(found, NodeUsage):
        return found
    if memo.get(_ALL) and node not in memo:
        return _NOTHING
    # Every `pods_on` gives the pods whose spec.nodeName is `node` and that are not Succeeded/Failed (the gang's
    # booked replica is given both): what `NodeTallies.visit` counts there.
    tallies = NodeTallies()
    for pod in env.pods_on(node):
        tallies.visit(pod, pod.get("metadata"), pod.get("spec"), pod.get("status"))
    usage = memo[node] = tallies.usage().get(node, _NOTHING)
    return usage


def seed_usage(env: WhyEnv, tallies: object) -> None:
    """Fill `node_usage`'s memo from `tallies`, when they are a `NodeTallies` that visited every pod of `env.pods`
    (in the snapshot build's pass) and `env` reads its pods from them: what the memo's own pass would find."""
    if (isinstance(tallies, NodeTallies) and env._usage is None and tallies.seen == len(env.pods)
            and type(env).pods_on is WhyEnv.pods_on):
        env._usage = {**tallies.usage(), _ALL: True}


def _every_node(pods: Iterable[Mapping[str, Any]]) -> dict[str, NodeUsage]:
    """`NodeTallies` of `pods`, in a pass of their own."""
    tallies = NodeTallies()
    visit = tallies.visit
    for pod in pods:
        visit(pod, pod.get("metadata"), pod.get("spec"), pod.get("status"))
    return tallies.usage()


class NodeTallies:
    """Every node's `NodeUsage`, one pod at a time (`visit`): the bound pods that are not Succeeded/Failed counted,
    the Releasing ones apart, the others' `pod_resources` summed. `why` has the snapshot build walk its pods past
    `visit` (`build_snapshot(pod_visitor=…)`), in the pass that reads them anyway: a pass of its own re-reads
    150,000 pods from memory (benchmarks/why_scale.py); `node_usage` tallies one node's pods with it too.

    The replicas of a workload ask alike: a pod's requests are read once per shape (`_request_shape`; for a pod
    without init containers or overhead, computed here without a call) and a node's pods counted per shape id,
    summed at the end (three quarters of a fleet's pods ask cpu and memory, the rest often nothing). Per node only
    the shape counts are kept on the common path; what few pods have — required anti-affinity, a deletion under
    way, requests that make no shape — is kept in maps of its own (a tally object per node, its attributes
    updated per pod, cost a tenth of the pass: benchmarks/why_scale.py)."""

    __slots__ = ("anti", "counted", "odd", "releasing", "seen", "shape_ids", "shapes")

    def __init__(self) -> None:
        self.seen = 0  # pods visited, bound or not
        self.counted: dict[str, dict[int, int]] = {}  # node → shape id → pods (-1: pods summed into `odd`)
        self.shape_ids: dict[tuple[Any, ...], int] = {}
        self.shapes: list[dict[str, int]] = []  # shape id → `pod_resources` of a pod of that shape
        self.odd: dict[str, dict[str, int]] = {}  # node → the summed requests of its pods of no shape
        self.releasing: dict[str, int] = {}  # node → pods being deleted (counted, their requests not)
        self.anti: dict[str, int] = {}  # node → pods with required pod anti-affinity

    def visit(self, pod: Mapping[str, Any], meta: Any, pod_spec: Any, status: Any) -> None:
        """`pod`, with its `metadata`, `spec` and `status` as read (anything, as the snapshot holds it)."""
        self.seen += 1
        if not isinstance(pod_spec, dict):
            return
        name = pod_spec.get("nodeName")
        if not name or type(name) is not str:
            return
        if isinstance(status, dict) and status.get("phase") in _DONE:
            return
        counted = self.counted.get(name)
        if counted is None:
            counted = self.counted[name] = {}
        if pod_spec.get("affinity") and _anti_affinity(pod_spec):
            self.anti[name] = self.anti.get(name, 0) + 1
        if isinstance(meta, dict) and meta.get("deletionTimestamp") is not None and _releasing(meta, pod):
            self.releasing[name] = self.releasing.get(name, 0) + 1
            return
        containers = pod_spec.get("containers")
        key: tuple[Any, ...] | None = None
        if type(containers) is list and "initContainers" not in pod_spec and "overhead" not in pod_spec:
            parts: list[tuple[Any, ...]] = []  # `_containers_shape(containers, False)`, inlined
            for c in containers:
                if type(c) is not dict:
                    break
                resources = c.get("resources")
                if resources is None:
                    parts.append(())
                    continue
                if type(resources) is not dict:
                    break
                requests = resources.get("requests")
                if requests is None:
                    parts.append(())
                elif type(requests) is dict:
                    parts.append(tuple(requests.items()))
                else:
                    break
            else:
                key = tuple(parts)
        else:  # an empty or null initContainers/overhead is read there as none
            key = _request_shape(pod_spec)
        if key is not None:
            try:
                shape = self.shape_ids.get(key)
            except TypeError:  # a quantity that is a list or a map: summed on its own
                shape = key = None
            if shape is None and key is not None and _text_only(pod_spec):
                shape = self.shape_ids[key] = len(self.shapes)
                self.shapes.append(pod_resources(pod_spec))
            if shape is not None:
                counted[shape] = counted.get(shape, 0) + 1
                return
        used = self.odd.get(name)
        if used is None:
            used = self.odd[name] = {}
        for resource, amount in pod_resources(pod_spec).items():
            used[resource] = used.get(resource, 0) + amount
        counted[-1] = counted.get(-1, 0) + 1

    def usage(self) -> dict[str, NodeUsage]:
        """Each node's usage, by node name (only nodes with pods)."""
        out = {}
        odd, releasing, anti = self.odd, self.releasing, self.anti
        shapes = [tuple(shape.items()) for shape in self.shapes]  # iterated per node: no items view each time
        for name, counted in self.counted.items():
            used = {PODS: 0}
            if name in odd:
                used.update(odd[name])
            get = used.get
            gone = releasing.get(name, 0)
            pods = gone
            for shape, times in counted.items():
                pods += times
                if shape < 0:
                    continue
                for resource, amount in shapes[shape]:
                    used[resource] = get(resource, 0) + amount * times
            out[name] = NodeUsage(used, pods, gone, anti.get(name, 0))
        return out


_DONE: Final = spec.DONE_POD_PHASES
_ALL: Final = "\x00every node"  # the memo holds every node with pods (no node has this name)
