"""Issue 17's shortcuts give what the plain way gives.

- `well_formed_vgpu_allocations` lets the doctor's VGX002 check skip the codec: it may only do so for
  values on which `decode_vgpu_ids` reports no problem under either Volcano reading, with the same devices.
- `ClusterSnapshot.pod_index` selects the pods the scanning checks used to find by walking all of them:
  the same pods, in snapshot order, malformed ones included.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given

from tests.unit.test_cluster_build_fast import allocations
from vgpuctl.core.cluster import build_snapshot
from vgpuctl.core.cluster.build import well_formed_vgpu_allocations
from vgpuctl.core.codecs import decode_vgpu_ids


@given(allocations())
@example("GPU-0,NVIDIA,4096,25:;GPU-1,NVIDIA,8192,50:GPU-0,NVIDIA,1,1:")
@example(";;GPU-0,NVIDIA,4096,25:;")
@example("GPU-0,NVIDIA,4096,25:junk")
def test_a_well_formed_allocation_is_one_the_codec_finds_nothing_wrong_with(value: str) -> None:
    fast = well_formed_vgpu_allocations(value)
    if fast is None:
        return
    for skips in (False, True):
        decoded = decode_vgpu_ids(value, skips_bad_entries=skips)
        assert decoded.problems == ()
        assert fast == [(a.uuid, a.mig, a.memory, a.cores) for c in decoded.containers for a in c]


def test_the_shortcut_leaves_what_the_codec_reports_to_the_codec() -> None:
    for value in ("GPU-0,NVIDIA,4096:", "GPU-0,NVIDIA,99999999999,1:", ",NVIDIA,1,1:", "GPU-0,NVIDIA,1,1,extra:",
                  "GPU-0,NVIDIA,1,1:junk", 7):
        assert well_formed_vgpu_allocations(value) is None
        assert decode_vgpu_ids(value).problems != ()
    assert well_formed_vgpu_allocations("GPU-0[g-0],NVIDIA,1,1:") is None  # MIG slots: the codec reads them


def _pod(name: str, namespace: Any = "ns", images: tuple[Any, ...] = (), init: tuple[Any, ...] = (),
         annotations: Any = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"kind": "Pod", "metadata": meta, "spec": {
        "containers": [{"name": f"c{i}", "image": image} for i, image in enumerate(images)],
        "initContainers": [{"name": f"i{i}", "image": image} for i, image in enumerate(init)]}}


def test_the_pod_index_selects_what_a_walk_over_all_pods_selects() -> None:
    pods = [
        _pod("a", images=("reg/vc-scheduler:v1.15.1", "reg/vc-scheduler:v1.15.1"), annotations={"x": "1"}),
        _pod("b", namespace="kube-system", images=("reg/plugin:v1",), annotations={}),
        _pod("c", images=("reg/other:v1",), init=("reg/vc-scheduler:v1",)),
        {"kind": "Pod", "metadata": "garbage", "spec": ["garbage"]},
        _pod("d", namespace=None, images=(7, "reg/plugin:v2"), annotations={"y": "2"}),
        _pod("e", namespace="kube-system", images=("reg/plugin:v1",)),
        {"kind": "Pod", "metadata": {"name": "f", "namespace": "ns"}, "spec": {"containers": {"image": "x"}}},
    ]
    index = build_snapshot(pods).pod_index
    names = lambda found: [p["metadata"]["name"] for p in found]  # noqa: E731
    assert [(p["metadata"]["name"], a) for p, a in index.annotated] == [("a", {"x": "1"}), ("d", {"y": "2"})]
    assert names(index.running(lambda image: "vc-scheduler" in image)) == ["a"]  # once, though two containers
    assert names(index.running(lambda image: "vc-scheduler" in image, init=True)) == ["a", "c"]
    assert names(index.running(lambda image: "plugin" in image)) == ["b", "d", "e"]
    assert names(index.in_namespaces(["kube-system", "ns", "none"])) == ["a", "b", "c", "e", "f"]
