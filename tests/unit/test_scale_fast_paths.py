"""Issue 17's shortcuts give what the plain way gives.

- `well_formed_vgpu_allocations` lets the doctor's VGX002 check skip the codec: it may only do so for
  values on which `decode_vgpu_ids` reports no problem under either Volcano reading, with the same devices.
- `ClusterSnapshot.pod_index` selects the pods the scanning checks used to find by walking all of them:
  the same pods, in snapshot order, malformed ones included; the index `build_snapshot(index_pods=True)`
  makes in its own pass is the one made on first use. A pod with no device annotation and no resource but
  cpu/memory costs it a glance (`cluster/glance.py`, issue 26).
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given

from tests.unit.test_cluster_build_fast import allocations
from vgpuctl.core import spec
from vgpuctl.core.cluster.build import build_snapshot, well_formed_vgpu_allocations
from vgpuctl.core.cluster.glance import device_annotated
from vgpuctl.core.codecs.pod_alloc import decode_vgpu_ids


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
        _pod("a", images=("reg/vc-scheduler:v1.15.1", "reg/vc-scheduler:v1.15.1"),
             annotations={"x": "1", spec.ANN_BIND_PHASE: "allocating"}),
        _pod("b", namespace="kube-system", images=("reg/plugin:v1",), annotations={}),
        _pod("c", images=("reg/other:v1",), init=("reg/vc-scheduler:v1",)),
        {"kind": "Pod", "metadata": "garbage", "spec": ["garbage"]},
        _pod("d", namespace=None, images=(7, "reg/plugin:v2"), annotations={"y": "2", 3: "x"}),  # none a device's
        _pod("g", namespace=None, annotations={"hami.io/Ascend310P-devices-allocated": "x"}),
        _pod("e", namespace="kube-system", images=("reg/plugin:v1",)),
        {"kind": "Pod", "metadata": {"name": "f", "namespace": "ns"}, "spec": {"containers": {"image": "x"}}},
    ]
    for index in (build_snapshot(pods).pod_index, build_snapshot(pods, index_pods=True).pod_index,
                  build_snapshot(pods, index_pods=True, index_device_asks=False).pod_index):
        _selects_as_walked(index)


def _selects_as_walked(index: Any) -> None:
    names = lambda found: [p["metadata"]["name"] for p in found]  # noqa: E731
    # the pods with an annotation in a device namespace, with all their annotations
    assert [(p["metadata"]["name"], a) for p, a in index.annotated] == [
        ("a", {"x": "1", spec.ANN_BIND_PHASE: "allocating"}), ("g", {"hami.io/Ascend310P-devices-allocated": "x"})]
    assert names(index.running(lambda image: "vc-scheduler" in image)) == ["a"]  # once, though two containers
    assert names(index.running(lambda image: "vc-scheduler" in image, init=True)) == ["a", "c"]
    assert names(index.running(lambda image: "plugin" in image)) == ["b", "d", "e"]
    assert names(index.in_namespaces(["kube-system", "ns", "none"])) == ["a", "b", "c", "e", "f"]


def test_every_pod_annotation_a_check_reads_is_one_the_index_keeps() -> None:
    """`PodIndex.annotated` keeps only pods with an annotation in a device namespace: every pod annotation name
    in `spec` (the checks read no other) is in one, but for the PodGroup names (read from pods the index finds
    by their device resources, VGX003), and a name outside them keeps no pod."""
    names = {value for key, value in vars(spec).items() if key.startswith("ANN_") and isinstance(value, str)}
    names -= {spec.ANN_GROUP_NAME_K8S, spec.ANN_GROUP_NAME_VOLCANO}
    assert len(names) >= 14 and all(device_annotated({name: ""}) for name in names)
    assert all(device_annotated({name: ""}) for name in spec.DEVICE_POD_ANNOTATIONS)
    for name in ("prometheus.io/scrape", "kubectl.kubernetes.io/restartedAt", "volcano.sh", "nvidia.com"):
        assert not device_annotated({name: "", 7: ""})


def _asks(pod: dict[str, Any], is_device: Any) -> bool:
    """The plain walk VGX003's pre-filter was: a device resource in any container, or a device annotation or
    label."""
    meta = pod.get("metadata") if isinstance(pod.get("metadata"), dict) else {}
    pod_spec = pod.get("spec") if isinstance(pod.get("spec"), dict) else {}
    for kind in ("containers", "initContainers", "ephemeralContainers"):
        for c in pod_spec.get(kind) if isinstance(pod_spec.get(kind), list) else ():
            res = c.get("resources") if isinstance(c, dict) else None
            for field in ("limits", "requests"):
                names = res.get(field) if isinstance(res, dict) else None
                if isinstance(names, dict) and any(isinstance(n, str) and is_device(n) for n in names):
                    return True
    annotations, labels = meta.get("annotations"), meta.get("labels")
    return (isinstance(annotations, dict) and not set(spec.DEVICE_POD_ANNOTATIONS).isdisjoint(annotations)) or \
        (isinstance(labels, dict) and not set(spec.DEVICE_POD_LABELS).isdisjoint(labels))


def _with_resources(name: str, *blocks: Any, kind: str = "containers", **meta: Any) -> dict[str, Any]:
    return {"kind": "Pod", "metadata": {"name": name, "namespace": "ns", **meta},
            "spec": {kind: [{"name": f"c{i}", "resources": b} for i, b in enumerate(blocks)]}}


def test_the_pods_asking_for_devices_are_those_a_walk_finds_and_the_build_indexes_alike() -> None:
    pods = [
        _with_resources("cpu-only", {"limits": {"cpu": "1"}, "requests": {"memory": "1Gi"}}),
        _with_resources("vgpu", {"limits": {"volcano.sh/vgpu-number": "1"}}),
        _with_resources("custom", {"requests": {"nvidia.com/gpu": "1"}}, kind="initContainers"),
        _with_resources("npu", {"limits": {"huawei.com/Ascend310P": "1"}}, kind="ephemeralContainers"),
        _with_resources("twice", {"limits": {"volcano.sh/vgpu-number": "1"},
                                  "requests": {"volcano.sh/vgpu-number": "1"}},
                        annotations={spec.ANN_VGPU_MODE: "mig"}, labels={spec.LABEL_VNPU_LEVEL: "low"}),
        _with_resources("annotated", {}, annotations={spec.ANN_VGPU_MODE: "hami-core"}),
        _with_resources("labelled", {}, labels={spec.LABEL_VNPU_DVPP: "yes"}),
        _with_resources("other-annotations", {}, annotations={"x": "1"}, labels={"app": "y"}),
        _with_resources("bad-resources", "junk", {"limits": ["volcano.sh/vgpu-number"]}),
        {"kind": "Pod", "metadata": "garbage", "spec": {"containers": "garbage"}},
    ]
    resources = frozenset({"nvidia.com/gpu"})

    def is_device(name: str) -> bool:
        return name.startswith(("volcano.sh/", "huawei.com/")) or name in resources

    walked = [p["metadata"]["name"] for p in pods if _asks(p, is_device)]
    assert walked == ["vgpu", "custom", "npu", "twice", "annotated", "labelled"]
    lazy, built = build_snapshot(pods), build_snapshot(pods, index_pods=True)
    assert built.pod_index_at_build is not None and lazy.pod_index_at_build is None
    # `nodes`' index: the device asks are indexed on first use, in a pass of their own
    deferred = build_snapshot([*pods, {"kind": "Pod", "metadata": {"name": "claims"},
                                       "spec": {"resourceClaims": [{"name": "gpu"}]}}],
                              index_pods=True, index_device_asks=False)
    assert [p["metadata"]["name"] for p in deferred.pod_index.claiming()] == ["claims"]
    assert not built.pod_index.claiming()
    for snapshot in (lazy, built, deferred):
        index = snapshot.pod_index
        assert index is snapshot.pod_index_at_build or snapshot is lazy
        assert [p["metadata"]["name"] for p in index.asking_for_devices(is_device)] == walked
        assert [p for p, _ in index.annotated] == [p for p, _ in lazy.pod_index.annotated]
        assert index.running(lambda image: True) == lazy.pod_index.running(lambda image: True)
        assert index.in_namespaces(["ns"]) == lazy.pod_index.in_namespaces(["ns"])


def test_every_annotation_usage_is_booked_from_lies_in_a_device_namespace() -> None:
    """The build asks `allocation_annotated` only of pods the index found `device_annotated` (issue 26): a booked
    annotation outside the device namespaces would go unbooked in `nodes` and `doctor`."""
    from vgpuctl.core.cluster.glance import BOOKED_ANNOTATIONS, allocation_annotated
    from vgpuctl.core.codecs.ascend_pod import allocated_annotation

    names = [*BOOKED_ANNOTATIONS, allocated_annotation("Ascend910B"), allocated_annotation("Ascend310P")]
    for name in names:
        assert allocation_annotated({name: "x"}) and device_annotated({name: "x"}), name
    assert not allocation_annotated({"example.com/vgpu-ids-new": "x"})
