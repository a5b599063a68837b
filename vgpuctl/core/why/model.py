"""The vocabulary of `why`: stable reason keys, the devices a fit gets, one node's verdict, and the report (a gang
what-if's too; the gang's own classes are in `gangmodel.py`, imported only for a workload).

Reason keys are a contract (docs/contracts.md#interfaces): scripts group on them. They are listed here in the order
Volcano
checks them, and that order is also how "closest to fitting" is ranked — a node that fails a later check
got further through Volcano's filter than one that failed an earlier check.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from vgpuctl.core.findings import Finding
from vgpuctl.core.spec import Family

if TYPE_CHECKING:  # a type here: `why` for a Pod does not import gangmodel.py (its docstring says why)
    from vgpuctl.core.why.gangmodel import GangReport


class Reason(str, enum.Enum):
    # Node-level checks, before any device filter (`nodefit.py`): the node is not in the session (Volcano < 1.11),
    # the allocate action's resource check, then the predicates plugin's filters in its own order. (Where the
    # scheduler config lists `deviceshare` before `predicates`, the predicates' filters run after the devices';
    # the keys keep this order.)
    NODE_NOT_READY = "node-not-ready"
    INSUFFICIENT_RESOURCE = "insufficient-resource"
    NODE_UNSCHEDULABLE = "node-unschedulable"
    NODE_SELECTOR = "node-selector"
    TAINT = "taint"
    # The device filters (one module per family).
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
    hint: str = ""  # what would make this device (or node) fit: advisory, never a number (see `suggest`)
    container: str = ""  # the container whose request failed, when the filter works per container


@dataclass(frozen=True, slots=True)
class NodeVerdict:
    node: str
    fits: bool
    family: Family | None = None  # the family that decided a miss (or the last one checked)
    reason: Reason | None = None
    message: str = ""
    devices: tuple[DeviceChoice, ...] = ()
    progress: float = 0.0  # see `Miss.progress` and `nodefit.py` for where node-level misses sit
    hint: str = ""  # what would make it fit here, when we can say (advisory: numbers come from `suggest`)
    container: str = ""  # the container whose request failed ("" when the filter judges the whole pod)
    resources: tuple[str, ...] = ()  # insufficient-resource: the resources the node is short of, first first

    @staticmethod
    def fit(node: str, devices: tuple[DeviceChoice, ...], family: Family | None = None) -> NodeVerdict:
        return NodeVerdict(node, True, family, devices=devices, progress=float("inf"))

    @staticmethod
    def miss(node: str, family: Family, miss: Miss, hint: str = "") -> NodeVerdict:
        return NodeVerdict(node, False, family, miss.reason, miss.message, (), miss.progress, hint or miss.hint,
                           miss.container)


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
    # The doctor's GPU-stack findings on the node (VGN012, VGN020–VGN022, `shared_gpus.py`): Volcano places the pod
    # here, and another stack may hand the same GPU to a second pod.
    stacks: tuple[Finding, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "devices": [d.to_dict() for d in self.devices],
                **({"stackFindings": [f.to_dict() for f in self.stacks]} if self.stacks else {})}


@dataclass(frozen=True, slots=True)
class Edit:
    """One change to the pod: a container's limit (and request, if it has one), or a pod annotation."""

    container: str | None  # None: a pod annotation
    key: str
    value: str | None  # None removes it

    def to_dict(self) -> dict[str, Any]:
        return {"container": self.container, "key": self.key, "value": self.value}

    def describe(self) -> str:
        where = f' in container "{self.container}"' if self.container is not None else " (pod annotation)"
        return f"remove {self.key}{where}" if self.value is None else f"set {self.key}: {self.value}{where}"


@dataclass(frozen=True, slots=True)
class Suggestion:
    node: str
    reason: Reason  # the reason the node failed before the edit
    edits: tuple[Edit, ...]
    note: str = ""  # what the value means to Volcano (e.g. "= 12288 MiB per GPU")

    @property
    def text(self) -> str:
        what = "; ".join(e.describe() for e in self.edits)
        return f"{what}{f' ({self.note})' if self.note else ''}: fits on {self.node} (replayed)"

    def to_dict(self) -> dict[str, Any]:
        return {"node": self.node, "reason": self.reason.value, "edits": [e.to_dict() for e in self.edits],
                "text": self.text}


@dataclass(frozen=True, slots=True)
class ClusterCause:
    """A cause no node can get past, said once at the top instead of as every node's reason (`blocked.py`): the
    scheduler config missing or unreadable, deviceshare in no tier, no allocate action, the pod's family off."""

    message: str
    hint: str
    code: str | None = None  # the doctor's finding for it, where there is one (VGC001, VGC002, VGC005, VGC013)

    def to_dict(self) -> dict[str, Any]:
        return {"code": self.code, "message": self.message, "hint": self.hint}


API_VERSION = "vgpuctl.io/v1alpha1"
PHASE_WHAT_IF = "WhatIf"

# `verdict` of a WhyReport: one word for scripts, next to the pod's `phase`.
VERDICT_BOUND = "bound"  # the pod is on a node; `fits` holds what it got
VERDICT_REJECTED = "rejected"  # the rule core rejects the request (see `findings`): nothing was simulated
VERDICT_FITS = "fits"
VERDICT_NO_FIT = "no-fit"
VERDICT_NO_DEVICE = "no-device-request"  # asks for nothing deviceshare filters


@dataclass
class WhyReport:
    """docs/contracts.md#interfaces `WhyReport`, plus `closest` and `hints` (what would make it fit / why it got what it
    got)."""

    pod: str
    families: tuple[Family, ...]
    phase: str
    fits: list[Placement] = field(default_factory=list)
    unfit: list[UnfitGroup] = field(default_factory=list)
    closest: list[NodeVerdict] = field(default_factory=list)
    hints: list[str] = field(default_factory=list)
    bound_node: str | None = None
    findings: list[Finding] = field(default_factory=list)  # the rule core's errors and warnings
    rejected: bool = False  # the rule core rejects the request: never simulated
    suggestions: list[Suggestion] = field(default_factory=list)  # replayed changes that make it fit
    gang: GangReport | None = None  # a workload's what-if: its replicas placed together (`gang.py`)
    notes: list[str] = field(default_factory=list)  # what the replay assumed or could not replay (`nodefit.py`)
    cause: ClusterCause | None = None  # a cluster-wide cause: no node was simulated (`blocked.py`)

    @property
    def schedulable(self) -> bool:
        """Exit 0: the pod is bound, fits somewhere, or asks for nothing deviceshare filters."""
        if self.bound_node is not None:
            return True
        if self.cause is not None:
            return False
        if self.gang is not None and not self.rejected:
            return self.gang.starts
        return not self.rejected and (bool(self.fits) or not self.unfit)

    @property
    def verdict(self) -> str:
        if self.bound_node is not None:
            return VERDICT_BOUND
        if self.rejected:
            return VERDICT_REJECTED
        if self.cause is not None:
            return VERDICT_NO_FIT
        if self.gang is not None:
            return VERDICT_FITS if self.gang.starts else VERDICT_NO_FIT
        if self.fits:
            return VERDICT_FITS
        return VERDICT_NO_FIT if self.unfit else VERDICT_NO_DEVICE

    def to_dict(self) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": "WhyReport",
            "pod": self.pod,
            "families": [f.value for f in self.families],
            "phase": self.phase,
            "verdict": self.verdict,
            "node": self.bound_node,
            "fits": [p.to_dict() for p in self.fits],
            "unfit": [g.to_dict() for g in self.unfit],
            "closest": [{"node": v.node, "reason": v.reason.value if v.reason else None, "message": v.message}
                        for v in self.closest],
            "hints": list(self.hints),
            "findings": [f.to_dict() for f in self.findings],
            "suggestions": [s.to_dict() for s in self.suggestions],
            **({"gang": self.gang.to_dict()} if self.gang is not None else {}),
            **({"notes": list(self.notes)} if self.notes else {}),
            **({"cause": self.cause.to_dict()} if self.cause is not None else {}),
        }
