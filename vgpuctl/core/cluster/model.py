"""The cluster as vgpuctl sees it: nodes with their devices and usage, plus the objects checks read.

Built from plain object dicts (a snapshot file or a live read — the same either way), so every doctor
check and cluster-aware rule is testable from YAML. Devices carry capacity and usage in MiB after
gpuMemoryFactor; usage is summed from the allocation annotations of pods bound to the node that are not
Succeeded/Failed (docs/contracts.md#interfaces, `nodes`).
"""

from __future__ import annotations

import operator
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Generic, TypeVar

from vgpuctl.core.cluster.pod_index import PodIndex
from vgpuctl.core.codecs.dra import ResourceSlice, decode_slice
from vgpuctl.core.codecs.vgpu_register import decode_vgpu_register
from vgpuctl.core.deviceconfig import DeviceConfig
from vgpuctl.core.findings import Finding
from vgpuctl.core.scheduler_config import DeviceshareArgs, SchedulerConf
from vgpuctl.core.spec import NODE_CONDITION_READY, NODE_VGPU_REGISTER, Family


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


_new = object.__new__


def vgpu_devices(entries: Iterable[tuple[str, int, int, str, bool, str]], factor: int) -> list[DeviceState]:
    """The GPUs of a register annotation's entries — (uuid, count, devmem, type, health, mode), in order — as
    `DeviceState(uuid, index, Family.VGPU, type, mode, health, devmem * factor, 100, count)` makes them: unused,
    indexed in order. Filled in place, not through the dataclass's `__init__`: 40,000 GPUs on a fleet of 5,000
    nodes cost 35 ms that way, 23 ms this way (benchmarks/why_scale.py --phases, decode devices);
    tests/unit/test_cluster_decode_speed.py holds the two equal."""
    devices: list[DeviceState] = []
    vgpu = Family.VGPU
    for index, (uuid, split, memory, type_, health, mode) in enumerate(entries):
        d: DeviceState = _new(DeviceState)
        d.id = uuid
        d.index = index
        d.family = vgpu
        d.type = type_
        d.mode = mode
        d.health = health
        d.memory_total = memory * factor
        d.cores_total = 100
        d.slots_total = split
        d.memory_used = d.cores_used = d.slots_used = 0
        d.pods = []
        d.slices = []
        devices.append(d)
    return devices


T = TypeVar("T")


class _Decoded(Generic[T]):
    """A `NodeState` attribute that first finishes a deferred decode (read or written), then is its `_<name>` slot."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = f"_{name}"
        self.read = operator.attrgetter(self.slot)

    def __get__(self, node: NodeState, owner: type | None = None) -> T:
        # Read a few times per node by each of ~20 doctor checks: the decoded case is one test and a C-level
        # read (benchmarks/nodes_scale.py).
        if node._pending is not None:
            node._ready()
        value: T = self.read(node)
        return value

    def __set__(self, node: NodeState, value: T) -> None:
        node._ready()
        setattr(node, self.slot, value)


class NodeState:
    """One node: its object, and the devices decoded from it with the usage of the pods bound to it.

    `build_snapshot` makes nodes whose decoding is deferred: `families`, `mode`, `devices` and `findings`
    are computed on first access (exactly as an eager build would have them), so a command that never
    looks at a node's devices — `why` for a family the scheduler has switched off, `nodes NAME` — does not
    pay for decoding every node of a large cluster. A node made directly (`NodeState(name, obj, …)`) holds
    what it is given.
    """

    __slots__ = ("_allocatable", "_annotations", "_capacity", "_devices", "_families", "_findings", "_labels", "_mode",
                 "_pending", "_register", "name", "obj")
    __match_args__ = ("name", "obj", "families", "mode", "devices", "findings")

    def __init__(self, name: str, obj: Mapping[str, Any], families: list[Family] | None = None,
                 mode: str | None = None, devices: list[DeviceState] | None = None,
                 findings: list[Finding] | None = None) -> None:
        self.name = name
        self.obj = obj
        self._families: list[Family] = families if families is not None else []
        self._mode = mode
        self._devices: list[DeviceState] = devices if devices is not None else []
        self._findings: list[Finding] = findings if findings is not None else []
        self._pending: Callable[[NodeState], None] | None = None
        self._register: RegisterStatus | None = None
        self._labels: Mapping[str, Any] | None = None
        self._annotations: Mapping[str, Any] | None = None
        self._allocatable: Mapping[str, Any] | None = None
        self._capacity: Mapping[str, Any] | None = None

    @classmethod
    def deferred(cls, name: str, obj: Mapping[str, Any], decode: Callable[[NodeState], None]) -> NodeState:
        """A node whose devices `decode` fills in (on an eager `NodeState` of the same name and object) the
        first time anything decoded is read."""
        node = cls(name, obj)
        node._pending = decode
        return node

    @property
    def decoded(self) -> bool:
        """Whether the devices are there already (always, for a node made directly)."""
        return self._pending is None

    def _ready(self) -> None:
        if self._pending is None:
            return
        with _DECODE_LOCK:  # two threads reading the same node must not see half a decode
            decode = self._pending
            if decode is None:
                return
            scratch = NodeState(self.name, self.obj)
            decode(scratch)
            self._families, self._mode = scratch._families, scratch._mode
            self._devices, self._findings = scratch._devices, scratch._findings
            self._register = scratch._register
            self._pending = None

    families = _Decoded[list[Family]]()
    mode = _Decoded[str | None]()
    devices = _Decoded[list[DeviceState]]()
    findings = _Decoded[list[Finding]]()

    def remember_register(self, status: RegisterStatus) -> None:
        """Keep how the register annotation decoded (the build does it anyway), for `register_status`."""
        self._register = status

    def register_status(self, six_fields: bool) -> RegisterStatus:
        """How Volcano reads the node's `volcano.sh/node-vgpu-register` annotation under that format rule:
        the build's own reading when it used the same rule, else a fresh decode."""
        self._ready()
        known = self._register
        if known is not None and known.six_fields == six_fields:
            return known
        decoded = decode_vgpu_register(self.annotations.get(NODE_VGPU_REGISTER), volcano_six_fields=six_fields)
        return RegisterStatus(six_fields, decoded.node_usable,
                              decoded.problems[0].message if decoded.problems else None)

    # The object's maps (empty when missing or not maps), read by most node checks for every node: looked up
    # once per node (benchmarks/nodes_scale.py). `obj` is set once, so they never go stale.
    @property
    def labels(self) -> Mapping[str, Any]:
        found = self._labels
        if found is None:
            found = self._labels = _field(self.obj, "metadata", "labels")
        return found

    @property
    def annotations(self) -> Mapping[str, Any]:
        found = self._annotations
        if found is None:
            found = self._annotations = _field(self.obj, "metadata", "annotations")
        return found

    @property
    def allocatable(self) -> Mapping[str, Any]:
        found = self._allocatable
        if found is None:
            found = self._allocatable = _field(self.obj, "status", "allocatable")
        return found

    @property
    def capacity(self) -> Mapping[str, Any]:
        found = self._capacity
        if found is None:
            found = self._capacity = _field(self.obj, "status", "capacity")
        return found

    # What the node-level scheduling filters read (`why/nodefit.py`): computed on each read, from `obj`.
    @property
    def taints(self) -> list[Mapping[str, Any]]:
        """`spec.taints`: the maps among them, in order (empty when missing)."""
        raw = _m(self.obj.get("spec")).get("taints")
        return [t for t in raw if isinstance(t, dict)] if isinstance(raw, list) else []

    @property
    def unschedulable(self) -> bool:
        """`spec.unschedulable` (a cordoned node)."""
        return _m(self.obj.get("spec")).get("unschedulable") is True

    @property
    def not_ready(self) -> bool:
        """A `Ready` condition whose status is not `True` (no such condition: ready, as Volcano reads it)."""
        conditions = _m(self.obj.get("status")).get("conditions")
        return isinstance(conditions, list) and any(
            isinstance(c, dict) and c.get("type") == NODE_CONDITION_READY and c.get("status") != "True"
            for c in conditions)

    @property
    def kubelet_version(self) -> str | None:
        version = _m(_m(self.obj.get("status")).get("nodeInfo")).get("kubeletVersion")
        return version if isinstance(version, str) else None

    def to_dict(self, findings: Iterable[Finding] | None = None, stacks: Any = None) -> dict[str, Any]:
        """The node in the NodeReport; `findings` replaces the decode's own (the report passes the doctor's).
        `stacks` (a `cluster.stacks.NodeStacks`, for a node where more than one stack offers GPUs) adds the
        node's `stacks` and, on each device two or more offer, the device's."""
        devices = [d.to_dict() for d in self.devices]
        out: dict[str, Any] = {
            "name": self.name,
            "families": [f.value for f in self.families],
            "mode": self.mode,
            "findings": [f.to_dict() for f in (self.findings if findings is None else findings)],
            "devices": devices,
        }
        if stacks is not None:
            out["stacks"] = stacks.to_dicts()
            for device, shown in zip(self.devices, devices, strict=True):
                offering = stacks.offering(device.id)
                if len(offering) > 1:
                    shown["stacks"] = list(offering)
        return out

    def __repr__(self) -> str:
        return (f"NodeState(name={self.name!r}, obj={self.obj!r}, families={self.families!r}, mode={self.mode!r}, "
                f"devices={self.devices!r}, findings={self.findings!r})")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, NodeState):
            return NotImplemented
        return ((self.name, self.obj, self.families, self.mode, self.devices, self.findings)
                == (other.name, other.obj, other.families, other.mode, other.devices, other.findings))

    __hash__ = None  # type: ignore[assignment]  # mutable, like the dataclass it replaces


@dataclass(frozen=True, slots=True)
class RegisterStatus:
    """Whether Volcano builds a vGPU device model from the register annotation, and the first problem met."""

    six_fields: bool  # the format rule it was read under (Volcano ≥ 1.12: six fields per GPU)
    usable: bool
    first_problem: str | None


_DECODE_LOCK = threading.RLock()


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
    # None when the snapshot did not collect RuntimeClasses (a plain kubectl file): absence means nothing then
    runtime_classes: list[Mapping[str, Any]] | None = None
    pod_index_at_build: PodIndex | None = field(default=None, repr=False, compare=False)  # `build_snapshot`'s
    pod_visitor: Any = field(default=None, repr=False, compare=False)  # `build_snapshot(pod_visitor=…)`'s, after
    # The DRA objects (resource.k8s.io), each None when not collected (a server without DRA, a plain kubectl
    # file without them, the cluster-aware webhook's watch): the checks needing them skip, never read "none".
    resource_slices: list[Mapping[str, Any]] | None = None
    device_classes: list[Mapping[str, Any]] | None = None
    resource_claims: list[Mapping[str, Any]] | None = None
    resource_claim_templates: list[Mapping[str, Any]] | None = None
    # What is derived from this snapshot once and read by several checks and the report (`cluster/stacks.py`)
    memo: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def node(self, name: str) -> NodeState | None:
        return next((n for n in self.nodes if n.name == name), None)

    @cached_property
    def pod_index(self) -> PodIndex:
        """The pods by annotation, image, namespace and resource (vgpuctl.core.cluster.pod_index): the one
        `build_snapshot(index_pods=True)` made (unless `pods` was replaced since), else made on first use."""
        built = self.pod_index_at_build
        return built if built is not None and built.pods is self.pods else PodIndex(self.pods)

    @cached_property
    def slices_by_node(self) -> dict[str, list[ResourceSlice]] | None:
        """The ResourceSlices of single nodes (`spec.nodeName`), decoded once, by node name; None when the
        snapshot did not collect ResourceSlices."""
        if self.resource_slices is None:
            return None
        found: dict[str, list[ResourceSlice]] = {}
        for obj in self.resource_slices:
            decoded = decode_slice(obj) if isinstance(obj, dict) else None
            if decoded is not None and decoded.node is not None:
                found.setdefault(decoded.node, []).append(decoded)
        return found


_EMPTY: Mapping[str, Any] = {}


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else _EMPTY


def _field(obj: Mapping[str, Any], part: str, name: str) -> Mapping[str, Any]:
    """`obj[part][name]` when both are maps, else an empty map."""
    outer = obj.get(part)
    inner = outer.get(name) if isinstance(outer, dict) else None
    return inner if isinstance(inner, dict) else _EMPTY
