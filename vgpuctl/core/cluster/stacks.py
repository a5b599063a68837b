"""Every GPU stack that offers a node's GPUs (docs/stacks.md): Volcano's vGPU plugin, gpushare, HAMi's NVIDIA
plugin, NVIDIA's device plugin, DRA drivers.

Each stack leaves its own trace on the Node, or in a ResourceSlice:

- `volcano-vgpu`: `volcano.sh/node-vgpu-register` (Project-HAMi/volcano-vgpu-device-plugin); GPUs by UUID.
- `volcano-gpushare`: capacity `volcano.sh/gpu-memory` / `gpu-number` (volcano-sh/devices); GPUs by index only.
- `hami`: `hami.io/node-nvidia-register` (HAMi's NVIDIA plugin; `codecs/hami_nvidia.py`, every form); by UUID.
- `nvidia-device-plugin`: allocatable `nvidia.com/gpu` / `nvidia.com/gpu.shared` without HAMi's register, with GPU
  feature discovery's `nvidia.com/gpu.count`, `.replicas`, `.sharing-strategy`, `.product` labels
  (NVIDIA/k8s-device-plugin v0.20.0 `internal/lm/resource.go`); no UUIDs, only counts.
- `dra:<driver>`: the node's ResourceSlices (`spec.nodeName`), attribute `uuid` or a MIG device's `parentUUID`
  (`codecs/dra.py`); by UUID.

`nvidia.com/gpu` is HAMi's when HAMi's register is there (HAMi's plugin advertises it), and the vGPU plugin's own
when the device config names it as a vGPU resource; only otherwise is it NVIDIA's device plugin.

`stacks_of` derives a node's stacks once per snapshot: the node checks VGN012, VGN020, VGN021, VGN022 and the
`nodes` report read the same value, so they cannot disagree about which stack offers which GPU.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from vgpuctl.core import spec
from vgpuctl.core.cluster.model import ClusterSnapshot, NodeState
from vgpuctl.core.codecs.dra import ResourceSlice
from vgpuctl.core.codecs.hami_nvidia import decode_hami_nvidia_register
from vgpuctl.core.quantity import int_value

STACK_VGPU: Final = "volcano-vgpu"
STACK_GPUSHARE: Final = "volcano-gpushare"
STACK_HAMI: Final = "hami"
STACK_NVIDIA: Final = "nvidia-device-plugin"
DRA_PREFIX: Final = "dra:"
HAMI_FORMS: Final = {"7-field": "HAMi ≤ v2.4", "9-field": "HAMi v2.5–v2.7", "json": "HAMi ≥ v2.8"}
_NVIDIA_RESOURCES: Final = (spec.NVIDIA_GPU, spec.NVIDIA_GPU_SHARED)


def dra_stack(driver: str) -> str:
    return f"{DRA_PREFIX}{driver}"


def _count(raw: Any) -> int | None:
    """A label or resource value as a whole number ≥ 0 (plain digits, as GPU feature discovery and kubelet
    write them); None when absent or anything else."""
    if isinstance(raw, str) and raw.isascii() and raw.isdigit() and len(raw) < 10:
        return int(raw)
    value = int_value(raw) if raw is not None else None
    return value if value is not None and value >= 0 else None


@dataclass(frozen=True, slots=True)
class NvidiaPlugin:
    """What NVIDIA's device plugin (and GPU feature discovery) says about a node."""

    resources: tuple[tuple[str, int], ...]  # (resource, allocatable) for nvidia.com/gpu and .shared above 0
    count: int | None  # label nvidia.com/gpu.count: the node's physical GPUs
    replicas: int  # label nvidia.com/gpu.replicas, at least 1 (0 means sharing is off)
    strategy: str | None  # label nvidia.com/gpu.sharing-strategy: none, time-slicing, mps
    shared_product: bool  # nvidia.com/gpu.product ends in -SHARED (replicas > 1, not renamed)
    operator: bool  # nvidia.com/gpu.deploy.device-plugin=true: gpu-operator deploys the plugin here

    @property
    def allocatable(self) -> int:
        return sum(n for _, n in self.resources)

    @property
    def gpus(self) -> int:
        """The physical GPUs behind the advertised devices: ceil(allocatable ÷ replicas)."""
        return math.ceil(self.allocatable / self.replicas)

    @property
    def sharing(self) -> str | None:
        """`time-slicing` / `mps` when GPUs are shared (replicas > 1), else None."""
        if self.replicas <= 1 and not self.shared_product:
            return None
        return self.strategy if self.strategy and self.strategy != "none" else "shared"

    def describe(self) -> str:
        """`nvidia.com/gpu: 8 (time-slicing, 4 replicas per GPU: 2 GPUs)`."""
        advertised = ", ".join(f"{r}: {n}" for r, n in self.resources)
        if self.sharing:
            return f"{advertised} ({self.sharing}, {self.replicas} replicas per GPU: {self.gpus} GPU(s))"
        return advertised


@dataclass(frozen=True, slots=True)
class Stack:
    name: str  # STACK_* or dra:<driver>
    source: str  # what on the node (or which objects) says so
    gpus: tuple[str, ...] | None  # the GPUs it offers by UUID; None when it publishes none
    count: int | None  # how many physical GPUs it offers, when that can be told

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "source": self.source, "gpus": self.count}


@dataclass(frozen=True, slots=True)
class NodeStacks:
    node: str
    stacks: tuple[Stack, ...]
    nvidia: NvidiaPlugin | None
    hami_form: str | None  # the HAMi register's encoding (HAMI_FORMS), None without one
    physical: int | None  # the node's physical GPUs as GPU feature discovery counts them (nvidia.com/gpu.count)

    def get(self, name: str) -> Stack | None:
        return next((s for s in self.stacks if s.name == name), None)

    @property
    def shared(self) -> bool:
        """More than one stack offers GPUs here."""
        return len(self.stacks) > 1

    def offering(self, uuid: str) -> tuple[str, ...]:
        """The stacks that offer the GPU `uuid`: those publishing it, and NVIDIA's device plugin when it
        provably offers every GPU of the node (its GPUs ≥ nvidia.com/gpu.count)."""
        every = (self.nvidia is not None and self.physical is not None and self.nvidia.gpus >= self.physical)
        return tuple(s.name for s in self.stacks
                     if (s.gpus is not None and uuid in s.gpus) or (every and s.name == STACK_NVIDIA))

    def to_dicts(self) -> list[dict[str, Any]]:
        return [s.to_dict() for s in self.stacks]


def vgpu_resource_names(snapshot: ClusterSnapshot) -> frozenset[str]:
    """The resource names the vGPU plugin advertises under the device config Volcano runs on."""
    nv = snapshot.device_config.nvidia
    return frozenset(n for n in (nv.resource_count_name, nv.resource_memory_name, nv.resource_core_name) if n)


def nvidia_plugin(node: NodeState, vgpu_resources: frozenset[str]) -> NvidiaPlugin | None:
    """NVIDIA's device plugin on `node`, when it advertises GPUs there (and `nvidia.com/gpu` is not HAMi's or the
    vGPU plugin's own)."""
    allocatable = node.allocatable
    if not any(r in allocatable for r in _NVIDIA_RESOURCES):
        return None
    if spec.NODE_HAMI_NVIDIA_REGISTER in node.annotations:
        return None  # HAMi's plugin advertises nvidia.com/gpu (VGN012)
    resources = tuple((r, n) for r in _NVIDIA_RESOURCES if r not in vgpu_resources
                      and (n := _count(allocatable.get(r))) is not None and n > 0)
    if not resources:
        return None
    labels = node.labels
    replicas = _count(labels.get(spec.LABEL_NVIDIA_GPU_REPLICAS))
    strategy, product = labels.get(spec.LABEL_NVIDIA_GPU_SHARING), labels.get(spec.LABEL_NVIDIA_GPU_PRODUCT)
    return NvidiaPlugin(
        resources=resources,
        count=_count(labels.get(spec.LABEL_NVIDIA_GPU_COUNT)),
        replicas=max(1, replicas or 1),
        strategy=strategy if isinstance(strategy, str) else None,
        shared_product=isinstance(product, str) and product.endswith(spec.NVIDIA_SHARED_PRODUCT_SUFFIX),
        operator=labels.get(spec.LABEL_GPU_OPERATOR_DEVICE_PLUGIN) == "true",
    )


def gpushare_capacity(node: NodeState) -> tuple[str, int] | None:
    """The gpushare plugin's capacity on `node` (`volcano.sh/gpu-number`, else `gpu-memory`), when above 0."""
    capacity = node.capacity
    for resource in (spec.GPU_NUMBER, spec.GPU_MEMORY):
        if resource in capacity and (n := _count(capacity.get(resource))):
            return resource, n
    return None


def vgpu_uuids(node: NodeState) -> tuple[str, ...]:
    vgpu = spec.Family.VGPU
    return tuple(d.id for d in node.devices if d.family is vgpu)


def hami_uuids(node: NodeState) -> tuple[tuple[str, ...], str] | None:
    """The GPUs HAMi's register names and its form, or None without the annotation."""
    raw = node.annotations.get(spec.NODE_HAMI_NVIDIA_REGISTER)
    if raw is None:
        return None
    decoded = decode_hami_nvidia_register(raw)
    return tuple(dict.fromkeys(d.uuid for d in decoded.devices if d.uuid)), decoded.form


def node_stacks(node: NodeState, slices: Sequence[ResourceSlice] | None,
                vgpu_resources: frozenset[str]) -> NodeStacks:
    """Every stack offering GPUs on `node`; `slices`: the node's ResourceSlices (None: not collected)."""
    stacks: list[Stack] = []
    if spec.NODE_VGPU_REGISTER in node.annotations:
        uuids = vgpu_uuids(node)
        stacks.append(Stack(STACK_VGPU, spec.NODE_VGPU_REGISTER, uuids, len(uuids)))
    share = gpushare_capacity(node)
    if share is not None:
        resource, n = share
        stacks.append(Stack(STACK_GPUSHARE, f"capacity {resource}",
                            None, n if resource == spec.GPU_NUMBER else None))
    hami = hami_uuids(node)
    if hami is not None:
        stacks.append(Stack(STACK_HAMI, spec.NODE_HAMI_NVIDIA_REGISTER, hami[0], len(hami[0])))
    nvidia = nvidia_plugin(node, vgpu_resources)
    if nvidia is not None:
        stacks.append(Stack(STACK_NVIDIA, "allocatable " + ", ".join(r for r, _ in nvidia.resources), None,
                            nvidia.gpus))
    by_driver: dict[str, list[str]] = {}
    for s in slices or ():
        if s.offers_gpus:
            by_driver.setdefault(s.driver, []).extend(s.gpus)
    for driver, gpus in by_driver.items():
        unique = tuple(dict.fromkeys(gpus))
        stacks.append(Stack(dra_stack(driver), f"ResourceSlice driver {driver}", unique, len(unique)))
    return NodeStacks(node.name, tuple(stacks), nvidia, hami[1] if hami is not None else None,
                      _count(node.labels.get(spec.LABEL_NVIDIA_GPU_COUNT)))


def stacks_of(snapshot: ClusterSnapshot, node: NodeState) -> NodeStacks:
    """`node_stacks` of a node of `snapshot`, derived once per snapshot."""
    key = ("stacks", node.name, id(node))
    found = snapshot.memo.get(key)
    if found is None:
        by_node = snapshot.slices_by_node
        found = snapshot.memo[key] = node_stacks(
            node, by_node.get(node.name, []) if by_node is not None else None, _names(snapshot))
    stacks: NodeStacks = found
    return stacks


def _names(snapshot: ClusterSnapshot) -> frozenset[str]:
    names = snapshot.memo.get("vgpu-resource-names")
    if names is None:
        names = snapshot.memo["vgpu-resource-names"] = vgpu_resource_names(snapshot)
    result: frozenset[str] = names
    return result


def may_share(node: NodeState, slices_by_node: Mapping[str, Any] | None) -> bool:
    """Cheaply: whether more than one stack could offer GPUs on `node` (else `stacks_of` has one at most)."""
    annotations, allocatable = node.annotations, node.allocatable
    signals = (spec.NODE_VGPU_REGISTER in annotations) + (spec.NODE_HAMI_NVIDIA_REGISTER in annotations) \
        + any(r in allocatable for r in _NVIDIA_RESOURCES) \
        + (spec.GPU_MEMORY in node.capacity or spec.GPU_NUMBER in node.capacity) \
        + bool(slices_by_node and node.name in slices_by_node)
    return signals > 1


__all__ = ["DRA_PREFIX", "HAMI_FORMS", "STACK_GPUSHARE", "STACK_HAMI", "STACK_NVIDIA", "STACK_VGPU", "NodeStacks",
           "NvidiaPlugin", "Stack", "dra_stack", "gpushare_capacity", "hami_uuids", "may_share", "node_stacks",
           "nvidia_plugin", "stacks_of", "vgpu_resource_names", "vgpu_uuids"]
