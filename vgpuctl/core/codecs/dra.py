"""The DRA objects (`resource.k8s.io` v1, v1beta2, v1beta1) as far as vgpuctl reads them (docs/stacks.md#dra).

- ResourceSlice: `spec.driver`, `spec.nodeName`, `spec.devices[]` with `name` and `attributes` — on the device
  itself in v1 and v1beta2, under `basic` in v1beta1. An attribute is `{string|int|bool|version: value}`, keyed by
  its name, bare (`uuid`, in the driver's domain) or qualified (`gpu.nvidia.com/uuid`). The GPU drivers publish
  the GPU's UUID in `uuid` and, for a MIG device, the GPU it is cut from in `parentUUID`
  (kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1 `cmd/gpu-kubelet-plugin/deviceinfo.go`, `mig.go`;
  Project-HAMi/k8s-dra-driver v0.1.0 `cmd/hami-kubelet-plugin/hami_core.go`).
- DeviceClass: `metadata.name`, `spec.selectors[].cel.expression` (the drivers it names: `device.driver ==
  'gpu.nvidia.com'`), `spec.extendedResourceName`.
- ResourceClaim / ResourceClaimTemplate: the classes their requests ask, `spec.devices.requests[]` (a claim) or
  `spec.spec.devices.requests[]` (a template): `deviceClassName` (v1beta1), `exactly.deviceClassName` (v1, v1beta2),
  and each `firstAvailable[].deviceClassName`.
- A pod's `spec.resourceClaims[]`: `{name, resourceClaimName | resourceClaimTemplateName}` (and the 1.26–1.30 form
  under `source`).

Pure and forgiving: anything of the wrong shape is left out, nothing raises.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from vgpuctl.core import spec

_EMPTY: Mapping[str, Any] = {}
_DRIVER_IN_CEL: Final = re.compile(r"""device\.driver\s*==\s*["']([^"']+)["']|["']([^"']+)["']\s*==\s*device\.driver""")


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else _EMPTY


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True, slots=True)
class SliceDevice:
    """One device a ResourceSlice offers, as far as the GPU it is matters."""

    name: str
    type: str | None  # attribute `type` (gpu, mig, vfio, hami-gpu, …)
    uuid: str | None  # attribute `uuid`
    parent_uuid: str | None  # attribute `parentUUID` (a MIG device's GPU)

    @property
    def gpu(self) -> str | None:
        """The physical GPU the device is, or is cut from."""
        return self.parent_uuid or self.uuid


@dataclass(frozen=True, slots=True)
class ResourceSlice:
    name: str
    driver: str
    node: str | None  # spec.nodeName (None: a slice for all nodes or a node selector)
    devices: tuple[SliceDevice, ...]

    @property
    def gpus(self) -> tuple[str, ...]:
        """The physical GPUs (UUIDs) its devices are or are cut from, each once, in order."""
        return tuple(dict.fromkeys(d.gpu for d in self.devices if d.gpu))

    @property
    def offers_gpus(self) -> bool:
        """A GPU driver's slice, or one whose devices name NVIDIA GPUs (`GPU-…` UUIDs)."""
        return self.driver in spec.DRA_GPU_DRIVERS or any(g.startswith("GPU-") for g in self.gpus)


def attribute(attributes: Mapping[str, Any], name: str) -> Any:
    """The value of attribute `name`, bare or qualified by any domain (`gpu.nvidia.com/uuid`); None if absent."""
    raw = attributes.get(name)
    if raw is None:
        suffix = "/" + name
        raw = next((v for k, v in attributes.items() if isinstance(k, str) and k.endswith(suffix)), None)
    value = _m(raw)
    for kind in ("string", "version", "int", "bool"):
        if kind in value:
            return value[kind]
    return None


def decode_slice(obj: Mapping[str, Any]) -> ResourceSlice | None:
    """A ResourceSlice object, or None when it has no driver."""
    slice_spec = _m(obj.get("spec"))
    driver = _str(slice_spec.get("driver"))
    if driver is None:
        return None
    devices = []
    for raw in _list(slice_spec.get("devices")):
        device = _m(raw)
        attributes = _m(device.get("attributes")) or _m(_m(device.get("basic")).get("attributes"))  # v1beta1: basic
        devices.append(SliceDevice(
            name=_str(device.get("name")) or "",
            type=_str(attribute(attributes, spec.DRA_ATTR_TYPE)),
            uuid=_str(attribute(attributes, spec.DRA_ATTR_UUID)),
            parent_uuid=_str(attribute(attributes, spec.DRA_ATTR_PARENT_UUID)),
        ))
    return ResourceSlice(_str(_m(obj.get("metadata")).get("name")) or "", driver, _str(slice_spec.get("nodeName")),
                         tuple(devices))


@dataclass(frozen=True, slots=True)
class DeviceClass:
    name: str
    drivers: frozenset[str]  # the drivers its CEL selectors name
    extended_resource: str | None  # spec.extendedResourceName (KEP-5004)

    @property
    def selects_gpus(self) -> bool:
        """A class of a GPU driver: one the GPU drivers' charts install, or whose selector names a GPU driver."""
        return self.name in spec.DRA_GPU_CLASSES or not self.drivers.isdisjoint(spec.DRA_GPU_DRIVERS)


def decode_device_class(obj: Mapping[str, Any]) -> DeviceClass | None:
    name = _str(_m(obj.get("metadata")).get("name"))
    if name is None:
        return None
    class_spec = _m(obj.get("spec"))
    drivers: set[str] = set()
    for selector in _list(class_spec.get("selectors")):
        expression = _m(_m(selector).get("cel")).get("expression")
        if isinstance(expression, str):
            drivers.update(a or b for a, b in _DRIVER_IN_CEL.findall(expression))
    return DeviceClass(name, frozenset(drivers), _str(class_spec.get("extendedResourceName")))


def requested_classes(devices: Any) -> tuple[str, ...]:
    """The DeviceClass names a claim's `spec.devices` asks, each once, in order."""
    found: list[str] = []
    for raw in _list(_m(devices).get("requests")):
        request = _m(raw)
        for source in (request, _m(request.get("exactly")), *map(_m, _list(request.get("firstAvailable")))):
            name = _str(source.get("deviceClassName"))
            if name is not None:
                found.append(name)
    return tuple(dict.fromkeys(found))


def claim_classes(obj: Mapping[str, Any]) -> tuple[str, ...]:
    """What a ResourceClaim asks."""
    return requested_classes(_m(obj.get("spec")).get("devices"))


def template_classes(obj: Mapping[str, Any]) -> tuple[str, ...]:
    """What the claims made from a ResourceClaimTemplate ask."""
    return requested_classes(_m(_m(_m(obj.get("spec")).get("spec"))).get("devices"))


ClaimKind = Literal["claim", "template"]


@dataclass(frozen=True, slots=True)
class PodClaim:
    """One entry of a pod's `spec.resourceClaims`."""

    index: int
    name: str  # the entry's name (what containers list in resources.claims)
    kind: ClaimKind
    ref: str  # the ResourceClaim or ResourceClaimTemplate it names


def pod_claims(pod_spec: Mapping[str, Any]) -> Iterator[PodClaim]:
    """The entries of `spec.resourceClaims` that name a claim or a template."""
    for index, raw in enumerate(_list(pod_spec.get("resourceClaims"))):
        entry = _m(raw)
        source = _m(entry.get("source")) or entry  # Kubernetes 1.26–1.30 kept the reference under `source`
        name = _str(entry.get("name")) or str(index)
        claim, template = _str(source.get("resourceClaimName")), _str(source.get("resourceClaimTemplateName"))
        if claim is not None:
            yield PodClaim(index, name, "claim", claim)
        elif template is not None:
            yield PodClaim(index, name, "template", template)


__all__ = ["DeviceClass", "PodClaim", "ResourceSlice", "SliceDevice", "attribute", "claim_classes",
           "decode_device_class", "decode_slice", "pod_claims", "requested_classes", "template_classes"]
