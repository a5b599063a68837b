"""Builders for the cluster, component and existing-pod checks (VGK, VGX): components with a status."""

from __future__ import annotations

from typing import Any

from tests.unit.doctor.conftest import DEVICESHARE_VGPU, node, pod, register, scheduler_cm, vgpu_node, workload

VGPU_PLUGIN_IMAGE = "docker.io/projecthami/volcano-vgpu-device-plugin:v1.12.0"
ASCEND_HAMI_IMAGE = "projecthami/ascend-device-plugin:v1.4.0"
MINDCLUSTER_PLUGIN_IMAGE = "swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-k8sdeviceplugin:v26.0.0"

DEVICESHARE_MINDCLUSTER = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.AscendMindClusterVNPUEnable: true
configurations:
- name: init-params
  arguments:
    presetVirtualDevice: "false"
"""

DEVICESHARE_ASCEND_HAMI = DEVICESHARE_VGPU.replace("deviceshare.VGPUEnable: true",
                                                   "deviceshare.AscendHAMiVNPUEnable: true")


def ds_status(desired: int, ready: int) -> dict[str, Any]:
    return {"desiredNumberScheduled": desired, "currentNumberScheduled": desired, "numberReady": ready,
            "numberAvailable": ready, **({"numberUnavailable": desired - ready} if desired > ready else {})}


def scheduler(version: str = "v1.15.1", **kw: Any) -> dict[str, Any]:
    return workload("Deployment", "volcano-system", "volcano-scheduler", f"docker.io/volcanosh/vc-scheduler:{version}",
                    **kw)


def vgpu_plugin(image: str = VGPU_PLUGIN_IMAGE, *, status: dict[str, Any] | None = None,
                node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    return workload("DaemonSet", "kube-system", "volcano-device-plugin", image, status=status,
                    node_selector=node_selector)


def plugin_pod(node: str, *, ds: str = "volcano-device-plugin", image: str = VGPU_PLUGIN_IMAGE,
               ready: bool = True, waiting: str | None = None, namespace: str = "kube-system",
               owned: bool = True) -> dict[str, Any]:
    p = pod(namespace, f"{ds}-{node}", node=node, containers=[{"name": "plugin", "image": image}],
            scheduler="default-scheduler")
    if owned:
        p["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": ds}]
    p["status"]["conditions"] = [{"type": "Ready", "status": "True" if ready and not waiting else "False"}]
    if waiting:
        p["status"]["containerStatuses"] = [{"name": "plugin", "ready": False,
                                             "state": {"waiting": {"reason": waiting}}}]
    return p


def webhook(*, replicas: int = 2, ready: int | None = 2) -> dict[str, Any]:
    d = workload("Deployment", "vgpuctl-system", "vgpuctl-webhook", "ghcr.io/vgpuctl/vgpuctl:0.1.0",
                 status={"replicas": replicas, **({"readyReplicas": ready} if ready else {})})
    d["spec"]["replicas"] = replicas
    return d


def vgpu_pod(namespace: str, name: str, *, node: str | None = "gpu-1", annotations: dict[str, str] | None = None,
             memory: str = "3072", phase: str = "Running") -> dict[str, Any]:
    limits = {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": memory}
    return pod(namespace, name, node=node, annotations=annotations, phase=phase,
               containers=[{"name": "main", "image": "cuda", "resources": {"limits": limits}}])


def healthy_vgpu(*extra: dict[str, Any], nodes: tuple[str, ...] = ("gpu-1",)) -> list[dict[str, Any]]:
    """Volcano 1.15.1, vGPU on, the plugin ready on every GPU node: every VGK check passes."""
    return [scheduler_cm(), scheduler(), vgpu_plugin(status=ds_status(len(nodes), len(nodes))),
            *(vgpu_node(n) for n in nodes), *(plugin_pod(n) for n in nodes), *extra]


def typed_vgpu_node(name: str, *uuids: str, kind: str, devmem: int) -> dict[str, Any]:
    """A vGPU node of another GPU model (vgpu_node registers A100-40GB)."""
    alloc = {"volcano.sh/vgpu-number": str(10 * len(uuids)), "volcano.sh/vgpu-memory": str(devmem * len(uuids)),
             "volcano.sh/vgpu-cores": str(100 * len(uuids))}
    return node(name, annotations={"volcano.sh/node-vgpu-register": register(*uuids, devmem=devmem, kind=kind)},
                allocatable=alloc)
