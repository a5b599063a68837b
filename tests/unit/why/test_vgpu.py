"""The vGPU filter replay, branch by branch (docs/vgpu.md#vgpu-filter … docs/vgpu.md#vgpu-podgroup-spread,
docs/vgpu.md#vgpu-device-order, docs/vgpu.md#vgpu-exclusive-rules), on real node/pod objects."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from tests.unit.why.builders import A100, NVIDIA, cluster, gpu, pod, vgpu_node, vgpu_pod
from vgpuctl.core.why.model import NodeVerdict, Reason
from vgpuctl.core.why.request import parse_pod
from vgpuctl.core.why.simulate import explain, simulate_node

U0, U1, U2 = (f"GPU-{i}{i}{i}{i}{i}{i}{i}{i}-0000-0000-0000-000000000000" for i in range(3))


def run(target: dict[str, Any], *objects: dict[str, Any], node: str = "n1", **kwargs: Any) -> NodeVerdict:
    snapshot, env = cluster(*objects, **kwargs)
    found = snapshot.node(node)
    assert found is not None
    return simulate_node(parse_pod(target, env), found, env)


def used(name: str, node: str, ids: str, **kwargs: Any) -> dict[str, Any]:
    """A running pod holding `ids` (volcano.sh/vgpu-ids-new) on `node`."""
    annotations = {"volcano.sh/vgpu-ids-new": ids, **kwargs.pop("annotations", {})}
    return vgpu_pod(name, node=node, phase="Running", annotations=annotations, **kwargs)


def test_fit_on_an_idle_gpu_books_memory_and_cores() -> None:
    verdict = run(vgpu_pod("p", memory=8000, cores=30), vgpu_node("n1", gpu(U0)))
    assert verdict.fits and [(d.id, d.memory, d.cores, d.slice) for d in verdict.devices] == [(U0, 8000, 30, None)]


@pytest.mark.parametrize(("policy", "expected"), [("binpack", U0), ("spread", U1), ("", U1), ("Binpack", U1)])
def test_device_order_by_policy(policy: str, expected: str) -> None:
    """binpack: most used memory first; spread: fewest tasks first; anything else: descending index."""
    verdict = run(vgpu_pod("p", memory=1000), vgpu_node("n1", gpu(U0), gpu(U1)),
                  used("busy", "n1", f"{U0},NVIDIA,20480,0:"),
                  args={"deviceshare.VGPUEnable": True, "deviceshare.SchedulePolicy": policy})
    assert verdict.fits and verdict.devices[0].id == expected


def test_spread_prefers_fewest_tasks_not_least_memory() -> None:
    objects = [vgpu_node("n1", gpu(U0), gpu(U1)), used("a", "n1", f"{U0},NVIDIA,100,0:"),
               used("b", "n1", f"{U1},NVIDIA,30000,0:"), used("c", "n1", f"{U0},NVIDIA,100,0:")]
    verdict = run(vgpu_pod("p", memory=1000), *objects, args={"deviceshare.VGPUEnable": True,
                                                               "deviceshare.SchedulePolicy": "spread"})
    assert verdict.devices[0].id == U1


def test_insufficient_memory_names_the_device_closest_to_fitting() -> None:
    objects = [vgpu_node("n1", gpu(U0), gpu(U1)), used("a", "n1", f"{U0},NVIDIA,32768,0:"),
               used("b", "n1", f"{U1},NVIDIA,28672,0:")]
    verdict = run(vgpu_pod("p", memory=16384), *objects)
    assert not verdict.fits and verdict.reason is Reason.INSUFFICIENT_MEMORY
    assert verdict.message == "GPU 1: free memory 12288 MiB < 16384 MiB"
    snapshot, env = cluster(*objects)
    report = explain(vgpu_pod("p", memory=16384), snapshot.nodes, env)  # the number comes from a replay
    assert [(e.key, e.value) for e in report.suggestions[0].edits] == [("volcano.sh/vgpu-memory", "12288")]


def test_no_memory_request_asks_for_the_whole_card() -> None:
    verdict = run(vgpu_pod("p"), vgpu_node("n1", gpu(U0)), used("a", "n1", f"{U0},NVIDIA,1,0:"))
    assert verdict.reason is Reason.INSUFFICIENT_MEMORY and "40959 MiB < 40960 MiB" in verdict.message


def test_unit_suffix_reads_as_bytes_and_never_fits() -> None:
    """3Gi is 3221225472: the allocate action's resource check refuses it first (the node advertises 40960 of
    volcano.sh/vgpu-memory), and the device filter would too."""
    verdict = run(vgpu_pod("p", memory="3Gi"), vgpu_node("n1", gpu(U0)))  # type: ignore[arg-type]
    assert verdict.reason is Reason.INSUFFICIENT_RESOURCE and "Insufficient volcano.sh/vgpu-memory" in verdict.message
    assert "devices would not fit either (insufficient-memory" in verdict.message


@pytest.mark.parametrize(("held", "cores", "reason", "text"), [
    (80, 30, Reason.INSUFFICIENT_CORES, "free cores 20 < 30"),
    (10, 100, Reason.INSUFFICIENT_CORES, "free cores 90 < 100"),  # the core sum is checked first
    (0, 100, Reason.EXCLUSIVE_IN_USE, "vgpu-cores 100 wants the GPU to itself, but 1 task(s)"),
    (100, None, Reason.INSUFFICIENT_CORES, "cores fully used"),
    (40, None, None, ""),
])
def test_cores_and_exclusivity(held: int, cores: int | None, reason: Reason | None, text: str) -> None:
    objects = [vgpu_node("n1", gpu(U0)), used("a", "n1", f"{U0},NVIDIA,1000,{held}:")]
    verdict = run(vgpu_pod("p", memory=1000, cores=cores), *objects)
    assert verdict.reason is reason and text in verdict.message
    if reason is None:
        assert verdict.fits


def test_exclusive_cores_on_an_idle_gpu_fits() -> None:
    assert run(vgpu_pod("p", memory=1000, cores=100), vgpu_node("n1", gpu(U0))).fits


def test_split_count_exhausted() -> None:
    objects = [vgpu_node("n1", gpu(U0, split=1)), used("a", "n1", f"{U0},NVIDIA,1000,0:")]
    verdict = run(vgpu_pod("p", memory=1000), *objects)
    assert verdict.reason is Reason.SLOTS_EXHAUSTED and verdict.message == "GPU 0: all 1 slots in use"


@pytest.mark.parametrize(("annotations", "fits"), [
    ({"nvidia.com/use-gputype": "a100"}, True),
    ({"nvidia.com/use-gputype": "H100,V100"}, False),
    ({"nvidia.com/nouse-gputype": "A100"}, False),
    ({"nvidia.com/nouse-gputype": "H100,T4"}, True),
    ({"nvidia.com/use-gputype": "A100", "nvidia.com/nouse-gputype": "A100"}, True),  # use wins, nouse ignored
])
def test_use_and_nouse_gputype(annotations: dict[str, str], fits: bool) -> None:
    verdict = run(vgpu_pod("p", memory=1000, annotations=annotations), vgpu_node("n1", gpu(U0)))
    assert verdict.fits is fits
    if not fits:
        assert verdict.reason is Reason.TYPE_EXCLUDED and "A100-PCIE-40GB" in verdict.message


def test_gpu_uuid_filters() -> None:
    node = vgpu_node("n1", gpu(U0), gpu(U1))
    verdict = run(vgpu_pod("p", memory=1000, annotations={"volcano.sh/vgpu-use-gpuuuid": f" {U0} "}), node)
    assert verdict.devices[0].id == U0
    verdict = run(vgpu_pod("p", memory=1000, annotations={"volcano.sh/vgpu-nouse-gpuuuid": f"{U0},{U1}"}), node)
    assert verdict.reason is Reason.UUID_EXCLUDED
    verdict = run(vgpu_pod("p", memory=1000, annotations={"volcano.sh/vgpu-use-gpuuuid": U2}), node)
    assert verdict.reason is Reason.UUID_EXCLUDED and "no GPU on the node passes" in verdict.message


def test_too_many_gpus_and_multi_gpu_partial() -> None:
    verdict = run(vgpu_pod("p", count=3, memory=1000), vgpu_node("n1", gpu(U0), gpu(U1)))
    assert verdict.reason is Reason.TOO_MANY_DEVICES and "3 GPUs requested, node has 2" in verdict.message
    objects = [vgpu_node("n1", gpu(U0), gpu(U1)), used("a", "n1", f"{U0},NVIDIA,40000,0:")]
    verdict = run(vgpu_pod("p", count=2, memory=1000), *objects)
    assert verdict.reason is Reason.INSUFFICIENT_MEMORY and "found 1 of 2 GPUs" in verdict.message


def test_a_later_container_sees_the_earlier_containers_booking() -> None:
    containers = [{"name": c, "resources": {"limits": {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory":
                                                       "30000"}}} for c in ("a", "b")]
    verdict = run(pod("p", containers=containers), vgpu_node("n1", gpu(U0)))
    # The two requests (60000) exceed the node's volcano.sh/vgpu-memory (40960): the allocate action's resource
    # check refuses first; the device filter, replayed anyway, shows the second container's miss.
    assert verdict.reason is Reason.INSUFFICIENT_RESOURCE and "10960 MiB < 30000 MiB" in verdict.message
    two = vgpu_node("n1", gpu(U0), gpu(U1))
    two["status"]["allocatable"]["volcano.sh/vgpu-memory"] = "81920"  # what the device plugin advertises for two
    verdict = run(pod("p", containers=containers), two)
    assert verdict.fits and {d.id for d in verdict.devices} == {U0, U1}


@pytest.mark.parametrize(("annotations", "reason"), [
    ({"volcano.sh/vgpu-mode": "MIG"}, Reason.MODE_MISMATCH),
    ({"volcano.sh/vgpu-mode": "mig"}, Reason.MODE_MISMATCH),
    ({"volcano.sh/vgpu-mode": "hami-core"}, None),
])
def test_mode_check(annotations: dict[str, str], reason: Reason | None) -> None:
    verdict = run(vgpu_pod("p", memory=1000, annotations=annotations), vgpu_node("n1", gpu(U0)))
    assert verdict.reason is reason
    if reason is not None:
        assert "node mode is hami-core" in verdict.message


def test_not_a_device_node() -> None:
    plain = {"kind": "Node", "metadata": {"name": "n1"}, "status": {}}
    assert run(vgpu_pod("p", memory=1), plain).reason is Reason.NOT_DEVICE_NODE
    # A CPU node: Volcano's allocate action finds the vGPU resources missing before any device filter runs.
    cpu = {"kind": "Node", "metadata": {"name": "n1"}, "status": {"allocatable": {"cpu": "8", "pods": "110"}}}
    verdict = run(vgpu_pod("p", memory=1), cpu)
    assert verdict.reason is Reason.INSUFFICIENT_RESOURCE and "the node does not advertise it" in verdict.message
    assert "(not-device-node:" in verdict.message
    zero = vgpu_node("n1", gpu(U0))
    zero["status"]["allocatable"]["volcano.sh/vgpu-memory"] = "0"
    verdict = run(vgpu_pod("p"), zero)  # no memory asked: the allocate action's check passes
    assert verdict.reason is Reason.NOT_DEVICE_NODE and "vgpu-memory is missing or 0" in verdict.message
    five = vgpu_node("n1", f"{U0},10,40960,{A100},true:")
    assert "5 fields" in run(vgpu_pod("p", memory=1), five).message
    off = run(vgpu_pod("p", memory=1), vgpu_node("n1", gpu(U0)), args={"deviceshare.GPUSharingEnable": True})
    assert off.reason is Reason.NOT_DEVICE_NODE and "VGPUEnable is off" in off.message


def test_podgroup_spread_keeps_group_members_apart() -> None:
    group = {"scheduling.k8s.io/group-name": "job-a"}
    spread = {**group, "volcano.sh/vgpu-podgroup-policy": "spread"}
    sibling = used("w0", "n1", f"{U1},NVIDIA,1000,0:", annotations=group)
    verdict = run(vgpu_pod("w1", memory=1000, annotations=spread), vgpu_node("n1", gpu(U0), gpu(U1)), sibling)
    assert verdict.devices[0].id == U0  # U1 would come first (descending index) but holds a sibling
    verdict = run(vgpu_pod("w1", memory=1000, annotations=spread), vgpu_node("n1", gpu(U1)), sibling)
    assert verdict.reason is Reason.PODGROUP_SPREAD and "ml/w0" in verdict.message
    other = used("x", "n1", f"{U1},NVIDIA,1000,0:", annotations={"scheduling.k8s.io/group-name": "job-b"})
    assert run(vgpu_pod("w1", memory=1000, annotations=spread), vgpu_node("n1", gpu(U1)), other).fits


def test_gpu_exclusive_rules() -> None:
    args = {"deviceshare.VGPUEnable": True, "deviceshare.GPUExclusiveRules": [{"team": "a"}, {}]}
    holder = used("h", "n1", f"{U1},NVIDIA,1000,0:", labels={"team": "a"})
    verdict = run(vgpu_pod("p", memory=1000, labels={"team": "a"}), vgpu_node("n1", gpu(U1)), holder, args=args)
    assert verdict.reason is Reason.EXCLUSIVE_RULE and "ml/h" in verdict.message
    two = vgpu_node("n1", gpu(U0), gpu(U1))
    assert run(vgpu_pod("p", memory=1000, labels={"team": "a"}), two, holder, args=args).devices[0].id == U0
    assert run(vgpu_pod("p", memory=1000, labels={"team": "b"}), vgpu_node("n1", gpu(U1)), holder, args=args).fits


# ---- dynamic MIG (docs/vgpu.md#vgpu-mig) -------------------------------------------------------------------------

def mig_node(name: str = "n1") -> dict[str, Any]:
    return vgpu_node(name, gpu(U0, split=7, mode="mig"))


def booked(verdicts: list[NodeVerdict]) -> list[dict[str, Any]]:
    return [used(f"m{i}", "n1", f"{v.devices[0].id},NVIDIA,{v.devices[0].memory},0:") for i, v in enumerate(verdicts)]


def test_dynamic_mig_design_example() -> None:
    """docs/design/dynamic-mig.md: two 8000 MiB requests on an A100-40GB take group2's 2g.10gb twice and
    leave one 2g.10gb and one 1g.5gb; once a group is in use, only instance types in use are eligible."""
    first = run(vgpu_pod("a", memory=8000), mig_node())
    assert first.fits and first.devices[0].id == f"{U0}[group2-0]" and first.devices[0].slice == "2g.10gb"
    assert first.devices[0].memory == 10240
    second = run(vgpu_pod("b", memory=8000), mig_node(), *booked([first]))
    assert second.devices[0].id == f"{U0}[group2-1]" and second.devices[0].slice == "2g.10gb"
    # A 4000 MiB request cannot take the free 1g.5gb (not in use in group2): it gets the last 2g.10gb.
    third = run(vgpu_pod("c", memory=4000), mig_node(), *booked([first, second]))
    assert third.devices[0].id == f"{U0}[group2-2]" and third.devices[0].slice == "2g.10gb"
    fourth = run(vgpu_pod("d", memory=4000), mig_node(), *booked([first, second, third]))
    assert fourth.reason is Reason.NO_MIG_SLICE and "group2 is in use" in fourth.message


def test_mig_best_fit_in_first_group_and_no_instance_large_enough() -> None:
    small = run(vgpu_pod("a", memory=3000), mig_node())
    assert small.devices[0].id == f"{U0}[group1-0]" and small.devices[0].slice == "1g.5gb"
    big = run(vgpu_pod("a", memory=40000), mig_node())
    assert big.devices[0].slice == "7g.40gb"
    node = mig_node()
    node["metadata"]["annotations"]["volcano.sh/node-vgpu-register"] = gpu(U0, memory=50000, split=7, mode="mig")
    node["status"]["allocatable"]["volcano.sh/vgpu-memory"] = "50000"
    verdict = run(vgpu_pod("a", memory=45000), node)
    assert verdict.reason is Reason.NO_MIG_SLICE and "largest: 40960 MiB" in verdict.message


def test_mig_with_gpu_memory_factor() -> None:
    config = {"nvidia": {**NVIDIA, "gpuMemoryFactor": 2}}
    node = vgpu_node("n1", gpu(U0, memory=20480, split=7, mode="mig"))
    verdict = run(vgpu_pod("a", memory=4000), node, config=config)  # 4000 × 2 = 8000 MiB → 2g.10gb
    assert verdict.devices[0].slice == "2g.10gb" and verdict.devices[0].memory == 10240


def test_mig_device_without_a_known_model_runs_hami_core() -> None:
    node = vgpu_node("n1", gpu(U0, split=7, mode="mig", type_="NVIDIA-NVIDIA H100 80GB HBM3"))
    verdict = run(vgpu_pod("a", memory=1000, annotations={"volcano.sh/vgpu-mode": "mig"}), node)
    assert verdict.reason is Reason.MODE_MISMATCH and "node mode is hami-core" in verdict.message


# ---- across the cluster ----------------------------------------------------------------------------

def test_explain_groups_largest_first_and_orders_nodes_closest_first() -> None:
    objects: list[dict[str, Any]] = [vgpu_node(f"g{i}", gpu(f"GPU-{i:08d}-0000-0000-0000-000000000000"))
                                     for i in range(3)]
    objects += [used(f"u{i}", f"g{i}", f"GPU-{i:08d}-0000-0000-0000-000000000000,NVIDIA,{30000 + i * 1000},0:")
                for i in range(3)]
    objects.append(vgpu_node("mig", gpu(U2, split=7, mode="mig")))
    snapshot, env = cluster(*objects)
    report = explain(vgpu_pod("p", memory=16384, annotations={"volcano.sh/vgpu-mode": "hami-core"}),
                     snapshot.nodes, env)
    assert [(g.reason, g.count) for g in report.unfit] == [(Reason.INSUFFICIENT_MEMORY, 3), (Reason.MODE_MISMATCH, 1)]
    assert report.unfit[0].nodes == ("g0", "g1", "g2")
    assert report.unfit[0].message == "g0: GPU 0: free memory 10960 MiB < 16384 MiB"
    assert not report.fits and not report.schedulable and report.closest[0].node == "g0"
    ok = explain(vgpu_pod("p", memory=8000), snapshot.nodes, env)
    assert [p.node for p in ok.fits] == ["g0", "g1", "g2", "mig"] and ok.schedulable


def test_a_fresh_node_lock_blocks_the_allocation() -> None:
    now = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
    lock = {"hamivgpu": (now - timedelta(minutes=1)).strftime("%Y-%m-%dT%H:%M:%SZ")}
    snapshot, env = cluster(vgpu_node("n1", gpu(U0), annotations=lock),
                            args={"deviceshare.VGPUEnable": True, "deviceshare.NodeLockEnable": True})
    env.now = now
    node = snapshot.node("n1")
    assert node is not None
    verdict = simulate_node(parse_pod(vgpu_pod("p", memory=1), env), node, env)
    assert verdict.reason is Reason.NODE_LOCKED
    env.now = now + timedelta(minutes=10)
    assert simulate_node(parse_pod(vgpu_pod("p", memory=1), env), node, env).fits
