"""Builders for doctor tests: small clusters as plain objects, exactly what a snapshot file holds.

    snap = cluster(scheduler_cm(DEVICESHARE_VGPU), node("n1", annotations={...}), pod("ml", "p", node="n1"))
    report = doctor(snap, version="1.15.1")
    codes(report)                  -> [("VGC003", "error"), ...]   (every finding, ungrouped, run order)
    result(report, "VGC003")       -> the CheckResult of the check whose code is VGC003
    found(report, "VGN002")        -> the Finding objects with that code
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.doctor import DoctorReport, diagnose
from vgpuctl.core.doctor.framework import CheckResult
from vgpuctl.core.findings import Finding
from vgpuctl.core.versions import parse_version

NOW = datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)

DEVICESHARE_VGPU = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.VGPUEnable: true
      deviceshare.SchedulePolicy: binpack
      deviceshare.ScheduleWeight: 10
"""

GPU_A = "GPU-11111111-1111-1111-1111-111111111111"
GPU_B = "GPU-22222222-2222-2222-2222-222222222222"


def register(*uuids: str, devmem: int = 40960, kind: str = "NVIDIA-NVIDIA A100-PCIE-40GB", mode: str = "hami-core",
             health: str = "true", split: int = 10) -> str:
    return "".join(f"{u},{split},{devmem},{kind},{health},{mode}:" for u in uuids)


def configmap(namespace: str, name: str, data: dict[str, str], **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace, **meta},
            "data": data}


def scheduler_cm(conf: str = DEVICESHARE_VGPU, **meta: Any) -> dict[str, Any]:
    return configmap("volcano-system", "volcano-scheduler-configmap", {"volcano-scheduler.conf": conf}, **meta)


def device_cm(payload: str, name: str = "volcano-vgpu-device-config", namespace: str = "kube-system",
              **meta: Any) -> dict[str, Any]:
    return configmap(namespace, name, {"device-config.yaml": payload}, **meta)


def node(name: str, *, annotations: dict[str, str] | None = None, labels: dict[str, str] | None = None,
         allocatable: dict[str, str] | None = None, capacity: dict[str, str] | None = None,
         kubelet: str = "v1.31.4") -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "annotations": annotations or {}, "labels": labels or {}},
            "status": {"allocatable": allocatable or {}, "capacity": capacity or allocatable or {},
                       "nodeInfo": {"kubeletVersion": kubelet}}}


def vgpu_node(name: str, *uuids: str, devmem: int = 40960, mode: str = "hami-core", **kw: Any) -> dict[str, Any]:
    """A healthy vGPU node: 6-field register and matching non-zero allocatable."""
    uuids = uuids or (GPU_A,)
    alloc = {"volcano.sh/vgpu-number": str(10 * len(uuids)), "volcano.sh/vgpu-memory": str(devmem * len(uuids)),
             "volcano.sh/vgpu-cores": str(100 * len(uuids))}
    annotations = {"volcano.sh/node-vgpu-register": register(*uuids, devmem=devmem, mode=mode),
                   **kw.pop("annotations", {})}
    return node(name, annotations=annotations, allocatable={**alloc, **kw.pop("allocatable", {})}, **kw)


def pod(namespace: str, name: str, *, node: str | None = None, annotations: dict[str, str] | None = None,
        labels: dict[str, str] | None = None, containers: list[dict[str, Any]] | None = None,
        phase: str = "Running", scheduler: str = "volcano", **spec: Any) -> dict[str, Any]:
    pod_spec: dict[str, Any] = {"schedulerName": scheduler, "containers": containers or [{"name": "main"}], **spec}
    if node:
        pod_spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "annotations": annotations or {},
                         "labels": labels or {}},
            "spec": pod_spec, "status": {"phase": phase}}


def workload(kind: str, namespace: str, name: str, image: str, *, status: dict[str, Any] | None = None,
             args: list[str] | None = None, node_selector: dict[str, str] | None = None) -> dict[str, Any]:
    container: dict[str, Any] = {"name": name, "image": image}
    if args:
        container["args"] = args
    pod_spec: dict[str, Any] = {"containers": [container]}
    if node_selector:
        pod_spec["nodeSelector"] = node_selector
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": namespace},
            "spec": {"template": {"spec": pod_spec}}, "status": status or {}}


def cluster(*objects: dict[str, Any], server_version: str | None = "v1.31.4", volcano: str | None = None,
            kinds: frozenset[str] | None = None) -> ClusterSnapshot:
    """`kinds`: what the snapshot says it listed (`vgpuctl.io/kinds`), e.g. the DRA kinds when none exist."""
    return build_snapshot(list(objects), server_version,
                          volcano_version=parse_version(volcano) if volcano else None, kinds=kinds)


def doctor(snapshot: ClusterSnapshot, *, version: str | None = None, **kw: Any) -> DoctorReport:
    return diagnose(snapshot, now=kw.pop("now", NOW), volcano_version=parse_version(version) if version else None,
                    **kw)


def codes(report: DoctorReport) -> list[tuple[str, str]]:
    return [(f.code, f.severity.value) for r in report.results for f in r.findings]


def result(report: DoctorReport, code: str) -> CheckResult:
    matches = [r for r in report.results if r.check.code == code]
    assert len(matches) == 1, f"expected one check with code {code}, got {[r.check.id for r in matches]}"
    return matches[0]


def found(report: DoctorReport, code: str) -> list[Finding]:
    return [f for r in report.results for f in r.findings if f.code == code]
