"""`core.allocation.node_rows`: the metric rows of one node, read off its device state (no second summing)."""

from __future__ import annotations

from vgpuctl.core.allocation import MIB, node_rows
from vgpuctl.core.cluster.model import DeviceState, NodeState
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.spec import Family


def test_rows_follow_the_device_state_and_skip_what_a_family_does_not_account() -> None:
    gpu = DeviceState("GPU-a", 0, Family.VGPU, "A100", "mig", True, 40960, 100, 7, memory_used=10240,
                      cores_used=0, slots_used=3, pods=["ml/a", "ml/b"], slices=["1-0", "1-1", "1-0"])
    chip = DeviceState("0", 0, Family.ASCEND_MINDCLUSTER, "310P3", "mindcluster", False, 0, 8, 0, cores_used=4,
                       pods=["ai/x"], slices=["vir02_1c", "vir02_1c"])
    node = NodeState("n1", {}, [Family.VGPU, Family.ASCEND_MINDCLUSTER], "mig", [gpu, chip])
    findings = [Finding("VGN007", Severity.WARNING, "node/n1", "x"),
                Finding("VGN007", Severity.WARNING, "node/n1", "y"),
                Finding("VGN002", Severity.ERROR, "node/n1", "z")]
    rows = node_rows(node, findings)
    g = ("n1", "GPU-a", "vgpu", "A100", "mig")
    c = ("n1", "0", "ascend-mindcluster", "310P3", "mindcluster")
    assert rows["vgpuctl_device_memory_allocated_bytes"] == [(g, 10240 * MIB)]  # the chip accounts no memory
    assert rows["vgpuctl_device_cores_allocated"] == [(g, 0), (c, 4)]
    assert rows["vgpuctl_device_slots_used"] == [(g, 3)] and rows["vgpuctl_device_slots_total"] == [(g, 7)]
    assert rows["vgpuctl_device_pods"] == [(g, 2), (c, 1)]
    assert rows["vgpuctl_device_healthy"] == [(g, 1), (c, 0)]
    assert rows["vgpuctl_device_slices_in_use"] == [((*g, "1-0"), 2), ((*g, "1-1"), 1), ((*c, "vir02_1c"), 2)]
    assert rows["vgpuctl_node_findings"] == [(("n1", "VGN002", "error"), 1), (("n1", "VGN007", "warning"), 2)]


def test_a_node_without_devices_or_findings_has_no_rows() -> None:
    assert not any(node_rows(NodeState("cpu", {}), []).values())


def test_ascend_hami_template_mode_names_the_template_in_use() -> None:
    """Issue 18: "per MIG slice / vNPU template in use" — an Ascend HAMi pod in template mode books exactly a
    template's memory (Volcano's trimMemory), so the booked memory names the template; a hami-core pod's
    arbitrary memory names none. Built from the bundled healthy cluster through the real snapshot build."""
    from pathlib import Path

    import yaml

    from vgpuctl.core.cluster.build import build_snapshot

    root = Path(__file__).resolve().parents[2]
    objects = yaml.safe_load((root / "examples" / "clusters" / "healthy.yaml").read_text())["items"]
    snapshot = build_snapshot(objects)
    [node] = [n for n in snapshot.nodes if n.name == "npu-node-0"]
    used = {d.id: d.slices for d in node.devices}
    assert used == {"Ascend910B3-0": ["vir05_1c_16g"], "Ascend910B3-1": []}
    rows = node_rows(node, [])["vgpuctl_device_slices_in_use"]
    assert [(labels[1], labels[-1], n) for labels, n in rows] == [("Ascend910B3-0", "vir05_1c_16g", 1)]
