"""Gang what-if: will the whole workload fit? Its replicas placed one by one, each consuming what it takes.

Replicas: a Volcano Job's `spec.tasks[].replicas` (pods `<job>-<task>-<index>`, the job's `minAvailable`,
by default the sum of each task's minAvailable or replicas: `patchDefaultMinAvailable`, volcano-sh/volcano
`pkg/webhooks/admission/jobs/mutate/mutate_job.go`), a
Deployment's, StatefulSet's or ReplicaSet's `spec.replicas` (default 1), a batch Job's `parallelism`
(default 1); Volcano's PodGroup controller gives the pods of one owner a PodGroup whose `minMember` is
the owner's `scheduling.volcano.sh/group-min-member`, else 1 (`getMinMemberFromUpperRes`,
`pkg/controllers/podgroup/pg_controller_handler.go`), so there the answer is how many replicas fit.

Order (Volcano's `TaskOrderFn`, `pkg/scheduler/framework/session_plugins.go`): the priority plugin first
(higher `spec.priority` first, `pkg/scheduler/plugins/priority/priority.go`; a `priorityClassName` cannot
be resolved offline and counts as 0), then `CompareTask` (`pkg/controllers/job/helpers/helpers.go`): the
pod index under its task, then creation time and UID — for pods not yet created, the task's position in
the Job stands for those.

Node: every node is simulated for the replica (`simulate_node`: the node-level checks too, so the cpu, memory
and pods of the replicas placed before count on their node); among the fits the one with the highest
deviceshare score wins — per booked device, binpack 100 × used/total memory after the booking, spread
100 for a device that was idle (`GPUScore` in `pkg/scheduler/api/devices/nvidia/vgpu/utils.go`, `CalScore`
in `ascend/hami/device_info.go`) — ties (and every other policy) by node name. Volcano adds the scores of
its other node-order plugins and picks at random among equal best nodes; the what-if is deterministic
instead. Each placement is booked as Volcano books it: a pod bound to the node with the allocation
annotation the device family writes and its requests defaulted from its limits, so the next replica sees the
memory, cores, slots and devices it took, and the cpu, memory and pod slot.
Unlike Volcano's allocate, which stops a job once `minAvailable` is out of reach, every replica is tried,
so the answer says how many fit at once.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.model import DeviceState, NodeState
from vgpuctl.core.codecs.ascend_pod import allocated_annotation
from vgpuctl.core.podrules.targets import as_list, as_mapping, is_volcano_job
from vgpuctl.core.why.model import DeviceChoice, NodeVerdict, Placement, UnfitGroup
from vgpuctl.core.why.nodefit import with_default_requests
from vgpuctl.core.why.request import parse_pod
from vgpuctl.core.why.scheduler_env import WhyEnv

MIN_SOURCE_JOB = "spec.minAvailable"
MIN_SOURCE_SUM = "each task's minAvailable or replicas, summed (no spec.minAvailable)"
MIN_SOURCE_POD = "its PodGroup asks for one member (no scheduling.volcano.sh/group-min-member)"
GROUP_MIN_MEMBER = "scheduling.volcano.sh/group-min-member"


@dataclass(frozen=True, slots=True)
class Replica:
    name: str  # ns/name as the controller names it
    task: str  # Volcano Job task ("" for other workloads)
    index: int
    priority: int
    position: int  # the task's position in the Job (creation order stand-in)
    pod: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Workload:
    kind: str
    name: str
    replicas: tuple[Replica, ...]
    min_available: int
    min_source: str


@dataclass
class GangReport:
    kind: str
    name: str
    replicas: int
    min_available: int
    min_source: str
    placed: list[tuple[Replica, Placement]] = field(default_factory=list)
    failed: list[Replica] = field(default_factory=list)
    first_failure: Replica | None = None
    first_failure_unfit: list[UnfitGroup] = field(default_factory=list)
    first_failure_hints: list[str] = field(default_factory=list)

    @property
    def fit(self) -> int:
        return len(self.placed)

    @property
    def starts(self) -> bool:
        return self.fit >= self.min_available

    def to_dict(self) -> dict[str, Any]:
        failure = None
        if self.first_failure is not None:
            failure = {"replica": self.first_failure.name, "task": self.first_failure.task or None,
                       "unfit": [g.to_dict() for g in self.first_failure_unfit],
                       "hints": list(self.first_failure_hints)}
        return {
            "kind": self.kind, "name": self.name, "replicas": self.replicas,
            "minAvailable": self.min_available, "minAvailableSource": self.min_source,
            "fitAtOnce": self.fit, "starts": self.starts,
            "placements": [{"replica": r.name, "task": r.task or None, **p.to_dict()} for r, p in self.placed],
            "unplaced": [r.name for r in self.failed],
            "firstFailure": failure,
        }


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _pod(template: Mapping[str, Any], namespace: str, name: str, scheduler: Any,
         annotations: Mapping[str, str]) -> dict[str, Any]:
    meta = copy.deepcopy(dict(as_mapping(template.get("metadata"))))
    meta["name"], meta["namespace"] = name, namespace
    if annotations:
        meta["annotations"] = {**as_mapping(meta.get("annotations")), **annotations}
    pod_spec = copy.deepcopy(dict(as_mapping(template.get("spec"))))
    if isinstance(scheduler, str) and scheduler and not pod_spec.get("schedulerName"):
        pod_spec["schedulerName"] = scheduler
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": pod_spec, "status": {"phase": "Pending"}}


def workload_of(obj: Mapping[str, Any], namespace: str) -> Workload | None:
    """The replicas of a Volcano Job or a replicated workload; None for a Pod or a kind with no replicas."""
    meta = as_mapping(obj.get("metadata"))
    name = str(meta.get("name") or "what-if")
    ns = str(meta.get("namespace") or namespace)
    body = as_mapping(obj.get("spec"))
    kind = str(obj.get("kind") or "")
    replicas: list[Replica] = []
    if is_volcano_job(obj):
        for position, task in enumerate(as_list(body.get("tasks"))):
            task_m = as_mapping(task)
            task_name = str(task_m.get("name") or position)
            template = as_mapping(task_m.get("template"))
            for index in range(_int(task_m.get("replicas"), 1)):
                pod_name = f"{name}-{task_name}-{index}"
                group = {spec.ANN_GROUP_NAME_K8S: name}
                pod = _pod(template, ns, pod_name, body.get("schedulerName"), group)
                priority = _int(as_mapping(template.get("spec")).get("priority"), 0)
                replicas.append(Replica(f"{ns}/{pod_name}", task_name, index, priority, position, pod))
        given = body.get("minAvailable")
        if isinstance(given, int) and not isinstance(given, bool) and given > 0:
            return Workload(kind, name, _ordered(replicas), given, MIN_SOURCE_JOB)
        # `patchDefaultMinAvailable`: each task's minAvailable, else its replicas
        total = sum(_int(as_mapping(t).get("minAvailable"), _int(as_mapping(t).get("replicas"), 1))
                    for t in as_list(body.get("tasks")))
        return Workload(kind, name, _ordered(replicas), total, MIN_SOURCE_SUM)
    if kind in ("Deployment", "StatefulSet", "ReplicaSet", "Job"):
        count = _int(body.get("parallelism" if kind == "Job" else "replicas"), 1)
        template = as_mapping(body.get("template"))
        for index in range(count):
            pod_name = f"{name}-{index}"
            replicas.append(Replica(f"{ns}/{pod_name}", "", index,
                                    _int(as_mapping(template.get("spec")).get("priority"), 0), 0,
                                    _pod(template, ns, pod_name, None, {})))
        minimum, source = _min_member(meta)
        return Workload(kind, name, _ordered(replicas), minimum, source)
    return None


def _min_member(meta: Mapping[str, Any]) -> tuple[int, str]:
    """`getMinMemberFromUpperRes`: the owner's `scheduling.volcano.sh/group-min-member`, else 1 (a bad or
    negative value also reads as 1). A Deployment's annotations reach its ReplicaSet."""
    raw = as_mapping(meta.get("annotations")).get(GROUP_MIN_MEMBER)
    if isinstance(raw, str) and re.fullmatch(r"[+-]?[0-9]+", raw) and 0 <= int(raw) < 2**31:  # ParseInt(…, 10, 32)
        return int(raw), f"{GROUP_MIN_MEMBER} on the workload"
    return 1, MIN_SOURCE_POD


def _ordered(replicas: Sequence[Replica]) -> tuple[Replica, ...]:
    return tuple(sorted(replicas, key=lambda r: (-r.priority, r.index, r.position)))


def _base(device_id: str) -> str:
    return device_id.split("[", 1)[0]


def _device(node: NodeState, choice: DeviceChoice) -> DeviceState | None:
    for d in node.devices:
        if d.family is spec.Family.ASCEND_MINDCLUSTER:
            if str(d.index) == choice.id:
                return d
        elif d.id == _base(choice.id):
            return d
    return None


def score(node: NodeState, devices: Sequence[DeviceChoice], policy: str) -> float:
    """The deviceshare score of a placement (see the module docstring)."""
    total = 0.0
    for choice in devices:
        d = _device(node, choice)
        if d is None or d.memory_total <= 0:
            continue
        if policy == "binpack":
            total += 100 * (d.memory_used + (choice.memory or 0)) / d.memory_total
        elif policy == "spread" and d.slots_used == 0 and not d.pods:
            total += 100
    return total


def booked_pod(replica: Replica, node: NodeState, devices: Sequence[DeviceChoice], env: WhyEnv) -> dict[str, Any]:
    """The replica as Volcano leaves it once bound: on the node, with the allocation annotations it writes, and
    its requests as the API server stores them (defaulted from the limits), which the node's next pods find used
    (`nodefit.node_usage`)."""
    pod = copy.deepcopy(with_default_requests(replica.pod))
    pod["spec"]["nodeName"] = node.name
    pod["status"] = {"phase": "Running"}
    annotations = dict(as_mapping(pod["metadata"].get("annotations")))
    vgpu: list[str] = []
    ascend: dict[str, list[str]] = {}
    cards: list[str] = []
    chips: list[str] = []
    template = None
    for choice in devices:
        d = _device(node, choice)
        if d is None:
            continue
        if d.family is spec.Family.VGPU:
            vgpu.append(f"{choice.id},NVIDIA,{(choice.memory or 0) // env.factor},{choice.cores or 0}:")
        elif d.family is spec.Family.ASCEND_HAMI:
            ascend.setdefault(d.type, []).append(f"{choice.id},{d.type},{choice.memory or 0},{choice.cores or 0}:")
        elif d.family is spec.Family.GPUSHARE:
            cards.append(str(d.index))
        elif d.family is spec.Family.ASCEND_MINDCLUSTER:
            chips.append(str(d.index))
            template = choice.template
    if vgpu:
        annotations[spec.ANN_VGPU_IDS_NEW] = "".join(vgpu)
    for common_word, entries in ascend.items():
        annotations[allocated_annotation(common_word)] = "".join(entries) + ";"
    if cards:
        annotations[spec.ANN_GPU_INDEX] = ",".join(cards)
    if chips:
        annotations[spec.ANN_NPU_CORE] = f"{chips[0]}-{template}" if template else ",".join(chips)
    pod["metadata"]["annotations"] = annotations
    return pod


def pick(verdicts: Sequence[NodeVerdict], nodes: Mapping[str, NodeState], policy: str) -> NodeVerdict:
    """The fit Volcano's deviceshare score prefers; ties by node name."""
    return min(verdicts, key=lambda v: (-score(nodes[v.node], v.devices, policy), v.node))


def rebuild(node: NodeState, pods: Sequence[Mapping[str, Any]], env: WhyEnv) -> NodeState:
    """`node` again, with the usage of `pods` (those bound to it, the booked replicas included)."""
    built = build_snapshot([node.obj, *pods], device_config=env.device_config, volcano_version=env.volcano_version)
    return built.nodes[0]


Verdicts = dict[tuple[str, str], NodeVerdict]  # (task, node) → verdict, while the node is unchanged


def place_one(replica: Replica, nodes: list[NodeState], env: WhyEnv, cache: Verdicts) -> NodeVerdict | None:
    """The fit the replica gets on `nodes` now (None: none). Replicas of one task ask for the same, and a
    booking changes one node: `cache` keeps the other nodes' verdicts (`with_booking` drops the node's)."""
    from vgpuctl.core.why.simulate import simulate_node

    request = None
    fits = []
    for node in nodes:
        verdict = cache.get((replica.task, node.name))
        if verdict is None:
            request = request or parse_pod(replica.pod, env)
            verdict = cache[(replica.task, node.name)] = simulate_node(request, node, env)
        if verdict.fits:
            fits.append(verdict)
    if not fits:
        return None
    return pick(fits, {n.name: n for n in nodes}, env.policy)


def with_booking(env: WhyEnv, nodes: list[NodeState], chosen: NodeVerdict, replica: Replica,
                 cache: Verdicts) -> tuple[WhyEnv, list[NodeState]]:
    """The env and nodes once `replica` is bound where `chosen` says."""
    index = next(i for i, n in enumerate(nodes) if n.name == chosen.node)
    pod = booked_pod(replica, nodes[index], chosen.devices, env)
    next_env = env.with_bound(pod, chosen.node)
    updated = list(nodes)
    updated[index] = rebuild(nodes[index], next_env.pods_on(chosen.node), env)
    for key in [k for k in cache if k[1] == chosen.node]:
        del cache[key]
    return next_env, updated


def gang_report(workload: Workload) -> GangReport:
    return GangReport(workload.kind, workload.name, len(workload.replicas), workload.min_available,
                      workload.min_source)
