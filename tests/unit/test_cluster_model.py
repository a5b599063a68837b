"""The cluster model built from a snapshot: devices, usage, registration findings, and facts."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vgpuctl.core import spec
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.cluster.report import select_nodes
from vgpuctl.core.cluster.rule_facts import detect_volcano_version, facts_from_snapshot
from vgpuctl.core.podrules import review
from vgpuctl.core.selector import parse_selector
from vgpuctl.core.versions import Version

MIXED = Path(__file__).resolve().parents[1] / "fixtures" / "clusters" / "mixed.yaml"


@pytest.fixture(scope="module")
def snapshot() -> ClusterSnapshot:
    data = yaml.safe_load(MIXED.read_text())
    return build_snapshot(data["items"], "v1.31.4")


def devices(snapshot: ClusterSnapshot, node: str):  # type: ignore[no-untyped-def]
    found = snapshot.node(node)
    assert found is not None
    return found.devices


def test_device_config_is_the_one_deviceshare_names(snapshot: ClusterSnapshot) -> None:
    assert snapshot.device_config_source == "configmap kube-system/merged-device-config"
    assert snapshot.device_config.nvidia.gpu_memory_factor == 2
    assert snapshot.deviceshare.families == {spec.Family.VGPU, spec.Family.ASCEND_HAMI}


def test_vgpu_memory_is_in_mib_after_the_factor_and_usage_skips_finished_pods(snapshot: ClusterSnapshot) -> None:
    first, second = devices(snapshot, "gpu-a")
    assert (first.memory_total, first.memory_used, first.cores_used, first.slots_used) == (40960, 4096, 30, 1)
    assert first.pods == ["ml/trainer"]  # ml/finished is Succeeded: not counted
    assert second.health is False and second.memory_used == 2048


def test_mig_slices_and_node_mode(snapshot: ClusterSnapshot) -> None:
    node = snapshot.node("gpu-mig")
    assert node is not None and node.mode == "mig"
    assert node.devices[0].slices == ["group1-0"]


def test_five_field_register_is_reported_not_crashed(snapshot: ClusterSnapshot) -> None:
    node = snapshot.node("gpu-old-plugin")
    assert node is not None
    assert [f.code for f in node.findings] == ["VGN002"]
    assert node.findings[0].subject == "node/gpu-old-plugin"


def test_old_register_format_is_fine_when_volcano_predates_six_fields() -> None:
    data = yaml.safe_load(MIXED.read_text())
    old = build_snapshot(data["items"], volcano_version=Version(1, 11, 0))
    node = old.node("gpu-old-plugin")
    assert node is not None and node.findings == []


def test_gpushare_cards_ascend_and_mindcluster(snapshot: ClusterSnapshot) -> None:
    card0, card1 = devices(snapshot, "share-1")
    assert (card0.memory_total, card0.memory_used, card0.pods) == (16384, 4096, ["ml/share"])
    assert card1.health is False
    (npu,) = devices(snapshot, "npu-1")
    assert (npu.memory_total, npu.memory_used, npu.slots_used) == (21527, 3072, 1)
    chips = devices(snapshot, "mc-1")
    assert len(chips) == 2 and chips[1].slices == ["vir02_1c"] and chips[1].cores_used == 2


def test_facts_from_snapshot_feed_cluster_aware_rules(snapshot: ClusterSnapshot) -> None:
    facts = facts_from_snapshot(snapshot)
    assert facts.volcano_version == Version(1, 15, 1)
    assert facts.max_gpus_per_node == 2
    assert facts.max_gpushare_card_memory == 16384 and facts.max_gpushare_cards == 1
    assert facts.max_npu_core_capacity == 16 and facts.cores_per_310p_chip == 8
    gpu_pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"schedulerName": "volcano", "containers": [
        {"name": "c", "resources": {"limits": {spec.VGPU_NUMBER: 3, spec.VGPU_MEMORY: 1000}}}]}}
    assert any(f.code == "VGP003" for f in review(gpu_pod, facts).findings)
    assert not any(f.code == "VGP003" for f in review(gpu_pod).findings)


def test_version_detection_needs_a_scheduler_image() -> None:
    assert detect_volcano_version(build_snapshot([])) is None


def test_select_nodes_filters() -> None:
    data = yaml.safe_load(MIXED.read_text())
    snap = build_snapshot(data["items"])
    chosen, missing = select_nodes(snap)
    assert "cpu-1" not in [n.name for n in chosen] and missing == []
    chosen, _ = select_nodes(snap, families=(spec.Family.GPUSHARE,))
    assert [n.name for n in chosen] == ["share-1"]
    chosen, _ = select_nodes(snap, selector=parse_selector("zone=a"))
    assert [n.name for n in chosen] == ["gpu-a"]
    chosen, missing = select_nodes(snap, names=("cpu-1", "nope"))
    assert [n.name for n in chosen] == ["cpu-1"] and missing == ["nope"]


def test_select_nodes_shows_a_flagged_node_without_devices() -> None:
    """A node with no device family is left out unless named, or flagged (the doctor has findings on it)."""
    snap = build_snapshot(yaml.safe_load(MIXED.read_text())["items"])
    assert "cpu-1" not in [n.name for n in select_nodes(snap, flagged={"gpu-a"})[0]]
    assert "cpu-1" in [n.name for n in select_nodes(snap, flagged={"cpu-1"})[0]]


def test_garbage_objects_do_not_crash() -> None:
    snap = build_snapshot([{"kind": "Node"}, {"kind": "Pod", "spec": "x"}, "junk", {"kind": "ConfigMap"},  # type: ignore[list-item]
                           {"kind": "Node", "metadata": {"name": "n", "annotations": {
                               spec.NODE_VGPU_REGISTER: 42}}, "status": {"capacity": {spec.NPU_CORE: "x"}}}])
    assert [n.name for n in snap.nodes] == ["", "n"]
    assert snap.node("n") is not None


def test_slice_names_nothing_defines_are_booked_as_unknown() -> None:
    """Issue 23 item 5: the slice label of `vgpuctl_device_slices_in_use` came straight from a pod's
    annotation, so pods with made-up MIG groups or vNPU templates made a series each. Only names the device
    config (MIG groups, with their positions) or Volcano's MindCluster code defines are kept."""
    data = yaml.safe_load(MIXED.read_text())
    junk = [
        ("gpu-mig", {"volcano.sh/vgpu-ids-new": f"GPU-33333333-3333-3333-3333-333333333333[{slot}],NVIDIA,2560,0:"})
        for slot in ("junk-0", "group1-99", "group1-7")
    ] + [("mc-1", {"huawei.com/npu-core": f"1-vir{n}_x\x1b[41m"}) for n in range(3)]
    for n, (node, marks) in enumerate(junk):
        data["items"].append({"apiVersion": "v1", "kind": "Pod",
                              "metadata": {"name": f"junk-{n}", "namespace": "ml", "annotations": marks},
                              "spec": {"nodeName": node, "containers": [{"name": "c"}]},
                              "status": {"phase": "Running"}})
    snapshot = build_snapshot(data["items"], "v1.31.4")
    (gpu,) = devices(snapshot, "gpu-mig")
    assert sorted(gpu.slices) == ["group1-0", "unknown", "unknown", "unknown"]  # group1 has 7 instances: 0-6
    chips = devices(snapshot, "mc-1")
    assert sorted(chips[1].slices) == ["unknown", "unknown", "unknown", "vir02_1c"]


def test_mindcluster_templates_are_the_ones_why_replays() -> None:
    from vgpuctl.core.why.mindcluster import TEMPLATES

    assert set(TEMPLATES) == spec.MINDCLUSTER_TEMPLATES
