"""What the simulator needs besides the pod and the node: the scheduler's settings and the other pods.

Built once per `why` run from a `ClusterSnapshot` (or by hand in tests), then shared by every node's
simulation, so the per-node work stays a few dictionary look-ups.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from vgpuctl.core.deviceconfig import DeviceConfig, default_device_config
from vgpuctl.core.scheduler_config import DeviceshareArgs
from vgpuctl.core.spec import DONE_POD_PHASES, Family
from vgpuctl.core.versions import (
    Version,
    has_gpu_uuid_filter,
    has_podgroup_policy,
    requires_six_field_register,
    skips_malformed_vgpu_ids,
)

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


@dataclass
class WhyEnv:
    device_config: DeviceConfig = field(default_factory=default_device_config)
    deviceshare: DeviceshareArgs = field(default_factory=lambda: DeviceshareArgs(vgpu=True))
    volcano_version: Version | None = None  # None: the newest Volcano
    now: datetime | None = None  # node locks are judged only when a time is given
    pods: Sequence[Mapping[str, Any]] = ()  # every pod of the cluster (bound ones carry the usage)
    _by_key: dict[str, Mapping[str, Any]] | None = None
    _by_node: dict[str, list[Mapping[str, Any]]] | None = None

    @property
    def families(self) -> frozenset[Family]:
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
        return WhyEnv(device_config=self.device_config, deviceshare=self.deviceshare,
                      volcano_version=self.volcano_version, now=self.now, pods=[*self.pods, pod],
                      _by_key={**self._by_key, pod_key(pod): pod},
                      _by_node={**self._by_node, node: [*self._by_node.get(node, []), pod]})
