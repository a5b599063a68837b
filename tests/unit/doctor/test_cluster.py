"""Cluster, component, webhook and existing-pod checks (VGK001–VGK007, VGX001–VGX003): each triggered and not."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from tests.unit.doctor.cluster_builders import (
    ASCEND_HAMI_IMAGE,
    DEVICESHARE_ASCEND_HAMI,
    DEVICESHARE_MINDCLUSTER,
    MINDCLUSTER_PLUGIN_IMAGE,
    ds_status,
    healthy_vgpu,
    plugin_pod,
    scheduler,
    typed_vgpu_node,
    vgpu_plugin,
    vgpu_pod,
    webhook,
)
from tests.unit.doctor.conftest import (
    GPU_A,
    GPU_B,
    NOW,
    cluster,
    doctor,
    found,
    node,
    pod,
    scheduler_cm,
    vgpu_node,
    workload,
)
from vgpuctl.core import podrules, spec
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.rule_facts import facts_from_snapshot
from vgpuctl.core.doctor import DoctorReport
from vgpuctl.core.doctor.checks.cluster import preset_virtual_device
from vgpuctl.core.doctor.checks.workloads import (
    SHAPE_ANNOTATIONS,
    SHAPE_LABELS,
    SHAPE_PRESENCE_ANNOTATIONS,
    compact_facts,
)
from vgpuctl.core.doctor.framework import REGISTRY, CheckResult, DoctorContext, Status
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.podrules import review

ERROR, WARNING = Severity.ERROR, Severity.WARNING


def by_id(report: DoctorReport, check_id: str) -> CheckResult:
    return next(r for r in report.results if r.check.id == check_id)


def one(report: DoctorReport, code: str) -> Finding:
    findings = found(report, code)
    assert len(findings) == 1, findings
    return findings[0]


def run(*objects: dict[str, Any], version: str | None = "1.15.1", server_version: str | None = "v1.31.4",
        **kw: Any) -> DoctorReport:
    return doctor(cluster(*objects, server_version=server_version), version=version, **kw)


def test_healthy_cluster_raises_no_cluster_or_workload_finding() -> None:
    report = run(*healthy_vgpu(vgpu_pod("ml", "train"), webhook()))
    ours = [r for r in report.results if r.check.code.startswith(("VGK", "VGX"))]
    assert {r.check.id for r in ours} == {c for c in REGISTRY if REGISTRY[c].code.startswith(("VGK", "VGX"))}
    assert [(r.check.id, r.findings) for r in ours if r.status is not Status.PASS] == []


# ---- VGK001 ---------------------------------------------------------------------------------------

def test_vgk001_surfaces_read_problems_and_skips_the_checks_that_needed_the_resource() -> None:
    problem = Finding("VGK001", ERROR, "pods", "list pods: 403 Forbidden (system:serviceaccount:x cannot list pods)")
    report = run(*healthy_vgpu(), unreadable=frozenset({"pods"}), read_problems=(problem,))
    assert found(report, "VGK001") == [problem]
    assert by_id(report, "kubernetes.api").status is Status.FAIL
    for skipped in ("workloads.bind-phase", "workloads.allocations", "workloads.pod-rules", "device-plugins.nodes"):
        result = by_id(report, skipped)
        assert result.status is Status.SKIP
        assert result.reason == "could not list pods (VGK001)"
    assert by_id(report, "device-plugins.present").status is Status.PASS  # reads DaemonSets only


def test_vgk001_passes_without_read_problems() -> None:
    assert by_id(run(*healthy_vgpu()), "kubernetes.api").status is Status.PASS


# ---- VGK002 ---------------------------------------------------------------------------------------

def test_vgk002_kubernetes_older_than_1_16() -> None:
    f = one(run(*healthy_vgpu(), server_version="v1.15.12-eks-a1b2c3"), "VGK002")
    assert (f.severity, f.subject) == (ERROR, "cluster")
    assert "Kubernetes v1.15.12-eks-a1b2c3 is older than 1.16" in f.message


def test_vgk002_falls_back_to_the_oldest_kubelet() -> None:
    report = run(scheduler_cm(), scheduler(), node("old", kubelet="v1.14.10"), node("new"), server_version=None)
    assert "v1.14.10" in one(report, "VGK002").message


@pytest.mark.parametrize("server_version", ["v1.16.0", "v1.31.4", None])
def test_vgk002_not_raised_for_1_16_or_unknown(server_version: str | None) -> None:
    snap = cluster(scheduler_cm(), scheduler(), node("n", kubelet=""), server_version=server_version)
    assert found(doctor(snap, version="1.15.1"), "VGK002") == []


# ---- VGK003 ---------------------------------------------------------------------------------------

def test_vgk003_volcano_not_installed() -> None:
    report = run(scheduler_cm(), vgpu_node("gpu-1"), version=None)
    f = one(report, "VGK003")
    assert (f.severity, f.subject) == (ERROR, "deployment/volcano-system/volcano-scheduler")
    assert "no vc-scheduler Deployment or pod found (although its ConfigMap" in f.message
    assert "Volcano is not installed" in f.message


def test_vgk003_installed_as_a_deployment_or_seen_as_a_pod() -> None:
    assert found(run(scheduler_cm(), scheduler()), "VGK003") == []
    scheduler_pod = pod("volcano-system", "volcano-scheduler-0", node="cp",
                        containers=[{"name": "s", "image": "volcanosh/vc-scheduler:v1.15.1"}])
    assert found(run(scheduler_cm(), scheduler_pod), "VGK003") == []


def test_vgk003_installed_check_is_skipped_when_deployments_are_unreadable() -> None:
    report = run(scheduler_cm(), unreadable=frozenset({"deployments"}))
    assert by_id(report, "volcano.installed").status is Status.SKIP


def test_vgk003_vgpu_mode_pods_on_volcano_older_than_1_12() -> None:
    mode_pod = vgpu_pod("ml", "mig", annotations={"volcano.sh/vgpu-mode": "mig"})
    report = run(scheduler_cm(), scheduler("v1.11.2"), vgpu_node("gpu-1"), mode_pod, version=None)
    findings = [f for f in found(report, "VGK003") if "vgpu-mode" in f.message]
    assert len(findings) == 1
    f = findings[0]
    assert (f.severity, f.subject) == (ERROR, "deployment/volcano-system/volcano-scheduler")
    assert "Volcano 1.11.2 is older than volcano.sh/vgpu-mode needs (>= 1.12; 1 pod(s) set it)" in f.message


def test_vgk003_vnpu_families_and_hami_core_mode() -> None:
    vnpu_pod = pod("ml", "npu", annotations={"huawei.com/vnpu-mode": "hami-core"})
    report = run(scheduler_cm(DEVICESHARE_ASCEND_HAMI), scheduler("v1.13.0"), vnpu_pod, version=None)
    messages = [f.message for f in found(report, "VGK003")]
    assert any("vNPU (AscendHAMiVNPUEnable) needs (>= 1.14" in m for m in messages)
    assert any("huawei.com/vnpu-mode: hami-core needs (>= 1.16; 1 pod(s) set it)" in m for m in messages)


def test_vgk003_not_raised_on_a_recent_enough_or_unknown_version() -> None:
    mode_pod = vgpu_pod("ml", "mig", annotations={"volcano.sh/vgpu-mode": "mig",
                                                  "huawei.com/vnpu-mode": "hami-core"})
    assert found(run(*healthy_vgpu(mode_pod), version="1.16.0"), "VGK003") == []
    unknown = doctor(cluster(scheduler_cm(), mode_pod, pod("volcano-system", "s", containers=[
        {"name": "s", "image": "volcanosh/vc-scheduler:latest"}])))
    assert found(unknown, "VGK003") == []


# ---- VGK004 ---------------------------------------------------------------------------------------

def test_vgk004_plugin_daemonset_missing_for_an_enabled_family() -> None:
    report = run(scheduler_cm(), scheduler(), vgpu_node("gpu-1"))
    f = one(report, "VGK004")
    assert (f.severity, f.subject) == (ERROR, "daemonset/kube-system/volcano-device-plugin")
    assert "deviceshare.VGPUEnable is on but no DaemonSet runs the vGPU device plugin" in f.message


def test_vgk004_ascend_plugin_missing_is_named_after_the_hami_daemonset() -> None:
    report = run(scheduler_cm(DEVICESHARE_ASCEND_HAMI), scheduler())
    assert one(report, "VGK004").subject == "daemonset/kube-system/hami-ascend-device-plugin"


def test_vgk004_daemonset_that_schedules_nowhere_or_has_nothing_ready() -> None:
    selector = {"ascend": "on"}
    nowhere = workload("DaemonSet", "kube-system", "hami-ascend-device-plugin", ASCEND_HAMI_IMAGE,
                       status=ds_status(0, 0), node_selector=selector)
    f = one(run(scheduler_cm(DEVICESHARE_ASCEND_HAMI), scheduler(), nowhere), "VGK004")
    assert (f.severity, f.subject) == (ERROR, "daemonset/kube-system/hami-ascend-device-plugin")
    assert "schedules no pod (its nodeSelector ascend=on matches no node)" in f.message

    report = run(scheduler_cm(), scheduler(), vgpu_plugin(status=ds_status(3, 0)))
    assert "none of the 3 vGPU device plugin pods is ready" in one(report, "VGK004").message


def test_vgk004_no_plugin_pod_on_a_device_node() -> None:
    report = run(*healthy_vgpu(nodes=("gpu-1",)), vgpu_node("gpu-2"))
    f = one(report, "VGK004")
    assert (f.severity, f.subject) == (ERROR, "node/gpu-2")
    assert "no vGPU device plugin pod runs on this node" in f.message


def test_vgk004_node_selector_that_excludes_a_device_node() -> None:
    objects = [scheduler_cm(), scheduler(), vgpu_plugin(status=ds_status(1, 1), node_selector={"gpu": "on"}),
               vgpu_node("gpu-1", labels={"gpu": "on"}), plugin_pod("gpu-1"), vgpu_node("gpu-2")]
    f = one(run(*objects), "VGK004")
    assert f.subject == "node/gpu-2"
    assert "the DaemonSet's nodeSelector gpu=on does not match this node" in f.message


def test_vgk004_plugin_pod_crashing_on_a_device_node() -> None:
    objects = [scheduler_cm(), scheduler(), vgpu_plugin(status=ds_status(2, 1)), vgpu_node("gpu-1"),
               vgpu_node("gpu-2"), plugin_pod("gpu-1"), plugin_pod("gpu-2", waiting="CrashLoopBackOff")]
    f = one(run(*objects), "VGK004")
    assert (f.severity, f.subject) == (ERROR, "node/gpu-2")
    assert "not ready (CrashLoopBackOff: usually NVML cannot load" in f.message


def test_vgk004_crashes_on_cpu_nodes_are_not_reported() -> None:
    """The vGPU DaemonSet has no nodeSelector: crashing on CPU nodes is expected noise
    (docs/device-plugins.md#vgpu-plugin-prerequisites)."""
    objects = [*healthy_vgpu(), node("cpu-1"), plugin_pod("cpu-1", waiting="CrashLoopBackOff")]
    objects[2] = vgpu_plugin(status=ds_status(2, 1))
    assert found(run(*objects), "VGK004") == []


def test_vgk004_unlabelled_gpu_node_that_should_run_the_plugin() -> None:
    report = run(*healthy_vgpu(), node("gpu-new", labels={"nvidia.com/gpu.present": "true"}))
    assert one(report, "VGK004").subject == "node/gpu-new"


def test_vgk004_plugin_pods_found_by_image_when_no_owner_is_recorded() -> None:
    objects = [scheduler_cm(), scheduler(), vgpu_plugin(), vgpu_node("gpu-1"), plugin_pod("gpu-1", owned=False)]
    assert found(run(*objects), "VGK004") == []


def test_vgk004_nodes_not_judged_when_the_snapshot_holds_none_of_the_plugin_pods() -> None:
    """E.g. pods read from one namespace only: the DaemonSet says pods are ready, the snapshot has none."""
    objects = [scheduler_cm(), scheduler(), vgpu_plugin(status=ds_status(2, 2)), vgpu_node("gpu-1"),
               vgpu_node("gpu-2")]
    assert found(run(*objects), "VGK004") == []


def test_vgk004_not_raised_when_no_family_is_enabled() -> None:
    conf = "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n"
    assert found(run(scheduler_cm(conf), scheduler()), "VGK004") == []


# ---- VGK005 ---------------------------------------------------------------------------------------

def test_vgk005_five_field_plugin_with_volcano_1_12_or_later() -> None:
    objects = healthy_vgpu()
    objects[2] = vgpu_plugin("projecthami/volcano-vgpu-device-plugin:v1.9.4", status=ds_status(1, 1))
    f = one(run(*objects), "VGK005")
    assert (f.severity, f.subject) == (ERROR, "daemonset/kube-system/volcano-device-plugin")
    assert "v1.9.4 writes 5-field register entries; Volcano 1.15.1 needs 6" in f.message


@pytest.mark.parametrize("tag", ["v1.13.0", "latest"])
def test_vgk005_handshake_free_plugin_with_a_handshake_era_volcano(tag: str) -> None:
    objects = healthy_vgpu()
    objects[2] = vgpu_plugin(f"projecthami/volcano-vgpu-device-plugin:{tag}", status=ds_status(1, 1))
    f = one(run(*objects, version="1.15.0"), "VGK005")
    assert f.severity is ERROR
    assert f"{tag}{' (taken to be a build from main)' if tag == 'latest' else ''} no longer writes" in f.message
    assert "Volcano 1.15.0 requires it and ignores every vGPU node" in f.message


@pytest.mark.parametrize(("tag", "volcano"), [("v1.12.0", "1.15.0"), ("v1.12.0", "1.15.1"), ("v1.13.0", "1.14.3"),
                                              ("latest", "1.16.0"), ("v1.9.4", "1.11.0"), ("sha-abc", "1.12.0")])
def test_vgk005_not_raised_for_compatible_pairs(tag: str, volcano: str) -> None:
    objects = healthy_vgpu()
    objects[2] = vgpu_plugin(f"projecthami/volcano-vgpu-device-plugin:{tag}", status=ds_status(1, 1))
    assert found(run(*objects, version=volcano), "VGK005") == []


def test_vgk005_unknown_volcano_version_assumes_the_newest() -> None:
    objects = [scheduler_cm(), vgpu_plugin("projecthami/volcano-vgpu-device-plugin:v1.9.4")]
    f = one(doctor(cluster(*objects)), "VGK005")
    assert "Volcano 1.16.0 (assumed: version unknown)" in f.message


# ---- VGK006 ---------------------------------------------------------------------------------------

def test_vgk006_webhook_without_ready_replicas() -> None:
    f = one(run(*healthy_vgpu(webhook(replicas=2, ready=None))), "VGK006")
    assert (f.severity, f.subject) == (ERROR, "deployment/vgpuctl-system/vgpuctl-webhook")
    assert "none of the 2 webhook replicas is ready" in f.message
    assert "failurePolicy: Fail" in f.message


def test_vgk006_webhook_scaled_to_zero_or_partly_ready() -> None:
    assert "scaled to 0 replicas" in one(run(webhook(replicas=0, ready=None)), "VGK006").message
    f = one(run(webhook(replicas=3, ready=1)), "VGK006")
    assert f.severity is WARNING
    assert "only 1 of 3 webhook replicas are ready" in f.message


def test_vgk006_not_raised_when_ready_absent_or_unobserved() -> None:
    assert found(run(*healthy_vgpu(webhook())), "VGK006") == []
    assert found(run(*healthy_vgpu()), "VGK006") == []  # the webhook is optional
    unobserved = workload("Deployment", "vgpuctl-system", "vgpuctl-webhook", "ghcr.io/vgpuctl/vgpuctl:0.1.0")
    assert found(run(unobserved), "VGK006") == []


# ---- VGK007 ---------------------------------------------------------------------------------------

MINDCLUSTER_ARGS = ["device-plugin -useAscendDocker=true -volcanoType=true -presetVirtualDevice=false "
                    "-logFile=/var/log/mindx-dl/devicePlugin/devicePlugin.log -logLevel=0"]


def mindcluster_objects(args: list[str] | None = None) -> list[dict[str, Any]]:
    return [scheduler_cm(DEVICESHARE_MINDCLUSTER), scheduler(),
            workload("DaemonSet", "mindx-dl", "noded", "noded:v26.0.0"),
            workload("Deployment", "mindx-dl", "clusterd", "clusterd:v26.0.0"),
            workload("DaemonSet", "kube-system", "ascend-device-plugin-daemonset", MINDCLUSTER_PLUGIN_IMAGE,
                     args=MINDCLUSTER_ARGS if args is None else args)]


def test_vgk007_mindcluster_components_missing() -> None:
    report = run(scheduler_cm(DEVICESHARE_MINDCLUSTER), scheduler())
    findings = found(report, "VGK007")
    assert [(f.severity, f.subject) for f in findings] == [
        (ERROR, "daemonset/mindx-dl/noded"), (ERROR, "deployment/mindx-dl/clusterd"),
        (ERROR, "daemonset/kube-system/ascend-device-plugin-daemonset")]
    assert "NodeD is not installed" in findings[0].message
    assert "ClusterD is not installed" in findings[1].message


@pytest.mark.parametrize("args", [["-presetVirtualDevice=true"], ["device-plugin -volcanoType=true"]])
def test_vgk007_device_plugin_without_preset_virtual_device_false(args: list[str]) -> None:
    f = one(run(*mindcluster_objects(args)), "VGK007")
    assert (f.severity, f.subject) == (ERROR, "daemonset/kube-system/ascend-device-plugin-daemonset")
    assert "-presetVirtualDevice is true" in f.message


def test_vgk007_not_raised_when_everything_is_there() -> None:
    assert found(run(*mindcluster_objects()), "VGK007") == []
    assert found(run(*mindcluster_objects(["device-plugin", "--presetVirtualDevice=False"])), "VGK007") == []
    assert found(run(*healthy_vgpu()), "VGK007") == []  # MindCluster off


def test_vgk007_clusterd_not_needed_without_the_cluster_info_manager() -> None:
    conf = DEVICESHARE_MINDCLUSTER + '    useClusterInfoManager: "false"\n'
    objects = [o for o in mindcluster_objects() if o["metadata"]["name"] != "clusterd"]
    objects[0] = scheduler_cm(conf)
    assert found(run(*objects), "VGK007") == []


@pytest.mark.parametrize(("args", "value"), [
    ([], True), (["-presetVirtualDevice"], True), (["-presetVirtualDevice=0"], False),
    (["-presetVirtualDevice=false", "-presetVirtualDevice=true"], True), (["-presetVirtualDevice=no"], None)])
def test_preset_virtual_device_reads_go_flags(args: list[str], value: bool | None) -> None:
    ds = workload("DaemonSet", "kube-system", "p", MINDCLUSTER_PLUGIN_IMAGE, args=args)
    assert preset_virtual_device(ds) is value


# ---- VGX001 ---------------------------------------------------------------------------------------

def bind(phase: str, ago: timedelta, node: str = "gpu-1") -> dict[str, str]:
    return {"volcano.sh/bind-phase": phase, "volcano.sh/bind-time": str(int((NOW - ago).timestamp())),
            "volcano.sh/vgpu-node": node, "volcano.sh/vgpu-ids-new": f"{GPU_A},NVIDIA,3072,0:"}


def test_vgx001_allocating_for_more_than_five_minutes() -> None:
    stuck = vgpu_pod("ml", "stuck", annotations=bind("allocating", timedelta(minutes=12)), phase="Pending")
    f = one(run(*healthy_vgpu(stuck)), "VGX001")
    assert (f.severity, f.subject) == (WARNING, "pod/ml/stuck")
    assert "allocating for more than 5 minutes on node gpu-1" in f.message
    assert "stuck" not in f.message  # grouped across pods


def test_vgx001_bind_phase_failed() -> None:
    failed = vgpu_pod("ml", "refused", annotations=bind("failed", timedelta(minutes=1)), phase="Failed")
    f = one(run(*healthy_vgpu(failed)), "VGX001")
    assert (f.severity, f.subject) == (WARNING, "pod/ml/refused")
    assert "bind-phase is failed on node gpu-1" in f.message


def test_vgx001_many_stuck_pods_group_into_one_finding() -> None:
    stuck = [vgpu_pod("ml", f"p{i}", annotations=bind("allocating", timedelta(hours=1)), phase="Pending")
             for i in range(4)]
    grouped = [f for f in run(*healthy_vgpu(*stuck)).findings() if f.finding.code == "VGX001"]
    assert len(grouped) == 1
    assert grouped[0].subjects == ("pod/ml/p0", "pod/ml/p1", "pod/ml/p2", "pod/ml/p3")


@pytest.mark.parametrize(("phase", "ago", "pod_phase"), [
    ("allocating", timedelta(minutes=4), "Pending"), ("success", timedelta(hours=1), "Running"),
    ("allocating", timedelta(hours=1), "Succeeded"), ("failed", timedelta(hours=1), "Succeeded")])
def test_vgx001_not_raised(phase: str, ago: timedelta, pod_phase: str) -> None:
    p = vgpu_pod("ml", "p", annotations=bind(phase, ago), phase=pod_phase)
    assert found(run(*healthy_vgpu(p)), "VGX001") == []


# ---- VGX002 ---------------------------------------------------------------------------------------

def test_vgx002_vgpu_node_differs_from_the_bound_node() -> None:
    moved = vgpu_pod("ml", "moved", node="gpu-2", annotations=bind("success", timedelta(hours=1), node="gpu-1"))
    f = one(run(*healthy_vgpu(moved, nodes=("gpu-1", "gpu-2"))), "VGX002")
    assert (f.severity, f.subject) == (WARNING, "pod/ml/moved")
    assert "volcano.sh/vgpu-node is 'gpu-1' but the pod runs on node gpu-2" in f.message


def test_vgx002_vgpu_ids_name_a_gpu_not_on_the_node() -> None:
    annotations = bind("success", timedelta(hours=1))
    annotations["volcano.sh/vgpu-ids-new"] = f"{GPU_B},NVIDIA,3072,0:"
    f = one(run(*healthy_vgpu(vgpu_pod("ml", "ghost", annotations=annotations))), "VGX002")
    assert (f.severity, f.subject) == (WARNING, "pod/ml/ghost")
    assert f"names GPU {GPU_B}, which node gpu-1 does not register" in f.message


def test_vgx002_malformed_vgpu_ids() -> None:
    annotations = bind("success", timedelta(hours=1))
    annotations["volcano.sh/vgpu-ids-new"] = f"{GPU_A},NVIDIA,3072:"
    f = one(run(*healthy_vgpu(vgpu_pod("ml", "short", annotations=annotations))), "VGX002")
    assert "has 3 fields, not 4" in f.message


def test_vgx002_not_raised_for_consistent_or_finished_pods() -> None:
    good = vgpu_pod("ml", "good", annotations=bind("success", timedelta(hours=1)))
    done = vgpu_pod("ml", "done", node="gpu-2", phase="Succeeded",
                    annotations=bind("success", timedelta(hours=1), node="gpu-1"))
    assert found(run(*healthy_vgpu(good, done, nodes=("gpu-1", "gpu-2"))), "VGX002") == []


# ---- VGX003 ---------------------------------------------------------------------------------------

def test_vgx003_reports_pod_rule_violations_under_their_own_code() -> None:
    report = run(*healthy_vgpu(vgpu_pod("ml", "train", memory="3Gi")))
    f = one(report, "VGP005")
    assert (f.severity, f.subject) == (ERROR, "pod/ml/train/container/main")
    assert 'volcano.sh/vgpu-memory "3Gi" carries a unit suffix' in f.message
    result = by_id(report, "workloads.pod-rules")
    assert (result.check.code, result.status, result.findings) == ("VGX003", Status.FAIL, [f])


def test_vgx003_a_pod_with_containers_of_the_wrong_type_does_not_stop_the_review_of_the_others() -> None:
    """`containers: 5` (a hand-written snapshot) is no list of containers: that pod asks for no device, and
    the pods after it are still reviewed (the check used to fail with an internal TypeError)."""
    broken = pod("ml", "broken", node="gpu-1", containers=[])
    broken["spec"]["containers"] = 5
    odd_init = vgpu_pod("ml", "train", memory="3Gi")
    odd_init["spec"]["initContainers"] = True
    report = run(*healthy_vgpu(broken, odd_init))
    result = by_id(report, "workloads.pod-rules")
    assert "internal error" not in result.reason
    assert [(f.code, f.subject) for f in result.findings] == [
        ("VGL001", "pod/ml/train/spec"), ("VGP005", "pod/ml/train/container/main")]


def test_vgx003_pods_whose_values_cannot_be_a_key_are_reviewed_each_on_its_own() -> None:
    """An annotation the rules read holding a list, or a limit holding a map (a hand-written snapshot), makes no
    shape key: each such pod is reviewed alone, as a pod with a key is, and the check does not fail."""
    listed = [vgpu_pod("ml", f"listed-{i}", memory="3Gi") for i in range(2)]
    for obj in listed:
        obj["metadata"].setdefault("annotations", {})[spec.ANN_VGPU_MODE] = ["mig"]
    mapped = vgpu_pod("ml", "mapped", memory="3Gi")
    mapped["spec"]["containers"][0]["resources"]["limits"]["volcano.sh/vgpu-cores"] = {"n": 1}
    report = run(*healthy_vgpu(*listed, mapped))
    result = by_id(report, "workloads.pod-rules")
    assert "internal error" not in result.reason
    expected = []
    for obj in (*listed, mapped):
        name = obj["metadata"]["name"]
        expected += [(f.code, f"pod/ml/{name}/{f.subject}" if f.subject else f"pod/ml/{name}")
                     for f in review(obj, existing=True).findings if f.severity is not Severity.INFO]
    assert sorted((f.code, f.subject) for f in result.findings) == sorted(expected)
    assert {"VGP005"} <= {code for code, _ in expected}


def test_vgx003_existing_pods_are_not_defaulted() -> None:
    memory_only = pod("ml", "mem", node="gpu-1", containers=[
        {"name": "main", "resources": {"limits": {"volcano.sh/vgpu-memory": "1024"}}}])
    f = one(run(*healthy_vgpu(memory_only)), "VGP002")
    assert (f.severity, f.subject) == (ERROR, "pod/ml/mem/container/main")


def test_vgx003_leaves_out_the_rules_info_findings() -> None:
    """VGP017 says what a request resolves to: worth knowing at admission, not a problem of a running pod."""
    whole = pod("ml", "whole", node="gpu-1", containers=[
        {"name": "main", "resources": {"limits": {"volcano.sh/vgpu-number": "1"}}}])
    assert review(whole, existing=True).findings[0].code == "VGP017"
    assert by_id(run(*healthy_vgpu(whole)), "workloads.pod-rules").findings == []


def test_vgx003_not_raised_for_good_plain_or_finished_pods() -> None:
    bad_but_done = vgpu_pod("ml", "done", memory="3Gi", phase="Succeeded")
    plain = pod("ml", "web", node="cpu-1", scheduler="default-scheduler")
    report = run(*healthy_vgpu(vgpu_pod("ml", "train"), bad_but_done, plain))
    assert by_id(report, "workloads.pod-rules").findings == []


def test_vgx003_groups_40000_vgpu_pods_on_5000_nodes_into_one_finding() -> None:
    """The benchmark fleet's shape: every pod a vGPU pod, every node 8 GPUs with their own UUIDs. (Its speed is
    benchmarks/doctor_scale.py's business: timings are never asserted in tests on shared machines.)"""
    nodes = [vgpu_node(f"gpu-{n:04d}", *(f"GPU-{n:08d}-0000-0000-0000-{g:012d}" for g in range(8)))
             for n in range(5_000)]
    pods = [vgpu_pod(f"team-{i % 40}", f"train-{i:06d}", node=f"gpu-{i // 8:04d}",
                     memory=("4096", "8192", "3Gi")[i % 3],
                     annotations={"scheduling.k8s.io/group-name": f"job-{i // 8}",
                                  "volcano.sh/bind-time": str(1_762_070_400 + i)}) for i in range(40_000)]
    snap = build_snapshot([scheduler_cm(), *nodes, *pods], "v1.31.4")
    ctx = DoctorContext(snapshot=snap, facts=facts_from_snapshot(snap), volcano_version=None,
                        version_source="unknown", now=NOW)
    findings = list(REGISTRY["workloads.pod-rules"].fn(ctx))
    assert len(findings) == 13_333
    assert {(f.code, f.message) for f in findings} == {(findings[0].code, findings[0].message)}  # one group
    assert findings[0].subject == "pod/team-2/train-000002/container/main"


def test_vgx003_check_equals_a_review_of_every_pod() -> None:
    """Shape caching and compact facts never change a verdict: the check is a plain per-pod review."""
    nodes = [vgpu_node("a1", GPU_A), vgpu_node("a2", "GPU-33333333-3333-3333-3333-333333333333"),
             typed_vgpu_node("h1", GPU_B, devmem=81920, kind="NVIDIA-NVIDIA H100-SXM5-80GB"),
             typed_vgpu_node("h2", "GPU-44444444-4444-4444-4444-444444444444", GPU_A, devmem=81920,
                             kind="NVIDIA-NVIDIA H100-SXM5-80GB")]
    variants: list[dict[str, Any]] = [
        vgpu_pod("ml", "fits", memory="40000"), vgpu_pod("ml", "too-big", memory="90000"),
        vgpu_pod("ml", "typed", memory="50000", annotations={"nvidia.com/use-gputype": "A100"}),
        vgpu_pod("ml", "typed-2", memory="50000", annotations={"nvidia.com/use-gputype": "H100"}),
        vgpu_pod("ml", "no-type", annotations={"nvidia.com/use-gputype": "V100"}),
        vgpu_pod("ml", "uuid", annotations={"volcano.sh/vgpu-use-gpuuuid": GPU_B}),
        vgpu_pod("ml", "uuid-unknown", annotations={"volcano.sh/vgpu-use-gpuuuid":
                                                    "GPU-99999999-9999-9999-9999-999999999999"}),
        vgpu_pod("ml", "spread", annotations={"volcano.sh/vgpu-podgroup-policy": "spread"}),
        vgpu_pod("ml", "spread-group", annotations={"volcano.sh/vgpu-podgroup-policy": "spread",
                                                    "scheduling.k8s.io/group-name": "g"}),
        pod("ml", "three", node="h2", containers=[
            {"name": "a", "resources": {"limits": {"volcano.sh/vgpu-number": "3"}}}]),
        pod("ml", "other", node="h2", containers=[
            {"name": "b", "resources": {"limits": {"volcano.sh/vgpu-number": "3"}}}]),
        pod("ml", "priv", node="a1", containers=[{"name": "a", "securityContext": {"privileged": True},
                                                  "resources": {"limits": {"volcano.sh/vgpu-number": "1"}}}]),
        pod("ml", "web", node="a1", scheduler="default-scheduler", containers=[
            {"name": "a", "resources": {"limits": {"volcano.sh/vgpu-number": "1"}}}]),
        pod("ml", "broken", node="a1", annotations={"volcano.sh/vgpu-mode": "mig"},
            containers="not-a-list"),  # type: ignore[arg-type]
        pod("ml", "npu", node="a1", labels={"ring-controller.atlas": "ascend-310P"}, containers=[
            {"name": "a", "resources": {"limits": {"huawei.com/npu-core": "3"}}}]),
    ]
    twins = [{**p, "metadata": {**p["metadata"], "name": p["metadata"]["name"] + "-twin", "annotations": {
        **p["metadata"]["annotations"], "volcano.sh/bind-time": "1"}}} for p in variants]
    snap = build_snapshot([scheduler_cm(), *nodes, *variants, *twins], "v1.31.4")
    facts = facts_from_snapshot(snap)
    ctx = DoctorContext(snapshot=snap, facts=facts, volcano_version=None, version_source="unknown", now=NOW)
    expected = []
    for p in snap.pods:
        subject = f"pod/{p['metadata']['namespace']}/{p['metadata']['name']}"
        expected += [(f.code, f.severity, f"{subject}/{f.subject}" if f.subject else subject, f.message)
                     for f in review(p, facts, existing=True).findings if f.severity is not Severity.INFO]
    got = [(f.code, f.severity, f.subject, f.message) for f in REGISTRY["workloads.pod-rules"].fn(ctx)]
    assert got == expected
    assert {code for code, *_ in got} >= {"VGP003", "VGP005", "VGP010", "VGP011", "VGP012", "VGP015", "VGP016",
                                          "VGL001", "VGA002"}


def test_compact_facts_collapse_identical_nodes_only() -> None:
    snap = build_snapshot([vgpu_node(f"n{i}", f"GPU-{i:08d}-0000-0000-0000-000000000000") for i in range(50)]
                          + [vgpu_node("big", GPU_A, GPU_B)], None)
    facts = facts_from_snapshot(snap)
    compact = compact_facts(facts)
    assert len(compact.vgpu_nodes or ()) == 2
    assert compact.max_gpus_per_node == facts.max_gpus_per_node == 2
    assert {d.type for d in compact.gpu_devices or ()} == {d.type for d in facts.gpu_devices or ()}
    assert compact_facts(compact) is compact


def test_the_shape_key_covers_everything_the_pod_rules_read() -> None:
    """A pod rule reading a new annotation, label or spec field must be added to the shape key."""
    source = "\n".join(p.read_text() for p in Path(podrules.__file__).parent.glob("*.py"))
    read = {getattr(spec, name) for name in re.findall(r"spec\.((?:ANN|LABEL)_[A-Z0-9_]+)", source)}
    assert read <= SHAPE_ANNOTATIONS | SHAPE_PRESENCE_ANNOTATIONS | SHAPE_LABELS
    assert re.findall(r"(?:annotations|labels)\.get\(\s*[\"']", source) == []
    assert set(re.findall(r"target\.spec\.get\(\"(\w+)\"\)", source)) == {"schedulerName", "nodeName",
                                                                        "runtimeClassName", "containers",
                                                                        "resourceClaims"}
