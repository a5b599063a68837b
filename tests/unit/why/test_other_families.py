"""gpushare / gpu-number (docs/vgpu.md#gpushare), Ascend HAMi (docs/ascend.md#ascend-hami-pod-request …
docs/ascend.md#ascend-hami-fit) and MindCluster 310P (docs/ascend.md#mindcluster-pod) filter replays."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.unit.why.builders import FAMILIES_CONFIG, cluster, pod, verdict_on
from vgpuctl.core.why.model import Reason
from vgpuctl.core.why.request import parse_pod

SHARE = {"deviceshare.GPUSharingEnable": True}
NUMBER = {"deviceshare.GPUNumberEnable": True}
HAMI = {"deviceshare.AscendHAMiVNPUEnable": True}
MIND = {"deviceshare.AscendMindClusterVNPUEnable": True}
CONFIG = FAMILIES_CONFIG

run = verdict_on


# ---- gpushare / gpu-number -------------------------------------------------------------------------

def share_node(cards: int = 2, memory: int = 32768, unhealthy: str | None = None) -> dict[str, Any]:
    annotations = {"volcano.sh/gpu-unhealthy-ids": unhealthy} if unhealthy else {}
    return {"kind": "Node", "metadata": {"name": "n1", "annotations": annotations},
            "status": {"capacity": {"volcano.sh/gpu-memory": str(memory), "volcano.sh/gpu-number": str(cards)}}}


def share_user(name: str, index: str, memory: int = 0, number: int = 0) -> dict[str, Any]:
    limits = {"volcano.sh/gpu-memory": str(memory)} if memory else {"volcano.sh/gpu-number": str(number)}
    return pod(name, limits, node="n1", phase="Running", annotations={"volcano.sh/gpu-index": index})


def test_gpushare_first_fit_by_index_and_whole_pod_on_one_card() -> None:
    # 16384 MiB per card; card 0 has 2384 free: first fit by index, not best fit.
    verdict = run(pod("p", {"volcano.sh/gpu-memory": "2000"}), share_node(), share_user("a", "0", 14000), args=SHARE)
    assert verdict.fits and verdict.devices[0].id == "0"
    containers = [{"name": c, "resources": {"limits": {"volcano.sh/gpu-memory": "5000"}}} for c in ("a", "b")]
    verdict = run(pod("p", containers=containers), share_node(), share_user("a", "0", 14000), args=SHARE)
    assert verdict.fits and verdict.devices[0].id == "1" and verdict.devices[0].memory == 10000
    verdict = run(pod("p", {"volcano.sh/gpu-memory": "16000"}), share_node(),
                  share_user("a", "0", 8000), share_user("b", "1", 4000), args=SHARE)
    assert verdict.reason is Reason.INSUFFICIENT_MEMORY and verdict.message.startswith("GPU 1: free memory 12384 MiB")


def test_unhealthy_cards_do_not_exist_for_volcano() -> None:
    verdict = run(pod("p", {"volcano.sh/gpu-memory": "1000"}), share_node(unhealthy="0"), args=SHARE)
    assert verdict.devices[0].id == "1"


def test_gpu_number_needs_idle_cards() -> None:
    verdict = run(pod("p", {"volcano.sh/gpu-number": "2"}), share_node(), share_user("a", "0", number=1),
                  args=NUMBER)
    assert verdict.reason is Reason.SLOTS_EXHAUSTED and "1 of 2 cards idle < 2" in verdict.message
    assert run(pod("p", {"volcano.sh/gpu-number": "1"}), share_node(), share_user("a", "0", number=1),
               args=NUMBER).devices[0].id == "1"


def test_gpushare_disabled_or_not_a_gpushare_node() -> None:
    assert run(pod("p", {"volcano.sh/gpu-memory": "1"}), share_node(), args={}).reason is Reason.NOT_DEVICE_NODE
    plain = {"kind": "Node", "metadata": {"name": "n1"}, "status": {}}
    assert run(pod("p", {"volcano.sh/gpu-memory": "1"}), plain, args=SHARE).reason is Reason.NOT_DEVICE_NODE


# ---- Ascend HAMi -----------------------------------------------------------------------------------

def npu_node(devices: int = 2, hami_core: str | None = None, count: int = 4) -> dict[str, Any]:
    register = [{"id": f"NPU-{i}", "index": i, "count": count, "devmem": 65536, "devcore": 20, "type": "Ascend910B3",
                 "numa": 0, "health": True} for i in range(devices)]
    annotations = {"hami.io/node-register-Ascend910B3": json.dumps(register)}
    if hami_core is not None:
        annotations["hami-vnpu-core"] = hami_core
    return {"kind": "Node", "metadata": {"name": "n1", "annotations": annotations},
            "status": {"allocatable": {"huawei.com/Ascend910B3": str(devices * count)}}}


def npu_user(name: str, device: str, memory: int, cores: int = 0) -> dict[str, Any]:
    return pod(name, {"huawei.com/Ascend910B3": "1"}, node="n1", phase="Running", annotations={
        "hami.io/Ascend910B3-devices-allocated": f"{device},Ascend910B3,{memory},{cores}:;"})


def ascend(memory: int | None = None, count: int = 1, cores: int | None = None,
           annotations: dict[str, str] | None = None) -> dict[str, Any]:
    limits = {"huawei.com/Ascend910B3": str(count)}
    if memory is not None:
        limits["huawei.com/Ascend910B3-memory"] = str(memory)
    if cores is not None:
        limits["huawei.com/Ascend910B3-core"] = str(cores)
    return pod("p", limits, annotations=annotations)


def test_template_trimming_and_whole_cards() -> None:
    verdict = run(ascend(3000), npu_node(), args=HAMI)
    assert verdict.fits and (verdict.devices[0].memory, verdict.devices[0].template) == (16384, "vir05_1c_16g")
    whole = run(ascend(count=2), npu_node(), args=HAMI)
    assert whole.fits and [d.memory for d in whole.devices] == [65536, 65536]


def test_multi_device_with_partial_memory_is_refused() -> None:
    verdict = run(ascend(3000, count=2), npu_node(), args=HAMI)
    assert verdict.reason is Reason.PARTIAL_MULTI_DEVICE and "vir05_1c_16g" in verdict.message


def test_ascend_memory_slots_and_cores() -> None:
    busy = [npu_user("a", "NPU-0", 65536), npu_user("b", "NPU-1", 50000)]
    verdict = run(ascend(20000), npu_node(), *busy, args=HAMI)
    assert verdict.reason is Reason.INSUFFICIENT_MEMORY and "15536 MiB < 32768 MiB" in verdict.message
    full = [npu_user(f"u{i}", "NPU-0", 1) for i in range(4)]
    verdict = run(ascend(1000), npu_node(devices=1), *full, args=HAMI)
    assert verdict.reason is Reason.SLOTS_EXHAUSTED


def test_hami_core_mode() -> None:
    hami = {"huawei.com/vnpu-mode": "hami-core"}
    verdict = run(ascend(3000, cores=50, annotations=hami), npu_node(hami_core="false"), args=HAMI)
    assert verdict.reason is Reason.HAMI_CORE_UNSUPPORTED
    verdict = run(ascend(3000, cores=50, annotations=hami), npu_node(hami_core="true"), args=HAMI)
    assert verdict.fits and (verdict.devices[0].memory, verdict.devices[0].template) == (3000, None)
    verdict = run(ascend(3000, cores=100, annotations=hami), npu_node(devices=1, hami_core="true"),
                  npu_user("a", "NPU-0", 1000, 0), args=HAMI)
    assert verdict.reason is Reason.EXCLUSIVE_IN_USE
    verdict = run(ascend(3000, cores=60, annotations=hami), npu_node(devices=1, hami_core="true"),
                  npu_user("a", "NPU-0", 1000, 50), args=HAMI)
    assert verdict.reason is Reason.INSUFFICIENT_CORES and "free cores 50 < 60" in verdict.message


def test_ascend_not_a_device_node() -> None:
    node = npu_node()
    node["status"]["allocatable"] = {}
    assert run(ascend(1000), node, args=HAMI).reason is Reason.NOT_DEVICE_NODE
    # Ascend HAMi off: no device model ignores the -memory name, which the node does not advertise, so the allocate
    # action's resource check refuses the node before the (disabled) device filter.
    off = run(ascend(1000), npu_node(), args={})
    assert off.reason is Reason.INSUFFICIENT_RESOURCE and "(not-device-node:" in off.message


# ---- MindCluster 310P ------------------------------------------------------------------------------

def mind_node(chips: int = 1) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": "n1", "labels": {
        "accelerator": "huawei-Ascend310P", "servertype": "Ascend310P-8", "node.kubernetes.io/npu.chip.name": "310P3"}},
        "status": {"capacity": {"huawei.com/npu-core": str(8 * chips)},
                   "allocatable": {"huawei.com/npu-core": str(8 * chips)}}}


def mind_pod(cores: int, level: str | None = None, dvpp: str | None = None, name: str = "p",
             node: str | None = None, allocation: str | None = None) -> dict[str, Any]:
    labels = {"ring-controller.atlas": "ascend-310P"}
    if level:
        labels["vnpu-level"] = level
    if dvpp:
        labels["vnpu-dvpp"] = dvpp
    return pod(name, {"huawei.com/npu-core": str(cores)}, labels=labels, node=node,
               phase="Running" if node else "Pending",
               annotations={"huawei.com/npu-core": allocation} if allocation else None)


@pytest.mark.parametrize(("cores", "level", "dvpp", "template"), [
    (1, None, None, "vir01"), (2, None, None, "vir02_1c"), (2, "high", None, "vir02"),
    (4, None, None, "vir04_3c"), (4, "high", None, "vir04"), (4, None, "no", "vir04_3c_ndvpp"),
    (4, "high", "yes", "vir04_4c_dvpp"),
])
def test_mindcluster_templates(cores: int, level: str | None, dvpp: str | None, template: str) -> None:
    verdict = run(mind_pod(cores, level, dvpp), mind_node(), args=MIND)
    assert verdict.fits and verdict.devices[0].template == template


def test_vnpu_level_high_downgrades_when_the_node_is_short_of_ai_cpus() -> None:
    """A chip running vir04 (4 cores, 4 CPUs) has 4 cores and 3 CPUs left: vir04 does not fit, vir04_3c does."""
    holder = mind_pod(4, "high", name="h", node="n1", allocation="0-vir04")
    verdict = run(mind_pod(4, "high"), mind_node(), holder, args=MIND)
    assert verdict.reason is Reason.TEMPLATE_CONFLICT  # vir04 in use, the pod is downgraded to vir04_3c
    assert "a vir04_3c task is refused" in verdict.message
    # On a node with room, vnpu-level high keeps its 4 AI CPUs.
    assert run(mind_pod(4, "high"), mind_node(chips=2), args=MIND).devices[0].template == "vir04"


def test_mindcluster_whole_cards_idle_cores_and_detection() -> None:
    verdict = run(mind_pod(16), mind_node(chips=2), args=MIND)
    assert verdict.fits and [d.id for d in verdict.devices] == ["0", "1"]
    verdict = run(mind_pod(16), mind_node(chips=1), args=MIND)  # the allocate action's check refuses it first
    assert verdict.reason is Reason.INSUFFICIENT_RESOURCE and "idle huawei.com/npu-core 8 < 16" in verdict.message
    busy = mind_pod(1, name="h", node="n1", allocation="0-vir01")
    assert run(mind_pod(8), mind_node(chips=2), busy, args=MIND).reason is Reason.TEMPLATE_CONFLICT
    assert run(mind_pod(1, dvpp="maybe"), mind_node(), args=MIND).reason is Reason.OTHER
    unlabelled = pod("p", {"huawei.com/npu-core": "1"})
    _, env = cluster(mind_node(), args=MIND, config=CONFIG)
    assert parse_pod(unlabelled, env).mindcluster is None


def test_a_mindcluster_pod_being_deleted_holds_no_chip_but_still_its_cores() -> None:
    """Volcano >= 1.15 books no device for a Releasing pod (api/node_info.go AddTask), so its template no
    longer blocks the chip; the generic resource check still counts its npu-core until it is gone."""
    leaving = mind_pod(1, name="h", node="n1", allocation="0-vir01")
    leaving["metadata"]["deletionTimestamp"] = "2026-11-26T10:00:00Z"
    assert run(mind_pod(8), mind_node(chips=2), leaving, args=MIND).fits
    staying = mind_pod(1, name="h", node="n1", allocation="0-vir01")
    assert run(mind_pod(8), mind_node(chips=2), staying, args=MIND).reason is Reason.TEMPLATE_CONFLICT
    short = run(mind_pod(16), mind_node(chips=2), leaving, args=MIND)
    assert short.reason is Reason.INSUFFICIENT_CORES  # idle npu-core 15 < 16: the cores are still taken
