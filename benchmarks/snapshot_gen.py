"""Generate a kubectl-shaped snapshot of a large vGPU fleet: N nodes × 8 GPUs and 8 vGPU pods per node.

    python benchmarks/snapshot_gen.py --nodes 5000 --out /tmp/fleet.json

Objects look like `kubectl get nodes,pods,configmaps,daemonsets,deployments -A -o json` output (status
conditions, images, owner references, container statuses), so parse and model costs are realistic.
Deterministic for a given --nodes and --seed.
"""

from __future__ import annotations

import argparse
import json
import random
import uuid
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    data = generate(args.nodes, args.seed)
    Path(args.out).write_text(json.dumps(data))
    print(f"{args.out}: {args.nodes} nodes, {args.nodes * GPUS_PER_NODE} pods, "
          f"{Path(args.out).stat().st_size / 1e6:.0f} MB")


if __name__ == "__main__":
    main()
