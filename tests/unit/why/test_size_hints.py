"""A request no node is big enough for gets a hint with the figure that fits its case (the largest GPU's memory,
the most GPUs of a node, …), made where the finding is made (`podrules`): `lint --snapshot` and `why` show the same
hint, and a request at that figure passes the rule."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.unit.why.builders import NVIDIA, VNPU_910B3, cluster, gpu, pod, vgpu_node, vgpu_pod
from vgpuctl.core.catalogue import HINTS
from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.cluster.rule_facts import facts_from_snapshot
from vgpuctl.core.findings import Finding
from vgpuctl.core.podrules import review
from vgpuctl.core.why.simulate import explain_in_snapshot

CONFIG = {"nvidia": NVIDIA, "vnpus": [VNPU_910B3]}
SMALL = "NVIDIA-NVIDIA T4"


def _vgpu_cluster() -> ClusterSnapshot:
    node = vgpu_node("big", gpu("GPU-a", 40960), gpu("GPU-b", 40960))
    small = vgpu_node("small", gpu("GPU-c", 16384, type_=SMALL))
    return cluster(node, small, config=CONFIG)[0]


def _share_cluster() -> ClusterSnapshot:
    node = {"kind": "Node", "metadata": {"name": "n1"},
            "status": {"capacity": {"volcano.sh/gpu-memory": "32768", "volcano.sh/gpu-number": "2"}}}
    return cluster(node, args={"deviceshare.GPUSharingEnable": True}, config=CONFIG)[0]


def _mind_cluster() -> ClusterSnapshot:
    node = {"kind": "Node", "metadata": {"name": "n1", "labels": {
        "accelerator": "huawei-Ascend310P", "servertype": "Ascend310P-8", "node.kubernetes.io/npu.chip.name": "310P3"}},
        "status": {"capacity": {"huawei.com/npu-core": "16"}, "allocatable": {"huawei.com/npu-core": "16"}}}
    return cluster(node, args={"deviceshare.AscendMindClusterVNPUEnable": True}, config=CONFIG)[0]


def _ascend_cluster() -> ClusterSnapshot:
    register = [{"id": "NPU-0", "index": 0, "count": 4, "devmem": 65536, "devcore": 20, "type": "Ascend910B3",
                 "numa": 0, "health": True}]
    node = {"kind": "Node", "metadata": {"name": "n1", "annotations": {
        "hami.io/node-register-Ascend910B3": json.dumps(register)}},
        "status": {"allocatable": {"huawei.com/Ascend910B3": "4"}}}
    return cluster(node, args={"deviceshare.AscendHAMiVNPUEnable": True}, config=CONFIG)[0]


def _mind_pod(cores: int) -> dict[str, Any]:
    return pod("p", {"huawei.com/npu-core": str(cores)}, labels={"ring-controller.atlas": "ascend-310P"})


def _ascend_pod(memory: int) -> dict[str, Any]:
    return pod("p", {"huawei.com/Ascend910B3": "1", "huawei.com/Ascend910B3-memory": str(memory)})


def _share_pod(key: str, value: int) -> dict[str, Any]:
    return pod("p", {key: str(value)})


# (code, the cluster, a pod at the figure (passes), one past it (fails), what the hint must say)
CASES = [
    ("VGP003", _vgpu_cluster, vgpu_pod("p", count=2, memory=1000), vgpu_pod("p", count=3, memory=1000),
     "Lower `volcano.sh/vgpu-number` to at most 2, the most GPUs a vGPU node registers"),
    ("VGP005", _vgpu_cluster, vgpu_pod("p", memory=40960), vgpu_pod("p", memory=40961),
     "Lower `volcano.sh/vgpu-memory` to at most 40960, the memory of the largest GPU the pod may use (MiB)."),
    ("VGS003", _share_cluster, _share_pod("volcano.sh/gpu-memory", 16384),
     _share_pod("volcano.sh/gpu-memory", 16385), "to at most 16384, the memory of the largest card"),
    ("VGS003", _share_cluster, _share_pod("volcano.sh/gpu-number", 2), _share_pod("volcano.sh/gpu-number", 3),
     "Lower the pod's `volcano.sh/gpu-number` to at most 2, the most healthy cards"),
    ("VGA008", _mind_cluster, _mind_pod(16), _mind_pod(24),
     "Lower `huawei.com/npu-core` to at most 16, the largest npu-core capacity of a 310P node (a valid value: 1, "
     "2, 4 or a multiple of 8)"),
    ("VGH003", _ascend_cluster, _ascend_pod(65536), _ascend_pod(65537),
     "Lower `huawei.com/Ascend910B3-memory` to at most 65536 MiB, the Ascend910B3 memoryCapacity"),
]
IDS = ["vgpu-number", "vgpu-memory", "gpu-memory", "gpu-number", "npu-core", "ascend-memory"]


def _of(findings: tuple[Finding, ...] | list[Finding], code: str) -> list[Finding]:
    return [f for f in findings if f.code == code]


@pytest.mark.parametrize(("code", "make", "fits", "over", "says"), CASES, ids=IDS)
def test_the_figure_passes_the_rule(code: str, make: Any, fits: dict[str, Any], over: dict[str, Any],
                                    says: str) -> None:
    snapshot = make()
    assert _of(review(fits, facts_from_snapshot(snapshot)).findings, code) == []


@pytest.mark.parametrize(("code", "make", "fits", "over", "says"), CASES, ids=IDS)
def test_one_past_it_gets_the_hint_with_the_figure_in_lint_and_why(code: str, make: Any, fits: dict[str, Any],
                                                                    over: dict[str, Any], says: str) -> None:
    snapshot = make()
    linted = _of(review(over, facts_from_snapshot(snapshot)).findings, code)
    assert len(linted) == 1 and says in linted[0].hint and linted[0].hint != HINTS[code]
    report = explain_in_snapshot(over, snapshot, what_if=True)
    assert report.rejected and _of(report.findings, code) == linted


def test_vgp005_names_the_larger_gpus_the_pod_filters_out() -> None:
    # The pod may use only the T4 (16384): 20000 is more than it has, but the A100s (40960) would take it.
    over = vgpu_pod("p", memory=20000, annotations={"nvidia.com/use-gputype": "T4"})
    found = _of(review(over, facts_from_snapshot(_vgpu_cluster())).findings, "VGP005")
    assert len(found) == 1
    assert found[0].hint.startswith("Lower `volcano.sh/vgpu-memory` to at most 16384,")
    assert "or let the pod use the larger GPUs its nvidia.com/use-gputype annotation leaves out (up to 40960)" \
        in found[0].hint
    at = vgpu_pod("p", memory=16384, annotations={"nvidia.com/use-gputype": "T4"})
    assert _of(review(at, facts_from_snapshot(_vgpu_cluster())).findings, "VGP005") == []


def test_other_sub_cases_keep_the_codes_hint() -> None:
    # A unit suffix is VGP005 too, but no size problem: the code's own hint (write a plain integer).
    found = _of(review(vgpu_pod("p", memory="3Gi"), facts_from_snapshot(_vgpu_cluster())).findings, "VGP005")
    assert [f.hint for f in found] == [HINTS["VGP005"]]
