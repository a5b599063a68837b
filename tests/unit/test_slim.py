"""What the cluster-aware webhook keeps of a watched pod (`core.slim`), and the same cap in the codecs the
doctor, `nodes` and `why` read with (issue 23 item 2: ~2,000 pods with a 256 KiB junk annotation took
every replica past its memory limit)."""

from __future__ import annotations

import sys
from datetime import UTC, datetime
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.codecs.ascend_pod import decode_npu_core
from vgpuctl.core.codecs.pod_alloc import decode_gpu_index, decode_vgpu_ids
from vgpuctl.core.doctor import diagnose
from vgpuctl.core.slim import MAX_CONTAINERS, MAX_RESOURCES, slim_pod

UUID = "GPU-11111111-1111-1111-1111-111111111111"
IDS = f"{UUID},NVIDIA,2048,30:"


def _pod(annotations: dict[str, Any], limits: dict[str, Any] | None = None, containers: int = 1,
         **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": "p", "namespace": "ml", "annotations": annotations, **meta},
            "spec": {"nodeName": "gpu-a", "containers": [
                {"name": f"c{i}", "image": "x", "resources": {"limits": dict(limits or {})}}
                for i in range(containers)]},
            "status": {"phase": "Running"}}


def _size(obj: Any) -> int:
    """Deep size of a JSON-like value in bytes (what the view keeps per pod)."""
    if isinstance(obj, dict):
        return sys.getsizeof(obj) + sum(_size(k) + _size(v) for k, v in obj.items())
    if isinstance(obj, list):
        return sys.getsizeof(obj) + sum(_size(v) for v in obj)
    return sys.getsizeof(obj)


def test_only_the_annotations_the_model_reads_are_kept() -> None:
    kept = slim_pod(_pod({spec.ANN_VGPU_IDS_NEW: IDS, "volcano.sh/junk": "x" * 1000, "team": "a",
                          spec.ANN_GROUP_NAME_K8S: "pg-1"}, labels={"a": "b" * 60}))
    assert kept is not None
    assert kept["metadata"]["annotations"] == {spec.ANN_VGPU_IDS_NEW: IDS, spec.ANN_GROUP_NAME_K8S: "pg-1"}
    assert "labels" not in kept["metadata"]


def test_a_pod_that_cannot_change_usage_is_not_kept() -> None:
    """Before: any volcano.sh/, hami.io/ or huawei.com/ annotation kept the pod with all its annotations."""
    assert slim_pod(_pod({"volcano.sh/junk": "x" * 262_144, "hami.io/whatever": "y"})) is None
    assert slim_pod(_pod({spec.ANN_GROUP_NAME_K8S: "pg"})) is None  # a group name alone books nothing


def test_an_oversized_allocation_value_is_named_not_kept() -> None:
    dropped: list[str] = []
    junk = "x" * 262_144
    kept = slim_pod(_pod({spec.ANN_VGPU_IDS_NEW: junk}, {"volcano.sh/vgpu-number": "1"}), dropped)
    assert kept is not None and kept["metadata"]["annotations"] == {}  # still counted by its resources
    assert dropped == [f"{spec.ANN_VGPU_IDS_NEW} ({len(junk)} characters)"]
    dropped.clear()
    assert slim_pod(_pod({spec.ANN_NPU_CORE: junk}), dropped) is None and len(dropped) == 1


def test_memory_per_pod_is_bounded_however_the_pod_is_built() -> None:
    """Every field at its worst: many keys, long values, many containers with many resources."""
    annotations = {spec.ANN_VGPU_IDS_NEW: "x" * (spec.MAX_ALLOCATION_VALUE - 10), spec.ANN_NPU_CORE: "0-vir01" * 4000,
                   **{f"hami.io/chip{i}-devices-allocated": "y" * 20_000 for i in range(50)},
                   **{f"volcano.sh/k{i}": "z" * 5000 for i in range(200)}}
    limits = {f"volcano.sh/r{i:02d}{'n' * 80}": "1" * 30 for i in range(100)} | {"cpu": "9" * 1000}
    worst = _pod(annotations, limits, containers=500, labels={f"l{i}": "v" * 63 for i in range(1000)})
    worst["spec"]["initContainers"] = worst["spec"]["containers"]
    assert _size(worst) > 10_000_000
    kept = slim_pod(worst)
    assert kept is not None
    assert len(kept["spec"]["containers"]) == len(kept["spec"]["initContainers"]) == MAX_CONTAINERS
    assert all(len(c["resources"]["limits"]) <= MAX_RESOURCES for c in kept["spec"]["containers"])
    assert sum(len(v) for v in kept["metadata"]["annotations"].values()) <= spec.MAX_ALLOCATION_VALUE
    assert _size(kept) < 120 * 1024  # docs/design.md states ~100 KiB at worst
    real = slim_pod(_pod({spec.ANN_VGPU_IDS_NEW: IDS}, {"volcano.sh/vgpu-number": "1", "cpu": "4"}))
    assert _size(real) < 4 * 1024


def test_the_codecs_refuse_values_longer_than_volcano_writes() -> None:
    long_ids = IDS * (spec.MAX_ALLOCATION_VALUE // len(IDS) + 1)
    decoded = decode_vgpu_ids(long_ids)
    assert decoded.devices == () and [p.code for p in decoded.problems] == ["VGX002"]
    assert "characters long" in decoded.problems[0].message
    assert decode_vgpu_ids(IDS * 100).devices  # long but within the cap: read
    assert [p.code for p in decode_gpu_index("0," * 20_000).problems] == ["VGS004"]
    assert [p.code for p in decode_npu_core("1" * 40_000).problems] == ["VGX002"]


def test_doctor_and_the_model_agree_on_an_oversized_allocation() -> None:
    """The usage a well-formed but absurdly long vgpu-ids-new would book is not booked by `nodes` (the
    webhook's view never stores it) and the doctor says why (VGX002)."""
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "gpu-a", "annotations": {
        spec.NODE_VGPU_REGISTER: f"{UUID},10,40960,NVIDIA-NVIDIA A100-PCIE-40GB,true,hami-core:"}},
        "status": {"allocatable": {"volcano.sh/vgpu-number": "10", "volcano.sh/vgpu-memory": "40960",
                                   "volcano.sh/vgpu-cores": "100"}}}
    long_ids = IDS * (spec.MAX_ALLOCATION_VALUE // len(IDS) + 1)
    snapshot = build_snapshot([node, _pod({spec.ANN_VGPU_IDS_NEW: long_ids})], "v1.31.4")
    (gpu,) = snapshot.nodes[0].devices
    assert gpu.memory_used == 0 and gpu.pods == []
    report = diagnose(snapshot, now=datetime(2026, 11, 26, tzinfo=UTC))
    found = [f for f in report.findings() if f.finding.code == "VGX002"]
    assert found and "characters long" in found[0].finding.message and found[0].subject == "pod/ml/p"
