"""What the rules may know about the cluster, and nothing they must not guess.

`ClusterFacts` is the value cluster-aware pod rules read: the device config, the Volcano version, the
scheduler names, the device plugins in use, and per-family device capacities. Every field is optional
(`None` = unknown); a rule that needs an unknown fact is skipped, never guessed. The webhook builds it from
its mounted device config, `lint` from `--device-config` / `--snapshot`, `doctor` and `why` from their
snapshot.

One fact has a known default because Volcano itself has one: the device config. When its ConfigMap is
missing or unreadable, the scheduler runs on a built-in config (volcano-sh/volcano
`pkg/scheduler/api/devices/config/config.go` `GetDefaultDevicesConfig`). `ClusterFacts.volcano_device_config`
is therefore never unknown: it is the config the facts were given, or that built-in one, and
`device_config_given` says which, so every command judges against the same config by construction.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.deviceconfig import DeviceConfig, default_device_config
from vgpuctl.core.findings import Severity
from vgpuctl.core.versions import Version, ascend_plugin_ships_runtimeclass

BUILTIN_DEVICE_CONFIG: DeviceConfig = default_device_config()
"""The config Volcano's scheduler runs on without a usable device ConfigMap (one shared, frozen value)."""

BUILTIN_DEVICE_CONFIG_SUMMARY = (
    "default vGPU resource names, no MIG geometries, no vgpu-memory-percentage, vNPU "
    + ", ".join(v.common_word for v in BUILTIN_DEVICE_CONFIG.vnpus) + " only"
)
"""What the built-in config declares, for the one line that says it is being judged against."""


def volcano_device_config(given: DeviceConfig | None) -> DeviceConfig:
    """The device config Volcano runs on when `given` is what the facts were given (None: nothing)."""
    return given if given is not None else BUILTIN_DEVICE_CONFIG




@dataclass(frozen=True, slots=True)
class GpuDevice:
    """One GPU as registered in `volcano.sh/node-vgpu-register`."""

    uuid: str
    type: str  # e.g. "NVIDIA-NVIDIA A100-PCIE-40GB"
    memory: int  # registered devmem: MiB ÷ gpuMemoryFactor
    mode: str = "hami-core"
    split: int = 10
    health: bool = True
    # The mode string exactly as registered (field 6); None for the 5-field form of device plugin v1.9.x.
    # `mode` is Volcano's reading of it: exactly "mig" is MIG, anything else hami-core.
    registered_mode: str | None = None


@dataclass(frozen=True, slots=True)
class VgpuNode:
    name: str
    devices: tuple[GpuDevice, ...]


@dataclass(frozen=True, slots=True)
class GpushareNode:
    name: str
    card_memory: int  # capacity gpu-memory ÷ gpu-number (MiB)
    healthy_cards: int


@dataclass(frozen=True, slots=True)
class AscendDevice:
    common_word: str
    memory: int  # registered devmem (MiB)
    cores: int = 0
    # Further fields of `hami.io/node-register-<CW>` (the JSON DeviceInfo); defaults when built by hand.
    uuid: str = ""
    index: int = 0
    count: int = 0  # vNPU slots (vDeviceCount)
    numa: int = 0
    health: bool = True
    network_id: int | None = None  # custominfo.NetworkID (Ascend910* only)


@dataclass(frozen=True, slots=True)
class AscendNode:
    name: str
    devices: tuple[AscendDevice, ...]
    hami_vnpu_core: bool = False


@dataclass(frozen=True, slots=True)
class DraFacts:
    """What is known of the cluster's DRA objects (docs/stacks.md#dra): the DeviceClasses seen, and the classes
    each ResourceClaim and ResourceClaimTemplate asks for, by (namespace, name). A claim or class not in here is
    unknown, and a rule that needs it is skipped (VGP020)."""

    gpu_classes: frozenset[str] = frozenset()  # DeviceClasses seen whose selectors name a GPU driver
    other_classes: frozenset[str] = frozenset()  # DeviceClasses seen that select something else (a NIC, …)
    claims: Mapping[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    templates: Mapping[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)

    def is_gpu_class(self, name: str) -> bool | None:
        """Whether DeviceClass `name` selects GPUs: as its object says when it was seen, else by the names the GPU
        drivers' charts install (`spec.DRA_GPU_CLASSES`); None: unknown."""
        if name in self.gpu_classes:
            return True
        if name in self.other_classes:
            return False
        return True if name in spec.DRA_GPU_CLASSES else None

    def classes_of(self, kind: str, namespace: str, name: str) -> tuple[str, ...] | None:
        """The classes a pod's claim entry asks (`kind` "claim" or "template"); None when that object is unknown."""
        return (self.claims if kind == "claim" else self.templates).get((namespace, name))

    def merged(self, other: DraFacts) -> DraFacts:
        """These facts with `other`'s added (`other` wins where both know an object)."""
        return DraFacts(
            gpu_classes=(self.gpu_classes - other.other_classes) | other.gpu_classes,
            other_classes=(self.other_classes - other.gpu_classes) | other.other_classes,
            claims={**self.claims, **other.claims}, templates={**self.templates, **other.templates})


@dataclass(frozen=True)
class ClusterFacts:
    # The device config the facts were given: a file (`--device-config`, the webhook's mount) or a cluster's
    # (its ConfigMap, or the built-in config its scheduler really runs on when the ConfigMap is unusable).
    # None: nobody said, and rules judge against `volcano_device_config`, the built-in one.
    device_config: DeviceConfig | None = None
    volcano_version: Version | None = None
    scheduler_names: tuple[str, ...] = spec.DEFAULT_SCHEDULER_NAMES
    privileged_severity: Severity = Severity.ERROR
    vgpu_nodes: tuple[VgpuNode, ...] | None = None
    gpushare_nodes: tuple[GpushareNode, ...] | None = None
    ascend_nodes: tuple[AscendNode, ...] | None = None
    npu_core_capacities: tuple[int, ...] | None = None  # MindCluster: capacity huawei.com/npu-core per node
    cores_per_310p_chip: int | None = None
    node_resources: frozenset[str] | None = None  # every extended resource some node advertises
    # Image tags of the ascend-device-plugin DaemonSets the cluster runs (() : none seen; None: no cluster facts).
    ascend_plugin_tags: tuple[str, ...] | None = None
    # The DRA classes, claims and templates known (from the snapshot and the lint input); None: none known.
    dra: DraFacts | None = None
    # Why the cluster's Volcano cannot allocate DRA claims (VGC014), when its configuration says it cannot; None
    # when it can, or nobody knows.
    dra_blocked: str | None = None

    # ---- the device config Volcano runs on -------------------------------------------------------
    @property
    def volcano_device_config(self) -> DeviceConfig:
        """The config the scheduler judges with: the given one, else Volcano's built-in one."""
        return volcano_device_config(self.device_config)

    @property
    def device_config_given(self) -> bool:
        """False when `volcano_device_config` is the built-in one only because no config was given: then a
        resource it does not declare is not reported as unknown (VGH008), nor are the features it lacks
        (MIG geometries, the percentage resource) held against a pod."""
        return self.device_config is not None

    @cached_property
    def ascend_runtimeclass_required(self) -> bool | None:
        """Whether an ascend-device-plugin that requires `runtimeClassName` on Ascend pods runs (True), only
        older ones run (False), or nothing says (None: no cluster facts, no plugin seen, unreadable tags)."""
        tags = self.ascend_plugin_tags
        if not tags:
            return None
        verdicts = [ascend_plugin_ships_runtimeclass(tag) for tag in tags]
        if True in verdicts:
            return True
        return False if verdicts and all(v is False for v in verdicts) else None

    # ---- derived facts (computed once per facts value, which is reused across many reviews) --------
    @cached_property
    def gpu_devices(self) -> tuple[GpuDevice, ...] | None:
        if self.vgpu_nodes is None:
            return None
        return tuple(d for n in self.vgpu_nodes for d in n.devices)

    @cached_property
    def max_gpus_per_node(self) -> int | None:
        if not self.vgpu_nodes:
            return None
        return max(len(n.devices) for n in self.vgpu_nodes)

    @cached_property
    def gpu_uuids(self) -> frozenset[str] | None:
        devices = self.gpu_devices
        return None if devices is None else frozenset(d.uuid for d in devices)

    @cached_property
    def max_gpushare_card_memory(self) -> int | None:
        if not self.gpushare_nodes:
            return None
        return max(n.card_memory for n in self.gpushare_nodes)

    @cached_property
    def max_gpushare_cards(self) -> int | None:
        if not self.gpushare_nodes:
            return None
        return max(n.healthy_cards for n in self.gpushare_nodes)

    @cached_property
    def max_npu_core_capacity(self) -> int | None:
        if not self.npu_core_capacities:
            return None
        return max(self.npu_core_capacities)

    @cached_property
    def memo(self) -> dict[Any, Any]:
        """Values rules derive from these facts, computed once: one facts value serves many reviews."""
        return {}

    def ascend_max_memory(self, common_word: str) -> int | None:
        if self.ascend_nodes is None:
            return None
        key = ("ascend-max-memory", common_word)
        if key not in self.memo:
            memories = [d.memory for n in self.ascend_nodes for d in n.devices if d.common_word == common_word]
            self.memo[key] = max(memories) if memories else None
        result: int | None = self.memo[key]
        return result


    @cached_property
    def hami_vnpu_core_node_count(self) -> int | None:
        if self.ascend_nodes is None:
            return None
        return sum(1 for n in self.ascend_nodes if n.hami_vnpu_core)


NO_FACTS = ClusterFacts()
