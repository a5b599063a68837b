"""Small Kubernetes objects for the `why` simulator tests: real node/pod dicts through `build_snapshot`."""

from __future__ import annotations

from typing import Any

import yaml

from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.why.model import NodeVerdict
from vgpuctl.core.why.request import parse_pod
from vgpuctl.core.why.scheduler_env import WhyEnv
from vgpuctl.core.why.simulate import env_from_snapshot, simulate_node

A100 = "NVIDIA-NVIDIA A100-PCIE-40GB"
A100_GEOMETRY = {
    "models": ["A100-PCIE-40GB"],
    "allowedGeometries": [
        {"group": "group1", "geometries": [{"name": "1g.5gb", "memory": 5120, "count": 7}]},
        {"group": "group2", "geometries": [{"name": "2g.10gb", "memory": 10240, "count": 3},
                                           {"name": "1g.5gb", "memory": 5120, "count": 1}]},
        {"group": "group3", "geometries": [{"name": "3g.20gb", "memory": 20480, "count": 2}]},
        {"group": "group4", "geometries": [{"name": "7g.40gb", "memory": 40960, "count": 1}]},
    ],
}
NVIDIA = {"resourceCountName": "volcano.sh/vgpu-number", "resourceMemoryName": "volcano.sh/vgpu-memory",
          "resourceCoreName": "volcano.sh/vgpu-cores", "knownMigGeometries": [A100_GEOMETRY]}
VNPU_910B3 = {
    "commonWord": "Ascend910B3", "chipName": "910B3", "resourceName": "huawei.com/Ascend910B3",
    "resourceMemoryName": "huawei.com/Ascend910B3-memory", "memoryAllocatable": 65536, "memoryCapacity": 65536,
    "aiCore": 20, "aiCPU": 7,
    "templates": [{"name": "vir05_1c_16g", "memory": 16384, "aiCore": 5, "aiCPU": 1},
                  {"name": "vir10_3c_32g", "memory": 32768, "aiCore": 10, "aiCPU": 3}],
}


def gpu(uuid: str, memory: int = 40960, split: int = 10, mode: str = "hami-core", type_: str = A100) -> str:
    return f"{uuid},{split},{memory},{type_},true,{mode}:"


def vgpu_node(name: str, *gpus: str, annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """A vGPU node advertising what the vGPU device plugin advertises for `gpus` — the split counts, the memory
    and 100 cores per GPU, which Volcano's allocate action compares a pod's requests with — but never less than
    one default A100's (10, 40960, 100: what every node advertised here before that check was replayed)."""
    count, memory, cores = 0, 0, 0
    for entry in gpus:
        fields = entry.rstrip(":").split(",")
        if len(fields) >= 3 and fields[1].isdigit() and fields[2].isdigit():
            count, memory, cores = count + int(fields[1]), memory + int(fields[2]), cores + 100
    return {"kind": "Node", "metadata": {"name": name, "annotations": {
        "volcano.sh/node-vgpu-register": "".join(gpus), **(annotations or {})}},
        "status": {"allocatable": {"volcano.sh/vgpu-number": str(max(count, 10)),
                                   "volcano.sh/vgpu-memory": str(max(memory, 40960)),
                                   "volcano.sh/vgpu-cores": str(max(cores, 100))}}}


def pod(name: str, limits: dict[str, Any] | None = None, *, ns: str = "ml", node: str | None = None,
        annotations: dict[str, str] | None = None, labels: dict[str, str] | None = None,
        containers: list[dict[str, Any]] | None = None, phase: str = "Pending") -> dict[str, Any]:
    spec: dict[str, Any] = {"schedulerName": "volcano",
                            "containers": containers or [{"name": "main", "resources": {"limits": limits or {}}}]}
    if node:
        spec["nodeName"] = node
    return {"kind": "Pod", "metadata": {"name": name, "namespace": ns, "annotations": annotations or {},
                                        "labels": labels or {}},
            "spec": spec, "status": {"phase": phase}}


def vgpu_pod(name: str, count: int = 1, memory: int | None = None, cores: int | None = None,
             **kwargs: Any) -> dict[str, Any]:
    limits: dict[str, Any] = {"volcano.sh/vgpu-number": str(count)}
    if memory is not None:
        limits["volcano.sh/vgpu-memory"] = str(memory)
    if cores is not None:
        limits["volcano.sh/vgpu-cores"] = str(cores)
    return pod(name, limits, **kwargs)


def scheduler(args: dict[str, Any]) -> dict[str, Any]:
    conf = {"actions": "enqueue, allocate", "tiers": [{"plugins": [
        {"name": "predicates"}, {"name": "deviceshare", "arguments": args}]}]}
    return {"kind": "ConfigMap", "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
            "data": {"volcano-scheduler.conf": yaml.safe_dump(conf)}}


def device_config(payload: dict[str, Any]) -> dict[str, Any]:
    return {"kind": "ConfigMap", "metadata": {"name": "volcano-vgpu-device-config", "namespace": "kube-system"},
            "data": {"device-config.yaml": yaml.safe_dump(payload)}}


def cluster(*objects: dict[str, Any], args: dict[str, Any] | None = None,
            config: dict[str, Any] | None = None) -> tuple[ClusterSnapshot, WhyEnv]:
    base = [scheduler(args if args is not None else {"deviceshare.VGPUEnable": True}),
            device_config(config if config is not None else {"nvidia": NVIDIA})]
    snapshot = build_snapshot([*base, *objects])
    return snapshot, env_from_snapshot(snapshot)


FAMILIES_CONFIG = {"nvidia": NVIDIA, "vnpus": [VNPU_910B3]}  # a device config naming every family's resources


def verdict_on(target: dict[str, Any], *objects: dict[str, Any], args: dict[str, Any], node: str = "n1",
               config: dict[str, Any] = FAMILIES_CONFIG) -> NodeVerdict:
    """The device replay of pod `target` on `node` of a cluster of `objects` under deviceshare `args`."""
    snapshot, env = cluster(*objects, args=args, config=config)
    found = snapshot.node(node)
    assert found is not None
    return simulate_node(parse_pod(target, env), found, env)
