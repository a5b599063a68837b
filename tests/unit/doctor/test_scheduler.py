"""Scheduler-configuration checks (VGC001–VGC013): a triggering and a clean cluster for each code."""

from __future__ import annotations

import pytest

from tests.unit.doctor.conftest import (
    DEVICESHARE_VGPU,
    cluster,
    configmap,
    doctor,
    found,
    pod,
    result,
    scheduler_cm,
    vgpu_node,
)
from vgpuctl.core.doctor.framework import Status


def conf_with(arguments: str, *, actions: str = "enqueue, allocate, backfill", predicates: bool = True,
              extra: str = "") -> str:
    pred = "  - name: predicates\n" if predicates else ""
    args = "".join(f"      {line}\n" for line in arguments.strip().splitlines())
    return (f'actions: "{actions}"\ntiers:\n- plugins:\n{pred}  - name: deviceshare\n    arguments:\n{args}'
            f"{extra}")


HEALTHY = conf_with("deviceshare.VGPUEnable: true\ndeviceshare.ScheduleWeight: 10\ndeviceshare.SchedulePolicy: binpack")


def test_a_healthy_configuration_passes_every_scheduler_check() -> None:
    report = doctor(cluster(scheduler_cm(HEALTHY), vgpu_node("n1")), version="1.15.1")
    rows = [r for r in report.results if r.check.category.value == "scheduler-config"]
    assert {r.status for r in rows} == {Status.PASS}
    assert len(rows) == 14


def test_vgc001_missing_and_unparseable() -> None:
    missing = doctor(cluster(vgpu_node("n1")))
    assert found(missing, "VGC001")[0].message.startswith("ConfigMap volcano-system/volcano-scheduler-configmap")
    dependent = result(missing, "VGC003")
    assert dependent.status is Status.SKIP and "depends on" in dependent.reason
    broken = doctor(cluster(scheduler_cm("tiers: [")))
    assert "not valid YAML" in found(broken, "VGC001")[0].message
    no_key = doctor(cluster(configmap("volcano-system", "volcano-scheduler-configmap", {"other": ""})))
    assert "has no data key" in found(no_key, "VGC001")[0].message


def test_vgc002_device_nodes_without_deviceshare() -> None:
    conf = 'actions: "allocate"\ntiers:\n- plugins:\n  - name: predicates\n'
    report = doctor(cluster(scheduler_cm(conf), vgpu_node("n1"), vgpu_node("n2")))
    (finding,) = found(report, "VGC002")
    assert finding.severity.value == "error" and "2 node(s) register vgpu devices" in finding.message
    assert found(doctor(cluster(scheduler_cm(conf))), "VGC002") == []  # no device nodes: nothing to say


def test_vgc003_deviceshare_without_predicates() -> None:
    report = doctor(cluster(scheduler_cm(conf_with("deviceshare.VGPUEnable: true", predicates=False))))
    assert "allocation annotations" in found(report, "VGC003")[0].message
    assert found(doctor(cluster(scheduler_cm(HEALTHY))), "VGC003") == []


@pytest.mark.parametrize("args", ["deviceshare.GPUSharingEnable: true\ndeviceshare.GPUNumberEnable: true",
                                  "deviceshare.GPUNumberEnable: true\ndeviceshare.VGPUEnable: 'true'"])
def test_vgc004_fatal_combinations(args: str) -> None:
    (finding,) = found(doctor(cluster(scheduler_cm(conf_with(args)))), "VGC004")
    assert "exits" in finding.message


def test_vgc004_allowed_combination() -> None:
    args = "deviceshare.VGPUEnable: true\ndeviceshare.AscendHAMiVNPUEnable: true"
    assert found(doctor(cluster(scheduler_cm(conf_with(args)))), "VGC004") == []


def test_vgc005_quoted_yes_is_silently_false() -> None:
    report = doctor(cluster(scheduler_cm(conf_with('deviceshare.VGPUEnable: "yes"'))))
    (finding,) = found(report, "VGC005")
    assert "deviceshare.VGPUEnable" in finding.message and "ParseBool" in finding.message
    assert found(doctor(cluster(scheduler_cm(conf_with('deviceshare.VGPUEnable: "True"')))), "VGC005") == []


@pytest.mark.parametrize(("weight", "fragment"), [(None, "absent or 0"), ("0", "absent or 0"), ('"10"', "quoted"),
                                                  ("10.0", "not an integer")])
def test_vgc006_weight(weight: str | None, fragment: str) -> None:
    args = "deviceshare.VGPUEnable: true" + (f"\ndeviceshare.ScheduleWeight: {weight}" if weight else "")
    (finding,) = found(doctor(cluster(scheduler_cm(conf_with(args)))), "VGC006")
    assert finding.severity.value == "warning" and fragment in finding.message


@pytest.mark.parametrize(("enable", "weight", "fragment"), [
    ('"yes"', '"10"', "quoted"), ('"yes"', "10.0", "not an integer"), ("false", '"10"', "quoted")])
def test_vgc006_type_error_is_reported_whatever_the_enable_flags_say(enable: str, weight: str,
                                                                     fragment: str) -> None:
    """Both mistakes in one round trip: an unreadable `VGPUEnable` (VGC005) leaves no family on, yet
    the weight Volcano's GetInt ignores (volcano-sh/volcano `pkg/scheduler/framework/arguments.go`) is
    still reported."""
    args = f"deviceshare.VGPUEnable: {enable}\ndeviceshare.ScheduleWeight: {weight}"
    report = doctor(cluster(scheduler_cm(conf_with(args)), vgpu_node("n1")))
    (finding,) = found(report, "VGC006")
    assert fragment in finding.message and "deviceshare.ScheduleWeight" in finding.message
    if enable == '"yes"':
        assert found(report, "VGC005")


def test_vgc006_absent_weight_needs_a_family_on() -> None:
    assert found(doctor(cluster(scheduler_cm(conf_with('deviceshare.VGPUEnable: "yes"')))), "VGC006") == []


def test_vgc007_policy_is_case_sensitive() -> None:
    args = "deviceshare.VGPUEnable: true\ndeviceshare.ScheduleWeight: 1\ndeviceshare.SchedulePolicy: Binpack"
    assert "'Binpack'" in found(doctor(cluster(scheduler_cm(conf_with(args)))), "VGC007")[0].message
    assert found(doctor(cluster(scheduler_cm(HEALTHY))), "VGC007") == []


def test_vgc008_unknown_key_with_did_you_mean() -> None:
    args = "deviceshare.VGPUEnable: true\ndeviceshare.KnowGeometriesCMName: my-config\ndeviceshare.NvidiaHAMiEnable: x"
    messages = [f.message for f in found(doctor(cluster(scheduler_cm(conf_with(args)))), "VGC008")]
    assert any("did you mean deviceshare.KnownGeometriesCMName?" in m for m in messages)
    assert any(m.startswith("deviceshare.NvidiaHAMiEnable is not") for m in messages)


def test_vgc009_exclusive_rules() -> None:
    bad = conf_with("deviceshare.VGPUEnable: true\ndeviceshare.GPUExclusiveRules:\n- {priority: 1}\n- {}")
    messages = [f.message for f in found(doctor(cluster(scheduler_cm(bad))), "VGC009")]
    assert len(messages) == 2 and "not strings" in messages[0] and "non-empty" in messages[1]
    good = conf_with('deviceshare.VGPUEnable: true\ndeviceshare.GPUExclusiveRules:\n- {team: "a"}')
    assert found(doctor(cluster(scheduler_cm(good))), "VGC009") == []


def test_vgc010_keys_the_version_does_not_have() -> None:
    args = "deviceshare.VGPUEnable: true\ndeviceshare.AscendHAMiVNPUEnable: true\ndeviceshare.GPUExclusiveRules: []"
    old = doctor(cluster(scheduler_cm(conf_with(args))), version="1.13.0")
    messages = " ".join(f.message for f in found(old, "VGC010"))
    assert "AscendHAMiVNPUEnable (needs ≥ 1.14)" in messages and "GPUExclusiveRules (needs ≥ 1.15)" in messages
    assert found(doctor(cluster(scheduler_cm(conf_with(args))), version="1.15.1"), "VGC010") == []
    legacy = ('actions: "allocate"\ntiers:\n- plugins:\n  - name: predicates\n    arguments:\n'
              "      predicate.VGPUEnable: true\n")
    assert "Volcano 1.8 form" in found(doctor(cluster(scheduler_cm(legacy)), version="1.12.0"), "VGC010")[0].message


def test_vgc011_device_config_changed_after_the_scheduler_started() -> None:
    scheduler = pod("volcano-system", "volcano-scheduler-0", containers=[
        {"name": "s", "image": "volcanosh/vc-scheduler:v1.15.1"}])
    scheduler["status"]["startTime"] = "2026-11-20T10:00:00Z"
    late = configmap("kube-system", "volcano-vgpu-device-config", {"device-config.yaml": "nvidia: {}"},
                     creationTimestamp="2026-11-21T09:00:00Z")
    report = doctor(cluster(scheduler_cm(HEALTHY, creationTimestamp="2026-11-01T00:00:00Z"), scheduler, late))
    (finding,) = found(report, "VGC011")
    assert finding.subject == "configmap/kube-system/volcano-vgpu-device-config" and "restart" in finding.message
    early = dict(late, metadata={**late["metadata"], "creationTimestamp": "2026-11-19T09:00:00Z"})
    assert found(doctor(cluster(scheduler_cm(HEALTHY), scheduler, early)), "VGC011") == []


def test_vgc012_mindcluster_preset_virtual_device() -> None:
    args = "deviceshare.AscendMindClusterVNPUEnable: true"
    assert "absent" in found(doctor(cluster(scheduler_cm(conf_with(args)))), "VGC012")[0].message
    init = 'configurations:\n- name: init-params\n  arguments: {presetVirtualDevice: "false"}\n'
    preset = conf_with(args, extra=init)
    assert found(doctor(cluster(scheduler_cm(preset))), "VGC012") == []


def test_vgc013_allocate_missing() -> None:
    assert "without allocate" in found(doctor(cluster(scheduler_cm(conf_with("deviceshare.VGPUEnable: true",
                                                                            actions="enqueue, backfill")))),
                                       "VGC013")[0].message
    assert found(doctor(cluster(scheduler_cm(DEVICESHARE_VGPU))), "VGC013") == []
