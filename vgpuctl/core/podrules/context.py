"""The working state of one pod review: a cheap, mutable view of the pod and the findings so far.

Reviews run on the admission hot path, so the pod is never copied. A `ContainerView` reads the
container's own `limits` and `requests`; a mutating default first copies the view's `limits` and then
adds to the copy (so the validation rules see the defaulted pod, and the object under review is never
changed) and records an addition from which the JSON Patch is built.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.deviceconfig import DeviceConfig, VnpuConfig
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.patch import Pointer
from vgpuctl.core.podrules.targets import PodTarget, as_list, as_mapping
from vgpuctl.core.quantity import Quantity, QuantityError, parse_quantity

CONTAINER_KINDS = ("containers", "initContainers", "ephemeralContainers")
_CONTAINER_LABEL = {"containers": "container", "initContainers": "initContainer",
                    "ephemeralContainers": "ephemeralContainer"}


@dataclass(slots=True)
class ContainerView:
    kind: str  # one of CONTAINER_KINDS
    index: int
    name: str
    limits: dict[str, Any]
    requests: dict[str, Any]
    privileged: bool
    own_limits: bool = False  # `limits` is this view's own copy (else the object's dict: copied before a default)
    where: str | None = None  # message prefix and subject, made on first use (most containers never need them)
    subject: str | None = None
    ascend: list[Any] | None = None  # its Ascend resources (resources.ascend_resources), until limits change

    @property
    def is_app(self) -> bool:
        return self.kind == "containers"

    def get(self, resource: str) -> Any:
        """The value Volcano reads: limits first, then requests."""
        value = self.limits.get(resource)
        return self.requests.get(resource) if value is None else value

    def has(self, resource: str) -> bool:
        return resource in self.limits or resource in self.requests

    def has_any(self, resources: frozenset[str]) -> bool:
        return any(r in resources for r in self.limits) or any(r in resources for r in self.requests)


@dataclass(frozen=True, slots=True)
class Families:
    """Which device families a pod's resources touch (annotations aside), worked out once per review."""

    vgpu: bool
    gpushare: bool
    ascend: bool  # huawei.com/Ascend* (HAMi mode)
    npu_core: bool  # huawei.com/npu-core (MindCluster)

    @property
    def any(self) -> bool:
        return self.vgpu or self.gpushare or self.ascend or self.npu_core


@dataclass(frozen=True, slots=True)
class ResourceNames:
    """The resource names that mean something under a given device config (or its absence)."""

    vgpu_count: str
    vgpu_memory: str
    vgpu_cores: str
    vgpu_percentage: str
    vgpu_all: frozenset[str]
    gpushare_all: frozenset[str]
    vnpus: tuple[VnpuConfig, ...] | None  # None: device config unknown

    def is_ascend(self, resource: str) -> bool:
        return resource.startswith(spec.ASCEND_RESOURCE_PREFIX)


def _names_for(config: DeviceConfig | None) -> ResourceNames:
    nv = config.nvidia if config is not None else None
    count = (nv.resource_count_name if nv else "") or spec.VGPU_NUMBER
    memory = (nv.resource_memory_name if nv else "") or spec.VGPU_MEMORY
    cores = (nv.resource_core_name if nv else "") or spec.VGPU_CORES
    percentage = (nv.resource_memory_percentage_name if nv else "") or spec.VGPU_MEMORY_PERCENTAGE
    every = {count, memory, cores, percentage, spec.VGPU_NUMBER, spec.VGPU_MEMORY, spec.VGPU_CORES,
             spec.VGPU_MEMORY_PERCENTAGE}
    return ResourceNames(
        vgpu_count=count,
        vgpu_memory=memory,
        vgpu_cores=cores,
        vgpu_percentage=percentage,
        vgpu_all=frozenset(every),
        gpushare_all=frozenset({spec.GPU_MEMORY, spec.GPU_NUMBER}),
        vnpus=config.vnpus if config is not None else None,
    )


_names_cache: dict[int, tuple[DeviceConfig | None, ResourceNames]] = {}


def names_for(config: DeviceConfig | None) -> ResourceNames:
    """Resource names per device config, cached by identity: one config serves many reviews."""
    cached = _names_cache.get(id(config))
    if cached is not None and cached[0] is config:
        return cached[1]
    names = _names_for(config)
    if len(_names_cache) > 64:
        _names_cache.clear()
    _names_cache[id(config)] = (config, names)
    return names


@lru_cache(maxsize=4096)
def _parse_text(text: str) -> Quantity | None:
    try:
        return parse_quantity(text)
    except QuantityError:
        return None


def quantity(raw: Any) -> Quantity | None:
    """A resource value as a Kubernetes quantity, or None when it is not one."""
    if isinstance(raw, str):
        return _parse_text(raw)
    if isinstance(raw, bool) or not isinstance(raw, int | float):
        return None
    return _parse_text(str(raw)) if isinstance(raw, int) else _parse_text(repr(raw))


def show(raw: Any) -> str:
    """A value as the user wrote it, for messages."""
    return f'"{raw}"' if isinstance(raw, str) else str(raw)


@dataclass(slots=True)
class PodContext:
    target: PodTarget
    facts: ClusterFacts
    names: ResourceNames
    apply_defaults: bool
    existing: bool
    containers: list[ContainerView]
    annotations: Mapping[str, Any]
    labels: Mapping[str, Any]
    findings: list[Finding] = field(default_factory=list)
    additions: list[tuple[Pointer, Any]] = field(default_factory=list)
    malformed: bool = False
    apps: list[ContainerView] = field(default_factory=list)  # the `containers` among them (rules ask often)

    # ---- reporting -------------------------------------------------------------------------------
    def emit(self, code: str, severity: Severity, subject: str, message: str) -> None:
        """Report against a subject inside this pod (the template path is prefixed)."""
        self.emit_at(code, severity, self.target.subject_prefix + subject, message)

    def emit_at(self, code: str, severity: Severity, subject: str, message: str) -> None:
        """Report against a subject named from the top of the object."""
        self.findings.append(Finding(code, severity, subject, message, hint_for(code)))

    def container_subject(self, c: ContainerView) -> str:
        if c.subject is None:
            c.subject = f"{_CONTAINER_LABEL[c.kind]}/{c.name}"
        return c.subject

    def container_where(self, c: ContainerView) -> str:
        if c.where is None:
            c.where = f'{self.target.where}{_CONTAINER_LABEL[c.kind]} "{c.name}"'
        return c.where

    def pod_where(self) -> str:
        return self.target.where.strip() or "pod"

    # ---- mutation --------------------------------------------------------------------------------
    def add_limit(self, c: ContainerView, resource: str, value: str) -> None:
        if not c.own_limits:  # the object under review is never changed: the patch carries the default
            c.limits, c.own_limits = dict(c.limits), True
        c.limits[resource] = value
        c.ascend = None
        self.additions.append(
            ((*self.target.pointer, "spec", c.kind, c.index, "resources", "limits", resource), value)
        )

    def add_label(self, key: str, value: str) -> None:
        labels = dict(self.labels)
        labels[key] = value
        self.labels = labels
        self.additions.append(((*self.target.pointer, "metadata", "labels", key), value))

    def set_spec_field(self, key: str, value: str, pointer: Pointer | None = None) -> None:
        self.additions.append(((pointer if pointer is not None else (*self.target.pointer, "spec")) + (key,),
                               value))

    # ---- pod-wide views --------------------------------------------------------------------------
    def app_containers(self) -> list[ContainerView]:
        return self.apps


def build_context(target: PodTarget, facts: ClusterFacts, apply_defaults: bool, existing: bool) -> PodContext:
    ctx = PodContext(
        target=target,
        facts=facts,
        names=names_for(facts.device_config),
        apply_defaults=apply_defaults,
        existing=existing,
        containers=[],
        annotations=as_mapping(target.metadata.get("annotations")),
        labels=as_mapping(target.metadata.get("labels")),
    )
    for kind in CONTAINER_KINDS:
        raw_list = target.spec.get(kind)
        if raw_list is None:
            continue
        if not isinstance(raw_list, list):
            ctx.malformed = True
            continue
        for index, raw in enumerate(raw_list):
            if type(raw) is not dict and not isinstance(raw, Mapping):  # dict first: skips the ABC check
                ctx.malformed = True
                continue
            resources = as_mapping(raw.get("resources"))
            security = raw.get("securityContext")
            name = raw.get("name")
            ctx.containers.append(
                ContainerView(
                    kind,
                    index,
                    name if type(name) is str and name else f"#{index}",
                    _str_keys(resources.get("limits")),
                    _str_keys(resources.get("requests")),
                    as_mapping(security).get("privileged") is True if security else False,
                )
            )
    ctx.apps = [c for c in ctx.containers if c.kind == "containers"]
    return ctx


_NO_RESOURCES: dict[str, Any] = {}  # shared and never written: add_limit copies before it writes


def _str_keys(value: Any) -> dict[str, Any]:
    """The resource map to read: the object's own dict when every key is a string (JSON's always are),
    else a copy without the other keys (only YAML can make them). Never written to (see add_limit)."""
    if not value:
        return _NO_RESOURCES
    if type(value) is dict:
        for key in value:
            if type(key) is not str:
                break
        else:
            return value
        return {k: v for k, v in value.items() if isinstance(k, str)}
    if not isinstance(value, Mapping):
        return _NO_RESOURCES
    return {k: v for k, v in value.items() if isinstance(k, str)}


__all__ = ["CONTAINER_KINDS", "ContainerView", "Families", "PodContext", "ResourceNames", "as_list", "build_context",
           "names_for", "quantity", "show"]
