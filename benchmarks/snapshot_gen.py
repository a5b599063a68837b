"""Generate a kubectl-shaped snapshot of a large vGPU fleet: N nodes × 8 GPUs.

    python benchmarks/snapshot_gen.py --nodes 5000 --out /tmp/fleet.json            # issue 17's fleet
    python benchmarks/snapshot_gen.py --nodes 5000 --vgpu-only --out /tmp/fleet.json

Objects look like `kubectl get nodes,pods,configmaps,daemonsets,deployments -A -o json` output (status
conditions, images, owner references, container statuses), so parse and model costs are realistic.
Deterministic for a given --nodes and --seed.

`fleet()` is the shape of issue 17 (Kubernetes' published limits: 5,000 nodes, 150,000 pods): 30 pods per
node, 8 of them holding a vGPU allocation, the other 22 the node's DaemonSet pods (the vGPU device plugin,
kube-proxy, a node exporter) and ordinary CPU workloads, some finished — three quarters of the pods ask no
device and carry no device annotation, and look like real ones (labels, cpu/memory requests and limits, a
status; what they carry varies, `_small_pod`); plus Volcano (scheduler and
controllers, the scheduler ConfigMap with vGPU on, the device ConfigMap) and a few deterministic defects
(an unhealthy GPU, a five-field register entry, an allocation naming a GPU the node does not have) so the
doctor has something to say. Written compactly it is ~130 MB at 5,000 nodes. `generate()` is the older
vGPU-only fleet (8 pods per node, no Volcano objects) that tests and `cluster_aware.py` build on.
"""

from __future__ import annotations

import argparse
import json
import random
import uuid
import zlib
from pathlib import Path
from typing import Any

GPUS_PER_NODE = 8
DEVMEM = 40960


def _uuid(rng: random.Random) -> str:
    return "GPU-" + str(uuid.UUID(int=rng.getrandbits(128)))


def node(i: int, rng: random.Random) -> tuple[dict[str, Any], list[str]]:
    name = f"gpu-node-{i:05d}"
    uuids = [_uuid(rng) for _ in range(GPUS_PER_NODE)]
    register = "".join(f"{u},10,{DEVMEM},NVIDIA-NVIDIA A100-PCIE-40GB,true,hami-core:" for u in uuids)
    ts = "2026-11-01T10:00:00Z"
    obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": str(uuid.UUID(int=rng.getrandbits(128))),
            "resourceVersion": str(1000 + i),
            "creationTimestamp": ts,
            "labels": {"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                       "node.kubernetes.io/instance-type": "a2-highgpu-8g", "nvidia.com/gpu.present": "true",
                       "nvidia.com/cuda.driver.major": "550", "topology.kubernetes.io/zone": f"zone-{i % 3}"},
            "annotations": {"volcano.sh/node-vgpu-register": register,
                            "volcano.sh/node-vgpu-handshake": "Reported 2026.11.01 10:00:00",
                            "node.alpha.kubernetes.io/ttl": "0",
                            "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        },
        "spec": {"podCIDR": f"10.{i // 250}.{i % 250}.0/24", "providerID": f"gce://proj/zone/{name}"},
        "status": {
            "capacity": {"cpu": "96", "memory": "1395932Mi", "pods": "110", "ephemeral-storage": "1Ti",
                         "volcano.sh/vgpu-number": str(GPUS_PER_NODE * 10),
                         "volcano.sh/vgpu-memory": str(GPUS_PER_NODE * DEVMEM),
                         "volcano.sh/vgpu-cores": str(GPUS_PER_NODE * 100)},
            "allocatable": {"cpu": "95500m", "memory": "1390000Mi", "pods": "110", "ephemeral-storage": "900Gi",
                            "volcano.sh/vgpu-number": str(GPUS_PER_NODE * 10),
                            "volcano.sh/vgpu-memory": str(GPUS_PER_NODE * DEVMEM),
                            "volcano.sh/vgpu-cores": str(GPUS_PER_NODE * 100)},
            "conditions": [{"type": t, "status": "False" if t != "Ready" else "True", "lastHeartbeatTime": ts,
                            "lastTransitionTime": ts, "reason": f"Kubelet{t}", "message": f"kubelet {t} ok"}
                           for t in ("MemoryPressure", "DiskPressure", "PIDPressure", "Ready")],
            "addresses": [{"type": "InternalIP", "address": f"10.128.{i // 250}.{i % 250}"},
                          {"type": "Hostname", "address": name}],
            "nodeInfo": {"kubeletVersion": "v1.31.4", "containerRuntimeVersion": "containerd://1.7.24",
                         "kernelVersion": "6.1.0-28-amd64", "osImage": "Debian GNU/Linux 12 (bookworm)",
                         "architecture": "amd64", "operatingSystem": "linux"},
            "images": [{"names": [f"registry.example/img{k}@sha256:{k:064x}", f"registry.example/img{k}:v{k}"],
                        "sizeBytes": 100000000 + k} for k in range(8)],
        },
    }
    return obj, uuids


def pod(i: int, node_name: str, gpu_uuid: str, rng: random.Random) -> dict[str, Any]:
    name = f"train-{i:06d}"
    mem = rng.choice([4096, 8192, 10240])
    cores = rng.choice([10, 25, 50])
    ts = "2026-11-02T08:00:00Z"
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "name": name, "namespace": f"team-{i % 40}", "uid": str(uuid.UUID(int=rng.getrandbits(128))),
            "resourceVersion": str(500000 + i), "creationTimestamp": ts,
            "labels": {"app": "trainer", "volcano.sh/job-name": f"job-{i // 8}"},
            "annotations": {
                "volcano.sh/vgpu-ids-new": f"{gpu_uuid},NVIDIA,{mem},{cores}:",
                "volcano.sh/devices-to-allocate": ";",
                "volcano.sh/vgpu-node": node_name, "volcano.sh/vgpu-time": "18446744073709551615",
                "volcano.sh/bind-phase": "success", "volcano.sh/bind-time": "1762070400",
                "scheduling.k8s.io/group-name": f"job-{i // 8}"},
            "ownerReferences": [{"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "name": f"job-{i // 8}",
                                 "uid": str(uuid.UUID(int=rng.getrandbits(128))), "controller": True}],
        },
        "spec": {
            "schedulerName": "volcano", "nodeName": node_name, "restartPolicy": "Never",
            "containers": [{"name": "trainer", "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                            "command": ["python", "train.py"],
                            "resources": {"limits": {"volcano.sh/vgpu-number": "1",
                                                     "volcano.sh/vgpu-memory": str(mem),
                                                     "volcano.sh/vgpu-cores": str(cores)},
                                          "requests": {"cpu": "4", "memory": "32Gi"}},
                            "volumeMounts": [{"name": "kube-api-access", "mountPath": "/var/run/secrets",
                                              "readOnly": True}]}],
            "tolerations": [{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
                             "tolerationSeconds": 300}],
            "volumes": [{"name": "kube-api-access", "projected": {"sources": [{"serviceAccountToken": {
                "expirationSeconds": 3607, "path": "token"}}]}}],
        },
        "status": {
            "phase": "Running", "hostIP": "10.128.0.1", "podIP": f"10.{i % 250}.0.{i % 200}", "startTime": ts,
            "conditions": [{"type": t, "status": "True", "lastTransitionTime": ts}
                           for t in ("PodScheduled", "Initialized", "ContainersReady", "Ready")],
            "containerStatuses": [{"name": "trainer", "ready": True, "restartCount": 0,
                                   "image": "nvcr.io/nvidia/pytorch:24.05-py3",
                                   "containerID": f"containerd://{i:064x}", "started": True,
                                   "state": {"running": {"startedAt": ts}}}],
        },
    }


def generate(nodes: int, seed: int = 1) -> dict[str, Any]:
    rng = random.Random(seed)
    items: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    for i in range(nodes):
        node_obj, uuids = node(i, rng)
        items.append(node_obj)
        for k in range(GPUS_PER_NODE):
            pods.append(pod(i * GPUS_PER_NODE + k, node_obj["metadata"]["name"], uuids[k], rng))
    items.extend(pods)
    return {"apiVersion": "v1", "kind": "List", "metadata": {"annotations": {
        "vgpuctl.io/server-version": "v1.31.4"}}, "items": items}


PODS_PER_NODE = 30
PLUGIN_IMAGE = "docker.io/projecthami/volcano-vgpu-device-plugin:v1.12.0"
SCHEDULER_IMAGE = "docker.io/volcanosh/vc-scheduler:v1.15.1"
SCHEDULER_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
  - name: deviceshare
    arguments:
      deviceshare.VGPUEnable: true
      deviceshare.SchedulePolicy: binpack
      deviceshare.KnownGeometriesCMName: volcano-vgpu-device-config
      deviceshare.KnownGeometriesCMNamespace: kube-system
"""
DEVICE_CONFIG = """\
nvidia:
  resourceCountName: volcano.sh/vgpu-number
  resourceMemoryName: volcano.sh/vgpu-memory
  resourceMemoryPercentageName: volcano.sh/vgpu-memory-percentage
  resourceCoreName: volcano.sh/vgpu-cores
  overwriteEnv: false
  defaultMemory: 0
  defaultCores: 0
  defaultGPUNum: 1
  deviceSplitCount: 10
  deviceMemoryScaling: 1
  deviceCoreScaling: 1
  gpuMemoryFactor: 1
"""
# Per node besides the 8 vGPU pods: three DaemonSet pods, then CPU workloads; every 11th node has two finished.
_DAEMONS = (("kube-system", "volcano-device-plugin", PLUGIN_IMAGE),
            ("kube-system", "kube-proxy", "registry.k8s.io/kube-proxy:v1.31.4"),
            ("monitoring", "node-exporter", "quay.io/prometheus/node-exporter:v1.8.2"))


def _workload(kind: str, namespace: str, name: str, image: str, extra: dict[str, Any] | None = None
              ) -> dict[str, Any]:
    api = "apps/v1"
    labels = {"app": name}
    return {"apiVersion": api, "kind": kind,
            "metadata": {"name": name, "namespace": namespace, "creationTimestamp": "2026-11-01T08:00:00Z"},
            "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                "containers": [{"name": name, "image": image}]}}},
            "status": extra or {"replicas": 1, "readyReplicas": 1, "availableReplicas": 1}}


_SIDECAR = "docker.io/istio/proxyv2:1.23.2"
_CPU = ("100m", "250m", "500m", "1", "2", "4")
_MEMORY = ("128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "8Gi")


def _small_pod(i: int, node_name: str, namespace: str, owner: tuple[str, str], image: str, phase: str
               ) -> dict[str, Any]:
    """A pod without devices as `kubectl get -o json` shows one, trimmed as `_trimmed` trims the GPU pods (no
    volumes, tolerations, uid, timestamps): labels, a few annotations on some, one to three containers with cpu
    and memory requests and limits (ephemeral-storage on some), an init container on some, and a status with its
    conditions and container statuses. What each carries varies with `i` (deterministically), as a real
    cluster's do: nothing vgpuctl does may need more than a glance at it (issue 26)."""
    kind, owner_name = owner
    name = f"{owner_name}-{i:06d}" if kind == "ReplicaSet" else f"{owner_name}-{node_name[-5:]}"
    labels = {"app": owner_name}
    if kind == "ReplicaSet":
        labels["pod-template-hash"] = f"{zlib.crc32(owner_name.encode()):08x}"
    else:
        labels["controller-revision-hash"] = "6d5f8b7c9"
    if i % 3 == 0:
        labels["team"] = f"team-{i % 17}"
        labels["version"] = f"v{i % 5}"
    annotations: dict[str, str] = {}
    if i % 4 == 0:
        annotations["prometheus.io/scrape"] = "true"
        annotations["prometheus.io/port"] = "9090"
    if i % 5 == 1:
        annotations["kubectl.kubernetes.io/restartedAt"] = "2026-10-30T12:00:00Z"
    if i % 7 == 2:
        annotations["checksum/config"] = f"{i:064x}"
    cpu, memory = _CPU[i % len(_CPU)], _MEMORY[(i // 3) % len(_MEMORY)]
    resources: dict[str, Any] = {"requests": {"cpu": cpu, "memory": memory}, "limits": {"memory": memory}}
    if i % 2:
        resources["limits"]["cpu"] = cpu
    if i % 9 == 4:
        resources["requests"]["ephemeral-storage"] = "1Gi"
    main: dict[str, Any] = {"name": "main", "image": image, "resources": resources}
    if i % 4 == 0:
        main["ports"] = [{"containerPort": 9090, "protocol": "TCP"}]
    containers = [main]
    if i % 6 == 5:  # a service-mesh sidecar
        containers.append({"name": "istio-proxy", "image": _SIDECAR, "resources": {
            "requests": {"cpu": "100m", "memory": "128Mi"}, "limits": {"cpu": "2", "memory": "1Gi"}}})
    if i % 10 == 3:
        containers.append({"name": "log-shipper", "image": "docker.io/fluent/fluent-bit:3.1",
                           "resources": {"requests": {"cpu": "50m", "memory": "64Mi"}}})
    pod_spec: dict[str, Any] = {"nodeName": node_name, "containers": containers}
    if i % 8 == 1:
        pod_spec["initContainers"] = [{"name": "migrate", "image": image, "command": ["/bin/migrate"],
                                       "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]
    if i % 5 == 3:
        pod_spec["nodeSelector"] = {"kubernetes.io/os": "linux"}
    ts = "2026-11-02T08:00:00Z"
    running = phase == "Running"
    status: dict[str, Any] = {
        "phase": phase, "podIP": f"10.{i % 250}.{(i // 250) % 250}.{i % 200}",
        "conditions": [{"type": "Ready", "status": "True" if running else "False"}],
        "containerStatuses": [{"name": c["name"], "ready": running, "restartCount": i % 3,
                               "state": {"running": {"startedAt": ts}} if running else
                               {"terminated": {"exitCode": 0, "reason": "Completed"}}} for c in containers]}
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, "labels": labels,
                                "ownerReferences": [{"kind": kind, "name": owner_name}]}
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": pod_spec, "status": status}


def _trimmed(obj: dict[str, Any]) -> dict[str, Any]:
    """A `node()` or `pod()` object without the fields no check reads (images, volumes, timestamps, …), so the
    whole fleet is ~70 MB as in issue 17."""
    meta = obj["metadata"]
    for key in ("uid", "resourceVersion", "creationTimestamp"):
        meta.pop(key, None)
    for key in ("volumes.kubernetes.io/controller-managed-attach-detach", "volcano.sh/vgpu-time",
                "volcano.sh/devices-to-allocate", "node.alpha.kubernetes.io/ttl"):
        meta["annotations"].pop(key, None)
    for ref in meta.get("ownerReferences", ()):
        ref.pop("uid", None)
    for key in ("volumes", "tolerations", "providerID", "podCIDR", "restartPolicy"):
        obj["spec"].pop(key, None)
    for container in obj["spec"].get("containers", ()):
        container.pop("volumeMounts", None)
        container.pop("command", None)
        container.get("resources", {}).pop("requests", None)
    status = obj["status"]
    for key in ("images", "addresses", "containerStatuses", "hostIP", "podIP"):
        status.pop(key, None)
    if obj["kind"] == "Node":
        status["conditions"] = [{"type": "Ready", "status": "True"}]
        status["nodeInfo"] = {"kubeletVersion": status["nodeInfo"]["kubeletVersion"]}
    else:
        status["conditions"] = [{"type": "Ready", "status": "True"}]
    return obj


def fleet(nodes: int, seed: int = 1) -> dict[str, Any]:
    """Issue 17's fleet: `nodes` × 8 A100s, 30 pods per node (8 vGPU), Volcano installed (see the module doc)."""
    rng = random.Random(seed)
    node_objs: list[dict[str, Any]] = []
    pods: list[dict[str, Any]] = []
    for i in range(nodes):
        node_obj, uuids = node(i, rng)
        name = node_obj["metadata"]["name"]
        annotations = node_obj["metadata"]["annotations"]
        if i % 101 == 7:  # one unhealthy GPU
            annotations["volcano.sh/node-vgpu-register"] = annotations["volcano.sh/node-vgpu-register"].replace(
                ",true,hami-core:", ",false,hami-core:", 1)
        if i % 211 == 13:  # Volcano >= 1.12 wants six fields: this entry has five
            annotations["volcano.sh/node-vgpu-register"] += f"{_uuid(rng)},10,{DEVMEM},NVIDIA-NVIDIA A100,true:"
        node_objs.append(_trimmed(node_obj))
        for k in range(GPUS_PER_NODE):
            gpu = uuids[k] if (i * GPUS_PER_NODE + k) % 157 != 3 else _uuid(rng)  # a GPU not on the node
            pods.append(_trimmed(pod(i * GPUS_PER_NODE + k, name, gpu, rng)))
        for k, (namespace, owner, image) in enumerate(_DAEMONS):
            pods.append(_small_pod(i * PODS_PER_NODE + k, name, namespace, ("DaemonSet", owner), image, "Running"))
        if i == 0:  # Volcano runs on the first node, in place of two workloads
            pods.append(_small_pod(1, name, "volcano-system", ("ReplicaSet", "volcano-scheduler"),
                                   SCHEDULER_IMAGE, "Running"))
            pods.append(_small_pod(2, name, "volcano-system", ("ReplicaSet", "volcano-controllers"),
                                   "docker.io/volcanosh/vc-controller-manager:v1.15.1", "Running"))
        first = len(_DAEMONS) + (2 if i == 0 else 0)
        for k in range(first, PODS_PER_NODE - GPUS_PER_NODE):
            n = i * PODS_PER_NODE + k
            phase = "Succeeded" if i % 11 == 0 and k >= PODS_PER_NODE - GPUS_PER_NODE - 2 else "Running"
            pods.append(_small_pod(n, name, f"apps-{n % 25}", ("ReplicaSet", f"web-{n % 300}"),
                                   f"registry.example/web:{n % 7}.0", phase))
    configmaps = [
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
         "data": {"volcano-scheduler.conf": SCHEDULER_CONF}},
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": {"name": "volcano-vgpu-device-config", "namespace": "kube-system"},
         "data": {"device-config.yaml": DEVICE_CONFIG}},
    ]
    ready = {"desiredNumberScheduled": nodes, "currentNumberScheduled": nodes, "numberReady": nodes,
             "numberAvailable": nodes, "numberMisscheduled": 0}
    daemonsets = [_workload("DaemonSet", ns, name, image, ready) for ns, name, image in _DAEMONS]
    deployments = [_workload("Deployment", "volcano-system", "volcano-scheduler", SCHEDULER_IMAGE),
                   _workload("Deployment", "volcano-system", "volcano-controllers",
                             "docker.io/volcanosh/vc-controller-manager:v1.15.1")]
    return {"apiVersion": "v1", "kind": "List", "metadata": {"annotations": {
        "vgpuctl.io/server-version": "v1.31.4"}},
        "items": [*node_objs, *pods, *configmaps, *daemonsets, *deployments]}


def write(data: dict[str, Any], path: Path) -> None:
    """Compact JSON, as a program would write it (kubectl indents, which only adds whitespace)."""
    path.write_text(json.dumps(data, separators=(",", ":")))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--vgpu-only", action="store_true", help="The older fleet: 8 vGPU pods per node only.")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    data = generate(args.nodes, args.seed) if args.vgpu_only else fleet(args.nodes, args.seed)
    write(data, Path(args.out))
    pods = sum(1 for item in data["items"] if item["kind"] == "Pod")
    print(f"{args.out}: {args.nodes} nodes, {pods} pods, {Path(args.out).stat().st_size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
