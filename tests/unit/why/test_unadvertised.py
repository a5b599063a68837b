"""`volcano.sh/vgpu-memory-percentage` fails Volcano's allocate predicate on nodes that do not advertise it.

Upstream evidence: volcano-sh/volcano (master at ed72c7c81) `pkg/scheduler/actions/allocate/allocate.go`
`predicate` runs `task.InitResreq.LessEqualWithResourcesName(node.FutureIdle(), api.Zero)` before the plugin
predicates; with `api.Zero` a resource missing from the node counts as 0, and the failure reads
`Insufficient <name>` (`WrapInsufficientResourceReason`, `pkg/scheduler/api/unschedule_info.go`). The vGPU
device model ignores no resource (`GPUDevices.GetIgnoredDevices` returns none,
`pkg/scheduler/api/devices/nvidia/vgpu/device_info.go`), while the Ascend HAMi model ignores its memory and
core names (`ascend/hami/device_info.go` `GetIgnoredDevices`). Project-HAMi/volcano-vgpu-device-plugin
registers vgpu-number, vgpu-memory and vgpu-cores, never the percentage. VGP006 says the same.
"""

from __future__ import annotations

from typing import Any

from tests.unit.why.builders import NVIDIA, cluster, gpu, pod, vgpu_node
from vgpuctl.core.catalogue import lookup
from vgpuctl.core.versions import Version
from vgpuctl.core.why.model import Reason
from vgpuctl.core.why.simulate import explain_in_snapshot

PCT = "volcano.sh/vgpu-memory-percentage"
CONFIG = {"nvidia": {**NVIDIA, "resourceMemoryPercentageName": PCT}}


def _node(name: str, advertises: bool) -> dict[str, Any]:
    node = vgpu_node(name, gpu(f"GPU-{name}000000-0000-0000-0000-000000000000"))
    if advertises:
        node["status"]["allocatable"][PCT] = "100"
    return node


def _pct_pod() -> dict[str, Any]:
    return pod("p", {"volcano.sh/vgpu-number": "1", PCT: "50"})


def test_the_percentage_fits_only_where_a_node_advertises_it() -> None:
    snapshot, _ = cluster(_node("n1", True), _node("n2", False), config=CONFIG)
    report = explain_in_snapshot(_pct_pod(), snapshot, what_if=True)
    assert [p.node for p in report.fits] == ["n1"] and report.verdict == "fits"
    [group] = report.unfit
    assert group.reason is Reason.INSUFFICIENT_RESOURCE and group.nodes == ("n2",)
    assert f"Insufficient {PCT}" in group.message and "never advertises" in group.message
    assert f"Insufficient {PCT}" in lookup("VGP006").doc  # the catalogue says the same thing


def test_no_node_advertises_it_the_rule_core_answers_as_lint_does() -> None:
    """No version known: the newest Volcano is assumed by `why` and by VGP006 alike, so the rule core
    rejects the request (no node advertises it) before any node is simulated, as `lint --snapshot` does."""
    snapshot, _ = cluster(_node("n1", False), _node("n2", False), config=CONFIG)
    report = explain_in_snapshot(_pct_pod(), snapshot, what_if=True)
    assert report.verdict == "rejected" and not report.schedulable
    assert [f.code for f in report.findings] == ["VGP006"] and report.unfit == []


def test_with_a_known_version_the_rule_core_answers_first() -> None:
    """Volcano 1.15 known: VGP006 rejects the request (no node advertises it), as lint does."""
    snapshot, _ = cluster(_node("n1", False), config=CONFIG)
    report = explain_in_snapshot(_pct_pod(), snapshot, what_if=True, volcano_version=Version(1, 15, 1))
    assert report.verdict == "rejected" and [f.code for f in report.findings] == ["VGP006"]


def test_before_volcano_113_the_vgpu_resources_were_not_compared() -> None:
    snapshot, _ = cluster(_node("n1", False), config=CONFIG)
    report = explain_in_snapshot(_pct_pod(), snapshot, what_if=True, volcano_version=Version(1, 12, 2))
    assert report.verdict == "fits"


def test_ascend_memory_and_core_names_are_ignored_by_the_predicate() -> None:
    """Nodes advertise only `huawei.com/Ascend910B3`; the pod's -memory must not fail the predicate."""
    from tests.unit.why.test_other_families import CONFIG as ASCEND_CONFIG
    from tests.unit.why.test_other_families import HAMI, ascend, npu_node

    snapshot, _ = cluster(npu_node(), args=HAMI, config=ASCEND_CONFIG)
    assert explain_in_snapshot(ascend(3000), snapshot, what_if=True).verdict == "fits"
