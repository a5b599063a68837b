"""Gang what-if: will the whole workload start? Its replicas placed one by one in Volcano's order, each consuming
what it takes, and the gang plugin's rule applied as Volcano applies it (docs/volcano.md#gang-scheduling).

**Replicas and minimums.** A Volcano Job's pods are `<job>-<task>-<index>`, `spec.tasks[].replicas` of each
(absent: none — the job controller's loop runs `ts.Replicas` times; an unnamed task is `default<position>`,
`mutateSpec`). Its PodGroup (`createOrUpdatePodGroup`, `pkg/controllers/job/job_controller_actions.go`) has
`minMember` = `spec.minAvailable` (the Job webhook's default: each task's minAvailable, else its replicas,
summed — `patchDefaultMinAvailable`, `pkg/webhooks/admission/jobs/mutate/mutate_job.go`) and `minTaskMember[task]`
= the task's `minAvailable` (the webhook defaults it to the task's replicas, `mutateSpec`; `getMinTaskMember`).
A Deployment's, StatefulSet's or ReplicaSet's `spec.replicas` (default 1), a batch Job's `parallelism` (default
1): Volcano's PodGroup controller gives the pods of one owner a PodGroup whose `minMember` is the owner's
`scheduling.volcano.sh/group-min-member`, else 1 (`getMinMemberFromUpperRes`,
`pkg/controllers/podgroup/pg_controller_handler.go`), and no task minimums.

**The gang rule** (`pkg/scheduler/plugins/gang/gang.go` `JobReady` = `CheckTaskReady() && IsReady()`,
`pkg/scheduler/api/job_info.go`, per-task minimums since v1.3.0): the Job is ready when its allocated replicas
plus its Pending best-effort ones (a pod that requests nothing: `Resreq.IsEmpty()`) reach `minMember`, and —
only where `minMember` ≥ the sum of the task minimums (`TaskMinAvailableTotal`) — each task has at least its
`minTaskMember` of them. Where `minMember` is smaller, the task minimums are ignored.

**The order** (`pkg/scheduler/actions/allocate/allocate.go`): the Job's Pending pods go into one priority queue
ordered by `Session.TaskOrderFn` (`framework/session_plugins.go`): the priority plugin's task order (higher
`TaskInfo.Priority` first: the pod's `volcano.sh/task-priority` annotation, else its priority, resolved by the API
server from `priorityClassName` — the task template's, else the Job's `spec.priorityClassName`, which the job
controller copies, `createJobPod`), then `CompareTask` (`pkg/controllers/job/helpers/helpers.go`): the pod's
index under its task, then creation time, then UID. The job controller creates each task's pods concurrently, so
between tasks of equal priority and index the order is not fixed; the what-if takes the tasks' order in the Job.
A task's `minAvailable` does not change the order. Best-effort pods are skipped by allocate and placed by the
`backfill` action afterwards.

**When allocate stops** a Job that is not ready yet: at a pod that fits no node, before 1.10 (`break`); from 1.10
(`NeedContinueAllocating`) it goes on unless every pod is needed (`minMember` = the number of pods), or — with the
task minimums ignored — the pods placed plus those left in tasks that have not failed cannot reach `minMember`,
or — with them counted — a failed task has fewer than its minimum; the later pods of a task that failed are
skipped (`TaskHasFitErrors`). A Job that did not get ready is not placed at all (`stmt.Discard`).

**Node**: every node is simulated for the replica (`simulate_node`: the node-level checks too, so the cpu,
memory and pods of the replicas placed before count on their node); among the fits the one with the highest
deviceshare score wins — per booked device, binpack 100 × used/total memory after the booking, spread
100 for a device that was idle (`GPUScore` in `pkg/scheduler/api/devices/nvidia/vgpu/utils.go`, `CalScore`
in `ascend/hami/device_info.go`) — ties (and every other policy) by node name. Volcano adds the scores of
its other node-order plugins and picks at random among equal best nodes; the what-if is deterministic
instead. Each placement is booked as Volcano books it: a pod bound to the node with the allocation
annotation the device family writes and its requests defaulted from its limits, so the next replica sees the
memory, cores, slots and devices it took, and the cpu, memory and pod slot.
Unlike Volcano's allocate, every replica is tried even after Volcano would stop, so the answer also says how
many fit at once; whether the gang starts is Volcano's answer (`replay`).
"""

from __future__ import annotations

import copy
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.model import DeviceState, NodeState
from vgpuctl.core.codecs.ascend_pod import allocated_annotation
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.podrules.targets import as_list, as_mapping, is_volcano_job
from vgpuctl.core.scheduler_config import SchedulerConf
from vgpuctl.core.versions import Version
from vgpuctl.core.why.gangmodel import (
    GANG_RULE_BACKFILL,
    GANG_RULE_FIRST_FAILURE,
    GANG_RULE_JOB_MIN,
    GANG_RULE_TASK_MIN,
    GangReport,
    GangStop,
    GangTask,
    Replica,
)
from vgpuctl.core.why.model import DeviceChoice, NodeVerdict, Placement, WhyReport
from vgpuctl.core.why.request import PodRequest, parse_pod
from vgpuctl.core.why.scheduler_env import WhyEnv
from vgpuctl.core.why.simulate import explain, requested_families, simulate_node
from vgpuctl.core.why.usage import PODS, with_default_requests

MIN_SOURCE_JOB = "spec.minAvailable"
MIN_SOURCE_SUM = "each task's minAvailable or replicas, summed (no spec.minAvailable)"
MIN_SOURCE_POD = "its PodGroup asks for one member (no scheduling.volcano.sh/group-min-member)"
TASK_MIN_SOURCE_GIVEN = "its minAvailable"
TASK_MIN_SOURCE_REPLICAS = "its replicas (no minAvailable)"
GROUP_MIN_MEMBER = "scheduling.volcano.sh/group-min-member"
TASK_PRIORITY = "volcano.sh/task-priority"  # `api.TaskPriorityAnnotation`: overrides the pod's priority
DEFAULT_TASK = "default"  # `batch.DefaultTaskSpec`: an unnamed task is `default<position>`
PLUGIN_PRIORITY = "priority"
PLUGIN_GANG = "gang"
ACTION_BACKFILL = "backfill"
_CONTINUES_SINCE = (1, 10, 0)  # `NeedContinueAllocating`, `TaskHasFitErrors` (v1.10.0); belongs in core/versions.py


@dataclass(frozen=True, slots=True)
class Workload:
    kind: str
    name: str
    replicas: tuple[Replica, ...]  # in Volcano's task order
    min_available: int
    min_source: str
    tasks: tuple[GangTask, ...] = ()  # a Volcano Job's `spec.tasks`, in the Job's order (else empty)
    notes: tuple[str, ...] = ()  # what the what-if assumed about the workload (order, dependencies)


@dataclass(frozen=True, slots=True)
class Scheduler:
    """What of the scheduler the gang replay follows; without a config, Volcano's default one."""

    by_priority: bool = True  # the priority plugin orders tasks
    gang: bool = True  # the gang plugin holds a Job back until it is ready
    backfill: bool = True  # the backfill action places the pods that request nothing
    continues: bool = True  # allocate goes on past a pod that fits no node (>= 1.10)


def scheduler_of(conf: SchedulerConf | None, version: Version | None) -> Scheduler:
    continues = version is None or version.core >= _CONTINUES_SINCE
    if conf is None:
        return Scheduler(continues=continues)
    names = {p.name for p in conf.plugins}
    return Scheduler(by_priority=PLUGIN_PRIORITY in names, gang=PLUGIN_GANG in names,
                     backfill=ACTION_BACKFILL in conf.actions, continues=continues)


def priority_classes(pods: Sequence[Mapping[str, Any]]) -> dict[str, int]:
    """The value of each PriorityClass some pod of the cluster uses: the API server wrote it to the pod's
    `spec.priority` when it resolved the pod's `priorityClassName`."""
    found: dict[str, int] = {}
    for pod in pods:
        pod_spec = as_mapping(pod.get("spec"))
        name, value = pod_spec.get("priorityClassName"), pod_spec.get("priority")
        if isinstance(name, str) and name and isinstance(value, int) and not isinstance(value, bool):
            found.setdefault(name, value)
    return found


def _int(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else default


def _int32(raw: Any) -> int | None:
    """Go's `strconv.ParseInt(raw, 10, 32)`, None when it fails."""
    if not isinstance(raw, str) or not re.fullmatch(r"[+-]?[0-9]+", raw):
        return None
    value = int(raw)
    return value if -(2**31) <= value < 2**31 else None


Classes = Callable[[], Mapping[str, int]]


def _priority(template: Mapping[str, Any], job_class: Any, classes: Classes | None) -> tuple[int, str | None]:
    """`TaskInfo.Priority` of the template's pods, and the name of a PriorityClass no pod of the cluster shows
    the value of (it counts 0)."""
    annotation = as_mapping(as_mapping(template.get("metadata")).get("annotations")).get(TASK_PRIORITY)
    parsed = _int32(annotation)
    if parsed is not None:
        return parsed, None
    pod_spec = as_mapping(template.get("spec"))
    given = pod_spec.get("priority")
    if isinstance(given, int) and not isinstance(given, bool):
        return given, None
    name = pod_spec.get("priorityClassName") or job_class
    if isinstance(name, str) and name:
        value = (classes() if classes is not None else {}).get(name)
        return (value, None) if value is not None else (0, name)
    return 0, None


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


def workload_of(obj: Mapping[str, Any], namespace: str, *, classes: Classes | None = None,
                by_priority: bool = True) -> Workload | None:
    """The replicas of a Volcano Job or a replicated workload, in Volcano's task order (`by_priority`: the
    priority plugin is on); None for a Pod or a kind with no replicas. `classes` gives the PriorityClasses known
    (`priority_classes`), asked only when a template names one."""
    meta = as_mapping(obj.get("metadata"))
    name = str(meta.get("name") or "what-if")
    ns = str(meta.get("namespace") or namespace)
    body = as_mapping(obj.get("spec"))
    kind = str(obj.get("kind") or "")
    replicas: list[Replica] = []
    if is_volcano_job(obj):
        tasks: list[GangTask] = []
        depends: list[str] = []
        unresolved: dict[str, str] = {}  # task → a priorityClassName no pod of the cluster shows the value of
        for position, task in enumerate(as_list(body.get("tasks"))):
            task_m = as_mapping(task)
            raw_name = task_m.get("name")
            task_name = raw_name if isinstance(raw_name, str) and raw_name else f"{DEFAULT_TASK}{position}"
            template = as_mapping(task_m.get("template"))
            count = _int(task_m.get("replicas"), 0)
            priority, unknown = _priority(template, body.get("priorityClassName"), classes)
            if unknown is not None:
                unresolved[task_name] = unknown
            own = _int(task_m.get("minAvailable"), -1)  # `mutateSpec` defaults it to the task's replicas
            tasks.append(GangTask(task_name, count, own if own >= 0 else count,
                                  TASK_MIN_SOURCE_GIVEN if own >= 0 else TASK_MIN_SOURCE_REPLICAS, priority))
            if task_m.get("dependsOn"):
                depends.append(task_name)
            for index in range(count):
                pod_name = f"{name}-{task_name}-{index}"
                group = {spec.ANN_GROUP_NAME_K8S: name}
                pod = _pod(template, ns, pod_name, body.get("schedulerName"), group)
                replicas.append(Replica(f"{ns}/{pod_name}", task_name, index, priority, position, pod))
        notes = [*_order_notes(unresolved)]
        if depends:
            notes.append(f"task{'s' if len(depends) > 1 else ''} {', '.join(depends)} "
                         f"{'have' if len(depends) > 1 else 'has'} dependsOn: the job controller creates "
                         "those pods only once the tasks they depend on are running; the what-if places every "
                         "task in one pass")
        given_min = body.get("minAvailable")
        if isinstance(given_min, int) and not isinstance(given_min, bool) and given_min > 0:
            minimum, source = given_min, MIN_SOURCE_JOB
        else:  # `patchDefaultMinAvailable`: each task's minAvailable, else its replicas
            minimum, source = sum(t.min_available for t in tasks), MIN_SOURCE_SUM
        return Workload(kind, name, _ordered(replicas, by_priority), minimum, source, tuple(tasks), tuple(notes))
    if kind in ("Deployment", "StatefulSet", "ReplicaSet", "Job"):
        count = _int(body.get("parallelism" if kind == "Job" else "replicas"), 1)
        template = as_mapping(body.get("template"))
        priority, _ = _priority(template, None, classes)  # one template: the same for every replica
        for index in range(count):
            pod_name = f"{name}-{index}"
            replicas.append(Replica(f"{ns}/{pod_name}", "", index, priority, 0,
                                    _pod(template, ns, pod_name, None, {})))
        minimum, source = _min_member(meta)
        return Workload(kind, name, _ordered(replicas, by_priority), minimum, source)
    return None


def _order_notes(unresolved: Mapping[str, str]) -> list[str]:
    if not unresolved:
        return []
    named = ", ".join(f"{task} ({cls})" for task, cls in unresolved.items())
    return [f"the priorityClassName of task{'s' if len(unresolved) > 1 else ''} {named} is on no pod of the "
            "snapshot, so its value is unknown: it counts as 0 in the tasks' order"]


def _min_member(meta: Mapping[str, Any]) -> tuple[int, str]:
    """`getMinMemberFromUpperRes`: the owner's `scheduling.volcano.sh/group-min-member`, else 1 (a bad or
    negative value also reads as 1). A Deployment's annotations reach its ReplicaSet."""
    raw = as_mapping(meta.get("annotations")).get(GROUP_MIN_MEMBER)
    if isinstance(raw, str) and re.fullmatch(r"[+-]?[0-9]+", raw) and 0 <= int(raw) < 2**31:  # ParseInt(…, 10, 32)
        return int(raw), f"{GROUP_MIN_MEMBER} on the workload"
    return 1, MIN_SOURCE_POD


def _ordered(replicas: Sequence[Replica], by_priority: bool = True) -> tuple[Replica, ...]:
    """`TaskOrderFn`: priority (when the priority plugin is on), then the index under the task, then creation
    (the task's position stands for it)."""
    return tuple(sorted(replicas, key=lambda r: (-r.priority if by_priority else 0, r.index, r.position)))


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
    (`usage.node_usage`)."""
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


def place_one(replica: Replica, nodes: list[NodeState], env: WhyEnv, cache: Verdicts,
              request: PodRequest | None = None) -> NodeVerdict | None:
    """The fit the replica gets on `nodes` now (None: none). Replicas of one task ask for the same, and a
    booking changes one node: `cache` keeps the other nodes' verdicts (`with_booking` drops the node's)."""
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
                      workload.min_source, tasks=list(workload.tasks))


# ---- the gang plugin's rule and allocate's stopping rule ---------------------------------------------------------

def best_effort(request: PodRequest) -> bool:
    """`Resource.IsEmpty()` of the pod's requests: no cpu, memory or scalar (`pods` aside; the device families'
    ignored names are not in them, `usage.pod_resources`)."""
    return not any(amount > 0 for name, amount in request.node.resources.items() if name != PODS)


class _Count:
    """The Job as `job_info.go` counts it while allocate places its pods."""

    def __init__(self, workload: Workload, effortless: frozenset[str]) -> None:
        self.min = workload.min_available
        self.task_min = {t.name: t.min_available for t in workload.tasks}
        self.per_task = self.min >= sum(self.task_min.values())  # `MinAvailable < TaskMinAvailableTotal`: ignored
        self.total = len(workload.replicas)
        self.replicas = Counter(r.task for r in workload.replicas)
        self.placed: Counter[str] = Counter()  # allocated (`ReadyTaskNum`)
        self.waiting = Counter(r.task for r in workload.replicas if r.task in effortless)  # Pending best-effort
        self.failed: list[str] = []  # tasks a pod of which fits no node (`FitFailedRoles`), in that order

    def occupied(self, task: str) -> int:
        return self.placed[task] + self.waiting[task]

    def short_task(self) -> str | None:
        """The first task with fewer than its minimum, where the task minimums count (`CheckTaskReady`)."""
        if not self.per_task:
            return None
        return next((t for t, m in self.task_min.items() if self.occupied(t) < m), None)

    def ready(self) -> bool:
        """The gang plugin's `JobReady`: `IsReady() && CheckTaskReady()`."""
        if sum(self.placed.values()) + sum(self.waiting.values()) < self.min:
            return False
        return self.short_task() is None

    def left(self) -> int:
        """Pods placed plus those Pending in tasks that have not failed (`NeedContinueAllocating`'s count)."""
        return sum(self.placed.values()) + sum(n - self.placed[t] for t, n in self.replicas.items()
                                               if t not in self.failed)

    def continues(self) -> bool:
        """`NeedContinueAllocating`, after a pod failed: whether allocate goes on with the Job's other pods."""
        if self.min == self.total:
            return False
        if not self.per_task:
            return self.left() >= self.min
        return all(self.occupied(t) >= self.task_min.get(t, 0) for t in self.failed)


class _Failure:
    """A task's first replica that fits no node, with the nodes and env as it found them (the placements before it
    booked); `why` replays it across them once, when asked."""

    __slots__ = ("_why", "env", "nodes", "replica")

    def __init__(self, replica: Replica, nodes: list[NodeState], env: WhyEnv) -> None:
        self.replica, self.nodes, self.env = replica, nodes, env
        self._why: WhyReport | None = None

    def why(self, facts: ClusterFacts) -> WhyReport:
        if self._why is None:
            self._why = explain(self.replica.pod, self.nodes, self.env, what_if=True, facts=facts,
                                as_gang_member=True)
        return self._why


def replay(workload: Workload, nodes: Sequence[NodeState], env: WhyEnv, facts: ClusterFacts,
           sched: Scheduler = Scheduler()) -> GangReport:
    """The workload's pods placed in Volcano's order, and whether its gang starts (see the module docstring)."""
    requests: dict[str, PodRequest] = {}
    for r in workload.replicas:
        if r.task not in requests:
            requests[r.task] = parse_pod(r.pod, env)
    effortless = frozenset(t for t, req in requests.items() if best_effort(req))
    gang = gang_report(workload)
    gang.tasks = [replace(t, families=requested_families(requests[t.name]) if t.name in requests else (),
                          best_effort=t.name in effortless) for t in workload.tasks]
    count = _Count(workload, effortless)
    gang.task_minimums = count.per_task
    state, current, cache = env, list(nodes), Verdicts()
    failures: dict[str, _Failure] = {}
    ready = count.ready()
    stopped: tuple[Replica, str, str] | None = None  # where allocate gives the Job up before it is ready, and why

    def attempt(replica: Replica) -> bool:
        nonlocal state, current
        chosen = None if replica.task in failures else place_one(replica, current, state, cache,
                                                                 requests[replica.task])
        if chosen is None:
            gang.failed.append(replica)
            if replica.task not in failures:
                failure = failures[replica.task] = _Failure(replica, current, state)
                if gang.first_failure is None:
                    gang.first_failure = replica
                    found = failure.why(facts)
                    gang.first_failure_unfit, gang.first_failure_hints = found.unfit, found.hints
            return False
        gang.placed.append((replica, Placement(chosen.node, chosen.devices)))
        state, current = with_booking(state, current, chosen, replica, cache)
        return True

    for replica in workload.replicas:  # allocate: the pods that request something
        if replica.task in effortless:
            continue
        if attempt(replica):
            count.placed[replica.task] += 1
            if not ready and stopped is None and count.ready():
                ready = True
        elif replica.task not in count.failed:
            count.failed.append(replica.task)
            if not ready and stopped is None and not (sched.continues and count.continues()):
                stopped = (replica, *_given_up(workload, count, replica.task, sched))
    backfilled: Counter[str] = Counter()
    for replica in workload.replicas:  # backfill: the pods that request nothing, counted by the gang meanwhile
        if replica.task not in effortless:
            continue
        if not sched.backfill:
            gang.failed.append(replica)
        elif attempt(replica):
            backfilled[replica.task] += 1
    final = _Count(workload, frozenset())
    final.placed = Counter(count.placed) + backfilled
    gang.started = ready and final.ready()
    if not gang.started:
        gang.stop = _stop(workload, gang, count, final, ready, stopped, failures, facts, sched)
    return gang


def _given_up(workload: Workload, count: _Count, task: str, sched: Scheduler) -> tuple[str, str]:
    """The rule by which allocate gives the Job up when a pod of `task` fits no node, and what it says (the counts as
    they are at that moment)."""
    minimum = count.task_min.get(task, 0)
    counts = f"{count.placed[task]} of its {count.replicas[task]} replicas fit"
    if workload.tasks and count.per_task:
        counts += f", its minAvailable is {minimum}"
    every = f"every pod is needed (minAvailable {count.min} = its {count.total} pods)"
    if not sched.continues:
        return GANG_RULE_FIRST_FAILURE, (f"{counts}; Volcano before 1.10 stops allocating a {workload.kind} at its "
                                         "first pod that fits no node")
    if count.per_task and count.occupied(task) < minimum:
        return GANG_RULE_TASK_MIN, counts + (f"; {every}" if count.min == count.total else "")
    if count.min == count.total:
        return GANG_RULE_JOB_MIN, f"{counts}; {every}"
    return GANG_RULE_JOB_MIN, (f"{counts}; the pods placed and those left in tasks that still fit ({count.left()}) "
                               f"cannot reach minAvailable {count.min}")


def _stop(workload: Workload, gang: GangReport, count: _Count, final: _Count, ready: bool,
          stopped: tuple[Replica, str, str] | None, failures: Mapping[str, _Failure], facts: ClusterFacts,
          sched: Scheduler) -> GangStop:
    """Which task, which of its replicas and which rule keep the gang from starting."""
    job = bool(workload.tasks)
    if stopped is not None:  # allocate gives the Job up at `stopped`, for the rule said then
        replica, rule, text = stopped
        return _with_failure(replica.task, rule, text, failures.get(replica.task), facts, job)
    if not ready:  # allocate went through every pod and the gang is still short
        short = count.short_task()
        if short is not None:
            text = (f"{count.placed[short]} of its {count.replicas[short]} replicas fit, its minAvailable is "
                    f"{count.task_min[short]}")
            return _with_failure(short, GANG_RULE_TASK_MIN, text, failures.get(short), facts, job)
        task = count.failed[0] if count.failed else ""
        text = (f"{sum(count.placed.values()) + sum(count.waiting.values())} of its {count.total} pods fit at once, "
                f"minAvailable is {count.min}")
        return _with_failure(task, GANG_RULE_JOB_MIN, text, failures.get(task), facts, job)
    # Ready with the pods that request nothing counted while Pending, which backfill then does not place.
    effortless = [t for t in gang.tasks if t.best_effort and final.placed[t.name] < t.replicas]
    short = final.short_task() or (effortless[0].name if effortless else "")
    why = "the scheduler config has no backfill action, the only one that places them" if not sched.backfill \
        else "backfill places them on no node"
    text = (f"its replicas request nothing: the gang counts them while Pending, but {why} "
            f"({final.placed[short]} of {final.replicas[short]} placed)")
    return _with_failure(short, GANG_RULE_BACKFILL, text, failures.get(short), facts, job)


def _with_failure(task: str, rule: str, text: str, failure: _Failure | None, facts: ClusterFacts,
                  job: bool) -> GangStop:
    head = f"task {task}: " if job else ""
    if failure is None:
        return GangStop(task, None, rule, head + text)
    found = failure.why(facts)
    return GangStop(task, failure.replica.name, rule, f"{head}{text}; {failure.replica.name} fits no node",
                    tuple(found.unfit), tuple(found.hints))
