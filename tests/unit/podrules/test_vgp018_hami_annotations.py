"""VGP018: annotations HAMi's scheduler reads and Volcano ignores, naming what Volcano reads instead.

Evidence (volcano-sh/volcano master ed72c7c81, after v1.16.0-alpha.1):
- `pkg/scheduler/api/devices/nvidia/vgpu/type.go` declares the pod annotations the vGPU code reads:
  GPUInUse `nvidia.com/use-gputype`, GPUNoUse `nvidia.com/nouse-gputype` (read by checkGPUtype in
  `utils.go`), VGPUUseUUIDAnnotation `volcano.sh/vgpu-use-gpuuuid`, VGPUNoUseUUIDAnnotation
  `volcano.sh/vgpu-nouse-gpuuuid` (newGPUUUIDFilter), GPUModeAnnotation `volcano.sh/vgpu-mode`;
- `git grep` over `pkg/` finds no `nvidia.com/use-gpuuuid`, `nvidia.com/nouse-gpuuuid`, `nvidia.com/vgpu-mode`,
  `numa-bind` or `scheduler-policy`;
- `pkg/scheduler/api/devices/ascend/hami/device_info.go` InitDevices sets useUUIDAnno
  `hami.io/use-<commonWord>-uuid` and noUseUUIDAnno `hami.io/no-use-<commonWord>-uuid` on each device, and
  the file only copies those fields, never reads a pod annotation by them.
HAMi's own names are listed in the project's research notes (hami-spec, "User annotations").
"""

from __future__ import annotations

from typing import Any

import pytest

from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.podrules import review
from vgpuctl.core.versions import parse_version

from .conftest import WARNING, container, find, only, pod

VGPU = {"volcano.sh/vgpu-number": 1, "volcano.sh/vgpu-memory": 1000}
ASCEND = {"huawei.com/Ascend310P": 1, "huawei.com/Ascend310P-memory": 3000}
UUID = "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448"


def gpu_pod(annotations: dict[str, str], limits: dict[str, Any] | None = None) -> dict[str, Any]:
    return pod(container("trainer", limits=limits or VGPU), annotations=annotations)


@pytest.mark.parametrize(("key", "value", "instead"), [
    ("nvidia.com/use-gpuuuid", UUID, "Volcano reads volcano.sh/vgpu-use-gpuuuid"),
    ("nvidia.com/nouse-gpuuuid", UUID, "Volcano reads volcano.sh/vgpu-nouse-gpuuuid"),
    ("nvidia.com/vgpu-mode", "hami-core", "Volcano reads volcano.sh/vgpu-mode (hami-core or mig)"),
    ("hami.io/gpu-scheduler-policy", "spread", "deviceshare.SchedulePolicy"),
    ("hami.io/node-scheduler-policy", "binpack", "deviceshare.SchedulePolicy"),
    ("nvidia.com/numa-bind", "true", "Volcano has no equivalent"),
])
def test_hami_annotation_on_a_vgpu_pod(key: str, value: str, instead: str) -> None:
    r = review(gpu_pod({key: value}))
    f = only(r, "VGP018")
    assert (f.severity, f.subject) == (WARNING, f"annotation/{key}")
    assert key in f.message and "not by Volcano" in f.message and instead in f.message
    assert r.allowed is True  # a warning: the pod is admitted


@pytest.mark.parametrize(("key", "fragment"), [("hami.io/use-Ascend310P-uuid", "the Ascend310P NPUs it pins"),
                                               ("hami.io/no-use-Ascend310P-uuid", "the Ascend310P NPUs it excludes")])
def test_hami_npu_uuid_annotation_on_an_ascend_pod(key: str, fragment: str) -> None:
    f = only(review(gpu_pod({key: "some-npu-uuid"}, ASCEND)), "VGP018")
    assert f.subject == f"annotation/{key}" and fragment in f.message and "Volcano has no equivalent" in f.message


@pytest.mark.parametrize("annotations", [
    {"nvidia.com/use-gputype": "A100", "nvidia.com/nouse-gputype": "T4"},  # checkGPUtype reads both
    {"volcano.sh/vgpu-use-gpuuuid": UUID},
    {"volcano.sh/vgpu-mode": "hami-core"},
    {"hami.io/use-uuid": "x", "example.com/use-a-uuid": "x"},  # not HAMi's <commonWord> pattern
])
def test_annotations_volcano_reads_are_not_reported(annotations: dict[str, str]) -> None:
    assert find(review(gpu_pod(annotations)), "VGP018") == []


def test_a_pod_without_devices_is_not_judged() -> None:
    plain = pod(container("web"), annotations={"nvidia.com/use-gpuuuid": UUID})
    assert find(review(plain), "VGP018") == []


def test_the_uuid_replacement_names_its_version_on_an_older_volcano() -> None:
    facts = ClusterFacts(volcano_version=parse_version("v1.15.1"))
    f = only(review(gpu_pod({"nvidia.com/use-gpuuuid": UUID}), facts), "VGP018")
    assert "volcano.sh/vgpu-use-gpuuuid (from Volcano 1.16; 1.15.1 has no GPU UUID filter)" in f.message
