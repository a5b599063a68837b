"""Multi-task Volcano Jobs (issue 24 §2): every task's replicas placed in Volcano's order, the gang plugin's rule as
`job_info.go` applies it, and which task and which reason stop the Job (docs/volcano.md#gang-scheduling).

Upstream evidence (volcano-sh/volcano; tags v1.9.0 … v1.16.0-alpha.1, master ed72c7c81):
- `pkg/controllers/job/job_controller_actions.go createOrUpdatePodGroup`: `MinMember` = `spec.minAvailable`,
  `MinTaskMember[task]` = `getMinTaskMember` (the task's minAvailable, which the Job webhook's `mutateSpec`
  defaults to its replicas); `syncJob` creates `ts.Replicas` pods `<job>-<task>-<i>` per task;
- `pkg/scheduler/api/job_info.go`: `SetPodGroup` (`TaskMinAvailable`, `TaskMinAvailableTotal`), `IsReady`
  (`ReadyTaskNum() + PendingBestEffortTaskNum() >= MinAvailable`), `CheckTaskReady` (each task's minimum, skipped
  when `MinAvailable < TaskMinAvailableTotal`), `NeedContinueAllocating` and `TaskHasFitErrors` (v1.10.0 on);
  `NewTaskInfo`: `Priority` from the pod's priority, overridden by `volcano.sh/task-priority`;
- `pkg/scheduler/plugins/gang/gang.go`: `JobReady` = `CheckTaskReady() && IsReady()`;
- `pkg/scheduler/actions/allocate/allocate.go`: one priority queue of the Job's Pending pods by `TaskOrderFn`,
  best-effort pods skipped (`Resreq.IsEmpty()`), `break` at a pod that fits no node before v1.10,
  `NeedContinueAllocating` from v1.10; `pkg/scheduler/actions/backfill/backfill.go` places the best-effort ones;
- `pkg/scheduler/plugins/priority/priority.go` task order, then `pkg/controllers/job/helpers/helpers.go
  CompareTask` (index under the task, creation time, UID).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import yaml

from tests.unit.why.builders import NVIDIA, device_config, gpu
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.versions import Version
from vgpuctl.core.why.gang import workload_of
from vgpuctl.core.why.model import Reason, WhyReport
from vgpuctl.core.why.whatif import explain_what_if

SCHEMA = json.loads((Path(__file__).resolve().parents[3] / "schemas" / "why-report.schema.json").read_text())
VGPU = {"deviceshare.VGPUEnable": True}
# Volcano's default scheduler config, with deviceshare: what the gang replay follows when a snapshot has none.
DEFAULT_PLUGINS = [{"name": "priority"}, {"name": "gang"}, {"name": "predicates"},
                   {"name": "deviceshare", "arguments": VGPU}]
WHOLE_GPU = {"volcano.sh/vgpu-number": "1"}
# `stoppedBy.rule`, a JSON contract (schemas/why-report.schema.json)
GANG_RULE_TASK_MIN, GANG_RULE_JOB_MIN = "task-minAvailable", "minAvailable"
GANG_RULE_FIRST_FAILURE, GANG_RULE_BACKFILL = "stops-at-first-failure", "backfill"


def scheduler(plugins: list[dict[str, Any]] | None = None,
              actions: str = "enqueue, allocate, backfill") -> dict[str, Any]:
    conf = {"actions": actions, "tiers": [{"plugins": plugins if plugins is not None else DEFAULT_PLUGINS}]}
    return {"kind": "ConfigMap", "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
            "data": {"volcano-scheduler.conf": yaml.safe_dump(conf)}}


def gpu_node(name: str, gpus: int = 1, *, cpu: str = "64", labels: dict[str, str] | None = None) -> dict[str, Any]:
    """A vGPU node with `gpus` A100s, reported as a kubelet and the vGPU device plugin report it."""
    uuids = [f"GPU-{name:0>8}-0000-0000-0000-00000000000{i}" for i in range(gpus)]
    return {"kind": "Node", "metadata": {"name": name, "labels": labels or {}, "annotations": {
        "volcano.sh/node-vgpu-register": "".join(gpu(u) for u in uuids)}},
        "status": {"allocatable": {"cpu": cpu, "memory": "512Gi", "pods": "110",
                                   "volcano.sh/vgpu-number": str(10 * gpus),
                                   "volcano.sh/vgpu-memory": str(40960 * gpus),
                                   "volcano.sh/vgpu-cores": str(100 * gpus)}}}


def task(name: str | None, replicas: int | None, *, limits: dict[str, str] | None = None,
         requests: dict[str, str] | None = None, min_available: int | None = None,
         annotations: dict[str, str] | None = None, priority_class: str | None = None,
         node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if limits:
        resources["limits"] = limits
    if requests:
        resources["requests"] = requests
    pod_spec: dict[str, Any] = {"containers": [{"name": "c", "image": "busybox", "resources": resources}]}
    if priority_class:
        pod_spec["priorityClassName"] = priority_class
    if node_selector:
        pod_spec["nodeSelector"] = node_selector
    out: dict[str, Any] = {"template": {"metadata": {"annotations": annotations or {}}, "spec": pod_spec}}
    if name is not None:
        out["name"] = name
    if replicas is not None:
        out["replicas"] = replicas
    if min_available is not None:
        out["minAvailable"] = min_available
    return out


def vcjob(*tasks: dict[str, Any], min_available: int | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"schedulerName": "volcano", "tasks": list(tasks)}
    if min_available is not None:
        body["minAvailable"] = min_available
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "train", "namespace": "ml"},
            "spec": body}


def what_if(job: dict[str, Any], *objects: dict[str, Any], conf: dict[str, Any] | None = None,
            version: Version | None = None) -> WhyReport:
    snap = build_snapshot([conf if conf is not None else scheduler(), device_config({"nvidia": NVIDIA}), *objects])
    first = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "first", "namespace": "ml"},
             "spec": job["spec"]["tasks"][0]["template"]["spec"]}
    report = explain_what_if(job, first, snap, namespace="ml", volcano_version=version)
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(json.dumps(report.to_dict())))
    return report


def master(cpu: str = "2") -> dict[str, Any]:
    return task("master", 1, requests={"cpu": cpu, "memory": "4Gi"}, limits={"cpu": cpu, "memory": "4Gi"})


def workers(replicas: int = 4, cpu: str | None = None, **kwargs: Any) -> dict[str, Any]:
    limits = dict(WHOLE_GPU, **({"cpu": cpu} if cpu else {}))
    return task("worker", replicas, limits=limits, **kwargs)


# ---- the example ------------------------------------------------------------------------------------------

def test_a_cpu_master_first_and_four_whole_gpu_workers_on_too_few_gpus_is_stopped_by_the_workers() -> None:
    """Once answered as the master pod alone ("asks for no device", exit 0): now the whole Job, stopped by its
    worker task, whose third replica finds both GPUs taken."""
    report = what_if(vcjob(master(), workers(4)), gpu_node("n1"), gpu_node("n2"))
    assert report.pod == "ml/train-master-0" and [f.value for f in report.families] == ["vgpu"]  # the Job's
    assert report.verdict == "no-fit" and not report.schedulable
    gang = report.gang
    assert gang is not None and gang.min_available == 5 and gang.task_minimums
    assert [(r.task, p.node) for r, p in gang.placed] == [("master", "n1"), ("worker", "n1"), ("worker", "n2")]
    stop = gang.stop
    assert stop is not None and stop.task == "worker" and stop.rule == GANG_RULE_TASK_MIN
    assert stop.replica == "ml/train-worker-2"
    assert stop.message.startswith("task worker: 2 of its 4 replicas fit, its minAvailable is 4")
    assert [g.reason for g in stop.unfit] == [Reason.INSUFFICIENT_MEMORY] and stop.unfit[0].nodes == ("n1", "n2")
    data = report.to_dict()["gang"]
    assert data["stoppedBy"]["task"] == "worker" and data["stoppedBy"]["reason"] == "insufficient-memory"
    assert [(t["name"], t["minAvailable"], t["fitAtOnce"], t["families"]) for t in data["tasks"]] == \
        [("master", 1, 1, []), ("worker", 4, 2, ["vgpu"])]


def test_the_same_job_on_enough_gpus_places_every_task() -> None:
    report = what_if(vcjob(master(), workers(4)), gpu_node("n1", 2), gpu_node("n2", 2))
    gang = report.gang
    assert gang is not None and gang.starts and gang.stop is None and report.schedulable
    assert [r.name for r, _ in gang.placed] == ["ml/train-master-0", "ml/train-worker-0", "ml/train-worker-1",
                                                "ml/train-worker-2", "ml/train-worker-3"]
    assert all(p.devices for r, p in gang.placed if r.task == "worker")
    assert len({p.devices[0].id for r, p in gang.placed if r.task == "worker"}) == 4  # each its own whole GPU
    assert report.to_dict()["gang"]["stoppedBy"] is None


# ---- tasks that ask for no device still take the node ---------------------------------------------------------------

def test_a_cpu_only_task_can_stop_the_gang() -> None:
    report = what_if(vcjob(master(cpu="100"), workers(2)), gpu_node("n1", 2), gpu_node("n2", 2))
    stop = report.gang.stop if report.gang else None
    assert stop is not None and stop.task == "master" and stop.replica == "ml/train-master-0"
    assert [g.reason for g in stop.unfit] == [Reason.INSUFFICIENT_RESOURCE]
    assert "Insufficient cpu: the pod requests 100; the node has 64 allocatable" in stop.unfit[0].message
    assert report.gang.first_failure is not None and report.gang.first_failure.task == "master"
    assert report.verdict == "no-fit"


def test_the_master_takes_cpu_on_the_node_the_workers_need() -> None:
    """One node: the master's 40 cpu and the first worker's 16 leave 8, short of the second worker's 16."""
    report = what_if(vcjob(master(cpu="40"), workers(2, cpu="16")), gpu_node("n1", 2))
    gang = report.gang
    assert gang is not None and [r.name for r, _ in gang.placed] == ["ml/train-master-0", "ml/train-worker-0"]
    assert gang.stop is not None and gang.stop.task == "worker" and gang.stop.replica == "ml/train-worker-1"
    assert "Insufficient cpu: the pod requests 16; the node has 64 allocatable, 8 idle (56 requested by its pods)" \
        in gang.stop.unfit[0].message


# ---- minAvailable and the tasks' minAvailable (job_info.go CheckTaskReady) -------------------------------------------

def test_each_task_minimum_counts_where_the_job_minimum_covers_their_sum() -> None:
    """minAvailable 3 ≥ 1 + 2: three replicas fit, but only one of task b's two — the gang is not ready."""
    job = vcjob(task("a", 2, limits=WHOLE_GPU, min_available=1), task("b", 2, limits=WHOLE_GPU, min_available=2),
                min_available=3)
    report = what_if(job, gpu_node("n1", 3))
    gang = report.gang
    assert gang is not None and gang.fit == 3 and gang.task_minimums and not gang.starts
    assert [r.name for r, _ in gang.placed] == ["ml/train-a-0", "ml/train-b-0", "ml/train-a-1"]
    assert gang.stop is not None and (gang.stop.task, gang.stop.rule) == ("b", GANG_RULE_TASK_MIN)
    assert gang.stop.message.startswith("task b: 1 of its 2 replicas fit, its minAvailable is 2")


def test_task_minimums_are_ignored_where_the_job_minimum_is_below_their_sum() -> None:
    """minAvailable 3 < 2 + 2 (each task's replicas): any three replicas start the gang."""
    report = what_if(vcjob(task("a", 2, limits=WHOLE_GPU), task("b", 2, limits=WHOLE_GPU), min_available=3),
                     gpu_node("n1", 3))
    gang = report.gang
    assert gang is not None and gang.task_minimums is False and gang.starts and gang.stop is None
    assert report.to_dict()["gang"]["taskMinimums"] is False


def test_allocate_stops_when_the_tasks_left_cannot_reach_the_job_minimum() -> None:
    """`NeedContinueAllocating` below the task minimums' sum: task a fits nowhere; b's two replicas cannot make 3."""
    huge = {"volcano.sh/vgpu-number": "1", "cpu": "1000"}
    report = what_if(vcjob(task("a", 2, limits=huge), task("b", 2, limits=WHOLE_GPU), min_available=3),
                     gpu_node("n1", 3))
    gang = report.gang
    assert gang is not None and not gang.starts
    assert gang.stop is not None and (gang.stop.task, gang.stop.rule) == ("a", GANG_RULE_JOB_MIN)
    assert "cannot reach minAvailable 3" in gang.stop.message
    assert gang.stop.unfit[0].reason is Reason.INSUFFICIENT_RESOURCE


def test_before_1_10_volcano_stops_at_the_first_pod_that_fits_nowhere() -> None:
    """Task big (minAvailable 0) fits nowhere and comes first. From 1.10 allocate goes on (big's minimum is met) and
    the two small replicas start the gang; before, `allocate.go` breaks out and the Job waits. (The small ones ask for
    a cpu too: before 1.13 Volcano leaves the vGPU names out of a pod's resources, so a pod asking for nothing else is
    best-effort there, which the next test is about.)"""
    huge = {"volcano.sh/vgpu-number": "1", "cpu": "1000"}
    small = {"volcano.sh/vgpu-number": "1", "cpu": "1"}
    job = vcjob(task("big", 1, limits=huge, min_available=0), task("small", 2, limits=small), min_available=2)
    newest = what_if(job, gpu_node("n1", 2))
    assert newest.gang is not None and newest.gang.starts and newest.schedulable
    old = what_if(job, gpu_node("n1", 2), version=Version(1, 9, 0))
    assert old.gang is not None and not old.gang.starts and old.verdict == "no-fit"
    assert old.gang.stop is not None and (old.gang.stop.task, old.gang.stop.rule) == ("big", GANG_RULE_FIRST_FAILURE)


# ---- the order: priority plugin, then index under the task, then creation ----------------------------------------

def test_task_priority_annotation_and_priority_classes_order_the_tasks() -> None:
    running = {"kind": "Pod", "metadata": {"name": "other", "namespace": "ml"},
               "spec": {"priorityClassName": "high", "priority": 1000, "nodeName": "n9", "containers": []},
               "status": {"phase": "Running"}}
    job = vcjob(task("a", 1, limits=WHOLE_GPU), task("b", 1, limits=WHOLE_GPU, priority_class="high"),
                task("c", 1, limits=WHOLE_GPU, annotations={"volcano.sh/task-priority": "5"}),
                task("d", 1, limits=WHOLE_GPU, priority_class="nobody-uses-it"))
    report = what_if(job, gpu_node("n1", 4), running)
    gang = report.gang
    assert gang is not None and [r.task for r, _ in gang.placed] == ["b", "c", "a", "d"]
    assert [t.priority for t in gang.tasks] == [0, 1000, 5, 0]
    assert any("nobody-uses-it" in n and "counts as 0" in n for n in report.notes)
    # Without the priority plugin, `TaskOrderFn` falls back to `CompareTask`: index, then creation (task order).
    plain = what_if(job, gpu_node("n1", 4), running,
                    conf=scheduler([{"name": "gang"}, {"name": "predicates"}, {"name": "deviceshare",
                                                                             "arguments": VGPU}]))
    assert plain.gang is not None and [r.task for r, _ in plain.gang.placed] == ["a", "b", "c", "d"]


def test_replicas_of_different_tasks_interleave_by_index() -> None:
    workload = workload_of(vcjob(task("ps", 2, limits=WHOLE_GPU), task("worker", 3, limits=WHOLE_GPU)), "ml")
    assert workload is not None
    assert [r.name for r in workload.replicas] == ["ml/train-ps-0", "ml/train-worker-0", "ml/train-ps-1",
                                                   "ml/train-worker-1", "ml/train-worker-2"]


# ---- best-effort pods: counted by the gang while Pending, placed by backfill ----------------------------------------

def test_a_launcher_that_requests_nothing_is_counted_and_placed_by_backfill() -> None:
    job = vcjob(task("launcher", 1), task("worker", 2, limits=WHOLE_GPU))
    report = what_if(job, gpu_node("n1", 2))
    gang = report.gang
    assert gang is not None and gang.starts
    assert [r.task for r, _ in gang.placed] == ["worker", "worker", "launcher"]  # allocate first, then backfill
    assert [t.best_effort for t in gang.tasks] == [True, False]
    no_backfill = what_if(job, gpu_node("n1", 2), conf=scheduler(actions="enqueue, allocate"))
    stop = no_backfill.gang.stop if no_backfill.gang else None
    assert stop is not None and (stop.task, stop.rule) == ("launcher", GANG_RULE_BACKFILL)
    assert "no backfill action" in stop.message and no_backfill.verdict == "no-fit"


def test_before_1_13_a_pod_asking_only_for_vgpu_names_is_best_effort() -> None:
    """`NewResource` skips the vGPU names before 1.13 (`IgnoredDevicesList`): `Resreq.IsEmpty()`, so allocate skips
    such a pod, the gang counts it while Pending and backfill places it, through the same device filters."""
    report = what_if(vcjob(master(), workers(2)), gpu_node("n1", 2), version=Version(1, 12, 0))
    gang = report.gang
    assert gang is not None and gang.starts and [t.best_effort for t in gang.tasks] == [False, True]
    assert [r.task for r, _ in gang.placed] == ["master", "worker", "worker"]
    assert all(p.devices for r, p in gang.placed if r.task == "worker")


def test_a_launcher_backfill_cannot_place_stops_the_job() -> None:
    job = vcjob(task("launcher", 1, node_selector={"zone": "nowhere"}), task("worker", 2, limits=WHOLE_GPU))
    report = what_if(job, gpu_node("n1", 2))
    stop = report.gang.stop if report.gang else None
    assert stop is not None and (stop.task, stop.rule) == ("launcher", GANG_RULE_BACKFILL)
    assert [g.reason for g in stop.unfit] == [Reason.NODE_SELECTOR]


# ---- the Job as the controller reads it ------------------------------------------------------------------------------

def test_an_unnamed_task_is_default_position_and_absent_replicas_are_none() -> None:
    """`mutateSpec` names an unnamed task `default<i>`; `syncJob` creates `ts.Replicas` pods (absent: 0)."""
    workload = workload_of(vcjob(task(None, 2, limits=WHOLE_GPU), task("idle", None, limits=WHOLE_GPU)), "ml")
    assert workload is not None
    assert [r.name for r in workload.replicas] == ["ml/train-default0-0", "ml/train-default0-1"]
    assert [(t.name, t.replicas, t.min_available) for t in workload.tasks] == [("default0", 2, 2), ("idle", 0, 0)]
    assert workload.min_available == 2


def test_a_job_no_task_of_which_asks_for_a_device_is_answered_as_before() -> None:
    report = what_if(vcjob(master(), master()), gpu_node("n1"))
    assert report.gang is None and report.verdict == "no-device-request" and report.schedulable


def test_the_gang_what_if_notes_tasks_with_dependencies() -> None:
    job = vcjob(master(), {**workers(1), "dependsOn": {"name": ["master"]}})
    report = what_if(job, gpu_node("n1"))
    assert report.gang is not None and report.gang.starts
    assert any("task worker has dependsOn" in n for n in report.notes)


# ---- the house: no import circle between the report's vocabulary and the gang replay (issue 27) ------------------

def test_the_why_model_imports_nothing_of_the_gang_replay() -> None:
    """Type-checking imports included (lint-imports leaves them out): `model` needs nothing of `gang`."""
    import grimp

    graph = grimp.build_graph("vgpuctl", exclude_type_checking_imports=False)
    assert not graph.chain_exists(importer="vgpuctl.core.why.model", imported="vgpuctl.core.why.gang")
    assert not graph.chain_exists(importer="vgpuctl.core.why.model", imported="vgpuctl.core.why.simulate")


# ---- property: the answer is the gang rule, and older Volcanos never start what newer ones do not ------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402


@st.composite
def jobs(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    tasks = []
    for i in range(draw(st.integers(2, 3))):
        replicas = draw(st.integers(1, 3))
        limits = {"cpu": str(draw(st.sampled_from([1, 8, 24, 40])))}
        if draw(st.booleans()):
            limits["volcano.sh/vgpu-number"] = "1"
            if draw(st.booleans()):
                limits["volcano.sh/vgpu-memory"] = str(draw(st.sampled_from([8192, 20480, 40960])))
        own = draw(st.one_of(st.none(), st.integers(0, replicas)))
        tasks.append(task(f"t{i}", replicas, limits=limits, min_available=own))
    total = sum(t["replicas"] for t in tasks)
    job = vcjob(*tasks, min_available=draw(st.one_of(st.none(), st.integers(1, total))))
    nodes = [gpu_node(f"n{k}", draw(st.integers(1, 2)), cpu=str(draw(st.sampled_from([16, 64]))))
             for k in range(draw(st.integers(1, 2)))]
    return job, nodes


@given(jobs())
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_a_gang_starts_only_with_every_minimum_placed(case: tuple[dict[str, Any], list[dict[str, Any]]]) -> None:
    job, nodes = case
    newest = what_if(job, *nodes)
    old = what_if(job, *nodes, version=Version(1, 9, 0))
    for report in (newest, old):
        gang = report.gang
        if gang is None:  # no task asks for a device
            assert report.verdict == "no-device-request"
            continue
        placed = {t.name: gang.fit_of(t.name) for t in gang.tasks}
        if gang.starts:
            assert sum(placed.values()) >= gang.min_available and gang.stop is None
            assert not gang.task_minimums or all(placed[t.name] >= t.min_available for t in gang.tasks)
        else:
            assert gang.stop is not None and gang.stop.task in placed and report.verdict == "no-fit"
            assert gang.stop.replica is None or gang.stop.replica in {r.name for r in gang.failed}
        assert gang.fit + len(gang.failed) == gang.replicas
    if old.gang is not None and old.gang.starts:  # before 1.10 allocate only gives up sooner
        assert newest.gang is not None and newest.gang.starts
