"""Cases where Volcano's own gpushare, Ascend HAMi and GPUExclusiveRules code disagreed with vgpuctl (issue 24
part 3, second half).

Each is a minimal disagreement the extended differential oracle found (Volcano's
`pkg/scheduler/api/devices/nvidia/gpushare`, `devices/ascend/hami` and `plugins/deviceshare/gpuexclusive.go` at
volcano-sh/volcano ed72c7c8, run on a snapshot against `vgpuctl why -f`; `benchmarks/oracle_differential.py`),
rebuilt with the project's own builders. Volcano's code settles the fact; vgpuctl was the side in the wrong.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from tests.unit.why.builders import (
    FAMILIES_CONFIG,
    NVIDIA,
    VNPU_910B3,
    cluster,
    gpu,
    pod,
    verdict_on,
    vgpu_node,
    vgpu_pod,
)
from vgpuctl.core.why.model import Reason
from vgpuctl.core.why.request import parse_pod
from vgpuctl.core.why.simulate import explain_in_snapshot, simulate_node

SHARE = {"deviceshare.GPUSharingEnable": True}
NUMBER = {"deviceshare.GPUNumberEnable": True}
CONFIG = FAMILIES_CONFIG

run = verdict_on


# ---- gpushare: the ledger (`device_info.go AddResource`, `share.go getUsedGPUMemory`) ---------------------------

def share_node(cards: int = 2, memory: int = 32768) -> dict[str, Any]:
    return {"kind": "Node", "metadata": {"name": "n1"},
            "status": {"capacity": {"volcano.sh/gpu-memory": str(memory), "volcano.sh/gpu-number": str(cards)}}}


def on_cards(name: str, index: str, limits: dict[str, str]) -> dict[str, Any]:
    return pod(name, limits, node="n1", phase="Running", annotations={"volcano.sh/gpu-index": index})


def test_a_gpu_number_pod_books_no_gpu_memory() -> None:
    """Oracle case gpushare fit/insufficient-memory: card 0 holds a gpu-number pod, whose gpu-memory is 0, so a
    1024 MiB gpu-memory pod goes to card 0 (first fit); vgpuctl booked the whole card and chose card 1."""
    verdict = run(pod("p", {"volcano.sh/gpu-memory": "1024"}), share_node(),
                  on_cards("whole", "0", {"volcano.sh/gpu-number": "1"}), args=SHARE)
    assert verdict.fits and [d.id for d in verdict.devices] == ["0"]
    # and where every card holds one, the pod still fits: vgpuctl said insufficient memory
    whole = {"volcano.sh/gpu-number": "1"}
    verdict = run(pod("p", {"volcano.sh/gpu-memory": "1024"}), share_node(), on_cards("a", "0", whole),
                  on_cards("b", "1", whole), args=SHARE)
    assert verdict.fits and [d.id for d in verdict.devices] == ["0"]


def test_a_gpu_index_without_a_gpushare_resource_is_on_no_card() -> None:
    """Oracle case gpushare devices: a pod carrying `volcano.sh/gpu-index: 0` but asking for neither gpu-memory
    nor gpu-number is not in card 0's PodMap: the card stays idle for gpu-number and free for gpu-memory."""
    stray = on_cards("stray", "0", {"cpu": "1"})
    verdict = run(pod("p", {"volcano.sh/gpu-memory": "4096"}), share_node(), stray, args=SHARE)
    assert verdict.fits and [d.id for d in verdict.devices] == ["0"]
    verdict = run(pod("p", {"volcano.sh/gpu-number": "2"}), share_node(), stray, args=NUMBER)
    assert verdict.fits and sorted(d.id for d in verdict.devices) == ["0", "1"]


def test_a_node_whose_every_card_is_unhealthy_has_no_memory_to_give() -> None:
    """Oracle case gpushare reason: with every card in `volcano.sh/gpu-unhealthy-ids` Volcano still builds the
    node's device (NewGPUDevices), with no card, and the filter says "no enough gpu memory"; vgpuctl said
    not-device-node."""
    node = share_node(cards=1)
    node["metadata"]["annotations"] = {"volcano.sh/gpu-unhealthy-ids": "1,0"}
    verdict = run(pod("p", {"volcano.sh/gpu-memory": "512"}), node, args=SHARE)
    assert verdict.reason is Reason.INSUFFICIENT_MEMORY and "volcano.sh/gpu-unhealthy-ids" in verdict.message


# ---- Ascend HAMi: the ledger (`ascend/hami/device_info.go addResource`, `devices/device_info.go
# DecodeContainerDevices`) ----------------------------------------------------------------------------------------

HAMI = {"deviceshare.AscendHAMiVNPUEnable": True}


def npu_node(devices: int = 2) -> dict[str, Any]:
    register = [{"id": f"NPU-{i}", "index": i, "count": 4, "devmem": 65536, "devcore": 20, "type": "Ascend910B3",
                 "numa": 0, "health": True} for i in range(devices)]
    return {"kind": "Node", "metadata": {"name": "n1", "annotations": {
        "hami.io/node-register-Ascend910B3": json.dumps(register)}},
        "status": {"allocatable": {"huawei.com/Ascend910B3": str(devices * 4)}}}


def npu_holder(allocated: str) -> dict[str, Any]:
    containers = [{"name": f"c{i}", "resources": {"limits": {"huawei.com/Ascend910B3": "1"}}} for i in range(2)]
    return pod("held", containers=containers, node="n1", phase="Running",
               annotations={"hami.io/Ascend910B3-devices-allocated": allocated})


def test_the_first_device_of_a_later_container_is_not_booked() -> None:
    """Oracle case ascend devices: `DecodeContainerDevices` splits the pod's value on `:` only, so the second
    container's `;NPU-1,…` names no device and Volcano books nothing on NPU-1: a whole-card pod fits there. vgpuctl
    booked it and found no card."""
    held = npu_holder("NPU-0,Ascend910B3,16384,0:;NPU-1,Ascend910B3,65536,0:;")
    verdict = run(pod("p", {"huawei.com/Ascend910B3": "1"}), npu_node(), held, args=HAMI)
    assert verdict.fits and [d.id for d in verdict.devices] == ["NPU-1"]


def test_a_pod_is_booked_once_per_npu() -> None:
    """`addResource` books a pod once per device (`PodMap`), from its first entry naming it: NPU-0's later entry
    (the second device of the second container, which does decode) adds nothing."""
    held = npu_holder("NPU-0,Ascend910B3,16384,0:;NPU-1,Ascend910B3,16384,0:NPU-0,Ascend910B3,32768,0:;")
    snapshot, _ = cluster(npu_node(), held, args=HAMI, config=CONFIG)
    node = snapshot.node("n1")
    assert node is not None
    assert [(d.id, d.memory_used, d.slots_used) for d in node.devices] == [("NPU-0", 16384, 1), ("NPU-1", 0, 0)]


# ---- GPUExclusiveRules (`plugins/deviceshare/gpuexclusive.go wrapGPUDevicesForExclusivity`) -------------------

U0, U1 = (f"GPU-{i}{i}{i}{i}{i}{i}{i}{i}-0000-0000-0000-000000000000" for i in range(2))
EXCLUSIVE = {"deviceshare.VGPUEnable": True, "deviceshare.GPUExclusiveRules": [{"team": "b"}]}


def test_a_pod_being_deleted_still_reserves_its_gpu_for_its_rule() -> None:
    """Oracle case exclusive fit: a bound pod being deleted is a Releasing task — in node.Tasks, so the wrapper
    reserves the GPU its `vgpu-ids-new` names for its rule, though the ledger no longer books it. A same-rule pod
    asking for both GPUs fits nowhere; vgpuctl looked at the ledger only and fitted it."""
    holder = vgpu_pod("going", node="n1", phase="Running", labels={"team": "b"},
                      annotations={"volcano.sh/vgpu-ids-new": f"{U1},NVIDIA,1000,0:"})
    holder["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    want = vgpu_pod("p", count=2, memory=4000, labels={"team": "b"})
    snapshot, env = cluster(vgpu_node("n1", gpu(U0), gpu(U1)), holder, args=EXCLUSIVE)
    node = snapshot.node("n1")
    assert node is not None and all(d.memory_used == 0 for d in node.devices)  # not booked: Releasing
    verdict = simulate_node(parse_pod(want, env), node, env)
    assert verdict.reason is Reason.EXCLUSIVE_RULE and "ml/going" in verdict.message
    # a pod of another rule's labels is not held back
    other = simulate_node(parse_pod(vgpu_pod("q", count=2, memory=4000, labels={"team": "a"}), env), node, env)
    assert other.fits


def test_hami_core_by_the_config_default_is_not_refused() -> None:
    """Oracle case ascend rejected/fits (VGH001): with `vnpus: {hamiVnpuCore: true, …}` a node without the
    `hami-vnpu-core` annotation supports hami-core (`getNodeDevices`), so a `vnpu-mode: hami-core` pod fits
    there; the rule core counted only nodes annotated "true" and said it fits nowhere."""
    config = {"nvidia": NVIDIA, "vnpus": {"hamiVnpuCore": True, "configs": [VNPU_910B3]}}
    want = pod("p", {"huawei.com/Ascend910B3": "1", "huawei.com/Ascend910B3-memory": "1000"},
               annotations={"huawei.com/vnpu-mode": "hami-core"})
    snapshot, _ = cluster(npu_node(), args=HAMI, config=config)
    report = explain_in_snapshot(want, snapshot, what_if=True)
    assert not [f for f in report.findings if f.code == "VGH001"]
    assert [p.node for p in report.fits] == ["n1"]


# ---- node locks (`plugins/util/nodelock/nodelock.go LockNode`, from Allocate) --------------------------------------

def test_a_gpu_memory_pod_under_gpu_number_mode_takes_no_gpushare_lock() -> None:
    """Oracle case locks fit/node-locked: with GPUNumberEnable a gpu-memory request is no device request
    (HasDeviceRequest), so Allocate never runs and the node's `gpu` lock — here one Volcano cannot even parse —
    does not stop the pod; vgpuctl applied the lock. Under GPUSharingEnable the same lock stops it."""
    node = share_node()
    node["metadata"]["annotations"] = {"gpu": "yesterday"}
    verdicts = []
    for mode in (NUMBER, SHARE):
        snapshot, env = cluster(node, args={**mode, "deviceshare.NodeLockEnable": True}, config=CONFIG)
        env.now = datetime(2026, 1, 1, tzinfo=UTC)
        found = snapshot.node("n1")
        assert found is not None
        verdicts.append(simulate_node(parse_pod(pod("p", {"volcano.sh/gpu-memory": "4096"}), env), found, env))
    assert verdicts[0].fits
    assert verdicts[1].reason is Reason.NODE_LOCKED


def test_two_ascend_types_lock_each_other_out() -> None:
    """Oracle case locks node-locked/fits: predicates.go's allocate calls Allocate once per device type the pod
    asks for; each Ascend HAMi type takes the node lock hami.io/mutex.lock, so the second fails on the lock the
    first just took — on a node with no lock at all. vgpuctl fitted the pod."""
    vnpu_310p = {**VNPU_910B3, "commonWord": "Ascend310P", "chipName": "310P3", "resourceName": "huawei.com/Ascend310P",
                 "resourceMemoryName": "huawei.com/Ascend310P-memory"}
    config = {"nvidia": NVIDIA, "vnpus": [VNPU_910B3, vnpu_310p]}
    node = npu_node()
    register = [{"id": "P-0", "index": 0, "count": 4, "devmem": 65536, "devcore": 20, "type": "Ascend310P", "numa": 0,
                 "health": True}]
    node["metadata"]["annotations"]["hami.io/node-register-Ascend310P"] = json.dumps(register)
    node["status"]["allocatable"]["huawei.com/Ascend310P"] = "4"
    want = pod("p", containers=[
        {"name": "a", "resources": {"limits": {"huawei.com/Ascend910B3": "1"}}},
        {"name": "b", "resources": {"limits": {"huawei.com/Ascend310P": "1"}}}])
    verdicts = []
    for lock in (True, False):
        snapshot, env = cluster(node, args={**HAMI, "deviceshare.NodeLockEnable": lock}, config=config)
        found = snapshot.node("n1")
        assert found is not None
        verdicts.append(simulate_node(parse_pod(want, env), found, env))
    assert verdicts[0].reason is Reason.NODE_LOCKED and "hami.io/mutex.lock" in verdicts[0].message
    assert verdicts[1].fits and sorted(d.id for d in verdicts[1].devices) == ["NPU-0", "P-0"]
