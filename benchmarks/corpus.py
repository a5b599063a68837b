"""A deterministic, mixed corpus of pod-bearing objects for benchmarks (no I/O, no randomness leaks)."""

from __future__ import annotations

import random
from typing import Any

_VGPU_MEM = [1024, 3000, 8000, "3Gi", 0, 20480]
_MODES = [None, None, "hami-core", "mig", "MIG"]


def _container(i: int, limits: dict[str, Any], requests: dict[str, Any] | None = None) -> dict[str, Any]:
    resources: dict[str, Any] = {"limits": limits}
    if requests:
        resources["requests"] = requests
    return {"name": f"c{i}", "image": "registry.example/app:1.0", "resources": resources}


def _pod(rng: random.Random, n: int) -> dict[str, Any]:
    family = rng.choice(["vgpu", "vgpu", "vgpu", "mig", "gpushare", "ascend", "mindcluster", "cpu"])
    annotations: dict[str, str] = {}
    labels: dict[str, str] = {"app": f"app{n % 50}"}
    containers: list[dict[str, Any]] = []
    if family in ("vgpu", "mig"):
        mode = "mig" if family == "mig" else rng.choice(_MODES)
        if mode:
            annotations["volcano.sh/vgpu-mode"] = mode
        limits: dict[str, Any] = {"volcano.sh/vgpu-memory": rng.choice(_VGPU_MEM)}
        if rng.random() < 0.8:
            limits["volcano.sh/vgpu-number"] = rng.choice([1, 1, 2, 0])
        if rng.random() < 0.5:
            limits["volcano.sh/vgpu-cores"] = rng.choice([30, 50, 100, 120])
        containers.append(_container(0, limits))
        if rng.random() < 0.2:
            annotations["nvidia.com/use-gputype"] = rng.choice(["A100", "A100,,H100"])
    elif family == "gpushare":
        containers.append(_container(0, {"volcano.sh/gpu-memory": rng.choice([1024, 2048, -1])}))
    elif family == "ascend":
        containers.append(_container(0, {"huawei.com/Ascend310P": "1",
                                          "huawei.com/Ascend310P-memory": rng.choice(["3000", "4096", "4Gi"])}))
    elif family == "mindcluster":
        labels["ring-controller.atlas"] = rng.choice(["ascend-310P", "ascend-310P", "Ascend-310P"])
        cores = rng.choice([1, 2, 4, 8, 3])
        containers.append(_container(0, {"huawei.com/npu-core": cores}, {"huawei.com/npu-core": cores}))
    else:
        containers.append(_container(0, {"cpu": "1", "memory": "1Gi"}))
    containers.append(_container(1, {"cpu": "100m"}))
    spec: dict[str, Any] = {"containers": containers}
    if rng.random() < 0.8:
        spec["schedulerName"] = "volcano"
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"pod-{n}", "namespace": "bench", "annotations": annotations, "labels": labels},
            "spec": spec}


def corpus(size: int = 10_000, seed: int = 7) -> list[dict[str, Any]]:
    """`size` objects: ~85% Pods of every family (valid and broken), the rest Deployments and Volcano Jobs."""
    rng = random.Random(seed)
    objects: list[dict[str, Any]] = []
    for n in range(size):
        pod = _pod(rng, n)
        roll = rng.random()
        if roll < 0.08:
            objects.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": pod["metadata"],
                            "spec": {"template": {"metadata": pod["metadata"], "spec": pod["spec"]}}})
        elif roll < 0.15:
            objects.append({"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": pod["metadata"],
                            "spec": {"tasks": [{"name": "worker", "replicas": 2,
                                                "template": {"metadata": pod["metadata"], "spec": pod["spec"]}}]}})
        else:
            objects.append(pod)
    return objects
