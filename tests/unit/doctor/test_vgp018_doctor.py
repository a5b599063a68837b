"""VGP018 on existing pods (doctor VGX003): the per-shape review must tell apart pods that differ only by a
HAMi-only annotation.

Evidence: volcano-sh/volcano ed72c7c81 `pkg/scheduler/api/devices/ascend/hami/device_info.go` (InitDevices
builds `hami.io/use-<commonWord>-uuid` names that nothing reads) and `pkg/scheduler/api/devices/nvidia/vgpu/
type.go` (Volcano's own `volcano.sh/vgpu-*` annotations).
"""

from __future__ import annotations

from tests.unit.doctor.cluster_builders import healthy_vgpu, vgpu_pod
from tests.unit.doctor.conftest import cluster, doctor, found


def test_doctor_reports_the_hami_annotation_on_that_pod_only() -> None:
    plain = vgpu_pod("ml", "plain", annotations={"team": "a"})
    pinned = vgpu_pod("ml", "pinned", annotations={"team": "a", "hami.io/use-Ascend910B3-uuid": "npu-1"})
    pinned_gpu = vgpu_pod("ml", "pinned-gpu", annotations={"team": "a", "nvidia.com/use-gpuuuid": "GPU-1"})
    report = doctor(cluster(*healthy_vgpu(plain, pinned, pinned_gpu), server_version="v1.31.4"), version="1.15.1")
    subjects = sorted(f.subject for f in found(report, "VGP018"))
    assert subjects == ["pod/ml/pinned-gpu/annotation/nvidia.com/use-gpuuuid",
                        "pod/ml/pinned/annotation/hami.io/use-Ascend910B3-uuid"]
