"""The working state of one pod review: a cheap, mutable view of the pod and the findings so far.

Reviews run on the admission hot path, so the pod is never copied. A `ContainerView` reads the
container's own `limits` and `requests`; a mutating default first copies the view's `limits` and then
adds to the copy (so the validation rules see the defaulted pod, and the object under review is never
changed) and records an addition from which the JSON Patch is built.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.catalogue import HINTS
from vgpuctl.core.deviceconfig import DeviceConfig, VnpuConfig
from vgpuctl.core.facts import ClusterFacts, volcano_device_config
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.memo import store
from vgpuctl.core.patch import Pointer
from vgpuctl.core.podrules.targets import PodTarget, as_mapping
from vgpuctl.core.quantity import Quantity, QuantityError, parse_quantity

CONTAINER_KINDS = ("containers", "initContainers", "ephemeralContainers")
_CONTAINER_LABEL = {"containers": "container", "initContainers": "initContainer",
                    "ephemeralContainers": "ephemeralContainer"}

# What a resource name means, as bit flags (one name can mean several things). Worked out once per name
# and device config (`ResourceNames.kinds`), so a rule asks "does this container touch vGPU?" with one `&`
# instead of scanning its resources against a set; `ContainerView.kinds` and `PodContext.kinds` are the
# union over a container's and a pod's resources.
VGPU = 1  # one of `ResourceNames.vgpu_all`
GPUSHARE = 2  # one of `ResourceNames.gpushare_all`
ASCEND = 4  # huawei.com/Ascend* (HAMi mode)
NPU_CORE = 8  # huawei.com/npu-core (MindCluster)
VOLCANO = 16  # volcano.sh/*, whether vgpuctl knows the resource or not
SCHEDULED = 32  # a device only a Volcano scheduler allocates (VGP015)
DEVICE = VGPU | GPUSHARE | ASCEND | NPU_CORE  # a device resource some rule is about
_VOLCANO_PREFIX = "volcano.sh/"
ABSENT: Any = object()  # `ContainerView.lookup`: the container names no such resource


@dataclass(slots=True)
class ContainerView:
    kind: str  # one of CONTAINER_KINDS
    index: int
    name: str
    limits: dict[str, Any]
    requests: dict[str, Any]
    privileged: bool
    kinds: int  # what its resources (limits and requests) mean: the union of `ResourceNames.kinds`
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

    def effective(self) -> Mapping[str, Any]:
        """Every resource the container names, with the value Volcano reads (`get`): `effective().get(r, ABSENT)`
        is `lookup(r)`, and `r in effective()` is `has(r)`. The limits themselves when there are no requests
        (most containers), else a merged copy; a snapshot, so read it again after `add_limit`."""
        if not self.requests:
            return self.limits
        merged = dict(self.limits)
        for resource, value in self.requests.items():
            if merged.get(resource) is None:  # absent, or null in limits: Volcano reads the request
                merged[resource] = value
        return merged

    def lookup(self, resource: str) -> Any:
        """`get(resource)` when the container names it (`has`), else `ABSENT`: one call for rules that ask both."""
        value = self.limits.get(resource, ABSENT)
        return self.requests.get(resource, value) if value is None or value is ABSENT else value


@dataclass(frozen=True, slots=True)
class ResourceNames:
    """The resource names that mean something under the device config Volcano runs on."""

    vgpu_count: str
    vgpu_memory: str
    vgpu_cores: str
    vgpu_percentage: str
    vgpu_all: frozenset[str]
    gpushare_all: frozenset[str]
    vnpus: tuple[VnpuConfig, ...]  # the `vnpus` entries of the device config Volcano runs on
    # True: the config was given, so a huawei.com/Ascend* name no entry declares is unknown to Volcano
    # (VGH008). False: the built-in config stands in for one nobody gave; its entries are judged, other
    # names are taken as some real config would declare them.
    vnpus_complete: bool
    # Per-name answers derived from these names: one value serves every review under its device config.
    # Request threads share them; each access is one dict operation, so a race at worst recomputes one.
    known_kinds: dict[str, int] = field(default_factory=dict, init=False, repr=False, compare=False)
    memo: dict[Any, Any] = field(default_factory=dict, init=False, repr=False, compare=False)

    def kinds(self, resource: str) -> int:
        """What `resource` means (the bit flags above), remembered per name."""
        kinds = self.known_kinds.get(resource)
        return store(self.known_kinds, resource, self._kinds(resource)) if kinds is None else kinds

    def kinds_of(self, resources: Iterable[str]) -> int:
        """The union of `kinds` over `resources`."""
        known, kinds = self.known_kinds, 0
        for resource in resources:
            k = known.get(resource)
            kinds |= self.kinds(resource) if k is None else k
        return kinds

    def _kinds(self, resource: str) -> int:
        kinds = (VGPU if resource in self.vgpu_all else 0) | (GPUSHARE if resource in self.gpushare_all else 0)
        if resource == spec.NPU_CORE:
            kinds |= NPU_CORE | SCHEDULED
        if resource.startswith(_VOLCANO_PREFIX):
            kinds |= VOLCANO | SCHEDULED
        if resource.startswith(spec.ASCEND_RESOURCE_PREFIX):
            kinds |= ASCEND
            # With a given config only its declared names are Volcano-managed; without one, every
            # huawei.com/Ascend* name is taken to be (the real config most likely declares it).
            if not self.vnpus_complete or any(
                resource in (v.resource_name, v.resource_memory_name, v.core_resource_name) for v in self.vnpus
            ):
                kinds |= SCHEDULED
        return kinds


def _names_for(config: DeviceConfig, given: bool) -> ResourceNames:
    nv = config.nvidia
    count = nv.resource_count_name or spec.VGPU_NUMBER
    memory = nv.resource_memory_name or spec.VGPU_MEMORY
    cores = nv.resource_core_name or spec.VGPU_CORES
    percentage = nv.resource_memory_percentage_name or spec.VGPU_MEMORY_PERCENTAGE
    every = {count, memory, cores, percentage, spec.VGPU_NUMBER, spec.VGPU_MEMORY, spec.VGPU_CORES,
             spec.VGPU_MEMORY_PERCENTAGE}
    return ResourceNames(
        vgpu_count=count,
        vgpu_memory=memory,
        vgpu_cores=cores,
        vgpu_percentage=percentage,
        vgpu_all=frozenset(every),
        gpushare_all=frozenset({spec.GPU_MEMORY, spec.GPU_NUMBER}),
        vnpus=config.vnpus,
        vnpus_complete=given,
    )


_names_cache: dict[tuple[int, bool], tuple[DeviceConfig, ResourceNames]] = {}


def names_for(config: DeviceConfig | None) -> ResourceNames:
    """Resource names under a given device config, or (None) under the built-in one Volcano runs on when none
    is given (`ClusterFacts.volcano_device_config`); cached by identity: one config serves many reviews."""
    given = config is not None
    config = volcano_device_config(config)
    key = (id(config), given)
    cached = _names_cache.get(key)
    if cached is not None and cached[0] is config:
        return cached[1]
    names = _names_for(config, given)
    if len(_names_cache) > 64:
        _names_cache.clear()
    _names_cache[key] = (config, names)
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


SHOWN = 120  # characters of a value a message quotes: a 3 MiB value makes no better message than its start


def show(raw: Any) -> str:
    """A value as the user wrote it, for messages, cut at `SHOWN` characters."""
    text = raw if isinstance(raw, str) else str(raw)
    if len(text) > SHOWN:
        text = f"{text[:SHOWN]}…({len(text)} characters)"
    return f'"{text}"' if isinstance(raw, str) else text


@dataclass(slots=True)
class PodContext:
    target: PodTarget
    facts: ClusterFacts
    names: ResourceNames
    apply_defaults: bool
    existing: bool
    containers: list[ContainerView]  # with `build_context(devices_only=True)`, those with `kinds` only
    annotations: Mapping[str, Any]
    labels: Mapping[str, Any]
    findings: list[Finding]
    additions: list[tuple[Pointer, Any]]
    malformed: bool
    apps: list[ContainerView]  # the `containers` among them (rules ask often)
    kinds: int  # what the pod's resources mean: the union of its containers' `kinds`
    empty: bool  # the pod has no container objects at all (`containers` may also leave some out)

    # ---- reporting -------------------------------------------------------------------------------
    def emit(self, code: str, severity: Severity, subject: str, message: str, hint: str | None = None) -> None:
        """Report against a subject inside this pod (the template path is prefixed); `hint` replaces the code's
        hint where the rule knows the figure that fits the case (`catalogue.pods.case_hint`)."""
        self.findings.append(Finding(code, severity, self.target.subject_prefix + subject, message,
                                     HINTS[code] if hint is None else hint))

    def emit_at(self, code: str, severity: Severity, subject: str, message: str) -> None:
        """Report against a subject named from the top of the object."""
        self.findings.append(Finding(code, severity, subject, message, HINTS[code]))

    def emit_for(self, c: ContainerView, code: str, severity: Severity, text: str, hint: str | None = None) -> None:
        """Report against container `c`, the message prefixed with where it is (`hint` as for `emit`). The subject
        and the prefix are made here, not by the rule: most containers pass every rule and never need them."""
        subject = c.subject
        if subject is None:
            subject = self.container_subject(c)
        where = c.where
        if where is None:
            where = self.container_where(c)
        self.findings.append(
            Finding(code, severity, self.target.subject_prefix + subject, f"{where}: {text}",
                    HINTS[code] if hint is None else hint)
        )

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
        kinds = self.names.kinds(resource)
        c.kinds |= kinds
        self.kinds |= kinds
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


def build_context(target: PodTarget, facts: ClusterFacts, apply_defaults: bool, existing: bool,
                  devices_only: bool = False) -> PodContext:
    """The context of one pod. `devices_only`: views only of the containers whose resources mean something
    (`kinds`), which are the only ones the pod rules look at; most pods have a sidecar or two that request
    no device, and a view of each would cost as much as a rule."""
    # The device config's names, kept in the facts' memo: one dict lookup, not three (benchmarks/review_throughput.py).
    names: ResourceNames | None = facts.memo.get(_NAMES_MEMO)
    if names is None:
        names = facts.memo[_NAMES_MEMO] = names_for(facts.device_config)
    containers: list[ContainerView] = []
    apps: list[ContainerView] = []
    malformed = False
    empty = True
    pod_kinds = 0
    pod_spec = target.spec
    for kind in CONTAINER_KINDS:
        raw_list = pod_spec.get(kind)
        if raw_list is None:
            continue
        if not isinstance(raw_list, list):
            malformed = True
            continue
        for index, raw in enumerate(raw_list):
            if type(raw) is not dict and not isinstance(raw, Mapping):  # dict first (benchmarks/review_throughput.py)
                malformed = True
                continue
            resources = raw.get("resources")
            if type(resources) is not dict:  # dict first (benchmarks/review_throughput.py)
                resources = as_mapping(resources)
            # Most containers have no requests: skip the call for an absent map (benchmarks/review_throughput.py).
            limits = resources.get("limits")
            limits, limit_kinds = _resource_map(limits, names) if limits else (_NO_RESOURCES, 0)
            requests = resources.get("requests")
            requests, request_kinds = _resource_map(requests, names) if requests else (_NO_RESOURCES, 0)
            kinds = limit_kinds | request_kinds
            empty = False
            if devices_only and not kinds:
                continue
            security = raw.get("securityContext")
            name = raw.get("name")
            view = ContainerView(
                kind,
                index,
                name if type(name) is str and name else f"#{index}",
                limits,
                requests,
                as_mapping(security).get("privileged") is True if security else False,
                kinds,
            )
            containers.append(view)
            if kind == "containers":
                apps.append(view)
            pod_kinds |= kinds
    metadata = target.metadata
    annotations, labels = metadata.get("annotations"), metadata.get("labels")
    # Positional, in field order, and dict first: keyword arguments cost measurably (benchmarks/review_throughput.py).
    return PodContext(target, facts, names, apply_defaults, existing, containers,
                      annotations if type(annotations) is dict else as_mapping(annotations),
                      labels if type(labels) is dict else as_mapping(labels),
                      [], [], malformed, apps, pod_kinds, empty)


_NAMES_MEMO = "podrules:resource-names"  # `ClusterFacts.memo` key of `names_for(facts.device_config)`
_NO_RESOURCES: dict[str, Any] = {}  # shared and never written: add_limit copies before it writes


def _resource_map(value: Any, names: ResourceNames) -> tuple[dict[str, Any], int]:
    """The resource map to read from `limits` or `requests`, and what its names mean (`ResourceNames.kinds`),
    in one pass.

    The map is the object's own dict when every key is a string (JSON's always are), else a copy without
    the other keys (only YAML can make them). It is never written to (see add_limit)."""
    if not value:
        return _NO_RESOURCES, 0
    if type(value) is dict:  # dict first; map and kinds in one loop (benchmarks/review_throughput.py)
        known, kinds = names.known_kinds, 0
        for key in value:
            k = known.get(key)  # only strings are ever remembered
            if k is None:
                if type(key) is not str:
                    break
                k = names.kinds(key)
            kinds |= k
        else:
            return value, kinds
    elif not isinstance(value, Mapping):
        return _NO_RESOURCES, 0
    copy = {k: v for k, v in value.items() if isinstance(k, str)}
    return copy, names.kinds_of(copy)


__all__ = ["ABSENT", "ASCEND", "CONTAINER_KINDS", "DEVICE", "GPUSHARE", "NPU_CORE", "SCHEDULED", "VGPU", "VOLCANO",
           "ContainerView", "PodContext", "ResourceNames", "build_context", "names_for", "quantity",
           "show"]
