"""What the simulator needs besides the pod and the node: the scheduler's settings and the other pods.

Built once per `why` run from a `ClusterSnapshot` (or by hand in tests), then shared by every node's
simulation, so the per-node work stays a few dictionary look-ups.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.deviceconfig import DeviceConfig, default_device_config
from vgpuctl.core.scheduler_config import DeviceshareArgs, SchedulerConf, get_bool
from vgpuctl.core.spec import DONE_POD_PHASES, Family
from vgpuctl.core.versions import (
    Version,
    has_gpu_uuid_filter,
    has_podgroup_policy,
    judges_readiness_by_taints,
    requires_six_field_register,
    skips_malformed_vgpu_ids,
)
from vgpuctl.core.why.model import ClusterCause

_EMPTY: Mapping[str, Any] = {}


def mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else _EMPTY


def pod_key(pod: Mapping[str, Any]) -> str:
    meta = mapping(pod.get("metadata"))
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


def parse_exclusive_rules(raw: Any) -> tuple[dict[str, str], ...]:
    """`deviceshare.GPUExclusiveRules` as Volcano reads it: maps with string values only; empty maps dropped."""
    if not isinstance(raw, list):
        return ()
    rules = []
    for item in raw:
        if not isinstance(item, Mapping):
            continue
        labels = {k: v for k, v in item.items() if isinstance(k, str) and isinstance(v, str)}
        if labels:
            rules.append(labels)
    return tuple(rules)


def matching_rules(labels: Mapping[str, Any], rules: Sequence[Mapping[str, str]]) -> frozenset[int]:
    return frozenset(i for i, rule in enumerate(rules) if all(labels.get(k) == v for k, v in rule.items()))


@dataclass(frozen=True, slots=True)
class PredicatesConf:
    """The `predicates` plugin as the scheduler config sets it up (docs/volcano.md#allocate-predicate).

    `Session.PredicateFn` runs the plugins' predicates in tier and plugin order, so where `deviceshare` is listed
    first its device filters decide before the predicates' filters. Each filter switch is `GetBool` of its
    `predicate.*Enable` argument, default true (`plugins/predicates/predicates.go New`). Without a scheduler config
    (`known` false: the webhook, a snapshot without the ConfigMap) the plugin is assumed on with its defaults,
    listed before `deviceshare`, as every upstream configuration lists it."""

    enabled: bool = True  # the config lists the plugin: without it none of its filters runs
    before_devices: bool = True
    node_affinity: bool = True
    node_ports: bool = True
    taint_toleration: bool = True
    pod_affinity: bool = True
    topology_spread: bool = True
    volumes: bool = True  # any of VolumeBinding, VolumeZone, NodeVolumeLimits
    known: bool = False


def predicates_conf(conf: SchedulerConf | None) -> PredicatesConf:
    """The `predicates` plugin of a scheduler config (None: unknown, the upstream default)."""
    if conf is None:
        return PredicatesConf()
    names = [p.name for p in conf.plugins]
    if spec.PLUGIN_PREDICATES not in names:
        return PredicatesConf(enabled=False, known=True)
    at = names.index(spec.PLUGIN_PREDICATES)
    args = conf.plugins[at].arguments

    def on(key: str) -> bool:
        value = get_bool(args[key])[0] if key in args else None
        return True if value is None else value  # absent or unreadable: GetBool leaves the default (true)

    devices = names.index(spec.PLUGIN_DEVICESHARE) if spec.PLUGIN_DEVICESHARE in names else len(names)
    return PredicatesConf(
        enabled=True, before_devices=at < devices, node_affinity=on(spec.ARG_PREDICATE_NODE_AFFINITY),
        node_ports=on(spec.ARG_PREDICATE_NODE_PORTS), taint_toleration=on(spec.ARG_PREDICATE_TAINT_TOLERATION),
        pod_affinity=on(spec.ARG_PREDICATE_POD_AFFINITY), topology_spread=on(spec.ARG_PREDICATE_POD_TOPOLOGY_SPREAD),
        volumes=any(on(k) for k in (spec.ARG_PREDICATE_VOLUME_BINDING, spec.ARG_PREDICATE_VOLUME_ZONE,
                                    spec.ARG_PREDICATE_NODE_VOLUME_LIMITS)),
        known=True)


@dataclass
class WhyEnv:
    device_config: DeviceConfig = field(default_factory=default_device_config)
    deviceshare: DeviceshareArgs = field(default_factory=lambda: DeviceshareArgs(vgpu=True))
    volcano_version: Version | None = None  # None: the newest Volcano
    now: datetime | None = None  # node locks are judged only when a time is given
    pods: Sequence[Mapping[str, Any]] = ()  # every pod of the cluster (bound ones carry the usage)
    predicates: PredicatesConf = field(default_factory=PredicatesConf)
    # Whether `pods_on` gives every pod bound to a node. False (the cluster-aware webhook keeps device pods only):
    # the cpu/memory/pods a node's pods use is a lower bound, so a resource miss is still proven, a pass is not.
    all_pods: bool = True
    # What stops every device pod before any node is looked at: the scheduler config missing or unreadable, deviceshare
    # in no tier, no allocate action (`blocked.scheduler_cause`; None: none, or the config is not known here).
    scheduler_cause: ClusterCause | None = None
    _by_key: dict[str, Mapping[str, Any]] | None = None
    _by_node: dict[str, list[Mapping[str, Any]]] | None = None
    _usage: dict[str, Any] | None = None  # node → what its pods request (`usage.node_usage`), filled on use

    @cached_property
    def families(self) -> frozenset[Family]:
        """Read once per env: `DeviceshareArgs.families` builds its set on every read, and the replay asks per node
        (11 ms of 5,000 nodes, benchmarks/why_scale.py)."""
        return self.deviceshare.families

    @property
    def policy(self) -> str:
        return self.deviceshare.schedule_policy

    @property
    def factor(self) -> int:
        return self.device_config.nvidia.memory_factor

    def _has(self, rule: Callable[[Version], bool]) -> bool:
        """Whether the Volcano in question follows a `versions` rule; unknown: the newest, which does."""
        return self.volcano_version is None or rule(self.volcano_version)

    @property
    def six_field_register(self) -> bool:
        return self._has(requires_six_field_register)

    @property
    def skips_malformed_vgpu_ids(self) -> bool:
        """A malformed `vgpu-ids-new` device is skipped (≥ 1.16), not read as 0 before the panic."""
        return self._has(skips_malformed_vgpu_ids)

    @property
    def uuid_filter(self) -> bool:
        return self._has(has_gpu_uuid_filter)

    @property
    def podgroup_policy(self) -> bool:
        return self._has(has_podgroup_policy)

    @property
    def judges_readiness_by_taints(self) -> bool:
        """A NotReady node stays in the session (≥ 1.11); before, Volcano leaves it out."""
        return self._has(judges_readiness_by_taints)

    @property
    def exclusive_rules(self) -> tuple[dict[str, str], ...]:
        if not self.podgroup_policy:  # GPUExclusiveRules arrived with the podgroup policy, in 1.15
            return ()
        return parse_exclusive_rules(self.deviceshare.exclusive_rules)

    def pod(self, key: str) -> Mapping[str, Any] | None:
        if self._by_key is None:
            self._by_key = {pod_key(p): p for p in self.pods}
        return self._by_key.get(key)

    def pods_on(self, node: str) -> list[Mapping[str, Any]]:
        """Pods bound to `node` that are not Succeeded/Failed: the ones Volcano accounts for."""
        if self._by_node is None:
            self._by_node = {}
            for p in self.pods:
                name = mapping(p.get("spec")).get("nodeName")
                if isinstance(name, str) and name and mapping(p.get("status")).get("phase") not in DONE_POD_PHASES:
                    self._by_node.setdefault(name, []).append(p)
        return self._by_node.get(node, [])

    def with_bound(self, pod: Mapping[str, Any], node: str) -> WhyEnv:
        """This env with `pod` bound to `node` added (the gang what-if's booking): the indexes are carried
        over with the one pod instead of rebuilt."""
        self.pod("")
        self.pods_on("")
        assert self._by_key is not None and self._by_node is not None
        usage = None if self._usage is None else {**self._usage, node: None}  # the node's usage is re-tallied
        return WhyEnv(device_config=self.device_config, deviceshare=self.deviceshare,
                      volcano_version=self.volcano_version, now=self.now, pods=[*self.pods, pod],
                      predicates=self.predicates, all_pods=self.all_pods, scheduler_cause=self.scheduler_cause,
                      _by_key={**self._by_key, pod_key(pod): pod},
                      _by_node={**self._by_node, node: [*self._by_node.get(node, []), pod]}, _usage=usage)
