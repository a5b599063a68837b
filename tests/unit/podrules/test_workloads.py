"""Workload wrappers (`VGW001`, `VGW002`), unreadable objects (`VGL001`) and the add-only JSON Patch."""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import pytest

from vgpuctl.core.patch import add_ops
from vgpuctl.core.podrules import review

from .conftest import ERROR, INFO, WARNING, codes, container, cronjob, deployment, find, only, pod, vcjob
from .families import NPU_CORE, RING_310P

VGPU = {"volcano.sh/vgpu-number": 1, "volcano.sh/vgpu-memory": 1024}
MODE = {"volcano.sh/vgpu-mode": "hami-core"}


def with_job_labels(job: dict[str, Any], labels: dict[str, str]) -> dict[str, Any]:
    job["metadata"]["labels"] = dict(labels)
    return job


# ---- VGW001 ----------------------------------------------------------------------------------------


def test_vgw001_annotation_only_on_the_job() -> None:
    j = vcjob(("worker", pod(container(limits=VGPU))), ("ps", pod(container())), annotations=MODE)
    r = review(j)
    f = only(r, "VGW001")
    assert f.severity is WARNING
    assert f.subject == "metadata.annotations[volcano.sh/vgpu-mode]"
    assert 'task "worker"' in f.message and 'task "ps"' in f.message and "not copied" in f.message
    assert r.allowed is True


def test_vgw001_names_only_the_tasks_that_lack_it() -> None:
    j = vcjob(("worker", pod(container(limits=VGPU), annotations=MODE)), ("ps", pod(container())), annotations=MODE)
    f = only(review(j), "VGW001")
    assert 'task "ps"' in f.message and 'task "worker"' not in f.message


def test_vgw001_label_only_on_the_job() -> None:
    j = with_job_labels(vcjob(("infer", pod(container(limits={NPU_CORE: 2}), labels=RING_310P))),
                        {"vnpu-level": "high"})
    f = only(review(j), "VGW001")
    assert f.severity is WARNING
    assert f.subject == "metadata.labels[vnpu-level]" and 'task "infer"' in f.message


def test_vgw001_judges_the_labels_the_mutating_defaults_leave() -> None:
    """The default adds `vnpu-level: low` to the task: the Job's own `vnpu-level: low` then reaches the pods
    (found by the idempotent-patch property: the warning vanished once the patch was applied)."""
    job_labels = {**RING_310P, "vnpu-level": "low", "vnpu-dvpp": "null"}
    j = with_job_labels(vcjob(("infer", pod(container(limits={NPU_CORE: 2}), labels=RING_310P))), job_labels)
    assert find(review(j), "VGW001") == []
    patched = jsonpatch.apply_patch(j, list(review(j).patch))
    assert find(review(patched), "VGW001") == []
    # Without the defaults (the validating view) the task really lacks them.
    assert {f.subject for f in find(review(j, apply_defaults=False), "VGW001")} == {
        "metadata.labels[vnpu-level]", "metadata.labels[vnpu-dvpp]"}
    # A default of another value does not make the Job's value reach the pods.
    j = with_job_labels(vcjob(("infer", pod(container(limits={NPU_CORE: 2}), labels=RING_310P))),
                        {"vnpu-level": "high"})
    assert [f.subject for f in find(review(j), "VGW001")] == ["metadata.labels[vnpu-level]"]


def test_vgw001_silent_when_the_task_template_carries_it_too() -> None:
    j = vcjob(("worker", pod(container(limits=VGPU), annotations=MODE)), annotations=MODE)
    assert review(j).findings == ()
    labels = {**RING_310P, "vnpu-level": "high", "vnpu-dvpp": "null"}
    j = with_job_labels(vcjob(("infer", pod(container(limits={NPU_CORE: 2}), labels=labels))), labels)
    assert find(review(j), "VGW001") == []


def test_vgw001_ignores_unrelated_job_metadata() -> None:
    j = with_job_labels(vcjob(("worker", pod(container(limits=VGPU))), annotations={"team": "a"}), {"app": "x"})
    assert review(j).findings == ()


def test_vgw001_only_for_volcano_jobs() -> None:
    d = deployment(pod(container(limits=VGPU)))
    d["metadata"]["annotations"] = dict(MODE)
    assert find(review(d), "VGW001") == []


# ---- VGW002: pod rules inside templates ----------------------------------------------------------


def mindcluster_job() -> dict[str, Any]:
    return vcjob(
        ("infer", pod(container("npu", limits={NPU_CORE: 2}), labels=RING_310P)),
        ("bad", pod(container("npu", limits={NPU_CORE: 3}), labels={**RING_310P, "vnpu-dvpp": "null"})),
    )


def test_vgw002_task_findings_carry_the_task_subject() -> None:
    r = review(mindcluster_job())
    assert codes(r) == [("VGA004", INFO), ("VGA005", INFO), ("VGA007", INFO), ("VGA002", ERROR)]
    by_code = {f.code: f for f in r.findings}
    assert by_code["VGA004"].subject == "task/infer/label/vnpu-level"
    assert by_code["VGA007"].subject == "task/infer/container/npu"
    assert by_code["VGA002"].subject == "task/bad/container/npu"
    assert by_code["VGA002"].message.startswith('task "bad" container "npu":')
    assert r.allowed is False


def test_vgw002_patch_paths_point_into_the_task_template() -> None:
    j = mindcluster_job()
    r = review(j)
    assert r.patch == (
        {"op": "add", "path": "/spec/tasks/0/template/metadata/labels/vnpu-level", "value": "low"},
        {"op": "add", "path": "/spec/tasks/0/template/metadata/labels/vnpu-dvpp", "value": "null"},
    )
    patched = jsonpatch.apply_patch(j, r.patch)
    assert patched["spec"]["tasks"][0]["template"]["metadata"]["labels"]["vnpu-level"] == "low"
    assert review(patched).patch == ()


def test_vgw002_a_correct_job_has_no_errors() -> None:
    labels = {**RING_310P, "vnpu-level": "low", "vnpu-dvpp": "null"}
    r = review(vcjob(("infer", pod(container("npu", limits={NPU_CORE: 4}), labels=labels))))
    assert codes(r) == [("VGA007", INFO)] and r.patch == ()


@pytest.mark.parametrize(("wrap", "prefix"), [(deployment, "template/"), (cronjob, "jobTemplate/template/")])
def test_vgw002_workload_templates(wrap: Any, prefix: str) -> None:
    f = only(review(wrap(pod(container("gpu", limits={"volcano.sh/gpu-number": 0})))), "VGS001")
    assert f.subject == f"{prefix}container/gpu" and f.message.startswith('template container "gpu"')


# ---- VGL001 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "containers",
    [{"name": "main", "image": "x"}, "main", [1], [None], [{"name": "ok"}, "broken"]],
)
def test_vgl001_containers_not_a_list_of_objects(containers: Any) -> None:
    p = pod()
    p["spec"]["containers"] = containers
    r = review(p)
    f = only(r, "VGL001")
    assert f.severity is ERROR and f.subject == "spec" and "not a list of container objects" in f.message
    assert r.allowed is False and r.checked is True


@pytest.mark.parametrize("spec", [{"containers": []}, {}, None, "x"])
def test_vgl001_pod_without_containers(spec: Any) -> None:
    p = pod()
    p["spec"] = spec
    f = only(review(p), "VGL001")
    assert f.subject == "spec.containers" and "no containers" in f.message


def test_vgl001_init_containers_not_a_list() -> None:
    assert ("VGL001", ERROR) in codes(review(pod(initContainers={"name": "init"})))


def test_vgl001_volcano_job_without_tasks() -> None:
    f = only(review(vcjob()), "VGL001")
    assert f.subject == "spec.tasks"


def test_vgl001_silent_for_a_plain_pod() -> None:
    r = review(pod())
    assert r.findings == () and r.allowed is True and r.checked is True


@pytest.mark.parametrize(
    "obj",
    [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "b"}},
        {"apiVersion": "v1", "kind": "Service", "spec": {"containers": "nonsense"}},
        {"apiVersion": "batch/v2", "kind": "Jobs"},
        {},
        [],
        "Pod",
        None,
    ],
)
def test_vgl001_other_kinds_are_not_checked(obj: Any) -> None:
    r = review(obj)
    assert r.checked is False and r.allowed is True and r.findings == () and r.patch == ()


# ---- the add-only patch (vgpuctl.core.patch) -------------------------------------------------------


def test_patch_creates_a_missing_labels_object() -> None:
    doc = {"metadata": {"name": "p"}}
    ops = add_ops(doc, [(("metadata", "labels", "vnpu-level"), "low"), (("metadata", "labels", "vnpu-dvpp"), "null")])
    assert ops == [{"op": "add", "path": "/metadata/labels", "value": {"vnpu-level": "low", "vnpu-dvpp": "null"}}]
    assert jsonpatch.apply_patch(doc, ops)["metadata"]["labels"] == {"vnpu-level": "low", "vnpu-dvpp": "null"}


def test_patch_adds_into_existing_labels_with_escaped_keys() -> None:
    doc = {"metadata": {"labels": {"a": "b"}}}
    ops = add_ops(doc, [(("metadata", "labels", "x/y~z"), "1")])
    assert ops == [{"op": "add", "path": "/metadata/labels/x~1y~0z", "value": "1"}]
    assert jsonpatch.apply_patch(doc, ops)["metadata"]["labels"]["x/y~z"] == "1"


@pytest.mark.parametrize("limits", [[], "x", 5, None])
def test_patch_replaces_limits_of_the_wrong_type(limits: Any) -> None:
    # Regression: `limits: []` used to get an op adding a named member to a list (unappliable patch).
    p = pod(container("gpu", requests={"volcano.sh/gpu-memory": 1000}))
    p["spec"]["containers"][0]["resources"]["limits"] = limits
    r = review(p)
    assert r.patch == ({"op": "add", "path": "/spec/containers/0/resources/limits",
                        "value": {"volcano.sh/gpu-memory": "1000"}},)
    patched = jsonpatch.apply_patch(copy.deepcopy(p), r.patch)
    assert patched["spec"]["containers"][0]["resources"]["limits"] == {"volcano.sh/gpu-memory": "1000"}
    assert review(patched).patch == ()
