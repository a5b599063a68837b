"""The cluster as vgpuctl sees it: nodes with their devices and usage, plus the objects checks read.

Built from plain object dicts (a snapshot file or a live read — the same either way), so every doctor
check and cluster-aware rule is testable from YAML. Devices carry capacity and usage in MiB after
gpuMemoryFactor; usage is summed from the allocation annotations of pods bound to the node that are not
Succeeded/Failed (SPEC §3, `nodes`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core.deviceconfig import DeviceConfig
from vgpuctl.core.findings import Finding
from vgpuctl.core.schedconf import DeviceshareArgs, SchedulerConf
from vgpuctl.core.spec import Family


@dataclass(slots=True)
class DeviceState:
    id: str
    index: int
    family: Family
    type: str
    mode: str
    health: bool
    memory_total: int  # MiB
    cores_total: int
    slots_total: int
    memory_used: int = 0
    cores_used: int = 0
    slots_used: int = 0
    pods: list[str] = field(default_factory=list)
    slices: list[str] = field(default_factory=list)  # MIG instances / vNPU templates in use

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id, "index": self.index, "family": self.family.value, "type": self.type,
            "mode": self.mode, "health": self.health,
            "memoryTotal": self.memory_total, "memoryUsed": self.memory_used,
            "coresTotal": self.cores_total, "coresUsed": self.cores_used,
            "slotsTotal": self.slots_total, "slotsUsed": self.slots_used,
            "pods": list(self.pods), "slices": list(self.slices),
        }


@dataclass(slots=True)
class NodeState:
    name: str
    obj: Mapping[str, Any]
    families: list[Family] = field(default_factory=list)
    mode: str | None = None
    devices: list[DeviceState] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)

    @property
    def labels(self) -> Mapping[str, Any]:
        return _m(_m(self.obj.get("metadata")).get("labels"))

    @property
    def annotations(self) -> Mapping[str, Any]:
        return _m(_m(self.obj.get("metadata")).get("annotations"))

    @property
    def allocatable(self) -> Mapping[str, Any]:
        return _m(_m(self.obj.get("status")).get("allocatable"))

    @property
    def capacity(self) -> Mapping[str, Any]:
        return _m(_m(self.obj.get("status")).get("capacity"))

    @property
    def kubelet_version(self) -> str | None:
        version = _m(_m(self.obj.get("status")).get("nodeInfo")).get("kubeletVersion")
        return version if isinstance(version, str) else None

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "families": [f.value for f in self.families],
            "mode": self.mode,
            "findings": [f.to_dict() for f in self.findings],
            "devices": [d.to_dict() for d in self.devices],
        }


@dataclass
class ClusterSnapshot:
    nodes: list[NodeState]
    pods: list[Mapping[str, Any]]
    configmaps: dict[tuple[str, str], Mapping[str, Any]]
    daemonsets: list[Mapping[str, Any]]
    deployments: list[Mapping[str, Any]]
    server_version: str | None
    scheduler_conf: SchedulerConf | None
    deviceshare: DeviceshareArgs
    device_config: DeviceConfig  # what Volcano runs on (its built-in defaults when the ConfigMap is unusable)
    device_config_source: str  # "configmap ns/name" or "built-in defaults (…why…)"
    findings: list[Finding] = field(default_factory=list)  # cluster-level problems met while building

    def node(self, name: str) -> NodeState | None:
        return next((n for n in self.nodes if n.name == name), None)


_EMPTY: Mapping[str, Any] = {}


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else _EMPTY
