"""Device allocation as metric rows: what the cluster-aware webhook exports on `/metrics`.

The rows are read off the same per-device state `vgpuctl nodes` shows (`NodeState.devices`, whose usage
`cluster.build` sums from the allocation annotations once): nothing is summed again here, so the
metrics and `nodes` cannot disagree. A node's findings are the doctor's node checks (`judge_nodes`), the
ones `nodes` shows.

Label names follow Volcano's own vGPU metrics where they mean the same thing — `NodeName` and `devID`
(volcano-sh/volcano `pkg/scheduler/api/devices/nvidia/vgpu/metrics.go`, commit ed72c7c8) — so a
dashboard joins `volcano_vgpu_device_allocated_memory` and `vgpuctl_device_memory_allocated_bytes` on
them. Every row is a function of the watched objects only (no counters, no clock), so every replica
that has seen the same objects exports the same rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from vgpuctl.core.cluster.model import ClusterSnapshot, NodeState
from vgpuctl.core.clusterview import ALL_FAMILIES
from vgpuctl.core.deviceconfig import DeviceConfig
from vgpuctl.core.doctor import judge_nodes
from vgpuctl.core.findings import Finding
from vgpuctl.core.versions import Version

MIB = 1 << 20
DEVICE_LABELS = ("NodeName", "devID", "family", "type", "mode")
SLICE_LABELS = (*DEVICE_LABELS, "slice")
FINDING_LABELS = ("NodeName", "code", "severity")


@dataclass(frozen=True)
class Metric:
    name: str
    help: str
    labels: tuple[str, ...]


MEMORY_ALLOCATED = Metric("vgpuctl_device_memory_allocated_bytes", "Device memory booked by the allocation "
                          "annotations of the pods bound to the node (after gpuMemoryFactor).", DEVICE_LABELS)
MEMORY_CAPACITY = Metric("vgpuctl_device_memory_capacity_bytes", "Device memory as registered (after "
                         "gpuMemoryFactor); devices without memory accounting (MindCluster chips) have none.",
                         DEVICE_LABELS)
CORES_ALLOCATED = Metric("vgpuctl_device_cores_allocated", "Compute booked: percent of a GPU (vGPU), AI cores "
                         "(Ascend). Only families that account cores.", DEVICE_LABELS)
CORES_CAPACITY = Metric("vgpuctl_device_cores_capacity", "Compute the device offers, in the unit of "
                        "vgpuctl_device_cores_allocated.", DEVICE_LABELS)
PODS = Metric("vgpuctl_device_pods", "Pods sharing the device (bound, not Succeeded/Failed).", DEVICE_LABELS)
SLOTS_USED = Metric("vgpuctl_device_slots_used", "Sharing slots in use (vGPU split count, vNPU count). Only "
                    "families with slots.", DEVICE_LABELS)
SLOTS_TOTAL = Metric("vgpuctl_device_slots_total", "Sharing slots the device registers.", DEVICE_LABELS)
HEALTHY = Metric("vgpuctl_device_healthy", "1 when the device plugin registers the device healthy, else 0.",
                 DEVICE_LABELS)
SLICES = Metric("vgpuctl_device_slices_in_use", "Allocations per MIG instance (group-position) or vNPU template "
                "on the device; a slice in use by no pod has no series.", SLICE_LABELS)
NODE_FINDINGS = Metric("vgpuctl_node_findings", "Findings of the doctor's node checks on the node, by code and "
                       "severity (the findings `vgpuctl nodes` shows); a node without findings has no series.",
                       FINDING_LABELS)
METRICS = (MEMORY_ALLOCATED, MEMORY_CAPACITY, CORES_ALLOCATED, CORES_CAPACITY, PODS, SLOTS_USED, SLOTS_TOTAL,
           HEALTHY, SLICES, NODE_FINDINGS)

Row = tuple[tuple[str, ...], int]  # label values (in the metric's label order), value
NodeRows = Mapping[str, Sequence[Row]]  # metric name → the node's rows


def node_rows(state: NodeState, findings: Iterable[Finding]) -> dict[str, list[Row]]:
    """Every row of one node, by metric name: its devices' and its findings' (one per code and severity).

    Memory, cores and slots only where the device's family accounts them (capacity above 0); memory in
    bytes (the model holds MiB)."""
    rows: dict[str, list[Row]] = {m.name: [] for m in METRICS}
    memory_used, memory_total = rows[MEMORY_ALLOCATED.name], rows[MEMORY_CAPACITY.name]
    cores_used, cores_total = rows[CORES_ALLOCATED.name], rows[CORES_CAPACITY.name]
    slots_used, slots_total = rows[SLOTS_USED.name], rows[SLOTS_TOTAL.name]
    pods, healthy, slices = rows[PODS.name], rows[HEALTHY.name], rows[SLICES.name]
    name = state.name
    for device in state.devices:
        labels = (name, device.id, device.family.value, device.type, device.mode)
        if device.memory_total > 0:
            memory_used.append((labels, device.memory_used * MIB))
            memory_total.append((labels, device.memory_total * MIB))
        if device.cores_total > 0:
            cores_used.append((labels, device.cores_used))
            cores_total.append((labels, device.cores_total))
        if device.slots_total > 0:
            slots_used.append((labels, device.slots_used))
            slots_total.append((labels, device.slots_total))
        pods.append((labels, len(device.pods)))
        healthy.append((labels, 1 if device.health else 0))
        if device.slices:
            counts: dict[str, int] = {}
            for slice_ in device.slices:
                counts[slice_] = counts.get(slice_, 0) + 1
            slices.extend(((*labels, slice_), counts[slice_]) for slice_ in sorted(counts))
    found: dict[tuple[str, str], int] = {}
    for finding in findings:
        key = (finding.code, finding.severity.value)
        found[key] = found.get(key, 0) + 1
    rows[NODE_FINDINGS.name] = [((name, code, severity), count) for (code, severity), count in sorted(found.items())]
    return rows


# The webhook watches nodes and pods only: the checks that read DaemonSets or ConfigMaps are skipped,
# never run on an empty list (which would read as "none installed").
UNWATCHED = frozenset({"daemonsets", "configmaps", "deployments", "runtimeclasses"})


def judge_watched(states: Sequence[NodeState], pods: Sequence[Mapping[str, Any]], config: DeviceConfig, *,
                  volcano_version: Version | None, now: datetime) -> dict[str, list[Finding]]:
    """The doctor's node findings for watched nodes (and the bound device pods on them), by node name:
    `judge_nodes`, the function `vgpuctl nodes` uses, over a snapshot of just these objects."""
    snapshot = ClusterSnapshot(nodes=list(states), pods=list(pods), configmaps={}, daemonsets=[], deployments=[],
                               server_version=None, scheduler_conf=None, deviceshare=ALL_FAMILIES,
                               device_config=config, device_config_source="given by the caller")
    return judge_nodes(snapshot, now=now, volcano_version=volcano_version, source="live",
                       unreadable=UNWATCHED).findings
