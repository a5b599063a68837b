"""Node checks (VGN001–VGN018 but VGN019): a triggering and a clean cluster for each code, versions, grouping."""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.doctor.conftest import (
    DEVICESHARE_VGPU,
    GPU_A,
    GPU_B,
    NOW,
    cluster,
    codes,
    doctor,
    found,
    node,
    pod,
    register,
    result,
    scheduler_cm,
    vgpu_node,
)
from tests.unit.doctor.nodes_builders import (
    ASCEND_REGISTER_KEY,
    DRIVER_OK,
    GPU_C,
    allocating_pod,
    ascend_daemonset,
    ascend_node,
    five_field,
    garbage,
    gpushare_node,
    mig_config,
    mindcluster_node,
    plugin_pod,
)
from vgpuctl.core.doctor import DoctorReport
from vgpuctl.core.doctor.framework import REGISTRY, Category, DoctorContext, Status
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.findings import Finding
from vgpuctl.core.versions import parse_version

# VGN019 is node-local (doctor --node)
NODE_CODES = [f"VGN{n:03d}" for n in (*range(1, 19), 20, 21, 22)]
DRA_LISTED = frozenset({"ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate"})


def gpu(name: str, *uuids: str, **kw: Any) -> dict[str, Any]:
    """A healthy vGPU node that also tells its driver version (so VGN017 stays quiet)."""
    return vgpu_node(name, *uuids, labels={**DRIVER_OK, **kw.pop("labels", {})}, **kw)


def only(report: DoctorReport, code: str) -> Finding:
    (finding,) = found(report, code)
    return finding


def node_codes(report: DoctorReport) -> list[tuple[str, str]]:
    return [c for c in codes(report) if c[0].startswith("VGN")]


# --- the whole category ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.11.0", "1.15.0", "1.16.0", None])
def test_healthy_nodes_of_every_family_pass_every_node_check(version: str | None) -> None:
    handshake = {"volcano.sh/node-vgpu-handshake": "Reported 2026-11-21 11:59:50.1 +0000 UTC m=+1.0"}
    snap = cluster(gpu("n1", annotations=handshake), gpu("n2", GPU_A, GPU_B, annotations=handshake),
                   gpushare_node("s1", unhealthy="1"), ascend_node("a1"), mindcluster_node("m1"), node("cpu"),
                   plugin_pod("n1"), pod("ml", "p", node="cpu"), kinds=DRA_LISTED)
    report = doctor(snap, version=version)
    rows = [r for r in report.results if r.check.category is Category.NODES]
    assert sorted(r.check.code for r in rows) == NODE_CODES
    assert {r.status for r in rows} == {Status.PASS}, [(r.check.code, r.findings) for r in rows if r.findings]


def test_garbage_nodes_never_break_a_check() -> None:
    snap = cluster(*garbage(), scheduler_cm(DEVICESHARE_VGPU + "      deviceshare.NodeLockEnable: true\n"
                                                               "      deviceshare.AscendHAMiVNPUEnable: true\n"))
    for version in ("1.11.0", "1.14.2", "1.15.0", "1.16.0", None):
        report = doctor(snap, version=version)
        broken = [(r.check.code, r.reason) for r in report.results
                  if r.check.category is Category.NODES and r.reason.startswith("internal error")]
        assert broken == []
        assert all(f.subject.startswith("node/") for r in report.results if r.check.category is Category.NODES
                   for f in r.findings)


def test_node_checks_themselves_never_raise_on_garbage() -> None:
    """Called directly, without the runner's safety net, and with objects even the snapshot reader chokes on."""
    snap = cluster(*garbage(), kinds=DRA_LISTED)
    snap.daemonsets.append({"kind": "DaemonSet", "spec": {"template": {"spec": {"containers": 5}}}})
    snap.pods.append({"kind": "Pod", "spec": {"nodeName": "g1", "containers": 5}})
    assert snap.resource_slices is not None
    snap.resource_slices += [
        {"kind": "ResourceSlice", "spec": {"nodeName": "g1", "driver": "gpu.nvidia.com",
                                           "devices": [5, {"attributes": 7}, {"basic": {"attributes": {"uuid": 5}}},
                                                       {"attributes": {"uuid": {"string": 5}, "parentUUID": []}}]}},
        {"kind": "ResourceSlice", "spec": {"nodeName": 5, "driver": ["x"]}}, {"kind": "ResourceSlice", "spec": 5}]
    for version in ("1.11.0", "1.15.0", None):
        ctx = DoctorContext(snapshot=snap, facts=ClusterFacts(), volcano_version=parse_version(version) if version
                            else None, version_source="test", now=NOW)
        for c in REGISTRY.values():
            if c.category is Category.NODES:
                assert all(isinstance(f, Finding) for f in c.fn(ctx))


def test_every_codec_finding_on_a_node_is_reported_exactly_once() -> None:
    bad_vgpu = node("v1", annotations={"volcano.sh/node-vgpu-register": f"{GPU_A},10,x,AMD,true:"},
                    allocatable={"volcano.sh/vgpu-number": "10"})
    bad_npu = ascend_node("a1", register="[{\"id\": 5}]")
    snap = cluster(bad_vgpu, bad_npu)
    node_findings = [f for n in snap.nodes for f in n.findings]
    assert {f.code for f in node_findings} == {"VGN002", "VGN003", "VGN015"}
    reported = [f for r in doctor(snap).results for f in r.findings]
    for f in node_findings:
        assert reported.count(f) == 1, f


def test_the_same_problem_on_three_nodes_is_one_grouped_finding() -> None:
    zero = {"volcano.sh/vgpu-memory": "0"}
    report = doctor(cluster(*(gpu(f"n{i}", allocatable=zero) for i in (1, 2, 3)), gpu("ok")), version="1.15.1")
    grouped = [f for f in report.findings() if f.finding.code == "VGN004"]
    assert len(grouped) == 1
    assert grouped[0].subjects == ("node/n1", "node/n2", "node/n3")
    assert len([f for f in report.findings(group=False) if f.finding.code == "VGN004"]) == 3


def test_handshake_missing_on_many_nodes_groups_too() -> None:
    report = doctor(cluster(*(gpu(f"n{i}") for i in range(5))), version="1.15.0")
    (grouped,) = [f for f in report.findings() if f.finding.code == "VGN006"]
    assert len(grouped.subjects) == 5 and "node/" not in grouped.finding.message


# --- VGN001–VGN003: the register annotation --------------------------------------------------------------------


def test_vgn001_plugin_pod_or_vgpu_allocatable_without_register() -> None:
    report = doctor(cluster(node("p1", labels=DRIVER_OK), plugin_pod("p1"),
                            node("p2", allocatable={"volcano.sh/vgpu-number": "10"}, labels=DRIVER_OK)))
    by_subject = {f.subject: f for f in found(report, "VGN001")}
    assert set(by_subject) == {"node/p1", "node/p2"}
    assert by_subject["node/p1"].severity.value == "error"
    assert "a volcano-vgpu-device-plugin pod runs here" in by_subject["node/p1"].message
    assert "allocatable has volcano.sh/vgpu-* resources" in by_subject["node/p2"].message
    clean = doctor(cluster(gpu("n1"), plugin_pod("n1"), node("cpu"), pod("ml", "p", node="cpu"),
                           plugin_pod("cpu2", image="nvcr.io/nvidia/k8s-device-plugin:v0.17.0"), node("cpu2")))
    assert found(clean, "VGN001") == []


def test_vgn002_five_fields_are_an_error_from_volcano_1_12_only() -> None:
    snap = cluster(node("old", annotations={"volcano.sh/node-vgpu-register": five_field(GPU_A)},
                        allocatable={"volcano.sh/vgpu-number": "10", "volcano.sh/vgpu-memory": "40960",
                                     "volcano.sh/vgpu-cores": "100"}, labels=DRIVER_OK))
    finding = only(doctor(snap, version="1.12.0"), "VGN002")
    assert (finding.severity.value, finding.subject) == ("error", "node/old")
    assert "Volcano ≥ 1.12 needs 6" in finding.message and "v1.9.x" in finding.message
    assert found(doctor(snap), "VGN002") != []  # unknown version: the newest is assumed
    on_111 = doctor(snap, version="1.11.0")
    assert found(on_111, "VGN002") == [] and found(on_111, "VGN003") == []
    assert found(doctor(cluster(gpu("n1")), version="1.12.0"), "VGN002") == []


def test_vgn003_malformed_entries_and_the_pre_1_12_panic() -> None:
    bad = node("bad", annotations={"volcano.sh/node-vgpu-register": f"{GPU_A},ten,40960,NVIDIA-X,true,hami-core:"})
    finding = only(doctor(cluster(bad)), "VGN003")
    assert finding.subject == "node/bad" and "is not an integer" in finding.message
    four = node("four", annotations={"volcano.sh/node-vgpu-register": f"{GPU_A},10,40960,NVIDIA-X:"})
    old = doctor(cluster(four), version="1.11.0")
    assert "panics" in only(old, "VGN003").message and found(old, "VGN002") == []
    new = doctor(cluster(four), version="1.16.0")
    assert found(new, "VGN003") == [] and len(found(new, "VGN002")) == 1
    assert found(doctor(cluster(gpu("n1"))), "VGN003") == []


# --- VGN004–VGN006: what makes Volcano drop a vGPU node ---------------------------------------------------------


def test_vgn004_allocatable_missing_or_zero_depends_on_the_version() -> None:
    zero = gpu("z", allocatable={"volcano.sh/vgpu-memory": "0"})
    finding = only(doctor(cluster(zero), version="1.15.1"), "VGN004")
    assert (finding.severity.value, finding.subject) == ("error", "node/z")
    assert "volcano.sh/vgpu-memory is 0" in finding.message and "ignores the node" in finding.message
    assert found(doctor(cluster(zero), version="1.15.1"), "VGN013") == []  # a 0 is VGN004's, not a disagreement
    assert "ignores the node" in only(doctor(cluster(zero), version="1.14.3"), "VGN004").message
    generic = only(doctor(cluster(zero), version="1.14.2"), "VGN004")
    assert "generic resource check" in generic.message
    assert found(doctor(cluster(zero), version="1.12.0"), "VGN004") == []
    missing = node("m", annotations={"volcano.sh/node-vgpu-register": register(GPU_A)},
                   allocatable={"volcano.sh/vgpu-number": "10", "volcano.sh/vgpu-memory": "40960"})
    assert "volcano.sh/vgpu-cores is missing" in only(doctor(cluster(missing)), "VGN004").message
    assert found(doctor(cluster(gpu("ok")), version="1.16.0"), "VGN004") == []


def test_vgn005_too_many_memory_units_recommends_a_factor() -> None:
    uuids = [f"GPU-{i:08d}-0000-0000-0000-000000000000" for i in range(8)]
    big = gpu("big", *uuids, devmem=81920, allocatable={"volcano.sh/vgpu-memory": "0"})
    finding = only(doctor(cluster(big)), "VGN005")
    assert (finding.severity.value, finding.subject) == ("error", "node/big")
    assert "655360 memory units" in finding.message and "gpuMemoryFactor to at least 11" in finding.message
    assert found(doctor(cluster(gpu("big", *uuids, devmem=81920))), "VGN005") == []  # advertised: fine
    small = gpu("small", allocatable={"volcano.sh/vgpu-memory": "0"})
    assert found(doctor(cluster(small)), "VGN005") == []  # 0 for another reason: only VGN004


@pytest.mark.parametrize(("value", "fragment"), [
    (None, "no volcano.sh/node-vgpu-handshake"),
    ("Deleted_2026.11.21 11:00:00", "Deleted_"),
    ("Requesting_2026.11.21 11:58:00", "more than 60 s"),
    ("Requesting", "panics"),
    ("Requesting_yesterday", "year 1"),
])
def test_vgn006_handshake_required_by_old_volcano(value: str | None, fragment: str) -> None:
    annotations = {"volcano.sh/node-vgpu-handshake": value} if value is not None else {}
    snap = cluster(gpu("n1", annotations=annotations))
    finding = only(doctor(snap, version="1.15.0"), "VGN006")
    assert (finding.severity.value, finding.subject) == ("error", "node/n1")
    assert fragment in finding.message and "1.15.0" in finding.message
    assert found(doctor(snap, version="1.15.1"), "VGN006") == []  # handshake-free Volcano ignores it
    assert found(doctor(snap), "VGN006") == []


@pytest.mark.parametrize("value", ["Requesting_2026.11.21 11:59:30", "Reported 2026-11-21 11:59:50.1 +0000 UTC",
                                   "Reported_2026.11.21 11:59:50", "Reported whenever"])
def test_vgn006_fresh_or_reported_handshakes_pass(value: str) -> None:
    snap = cluster(gpu("n1", annotations={"volcano.sh/node-vgpu-handshake": value}))
    assert found(doctor(snap, version="1.14.2"), "VGN006") == []


# --- VGN007–VGN010: devices and modes ---------------------------------------------------------------------------


def test_vgn007_unhealthy_gpu_is_still_scheduled() -> None:
    sick = gpu("n1", annotations={"volcano.sh/node-vgpu-register": register(GPU_A, health="false")})
    finding = only(doctor(cluster(sick)), "VGN007")
    assert (finding.severity.value, finding.subject) == ("warning", "node/n1")
    assert "1 GPU(s) registered with health=false" in finding.message
    assert found(doctor(cluster(gpu("n1"))), "VGN007") == []


def test_vgn008_mig_gpu_without_a_geometry_model() -> None:
    snap = cluster(gpu("mig", mode="mig", allocatable={"volcano.sh/vgpu-number": "10"}))
    finding = only(doctor(snap), "VGN008")
    assert (finding.severity.value, finding.subject) == ("error", "node/mig")
    assert "'NVIDIA-NVIDIA A100-PCIE-40GB' is registered as mig" in finding.message
    assert "built-in defaults" in finding.message and "hami-core" in finding.message
    other_model = cluster(gpu("mig", mode="mig"), mig_config(model="A100-SXM4-80GB"))
    assert "built-in" not in only(doctor(other_model), "VGN008").message
    assert found(doctor(cluster(gpu("mig", mode="mig"), mig_config())), "VGN008") == []
    assert found(doctor(cluster(gpu("n1"))), "VGN008") == []  # hami-core needs no geometry


def test_vgn009_mixed_modes_on_one_node() -> None:
    mixed = register(GPU_A, mode="mig") + register(GPU_B, mode="mps")
    snap = cluster(gpu("n1", GPU_A, GPU_B, annotations={"volcano.sh/node-vgpu-register": mixed}), mig_config())
    finding = only(doctor(snap), "VGN009")
    assert (finding.severity.value, finding.subject) == ("warning", "node/n1")
    assert "modes hami-core, mig" in finding.message and "last GPU (hami-core)" in finding.message
    same = register(GPU_A, mode="hami-core") + register(GPU_B, mode="mps")  # both hami-core for Volcano
    assert found(doctor(cluster(gpu("n1", GPU_A, GPU_B, annotations={"volcano.sh/node-vgpu-register": same}))),
                 "VGN009") == []


def test_vgn010_largest_mig_instance_below_the_registered_memory() -> None:
    snap = cluster(gpu("mig", mode="mig"), mig_config(largest=40192))
    finding = only(doctor(snap), "VGN010")
    assert (finding.severity.value, finding.subject) == ("warning", "node/mig")
    assert "40192 MiB, below the registered 40960 MiB" in finding.message
    assert found(doctor(cluster(gpu("mig", mode="mig"), mig_config(largest=40960))), "VGN010") == []
    assert found(doctor(cluster(gpu("n1"), mig_config(largest=1))), "VGN010") == []  # not a MIG node


# --- VGN011–VGN013: locks, HAMi's plugin, consistency -----------------------------------------------------------


def test_vgn011_young_lock_without_an_allocating_pod() -> None:
    locked = gpu("n1", annotations={"hamivgpu": "2026-11-21T11:58:00Z"})
    finding = only(doctor(cluster(locked)), "VGN011")
    assert (finding.severity.value, finding.subject) == ("warning", "node/n1")
    assert "lock 'hamivgpu' is younger than 5 minutes" in finding.message
    assert found(doctor(cluster(locked, allocating_pod("n1"))), "VGN011") == []
    assert found(doctor(cluster(gpu("n1", annotations={"hamivgpu": "2026-11-21T11:50:00Z"}))), "VGN011") == []
    hami_form = gpu("n1", annotations={"hami.io/mutex.lock": "2026-11-21T11:00:00Z,ml,p"})
    assert "HAMi's" in only(doctor(cluster(hami_form)), "VGN011").message
    assert found(doctor(cluster(scheduler_cm(DEVICESHARE_VGPU), locked)), "VGN011") == []  # NodeLockEnable off


def test_vgn011_ascend_locks_under_the_common_word_on_1_14_and_1_15() -> None:
    snap = cluster(ascend_node("a1", annotations={"Ascend310P": "2026-11-21T11:59:00Z"}))
    assert "'Ascend310P'" in only(doctor(snap, version="1.15.1"), "VGN011").message
    assert found(doctor(snap, version="1.16.0"), "VGN011") == []


def test_vgn012_hami_register_alone_or_next_to_volcano() -> None:
    hami = '[{"id":"GPU-1","count":10,"devmem":40960,"devcore":100,"type":"NVIDIA A100","health":true}]'
    same = hami.replace("GPU-1", GPU_A)
    both = cluster(gpu("n1", annotations={"hami.io/node-nvidia-register": same}))
    finding = only(doctor(both), "VGN012")
    assert (finding.severity.value, finding.subject) == ("error", "node/n1")
    assert "two device plugins" in finding.message and "HAMi ≥ v2.8" in finding.message
    assert f"both register {GPU_A}:" in finding.message
    # made exact: HAMi and Volcano registering different GPUs (a filterdevices split) offer none twice
    split = only(doctor(cluster(gpu("n1", annotations={"hami.io/node-nvidia-register": hami}))), "VGN012")
    assert split.severity.value == "warning" and "none is offered twice" in split.message
    # HAMi's older field forms are read too: the 7-field form of HAMi ≤ v2.4
    seven = f"{GPU_A},10,40960,100,NVIDIA-NVIDIA A100-PCIE-40GB,0,true:"
    old = only(doctor(cluster(gpu("n1", annotations={"hami.io/node-nvidia-register": seven}))), "VGN012")
    assert old.severity.value == "error" and "HAMi ≤ v2.4" in old.message and GPU_A in old.message
    alone = node("h1", annotations={"hami.io/node-nvidia-register": hami}, labels=DRIVER_OK)
    warning = only(doctor(cluster(scheduler_cm(DEVICESHARE_VGPU), alone)), "VGN012")
    assert warning.severity.value == "warning" and "Volcano vGPU sees no GPU here" in warning.message
    no_vgpu = scheduler_cm('actions: "allocate"\ntiers:\n- plugins:\n  - name: predicates\n')
    assert found(doctor(cluster(no_vgpu, alone)), "VGN012") == []  # HAMi's own scheduler may use it
    assert found(doctor(cluster(gpu("n1"))), "VGN012") == []


def test_vgn013_allocatable_disagrees_with_the_register() -> None:
    finding = only(doctor(cluster(gpu("n1", allocatable={"volcano.sh/vgpu-number": "7"}))), "VGN013")
    assert (finding.severity.value, finding.subject) == ("warning", "node/n1")
    assert "volcano.sh/vgpu-number is 7 but the register annotation gives 10" in finding.message
    scaled = cluster(gpu("n1"), mig_config(deviceCoreScaling=2))
    assert "gives 200 (1 GPU(s) × 100 × deviceCoreScaling 2)" in only(doctor(scaled), "VGN013").message
    assert found(doctor(cluster(gpu("n1", GPU_A, GPU_B, GPU_C))), "VGN013") == []


# --- VGN014–VGN018: gpushare, Ascend, driver --------------------------------------------------------------------


def test_vgn014_gpushare_capacity_and_unhealthy_ids() -> None:
    finding = only(doctor(cluster(gpushare_node("s1", memory=None))), "VGN014")
    assert (finding.severity.value, finding.subject) == ("error", "node/s1")
    assert "volcano.sh/gpu-memory is missing" in finding.message
    assert "gpu-number is 0" in only(doctor(cluster(gpushare_node("s1", number="0"))), "VGN014").message
    assert "not a card index" in only(doctor(cluster(gpushare_node("s1", unhealthy="0,x"))), "VGN014").message
    assert "outside 0..1" in only(doctor(cluster(gpushare_node("s1", unhealthy="5"))), "VGN014").message
    assert found(doctor(cluster(gpushare_node("s1", unhealthy="0,1"), gpu("n1"))), "VGN014") == []


def test_vgn015_ascend_hami_register_missing_invalid_or_bad_flag() -> None:
    hami_on = scheduler_cm(DEVICESHARE_VGPU + "      deviceshare.AscendHAMiVNPUEnable: true\n")
    unregistered = node("a1", labels={"ascend": "on"}, allocatable={"huawei.com/Ascend310P": "7"})
    finding = only(doctor(cluster(hami_on, unregistered)), "VGN015")
    assert (finding.severity.value, finding.subject) == ("error", "node/a1")
    assert f"allocatable huawei.com/Ascend310P is 7 but there is no {ASCEND_REGISTER_KEY}" in finding.message
    invalid = only(doctor(cluster(hami_on, ascend_node("a1", register="{nope"))), "VGN015")
    assert invalid.severity.value == "error" and "not valid JSON" in invalid.message
    flag = cluster(ascend_node("a1", annotations={"hami-vnpu-core": "yes"}))
    warning = only(doctor(flag, version="1.16.0"), "VGN015")
    assert warning.severity.value == "warning" and 'not "true" or "false"' in warning.message
    assert found(doctor(flag, version="1.15.1"), "VGN015") == []  # Volcano < 1.16 never reads the flag
    assert found(doctor(cluster(hami_on, ascend_node("a1"), mindcluster_node("m1"))), "VGN015") == []


@pytest.mark.parametrize(("kw", "fragment"), [
    ({"accelerator": None, "chip": None}, "missing label(s) accelerator, node.kubernetes.io/npu.chip.name"),
    ({"cores": "0"}, "huawei.com/npu-core is 0"),
    ({"cores": "12"}, "12 is not a multiple of the 8 cores per chip"),
    ({"servertype": "Ascend310P"}, "no cores-per-chip number"),
    ({"servertype": "Ascend310P-6", "cores": "12"}, "6 cores per chip"),
])
def test_vgn016_mindcluster_labels_and_whole_chips(kw: dict[str, Any], fragment: str) -> None:
    finding = only(doctor(cluster(mindcluster_node("m1", **kw))), "VGN016")
    assert (finding.severity.value, finding.subject) == ("error", "node/m1")
    assert fragment in finding.message


def test_vgn016_good_mindcluster_nodes_pass() -> None:
    snap = cluster(mindcluster_node("m1"), mindcluster_node("m2", servertype="Ascend310P-10-dual", cores="20"))
    assert found(doctor(snap), "VGN016") == []


@pytest.mark.parametrize(("labels", "severity", "fragment"), [
    ({"nvidia.com/cuda.driver-version.full": "418.87.01"}, "error", "NVIDIA driver 418.87.01"),
    ({"nvidia.com/cuda.driver.major": "440"}, "error", "is 440 or older"),
    ({}, "info", "vgpuctl doctor --node"),
    ({"nvidia.com/cuda.driver-version.full": "beta"}, "info", "unreadable"),
])
def test_vgn017_driver_version_from_labels(labels: dict[str, str], severity: str, fragment: str) -> None:
    finding = only(doctor(cluster(vgpu_node("n1", labels=labels))), "VGN017")
    assert (finding.severity.value, finding.subject, fragment in finding.message) == (severity, "node/n1", True)


def test_vgn017_new_driver_or_no_gpu_is_quiet() -> None:
    assert found(doctor(cluster(gpu("n1"), node("cpu"), mindcluster_node("m1"))), "VGN017") == []


def test_vgn018_ascend_hami_node_without_the_plugin_label() -> None:
    unlabelled = ascend_node("a1", labels={"ascend": "off"})
    finding = only(doctor(cluster(unlabelled)), "VGN018")
    assert (finding.severity.value, finding.subject) == ("error", "node/a1")
    assert "no label ascend=on" in finding.message and "does not run here" in finding.message
    custom = doctor(cluster(ascend_daemonset({"npu": "yes"}), ascend_node("a1")))
    assert "no label npu=yes: DaemonSet kube-system/hami-ascend-device-plugin" in only(custom, "VGN018").message
    assert found(doctor(cluster(ascend_daemonset(None), unlabelled)), "VGN018") == []  # selects every node
    assert found(doctor(cluster(ascend_node("a1"), mindcluster_node("m1"), gpu("n1"))), "VGN018") == []


def test_vgn018_hami_mode_node_advertising_npus_but_never_registered() -> None:
    hami_on = scheduler_cm(DEVICESHARE_VGPU + "      deviceshare.AscendHAMiVNPUEnable: true\n")
    bare = node("a1", allocatable={"huawei.com/Ascend310P": "7"})
    assert node_codes(doctor(cluster(hami_on, bare))) == [("VGN015", "error"), ("VGN018", "error")]
    assert found(doctor(cluster(bare)), "VGN018") == []  # HAMi mode not enabled: too little to call it HAMi's


def test_results_name_their_checks() -> None:
    report = doctor(cluster(gpu("n1")))
    assert result(report, "VGN011").check.id == "nodes.locks"
    assert all(r.check.reads[0] == "nodes" for r in report.results if r.check.category is Category.NODES)
