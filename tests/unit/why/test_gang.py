"""Gang what-if (issue 16 §2): a workload's replicas placed one by one, each booking what it takes.

Upstream evidence (volcano-sh/volcano, master at ed72c7c81):
- task order: `Session.TaskOrderFn` (`pkg/scheduler/framework/session_plugins.go`) asks the plugins' task
  order (the priority plugin: higher priority first, `pkg/scheduler/plugins/priority/priority.go`), then
  falls back to `CompareTask` (`pkg/controllers/job/helpers/helpers.go`): pod index under the task, then
  creation time, then UID;
- a Volcano Job's gang size is its `minAvailable` (the Job webhook defaults it to the sum of the task
  replicas); pods of a Deployment/StatefulSet get a PodGroup of one member from the PodGroup controller;
- node choice: the deviceshare score (`GPUScore` in `pkg/scheduler/api/devices/nvidia/vgpu/utils.go`:
  binpack 100 × used/total memory, spread 100 for an idle device); the what-if breaks ties by node name.
"""

from __future__ import annotations

import json
from typing import Any

from tests.unit.why.builders import cluster, gpu, pod, vgpu_node
from tests.unit.why.test_other_families import CONFIG, MIND, SHARE, mind_pod, share_node
from vgpuctl.core.why.gang import workload_of
from vgpuctl.core.why.model import Reason
from vgpuctl.core.why.whatif import explain_what_if

U0, U1 = (f"GPU-{i}{i}{i}{i}{i}{i}{i}{i}-0000-0000-0000-000000000000" for i in range(2))


def vcjob(tasks: list[dict[str, Any]], min_available: int | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"schedulerName": "volcano", "tasks": tasks}
    if min_available is not None:
        body["minAvailable"] = min_available
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "train", "namespace": "ml"},
            "spec": body}


def task(name: str, replicas: int, limits: dict[str, str], priority: int | None = None,
         labels: dict[str, str] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [{"name": "c", "resources": {"limits": limits}}]}
    if priority is not None:
        spec["priority"] = priority
    return {"name": name, "replicas": replicas, "template": {"metadata": {"labels": labels or {}}, "spec": spec}}


def deployment(replicas: int, limits: dict[str, str]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "namespace": "ml"},
            "spec": {"replicas": replicas, "template": {"metadata": {}, "spec": {
                "schedulerName": "volcano", "containers": [{"name": "c", "resources": {"limits": limits}}]}}}}


def what_if(obj: dict[str, Any], *objects: dict[str, Any], **kwargs: Any) -> Any:
    snapshot, _ = cluster(*objects, **kwargs)
    workload = workload_of(obj, "ml")
    first = workload.replicas[0].pod if workload is not None else obj
    return explain_what_if(obj, first, snapshot, namespace="ml")


GPU30G = {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "30000"}


def test_replica_order_priority_then_index_then_task_position() -> None:
    job = vcjob([task("ps", 1, GPU30G), task("worker", 2, GPU30G, priority=10), task("eval", 2, GPU30G)])
    workload = workload_of(job, "ml")
    assert workload is not None
    assert [r.name for r in workload.replicas] == ["ml/train-worker-0", "ml/train-worker-1", "ml/train-ps-0",
                                                   "ml/train-eval-0", "ml/train-eval-1"]
    assert workload.min_available == 5  # no minAvailable: the sum of the task replicas
    assert workload.replicas[0].pod["spec"]["schedulerName"] == "volcano"


def test_each_placement_consumes_memory_and_the_gang_never_starts() -> None:
    report = what_if(vcjob([task("worker", 3, GPU30G)]), vgpu_node("n1", gpu(U0), gpu(U1)))
    gang = report.gang
    assert gang is not None and gang.fit == 2 and gang.min_available == 3 and not gang.starts
    assert [p.devices[0].id for _, p in gang.placed] == [U1, U0]  # descending index, each GPU once
    assert gang.first_failure is not None and gang.first_failure.name == "ml/train-worker-2"
    # The two placed replicas requested 60000 of the node's 81920 volcano.sh/vgpu-memory: the allocate action's
    # resource check refuses the third before the device filter, which would refuse it too.
    assert [g.reason for g in gang.first_failure_unfit] == [Reason.INSUFFICIENT_RESOURCE]
    assert "Insufficient volcano.sh/vgpu-memory: the pod requests 30000; the node has 81920 allocatable, 21920 idle " \
           "(60000 requested by its pods)" in gang.first_failure_unfit[0].message
    assert "(insufficient-memory: GPU 1: free memory 10960 MiB < 30000 MiB" in gang.first_failure_unfit[0].message
    assert not report.schedulable and report.verdict == "no-fit"
    data = report.to_dict()["gang"]
    assert (data["fitAtOnce"], data["starts"], data["unplaced"]) == (2, False, ["ml/train-worker-2"])
    json.dumps(data)


def test_a_smaller_min_available_lets_the_gang_start() -> None:
    report = what_if(vcjob([task("worker", 3, GPU30G)], min_available=2), vgpu_node("n1", gpu(U0), gpu(U1)))
    assert report.gang is not None and report.gang.starts and report.schedulable


def test_cores_and_slots_are_consumed_too() -> None:
    cores = {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "1000", "volcano.sh/vgpu-cores": "60"}
    gang = what_if(deployment(2, cores), vgpu_node("n1", gpu(U0))).gang
    assert gang.fit == 1 and gang.min_available == 1 and gang.starts
    assert gang.first_failure_unfit[0].reason is Reason.INSUFFICIENT_RESOURCE  # 60 + 60 of the node's 100 vgpu-cores
    assert "(insufficient-cores:" in gang.first_failure_unfit[0].message
    slots = {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "1000"}
    gang = what_if(deployment(3, slots), vgpu_node("n1", gpu(U0, split=2))).gang
    assert gang.fit == 2 and gang.first_failure_unfit[0].reason is Reason.SLOTS_EXHAUSTED


def test_binpack_fills_the_busiest_node_spread_the_idle_one() -> None:
    nodes = [vgpu_node("a", gpu(U0)), vgpu_node("b", gpu(U1))]
    small = {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "1000"}
    for policy, expected in (("binpack", ["a", "a"]), ("spread", ["a", "b"])):
        gang = what_if(deployment(2, small), *nodes,
                       args={"deviceshare.VGPUEnable": True, "deviceshare.SchedulePolicy": policy}).gang
        assert [p.node for _, p in gang.placed] == expected, policy


def test_gpushare_cards_are_consumed() -> None:
    gang = what_if(deployment(3, {"volcano.sh/gpu-memory": "10000"}), share_node(), args=SHARE, config=CONFIG).gang
    assert [p.devices[0].id for _, p in gang.placed] == ["0", "1"] and gang.fit == 2


def test_mindcluster_chips_are_consumed() -> None:
    from tests.unit.why.test_other_families import mind_node

    template = mind_pod(4)
    job = vcjob([{"name": "infer", "replicas": 3, "template": {"metadata": template["metadata"],
                                                               "spec": template["spec"]}}])
    gang = what_if(job, mind_node(), args=MIND, config=CONFIG).gang
    assert gang.fit == 2 and [p.devices[0].template for _, p in gang.placed] == ["vir04_3c", "vir04_3c"]
    assert gang.first_failure_unfit[0].reason is Reason.INSUFFICIENT_RESOURCE  # 4 + 4 of the node's 8 npu-core
    assert "(insufficient-cores:" in gang.first_failure_unfit[0].message


def test_a_rejected_workload_is_not_simulated() -> None:
    report = what_if(deployment(2, {"volcano.sh/vgpu-number": "-1"}), vgpu_node("n1", gpu(U0)))
    assert report.verdict == "rejected" and report.gang is None


def test_a_plain_pod_has_no_gang() -> None:
    target = pod("p", GPU30G)
    assert what_if(target, vgpu_node("n1", gpu(U0))).gang is None


# ---- property: a gang never over-books a device ----------------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from tests.unit.why.test_hints_replay import vgpu_cluster  # noqa: E402


@given(vgpu_cluster(), st.integers(1, 6))
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_placements_of_a_gang_never_over_book_a_gpu(case: tuple[list[dict[str, Any]], dict[str, Any],
                                                                     dict[str, Any]], replicas: int) -> None:
    """What the replicas book, added to what the cluster already uses, stays within every GPU's memory,
    cores and split count: each placement saw the ones before it."""
    objects, target, args = case
    limits = target["spec"]["containers"][0]["resources"]["limits"]
    snapshot, _ = cluster(*objects, args=args)
    report = what_if(deployment(replicas, limits), *objects, args=args)
    if report.gang is None:
        assert report.verdict == "rejected"
        return
    devices = {d.id: d for n in snapshot.nodes for d in n.devices}
    memory = {k: d.memory_used for k, d in devices.items()}
    cores = {k: d.cores_used for k, d in devices.items()}
    slots = {k: d.slots_used for k, d in devices.items()}
    for _, placement in report.gang.placed:
        for choice in placement.devices:
            memory[choice.id] += choice.memory or 0
            cores[choice.id] += choice.cores or 0
            slots[choice.id] += 1
    touched = {c.id for _, p in report.gang.placed for c in p.devices}
    for key in touched:  # (the generated cluster may already over-book a GPU the gang does not touch)
        device = devices[key]
        assert memory[key] <= device.memory_total and cores[key] <= 100 and slots[key] <= device.slots_total
    assert report.gang.fit + len(report.gang.failed) == replicas


def test_min_member_comes_from_the_group_min_member_annotation_and_task_min_available() -> None:
    """`getMinMemberFromUpperRes` (pkg/controllers/podgroup/pg_controller_handler.go) reads the owner's
    `scheduling.volcano.sh/group-min-member`; `patchDefaultMinAvailable` (pkg/webhooks/admission/jobs/mutate/
    mutate_job.go) sums each task's minAvailable, else its replicas."""
    gang = deployment(3, GPU30G)
    gang["metadata"]["annotations"] = {"scheduling.volcano.sh/group-min-member": "3"}
    report = what_if(gang, vgpu_node("n1", gpu(U0), gpu(U1)))
    assert report.gang.min_available == 3 and report.gang.fit == 2 and not report.schedulable
    gang["metadata"]["annotations"] = {"scheduling.volcano.sh/group-min-member": "-2"}
    assert workload_of(gang, "ml").min_available == 1
    job = vcjob([{**task("ps", 1, GPU30G), "minAvailable": 0}, {**task("worker", 4, GPU30G), "minAvailable": 2}])
    assert workload_of(job, "ml").min_available == 2
