"""VGX002 on a malformed `volcano.sh/vgpu-ids-new`: what Volcano does with it depends on its version.

Evidence: volcano-sh/volcano 8b6d2c482 ("validate vgpu device annotation usage fields", first in
v1.16.0-alpha.0), `pkg/scheduler/api/devices/nvidia/vgpu/utils.go` decodeContainerDevices. Before it, a device
with fewer than 4 fields was indexed unchecked (the scheduler panics), memory and cores went through
`ParseInt(…, 10, 32)` with the error ignored (0) and a negative value was cast to uint (wraps). From it on, a
device with fewer than 4 fields, or whose memory or cores `ParseUint(…, 10, 32)` rejects, is logged with
klog.Errorf and skipped: the pod's usage of that GPU is never counted, so the GPU can be over-subscribed.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from tests.unit.doctor.cluster_builders import healthy_vgpu, vgpu_pod
from tests.unit.doctor.conftest import GPU_A, NOW, cluster, doctor, found
from vgpuctl.core.codecs.pod_alloc import decode_vgpu_ids


def _run(ids: str, version: str | None) -> list[str]:
    annotations = {"volcano.sh/bind-phase": "success",
                   "volcano.sh/bind-time": str(int((NOW - timedelta(hours=1)).timestamp())),
                   "volcano.sh/vgpu-node": "gpu-1", "volcano.sh/vgpu-ids-new": ids}
    pod = vgpu_pod("ml", "bad", annotations=annotations)
    report = doctor(cluster(*healthy_vgpu(pod), server_version="v1.31.4"), version=version)
    return [f.message for f in found(report, "VGX002")]


@pytest.mark.parametrize("version", ["1.15.1", "1.14.4"])
def test_short_entry_panics_the_scheduler_before_1_16(version: str) -> None:
    (message,) = _run(f"{GPU_A},NVIDIA,3072:", version)
    assert "has 3 fields, not 4" in message and "the scheduler panics" in message


@pytest.mark.parametrize("version", ["1.16.0-alpha.1", "1.16.0"])
def test_short_entry_is_skipped_from_1_16(version: str) -> None:
    (message,) = _run(f"{GPU_A},NVIDIA,3072:", version)
    assert "has 3 fields, not 4" in message and "panic" not in message
    assert "skips it" in message and "over-subscribed" in message


@pytest.mark.parametrize(("ids", "fragment"), [(f"{GPU_A},NVIDIA,-5,0:", 'memory "-5"'),
                                               (f"{GPU_A},NVIDIA,3072,x:", 'cores "x"'),
                                               (f"{GPU_A},NVIDIA,+3,0:", 'memory "+3"')])
def test_bad_numbers_are_skipped_from_1_16(ids: str, fragment: str) -> None:
    (message,) = _run(ids, "1.16.0")
    assert fragment in message and "not an unsigned 32-bit number" in message and "over-subscribed" in message
    # Before 1.16: -5 wraps, "x" reads 0 (both reported otherwise), and ParseInt takes "+3" as 3.
    assert all("over-subscribed" not in m for m in _run(ids, "1.15.1"))


def test_a_well_formed_entry_is_not_reported_on_any_version() -> None:
    for version in ("1.15.1", "1.16.0"):
        assert _run(f"{GPU_A},NVIDIA,3072,0:", version) == []


def test_the_1_16_reading_leaves_the_skipped_device_out() -> None:
    ids = f"{GPU_A},NVIDIA,-5,0:{GPU_A},NVIDIA,1024,10:"
    new = decode_vgpu_ids(ids, skips_bad_entries=True)
    assert [(d.memory, d.cores) for d in new.devices] == [(1024, 10)]
    old = decode_vgpu_ids(ids)
    assert [(d.memory, d.cores) for d in old.devices] == [(-5, 0), (1024, 10)]
