"""VGK005 beyond the vGPU plugin: the volcano-sh/devices plugin against gpu-number, and the doctor and
install reading one matrix (`vgpuctl.core.versions`)."""

from __future__ import annotations

import pytest

from tests.unit.doctor.cluster_builders import ds_status, scheduler
from tests.unit.doctor.conftest import DEVICESHARE_VGPU, cluster, doctor, found, scheduler_cm, workload
from vgpuctl.core.findings import Severity
from vgpuctl.core.install.modes import InstallError, Mode
from vgpuctl.core.install.plugins import choose_version
from vgpuctl.core.versions import parse_version

GPU_NUMBER = DEVICESHARE_VGPU.replace("deviceshare.VGPUEnable: true", "deviceshare.GPUNumberEnable: true")
GPU_SHARING = DEVICESHARE_VGPU.replace("deviceshare.VGPUEnable: true", "deviceshare.GPUSharingEnable: true")


def gpushare_plugin(tag: str) -> dict[str, object]:
    return workload("DaemonSet", "kube-system", "volcano-device-plugin", f"volcanosh/volcano-device-plugin:{tag}",
                    status=ds_status(1, 1))


def vgpu_plugin(tag: str) -> dict[str, object]:
    return workload("DaemonSet", "kube-system", "volcano-device-plugin",
                    f"docker.io/projecthami/volcano-vgpu-device-plugin:{tag}", status=ds_status(1, 1))


def test_vgk005_release_gpushare_plugin_with_gpu_number() -> None:
    report = doctor(cluster(scheduler_cm(GPU_NUMBER), scheduler(), gpushare_plugin("v1.0.0")), version="1.15.1")
    (f,) = found(report, "VGK005")
    assert (f.severity, f.subject) == (Severity.ERROR, "daemonset/kube-system/volcano-device-plugin")
    assert "GPU sharing device plugin v1.0.0 predates --gpu-strategy" in f.message
    assert "sees every GPU of its node" in f.message


@pytest.mark.parametrize(("conf", "tag"), [(GPU_SHARING, "v1.0.0"), (GPU_NUMBER, "latest"), (GPU_NUMBER, "master"),
                                           (GPU_SHARING, "latest")])
def test_vgk005_not_raised_for_working_gpushare_plugins(conf: str, tag: str) -> None:
    report = doctor(cluster(scheduler_cm(conf), scheduler(), gpushare_plugin(tag)), version="1.15.1")
    assert found(report, "VGK005") == []


@pytest.mark.parametrize("volcano", ["1.11.0", "1.12.0", "1.14.2", "1.14.3", "1.15.0", "1.15.1", "1.16.0"])
@pytest.mark.parametrize("tag", ["v1.9.4", "v1.10.0", "v1.12.0", "v1.13.0", "latest"])
def test_install_refuses_exactly_the_vgpu_builds_the_doctor_flags(volcano: str, tag: str) -> None:
    flagged = bool(found(doctor(cluster(scheduler_cm(), scheduler(f"v{volcano}"), vgpu_plugin(tag)), version=volcano),
                         "VGK005"))
    try:
        choose_version(Mode.VGPU, parse_version(volcano), tag)
        refused = False
    except InstallError:
        refused = True
    assert refused is flagged


@pytest.mark.parametrize("tag", ["v1.0.0", "latest"])
def test_install_refuses_exactly_the_gpu_number_builds_the_doctor_flags(tag: str) -> None:
    flagged = bool(found(doctor(cluster(scheduler_cm(GPU_NUMBER), scheduler(), gpushare_plugin(tag)),
                                version="1.15.1"), "VGK005"))
    try:
        choose_version(Mode.GPUNUMBER, parse_version("1.15.1"), tag)
        refused = False
    except InstallError:
        refused = True
    assert refused is flagged
