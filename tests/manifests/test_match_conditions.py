"""The webhooks' CEL `matchConditions`, evaluated with cel-python against sample objects: only pods (and
Volcano Jobs) that request a `volcano.sh/` or `huawei.com/` resource reach the webhook; mirror pods never."""

from __future__ import annotations

import copy
from typing import Any

import celpy
import pytest

from tests.manifests.conftest import BASE
from tests.manifests.kustomize import render

OBJECTS = render(BASE)
HOOKS = {hook["name"]: hook for obj in OBJECTS if obj["kind"].endswith("WebhookConfiguration")
         for hook in obj["webhooks"]}
ENV = celpy.Environment()


def matches(hook_name: str, obj: dict[str, Any]) -> bool:
    """A webhook is called only when every one of its match conditions is true."""
    activation = {"object": celpy.json_to_cel(obj)}
    results = []
    for condition in HOOKS[hook_name]["matchConditions"]:
        result = ENV.program(ENV.compile(condition["expression"])).evaluate(activation)
        assert isinstance(result, celpy.celtypes.BoolType), (condition["name"], result)  # never an error value
        results.append(bool(result))
    return all(results)


def pod(limits: dict[str, Any] | None = None, *, requests: dict[str, Any] | None = None,
        annotations: dict[str, str] | None = None, init: bool = False) -> dict[str, Any]:
    resources: dict[str, Any] = {}
    if limits is not None:
        resources["limits"] = limits
    if requests is not None:
        resources["requests"] = requests
    device = {"name": "main", "image": "app:1", "resources": resources}
    plain = {"name": "sidecar", "image": "proxy:1"}
    spec: dict[str, Any] = {"containers": [plain, device] if not init else [plain]}
    if init:
        spec["initContainers"] = [device]
    meta: dict[str, Any] = {"name": "p", "namespace": "team-a"}
    if annotations is not None:
        meta["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


GPU_POD = pod({"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "3000"})
NPU_POD = pod({"huawei.com/Ascend310P": "1", "huawei.com/Ascend310P-memory": "4096"})
PLAIN_POD = pod({"cpu": "1", "memory": "1Gi"}, annotations={"team": "a"})
MIRROR_GPU_POD = pod({"volcano.sh/vgpu-number": "1"},
                     annotations={"kubernetes.io/config.mirror": "f00d", "kubernetes.io/config.source": "file"})

POD_HOOKS = ["pods.mutate.vgpuctl.io", "pods.validate.vgpuctl.io"]
JOB_HOOKS = ["jobs.mutate.vgpuctl.io", "jobs.validate.vgpuctl.io"]


def test_every_webhook_has_conditions_and_they_are_shared() -> None:
    assert set(HOOKS) == set(POD_HOOKS) | set(JOB_HOOKS)
    for group in (POD_HOOKS, JOB_HOOKS):
        first, second = (HOOKS[name]["matchConditions"] for name in group)
        assert first == second  # mutating and validating see exactly the same objects


@pytest.mark.parametrize("hook", POD_HOOKS)
@pytest.mark.parametrize(("obj", "expected"), [
    (GPU_POD, True),
    (NPU_POD, True),
    (pod({"huawei.com/npu-core": 2}, annotations={}), True),
    (pod(requests={"volcano.sh/vgpu-memory": "3000"}), True),  # request without limit: VGP014 must see it
    (pod({"volcano.sh/vgpu-number": "1"}, init=True), True),  # init container: VGP007 must see it
    (pod({"volcano.sh/gpu-memory": "1024"}, annotations={"a": "b"}), True),
    (PLAIN_POD, False),
    (pod(), False),  # resources: {}
    (pod({"nvidia.com/gpu": "1"}), False),  # the NVIDIA device plugin's own resource: not ours
    (MIRROR_GPU_POD, False),
], ids=["gpu", "npu", "npu-core", "requests-only", "init-container", "gpushare", "plain", "no-resources",
        "nvidia-gpu", "mirror"])
def test_pod_conditions(hook: str, obj: dict[str, Any], expected: bool) -> None:
    assert matches(hook, obj) is expected


def test_pod_without_resources_field_at_all() -> None:
    obj = copy.deepcopy(PLAIN_POD)
    for container in obj["spec"]["containers"]:
        container.pop("resources", None)
    assert not matches("pods.validate.vgpuctl.io", obj)


def job(template_limits: dict[str, Any] | None) -> dict[str, Any]:
    task_spec: dict[str, Any] = {"containers": [{"name": "w", "image": "w:1"}]}
    if template_limits is not None:
        task_spec["containers"][0]["resources"] = {"limits": template_limits}
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j", "namespace": "a"},
            "spec": {"tasks": [{"name": "driver", "template": {"spec": {"containers": [{"name": "d", "image": "d"}]}}},
                               {"name": "worker", "replicas": 2, "template": {"spec": task_spec}}]}}


@pytest.mark.parametrize("hook", JOB_HOOKS)
@pytest.mark.parametrize(("obj", "expected"), [
    (job({"huawei.com/npu-core": 2}), True),
    (job({"volcano.sh/vgpu-number": 1}), True),
    (job({"cpu": "2"}), False),
    (job(None), False),
    ({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": {"name": "j"}, "spec": {}}, False),
], ids=["npu-task", "gpu-task", "cpu-task", "no-resources", "no-tasks"])
def test_job_conditions(hook: str, obj: dict[str, Any], expected: bool) -> None:
    assert matches(hook, obj) is expected


def test_condition_names_are_valid_and_unique() -> None:
    import re

    for hook in HOOKS.values():
        names = [c["name"] for c in hook["matchConditions"]]
        assert len(names) == len(set(names))
        assert all(re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", n) and len(n) <= 63 for n in names)
