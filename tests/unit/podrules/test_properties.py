"""Properties of `review` over generated objects: it never raises, and its defaults are an add-only,
applicable, idempotent JSON Patch (docs/contracts.md#findings: "the mutating webhook returns ... an add-only patch")."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vgpuctl.core.facts import (
    AscendDevice,
    AscendNode,
    ClusterFacts,
    GpuDevice,
    GpushareNode,
    VgpuNode,
)
from vgpuctl.core.findings import Severity
from vgpuctl.core.podrules import Review, review
from vgpuctl.core.versions import parse_version

from .conftest import UPSTREAM_VGPU_CONFIG, load_device_config
from .families import B3, B3_CORE, B3_MEM, NPU_CORE, P310, P310_MEM, ascend_config

PROPERTY_SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# ---- the vocabulary, valid and invalid -------------------------------------------------------------

RESOURCES = [
    "volcano.sh/vgpu-number", "volcano.sh/vgpu-memory", "volcano.sh/vgpu-cores",
    "volcano.sh/vgpu-memory-percentage", "volcano.sh/gpu-memory", "volcano.sh/gpu-number",
    B3, B3_MEM, B3_CORE, P310, P310_MEM, "huawei.com/Ascend999", "huawei.com/Ascend999-memory", NPU_CORE,
    "cpu", "memory", "nvidia.com/gpu",
]
VALUES = st.one_of(
    st.sampled_from([0, 1, 2, 3, 4, 8, 10, 16, -1, 50, 100, 101, 150, 3000, 16384, 70000, 10**30,
                     "1", "2", "8", "1.5", "abc", "", "4Gi", "3000Mi", "1k", "1e3", "-1", 1.5, True, None]),
    st.integers(min_value=-5, max_value=200),
)
ANNOTATIONS = {
    "volcano.sh/vgpu-mode": ["hami-core", "mig", "MIG", "mps", ""],
    "huawei.com/vnpu-mode": ["hami-core", "HAMi-core", "template"],
    "nvidia.com/use-gputype": ["A100", "A100,,T4", ""],
    "nvidia.com/nouse-gputype": ["T4"],
    "volcano.sh/vgpu-use-gpuuuid": ["GPU-0", "not a uuid,"],
    "volcano.sh/vgpu-nouse-gpuuuid": ["GPU-1"],
    "volcano.sh/vgpu-podgroup-policy": ["spread", "pack"],
    "scheduling.k8s.io/group-name": ["pg"],
    "volcano.sh/gpu-index": ["0", "0,1"],
    "volcano.sh/predicate-time": ["1"],
    "volcano.sh/vgpu-ids-new": ["GPU-0,NVIDIA,1024,10:;"],
}
LABELS = {
    "ring-controller.atlas": ["ascend-310P", "Ascend-310P"],
    "vnpu-level": ["low", "high", "medium"],
    "vnpu-dvpp": ["yes", "no", "null", "maybe"],
}


def some_of(table: dict[str, list[str]]) -> st.SearchStrategy[dict[str, str]]:
    """A dict with a random subset of `table`'s keys, each with one of its values."""
    return st.fixed_dictionaries({}, optional={k: st.sampled_from(v) for k, v in table.items()})


FAMILIES = [  # one family's resources at a time, so the family rules (and their defaults) are reached often
    ["volcano.sh/vgpu-number", "volcano.sh/vgpu-memory", "volcano.sh/vgpu-cores", "volcano.sh/vgpu-memory-percentage"],
    ["volcano.sh/gpu-memory", "volcano.sh/gpu-number"],
    [B3, B3_MEM, B3_CORE],
    [P310, P310_MEM],
]
resource_map = st.one_of(
    st.dictionaries(st.sampled_from(RESOURCES), VALUES, max_size=4),
    st.sampled_from(FAMILIES).flatmap(lambda names: st.dictionaries(st.sampled_from(names), VALUES, max_size=3)),
    st.fixed_dictionaries({NPU_CORE: st.sampled_from([1, 2, 4, "4", 8, 16, 10, 3, 0, "x"])}),
)


@st.composite
def containers(draw: st.DrawFn, prefix: str, min_size: int, max_size: int) -> list[dict[str, Any]]:
    out = []
    for i in range(draw(st.integers(min_size, max_size))):
        c: dict[str, Any] = {"name": f"{prefix}{i}", "image": "busybox"}
        resources: dict[str, Any] = draw(
            st.fixed_dictionaries({}, optional={"limits": resource_map, "requests": resource_map}))
        if draw(st.integers(0, 9)) == 0:  # a malformed `limits` the defaults must replace, not index into
            resources["limits"] = draw(st.sampled_from([[], "x", 0, None]))
        keep_empty: bool = draw(st.booleans())
        if resources or keep_empty:
            c["resources"] = resources
        if draw(st.booleans()):
            c["securityContext"] = {"privileged": draw(st.booleans())}
        out.append(c)
    return out


@st.composite
def pods(draw: st.DrawFn) -> dict[str, Any]:
    metadata: dict[str, Any] = {"name": "p"}
    annotations: dict[str, str] = draw(some_of(ANNOTATIONS))
    labels: dict[str, str] = draw(some_of(LABELS))
    keep_empty: tuple[bool, bool] = (draw(st.booleans()), draw(st.booleans()))
    if annotations or keep_empty[0]:
        metadata["annotations"] = annotations
    if labels or keep_empty[1]:
        metadata["labels"] = labels
    spec: dict[str, Any] = {"containers": draw(containers("c", 1, 3))}
    for kind, prefix, most in (("initContainers", "i", 2), ("ephemeralContainers", "e", 1)):
        extra = draw(containers(prefix, 0, most))
        if extra:
            spec[kind] = extra
    scheduler = draw(st.sampled_from([None, "volcano", "default-scheduler", "", "other"]))
    if scheduler is not None:
        spec["schedulerName"] = scheduler
    if draw(st.booleans()):
        spec["nodeName"] = "node-1"
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec}


@st.composite
def objects(draw: st.DrawFn) -> dict[str, Any]:
    """A Pod, or a workload / Volcano Job wrapping generated pods."""
    first = draw(pods())
    wrapper = draw(st.sampled_from(["Pod", "Deployment", "CronJob", "VolcanoJob"]))
    template = {"metadata": {k: v for k, v in first["metadata"].items() if k != "name"}, "spec": first["spec"]}
    if wrapper == "Pod":
        return first
    if wrapper == "Deployment":
        return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                "spec": {"template": template}}
    if wrapper == "CronJob":
        return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "cj"},
                "spec": {"jobTemplate": {"spec": {"template": template}}}}
    second = draw(pods())
    tasks = [{"name": "a", "replicas": 1, "template": template},
             {"name": "b", "replicas": 1, "template": {"metadata": second["metadata"], "spec": second["spec"]}}]
    job_spec: dict[str, Any] = {"tasks": tasks}
    scheduler = draw(st.sampled_from([None, "volcano", "default-scheduler", "other"]))
    if scheduler is not None:
        job_spec["schedulerName"] = scheduler
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job",
            "metadata": {"name": "vj", "annotations": draw(some_of(ANNOTATIONS)), "labels": draw(some_of(LABELS))},
            "spec": job_spec}


def _all_facts() -> list[ClusterFacts]:
    vgpu_config = load_device_config(UPSTREAM_VGPU_CONFIG)
    gpu = GpuDevice("GPU-0", "NVIDIA-NVIDIA A100-PCIE-40GB", 40960, "mig")
    return [
        ClusterFacts(),
        ClusterFacts(device_config=ascend_config()),
        ClusterFacts(
            device_config=vgpu_config,
            volcano_version=parse_version("1.16.0"),
            vgpu_nodes=(VgpuNode("g", (gpu, GpuDevice("GPU-1", "NVIDIA-Tesla T4", 15360))),),
            gpushare_nodes=(GpushareNode("s", 16000, 4),),
            ascend_nodes=(AscendNode("a", (AscendDevice("Ascend910B3", 65536, 20),), True),),
            npu_core_capacities=(8, 16),
            cores_per_310p_chip=8,
            node_resources=frozenset({"volcano.sh/vgpu-number", "volcano.sh/vgpu-memory"}),
        ),
        ClusterFacts(device_config=ascend_config(), volcano_version=parse_version("1.15.1"),
                     ascend_nodes=(), cores_per_310p_chip=10, scheduler_names=("volcano", "vc2")),
    ]


FACTS = _all_facts()
facts = st.sampled_from(FACTS)


# ---- generated pods: never raises, add-only, idempotent defaults ----------------------------------


@PROPERTY_SETTINGS
@given(obj=objects(), f=facts)
def test_defaults_are_an_add_only_idempotent_patch(obj: dict[str, Any], f: ClusterFacts) -> None:
    before = copy.deepcopy(obj)
    r = review(obj, f)
    assert obj == before  # the object under review is never changed: the defaults travel in the patch
    assert r.checked is True
    assert r.allowed == (not any(x.severity is Severity.ERROR for x in r.findings))
    assert all(op["op"] == "add" for op in r.patch), r.patch
    patched = jsonpatch.apply_patch(obj, list(r.patch))
    again = review(patched, f)
    assert again.patch == (), (r.patch, again.patch)
    # The defaults were already applied to the view the rules judged: the patched object gets the same
    # verdict and the same errors and warnings; only the `info` notes about repairs go away.
    assert again.allowed == r.allowed
    assert problems(again) == problems(r)


def problems(r: Review) -> list[tuple[str, Severity, str]]:
    return sorted((f.code, f.severity, f.subject) for f in r.findings if f.severity is not Severity.INFO)


@PROPERTY_SETTINGS
@given(obj=objects(), f=facts)
def test_no_patch_without_defaults(obj: dict[str, Any], f: ClusterFacts) -> None:
    assert review(obj, f, apply_defaults=False).patch == ()
    assert review(obj, f, existing=True).patch == ()


# ---- arbitrary JSON: never raises, and any patch still applies ------------------------------------

json_leaf = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8))
json_value = st.recursive(
    json_leaf,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=20,
)
# Pod-shaped objects with arbitrary JSON in every slot, so the deep paths are reached too.
key_or_text = st.sampled_from(RESOURCES + list(ANNOTATIONS) + list(LABELS)) | st.text(max_size=6)
loose_map = st.dictionaries(key_or_text, json_value, max_size=4)
loose_container = st.fixed_dictionaries(
    {},
    optional={
        "name": json_value,
        "resources": st.fixed_dictionaries({}, optional={"limits": loose_map | json_value,
                                                         "requests": loose_map | json_value}) | json_value,
        "securityContext": st.fixed_dictionaries({}, optional={"privileged": json_value}),
    },
)
loose_spec = st.fixed_dictionaries(
    {},
    optional={
        "containers": st.lists(loose_container, min_size=1, max_size=3) | st.lists(json_value, max_size=3),
        "initContainers": st.lists(loose_container, max_size=2) | json_value,
        "ephemeralContainers": st.lists(loose_container, max_size=1),
        "schedulerName": json_value,
        "nodeName": json_value,
    },
)
loose_metadata = st.fixed_dictionaries({}, optional={"annotations": loose_map | json_value,
                                                     "labels": loose_map | json_value})
loose_pod = st.fixed_dictionaries({"kind": st.just("Pod")},
                                  optional={"spec": loose_spec | json_value, "metadata": loose_metadata | json_value})
loose_vcjob = st.fixed_dictionaries(
    {"kind": st.just("Job"), "apiVersion": st.just("batch.volcano.sh/v1alpha1")},
    optional={
        "metadata": loose_metadata | json_value,
        "spec": st.fixed_dictionaries({}, optional={
            "schedulerName": json_value,
            "tasks": st.lists(st.fixed_dictionaries({}, optional={
                "name": json_value,
                "template": st.fixed_dictionaries({}, optional={"metadata": loose_metadata | json_value,
                                                                "spec": loose_spec | json_value}) | json_value,
            }) | json_value, max_size=2) | json_value,
        }) | json_value,
    },
)
kinded = st.fixed_dictionaries(
    {"kind": st.sampled_from(["Pod", "Job", "Deployment", "CronJob", "ConfigMap", "StatefulSet"])},
    optional={"apiVersion": st.sampled_from(["v1", "batch.volcano.sh/v1alpha1", "apps/v1", "batch/v1"]),
              "spec": json_value, "metadata": json_value},
)


@PROPERTY_SETTINGS
@given(obj=st.one_of(json_value, kinded, loose_pod, loose_vcjob), f=facts)
def test_never_raises_on_json_shaped_input(obj: Any, f: ClusterFacts) -> None:
    for kw in ({}, {"apply_defaults": False}, {"existing": True}):
        r = review(obj, f, **kw)
        assert isinstance(r.allowed, bool)
        assert all(op["op"] == "add" for op in r.patch)
        if r.patch:
            jsonpatch.apply_patch(obj, list(r.patch))  # the patch always applies to what was reviewed
