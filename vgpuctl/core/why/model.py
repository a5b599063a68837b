"""The vocabulary of `why`: stable reason keys, the devices a fit gets, and one node's verdict.

Reason keys are a contract (SPEC §3): scripts group on them. They are listed here in the order Volcano
checks them, and that order is also how "closest to fitting" is ranked — a node that fails a later check
got further through Volcano's filter than one that failed an earlier check.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core.spec import Family


class Reason(str, enum.Enum):
    NOT_DEVICE_NODE = "not-device-node"
    MODE_MISMATCH = "mode-mismatch"
    TOO_MANY_DEVICES = "too-many-devices"
    SLOTS_EXHAUSTED = "slots-exhausted"
    INSUFFICIENT_MEMORY = "insufficient-memory"
    INSUFFICIENT_CORES = "insufficient-cores"
    EXCLUSIVE_IN_USE = "exclusive-in-use"
    TYPE_EXCLUDED = "type-excluded"
    UUID_EXCLUDED = "uuid-excluded"
    NO_MIG_SLICE = "no-mig-slice"
    PODGROUP_SPREAD = "podgroup-spread"
    EXCLUSIVE_RULE = "exclusive-rule"
    HAMI_CORE_UNSUPPORTED = "hami-core-unsupported"
    PARTIAL_MULTI_DEVICE = "partial-multi-device"
    TEMPLATE_CONFLICT = "template-conflict"
    NODE_LOCKED = "node-locked"
    OTHER = "other"


REASONS: tuple[str, ...] = tuple(r.value for r in Reason)


@dataclass(frozen=True, slots=True)
class DeviceChoice:
    """One device a container gets (or got): what Volcano books on it."""

    id: str  # GPU UUID (MIG: `<uuid>[<group>-<pos>]`), gpushare card index, NPU id, 310P chip id
    memory: int | None  # MiB (after gpuMemoryFactor); None where the family books no memory (MindCluster)
    cores: int | None
    slice: str | None = None  # MIG instance profile (`2g.10gb`)
    template: str | None = None  # vNPU template (`vir02_1c`, `vir05_1c_16g`)

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "memory": self.memory, "cores": self.cores, "slice": self.slice,
                "template": self.template}


@dataclass(frozen=True, slots=True)
class Miss:
    """Why one device (or the node) fails, and how far it got: `progress` orders "closest to fitting"."""

    reason: Reason
    message: str
    progress: float  # checks passed (+ a fraction of the failing one); higher is closer to fitting
    hint: str = ""  # what would make this device (or node) fit


@dataclass(frozen=True, slots=True)
class NodeVerdict:
    node: str
    fits: bool
    family: Family | None = None  # the family that decided a miss (or the last one checked)
    reason: Reason | None = None
    message: str = ""
    devices: tuple[DeviceChoice, ...] = ()
    progress: float = 0.0  # see `Miss.progress`; node-level misses sit below every device-level miss
    hint: str = ""  # what would make it fit here, when we can say

    @staticmethod
    def fit(node: str, devices: tuple[DeviceChoice, ...], family: Family | None = None) -> NodeVerdict:
        return NodeVerdict(node, True, family, devices=devices, progress=float("inf"))

    @staticmethod
    def miss(node: str, family: Family, miss: Miss, hint: str = "") -> NodeVerdict:
        return NodeVerdict(node, False, family, miss.reason, miss.message, (), miss.progress, hint or miss.hint)


@dataclass(frozen=True, slots=True)
class UnfitGroup:
    reason: Reason
    message: str  # the closest node's message, with its name
    nodes: tuple[str, ...]  # closest to fitting first
    hint: str = ""

    @property
    def count(self) -> int:
        return len(self.nodes)

    def to_dict(self) -> dict[str, Any]:
        return {"reason": self.reason.value, "message": self.message, "count": self.count, "nodes": list(self.nodes)}


@dataclass(frozen=True, slots=True)
class Placement:
    node: str
    devices: tuple[DeviceChoice, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "devices": [d.to_dict() for d in self.devices]}


API_VERSION = "vgpuctl.io/v1alpha1"
PHASE_WHAT_IF = "WhatIf"


@dataclass
class WhyReport:
    """SPEC §3 `WhyReport`, plus `closest` and `hints` (what would make it fit / why it got what it got)."""

    pod: str
    families: tuple[Family, ...]
    phase: str
    fits: list[Placement] = field(default_factory=list)
    unfit: list[UnfitGroup] = field(default_factory=list)
    closest: list[NodeVerdict] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    bound_node: str | None = None

    @property
    def schedulable(self) -> bool:
        """Exit 0: the pod is bound, fits somewhere, or asks for nothing deviceshare filters."""
        return self.bound_node is not None or bool(self.fits) or not self.unfit

    def to_dict(self) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": "WhyReport",
            "pod": self.pod,
            "families": [f.value for f in self.families],
            "phase": self.phase,
            "node": self.bound_node,
            "fits": [p.to_dict() for p in self.fits],
            "unfit": [g.to_dict() for g in self.unfit],
            "closest": [{"node": v.node, "reason": v.reason.value if v.reason else None, "message": v.message}
                        for v in self.closest],
            "hints": list(self.hints),
        }
