"""The Volcano device config ("geometry"): its model, how Volcano parses it, and what it decides.

Volcano unmarshals `device-config.yaml` with gopkg.in/yaml.v2 into Go structs (docs/volcano.md#device-config): unknown
keys are
ignored, but a value of the wrong type fails the *whole* document, and Volcano then silently runs on
its built-in defaults (docs/volcano.md#device-config-default). `parse_device_config` reproduces that contract — it
returns the config
Volcano would use, or the type errors that would make it fall back — so rules reason about the config
the scheduler really has. The MIG best-fit (docs/vgpu.md#vgpu-mig) and Ascend template trimming
(docs/ascend.md#ascend-hami-template-mode) are here too,
because they are decisions the config alone determines.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core import spec


@dataclass(frozen=True, slots=True)
class MigInstance:
    name: str
    memory: int  # MiB
    count: int


@dataclass(frozen=True, slots=True)
class MigGroup:
    name: str
    instances: tuple[MigInstance, ...]


@dataclass(frozen=True, slots=True)
class MigGeometry:
    """One `knownMigGeometries` entry: the models it applies to and their allowed groups."""

    models: tuple[str, ...]
    groups: tuple[MigGroup, ...]

    def matches(self, device_type: str) -> bool:
        # Volcano: strings.Contains(deviceType, model) for any model — case-sensitive substring.
        return any(model and model in device_type for model in self.models)

    @property
    def largest_instance(self) -> int:
        return max((i.memory for g in self.groups for i in g.instances), default=0)


@dataclass(frozen=True, slots=True)
class NvidiaConfig:
    resource_count_name: str = ""
    resource_memory_name: str = ""
    resource_core_name: str = ""
    resource_memory_percentage_name: str = ""
    resource_priority_name: str = ""
    overwrite_env: bool = False
    default_memory: int = 0
    default_cores: int = 0
    default_gpu_num: int = 0
    device_split_count: int = 0
    device_memory_scaling: float = 0.0
    device_core_scaling: float = 0.0
    disable_core_limit: bool = False
    gpu_memory_factor: int = 0
    known_mig_geometries: tuple[MigGeometry, ...] = ()

    @property
    def memory_factor(self) -> int:
        """The factor Volcano's MIG code applies: only values > 1 change anything."""
        return self.gpu_memory_factor if self.gpu_memory_factor > 1 else 1

    def geometry_for(self, device_type: str) -> MigGeometry | None:
        """The first `knownMigGeometries` entry, in config order, with a model inside `device_type`."""
        for geometry in self.known_mig_geometries:
            if geometry.matches(device_type):
                return geometry
        return None

    @property
    def largest_mig_instance(self) -> int:
        return max((g.largest_instance for g in self.known_mig_geometries), default=0)


@dataclass(frozen=True, slots=True)
class VnpuTemplate:
    name: str
    memory: int  # MiB
    ai_core: int = 0
    ai_cpu: int = 0


@dataclass(frozen=True, slots=True)
class VnpuConfig:
    common_word: str
    chip_name: str = ""
    resource_name: str = ""
    resource_memory_name: str = ""
    memory_allocatable: int = 0
    memory_capacity: int = 0
    ai_core: int = 0
    ai_cpu: int = 0
    templates: tuple[VnpuTemplate, ...] = ()  # sorted by memory, ascending, as Volcano does at load

    @property
    def core_resource_name(self) -> str:
        # Always derived; a `resourceCoreName` key in the ConfigMap is ignored by Volcano
        # (docs/ascend.md#ascend-hami-keys).
        return self.resource_name + spec.ASCEND_CORE_SUFFIX


class VnpusForm(str, enum.Enum):
    ABSENT = "absent"
    LIST = "list"  # legacy `vnpus: [...]`
    WRAPPER = "wrapper"  # `vnpus: {hamiVnpuCore: bool, configs: [...]}`


@dataclass(frozen=True, slots=True)
class DeviceConfig:
    nvidia: NvidiaConfig = field(default_factory=NvidiaConfig)
    has_nvidia: bool = False
    vnpus: tuple[VnpuConfig, ...] = ()
    vnpus_form: VnpusForm = VnpusForm.ABSENT
    hami_vnpu_core: bool = False


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """A value Volcano's YAML decoder rejects; any one makes Volcano fall back to its defaults."""

    path: str
    message: str


@dataclass(frozen=True, slots=True)
class ParsedDeviceConfig:
    config: DeviceConfig | None  # None when Volcano would reject the document
    problems: tuple[ConfigProblem, ...] = ()


# --------------------------------------------------------------------------------------------------
# Built-in defaults (docs/volcano.md#device-config-default): what Volcano runs on when the ConfigMap cannot be loaded.

_DEFAULT_310P = VnpuConfig(
    common_word="Ascend310P",
    chip_name="310P3",
    resource_name="huawei.com/Ascend310P",
    resource_memory_name="huawei.com/Ascend310P-memory",
    memory_allocatable=21527,
    memory_capacity=24576,
    ai_core=8,
    ai_cpu=7,
    templates=(
        VnpuTemplate("vir01", 3072, 1, 1),
        VnpuTemplate("vir02", 6144, 2, 2),
        VnpuTemplate("vir04", 12288, 4, 4),
    ),
)


def default_device_config() -> DeviceConfig:
    """Volcano's `GetDefaultDevicesConfig()`: no MIG, no percentage resource, Ascend310P only."""
    return DeviceConfig(
        nvidia=NvidiaConfig(
            resource_count_name=spec.VGPU_NUMBER,
            resource_memory_name=spec.VGPU_MEMORY,
            resource_core_name=spec.VGPU_CORES,
            default_gpu_num=1,
            device_split_count=10,
            device_memory_scaling=1.0,
            device_core_scaling=1.0,
        ),
        has_nvidia=True,
        vnpus=(_DEFAULT_310P,),
        vnpus_form=VnpusForm.LIST,
    )


# --------------------------------------------------------------------------------------------------
# Parsing with yaml.v2 semantics.


class _Decoder:
    """Decodes scalars the way yaml.v2 fills Go struct fields, collecting type errors."""

    def __init__(self) -> None:
        self.problems: list[ConfigProblem] = []

    def fail(self, path: str, message: str) -> None:
        self.problems.append(ConfigProblem(path, message))

    def string(self, raw: Any, path: str) -> str:
        # yaml.v2 stores the text of any scalar in a string field (`chipName: 310` → "310").
        if raw is None:
            return ""
        if isinstance(raw, bool):
            return "true" if raw else "false"
        if isinstance(raw, int | float | str):
            return str(raw)
        self.fail(path, f"expected a string, got {_kind(raw)}")
        return ""

    def integer(self, raw: Any, path: str, *, unsigned: bool = False) -> int:
        # yaml.v2 accepts ints and floats (truncated) for integer fields, never strings or bools.
        if raw is None:
            return 0
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            self.fail(path, f"expected an integer, got {_kind(raw)} {raw!r}")
            return 0
        if isinstance(raw, float) and not math.isfinite(raw):
            self.fail(path, f"expected an integer, got {raw!r}")
            return 0
        value = int(raw)
        if unsigned and value < 0:
            self.fail(path, f"expected a non-negative integer, got {raw!r}")
            return 0
        return value

    def number(self, raw: Any, path: str) -> float:
        if raw is None:
            return 0.0
        if isinstance(raw, bool) or not isinstance(raw, int | float):
            self.fail(path, f"expected a number, got {_kind(raw)} {raw!r}")
            return 0.0
        return float(raw)

    def boolean(self, raw: Any, path: str) -> bool:
        if raw is None:
            return False
        if not isinstance(raw, bool):
            self.fail(path, f"expected a boolean, got {_kind(raw)} {raw!r}")
            return False
        return raw

    def mapping(self, raw: Any, path: str) -> Mapping[str, Any]:
        if raw is None:
            return {}
        if not isinstance(raw, Mapping):
            self.fail(path, f"expected a mapping, got {_kind(raw)}")
            return {}
        return raw

    def sequence(self, raw: Any, path: str) -> Sequence[Any]:
        if raw is None:
            return ()
        if isinstance(raw, str | bytes) or not isinstance(raw, Sequence):
            self.fail(path, f"expected a list, got {_kind(raw)}")
            return ()
        return raw


def _kind(raw: Any) -> str:
    if isinstance(raw, bool):
        return "boolean"
    if isinstance(raw, str):
        return "string"
    if isinstance(raw, int | float):
        return "number"
    if isinstance(raw, Mapping):
        return "mapping"
    if isinstance(raw, Sequence):
        return "list"
    return type(raw).__name__


def _parse_nvidia(d: _Decoder, raw: Any) -> NvidiaConfig:
    m = d.mapping(raw, "nvidia")
    geometries: list[MigGeometry] = []
    for gi, entry in enumerate(d.sequence(m.get("knownMigGeometries"), "nvidia.knownMigGeometries")):
        gpath = f"nvidia.knownMigGeometries[{gi}]"
        em = d.mapping(entry, gpath)
        models = tuple(
            d.string(model, f"{gpath}.models[{mi}]")
            for mi, model in enumerate(d.sequence(em.get("models"), f"{gpath}.models"))
        )
        groups: list[MigGroup] = []
        for ri, group in enumerate(d.sequence(em.get("allowedGeometries"), f"{gpath}.allowedGeometries")):
            rpath = f"{gpath}.allowedGeometries[{ri}]"
            rm = d.mapping(group, rpath)
            instances: list[MigInstance] = []
            for ii, inst in enumerate(d.sequence(rm.get("geometries"), f"{rpath}.geometries")):
                ipath = f"{rpath}.geometries[{ii}]"
                im = d.mapping(inst, ipath)
                instances.append(
                    MigInstance(
                        name=d.string(im.get("name"), f"{ipath}.name"),
                        memory=d.integer(im.get("memory"), f"{ipath}.memory", unsigned=True),
                        count=d.integer(im.get("count"), f"{ipath}.count"),
                    )
                )
            groups.append(MigGroup(d.string(rm.get("group"), f"{rpath}.group"), tuple(instances)))
        geometries.append(MigGeometry(models, tuple(groups)))

    def s(key: str) -> str:
        return d.string(m.get(key), f"nvidia.{key}")

    def u(key: str) -> int:
        return d.integer(m.get(key), f"nvidia.{key}", unsigned=True)

    return NvidiaConfig(
        resource_count_name=s("resourceCountName"),
        resource_memory_name=s("resourceMemoryName"),
        resource_core_name=s("resourceCoreName"),
        resource_memory_percentage_name=s("resourceMemoryPercentageName"),
        resource_priority_name=s("resourcePriorityName"),
        overwrite_env=d.boolean(m.get("overwriteEnv"), "nvidia.overwriteEnv"),
        default_memory=u("defaultMemory"),
        default_cores=u("defaultCores"),
        default_gpu_num=u("defaultGPUNum"),
        device_split_count=u("deviceSplitCount"),
        device_memory_scaling=d.number(m.get("deviceMemoryScaling"), "nvidia.deviceMemoryScaling"),
        device_core_scaling=d.number(m.get("deviceCoreScaling"), "nvidia.deviceCoreScaling"),
        disable_core_limit=d.boolean(m.get("disableCoreLimit"), "nvidia.disableCoreLimit"),
        gpu_memory_factor=u("gpuMemoryFactor"),
        known_mig_geometries=tuple(geometries),
    )


def _parse_vnpu(d: _Decoder, raw: Any, path: str) -> VnpuConfig:
    m = d.mapping(raw, path)
    templates: list[VnpuTemplate] = []
    for ti, tmpl in enumerate(d.sequence(m.get("templates"), f"{path}.templates")):
        tpath = f"{path}.templates[{ti}]"
        tm = d.mapping(tmpl, tpath)
        templates.append(
            VnpuTemplate(
                name=d.string(tm.get("name"), f"{tpath}.name"),
                memory=d.integer(tm.get("memory"), f"{tpath}.memory"),
                ai_core=d.integer(tm.get("aiCore"), f"{tpath}.aiCore"),
                ai_cpu=d.integer(tm.get("aiCPU"), f"{tpath}.aiCPU"),
            )
        )
    templates.sort(key=lambda t: t.memory)  # Go sort.Slice: ties keep no guaranteed order
    return VnpuConfig(
        common_word=d.string(m.get("commonWord"), f"{path}.commonWord"),
        chip_name=d.string(m.get("chipName"), f"{path}.chipName"),
        resource_name=d.string(m.get("resourceName"), f"{path}.resourceName"),
        resource_memory_name=d.string(m.get("resourceMemoryName"), f"{path}.resourceMemoryName"),
        memory_allocatable=d.integer(m.get("memoryAllocatable"), f"{path}.memoryAllocatable"),
        memory_capacity=d.integer(m.get("memoryCapacity"), f"{path}.memoryCapacity"),
        ai_core=d.integer(m.get("aiCore"), f"{path}.aiCore"),
        ai_cpu=d.integer(m.get("aiCPU"), f"{path}.aiCPU"),
        templates=tuple(templates),
    )


def parse_device_config(payload: Any) -> ParsedDeviceConfig:
    """Decode a `device-config.yaml` payload (already YAML-loaded) as the newest Volcano would.

    Both `vnpus` forms are accepted here; whether the *running* Volcano accepts the wrapper form is a
    version question (VGM003), answered by `versions.accepts_vnpus_wrapper`.
    """
    d = _Decoder()
    if payload is None:
        payload = {}
    top = d.mapping(payload, "$")
    nvidia = _parse_nvidia(d, top.get("nvidia")) if top.get("nvidia") is not None else NvidiaConfig()
    raw_vnpus = top.get("vnpus")
    form = VnpusForm.ABSENT
    hami_core = False
    entries: Sequence[Any] = ()
    if isinstance(raw_vnpus, Mapping):
        form = VnpusForm.WRAPPER
        hami_core = d.boolean(raw_vnpus.get("hamiVnpuCore"), "vnpus.hamiVnpuCore")
        entries = d.sequence(raw_vnpus.get("configs"), "vnpus.configs")
        prefix = "vnpus.configs"
    elif raw_vnpus is not None:
        form = VnpusForm.LIST
        entries = d.sequence(raw_vnpus, "vnpus")
        prefix = "vnpus"
    vnpus = tuple(_parse_vnpu(d, entry, f"{prefix}[{i}]") for i, entry in enumerate(entries))
    if d.problems:
        return ParsedDeviceConfig(None, tuple(d.problems))
    return ParsedDeviceConfig(
        DeviceConfig(
            nvidia=nvidia,
            has_nvidia=top.get("nvidia") is not None,
            vnpus=vnpus,
            vnpus_form=form,
            hami_vnpu_core=hami_core,
        )
    )


# --------------------------------------------------------------------------------------------------
# Decisions the config determines.


@dataclass(frozen=True, slots=True)
class MigFit:
    """The slice a per-GPU request gets on a GPU with no MIG group in use yet."""

    geometry: MigGeometry
    group: MigGroup
    instance: MigInstance
    request: int  # MiB after gpuMemoryFactor


def mig_request_mib(nvidia: NvidiaConfig, memory: int) -> int:
    """Volcano multiplies the per-GPU request by gpuMemoryFactor before matching (only if > 1)."""
    return memory * nvidia.memory_factor


def mig_fit_in_geometry(geometry: MigGeometry, request: int) -> MigFit | None:
    """docs/vgpu.md#vgpu-mig on an idle GPU: groups in config order, the smallest instance ≥ `request` MiB (after
    `mig_request_mib`) inside a group, the first group that has one wins. None when nothing is large enough."""
    for group in geometry.groups:
        for instance in sorted(group.instances, key=lambda i: i.memory):
            if instance.memory >= request:
                return MigFit(geometry, group, instance, request)
    return None


@dataclass(frozen=True, slots=True)
class VnpuTrim:
    """What a template-mode Ascend memory request is booked as (docs/ascend.md#ascend-hami-template-mode)."""

    memory: int  # 0 when the request exceeds memoryCapacity
    template: VnpuTemplate | None  # None = whole card (memoryAllocatable) or oversized

    @property
    def whole_card(self) -> bool:
        return self.template is None and self.memory > 0


def trim_vnpu_memory(vnpu: VnpuConfig, request: int) -> VnpuTrim:
    for template in vnpu.templates:
        if template.memory >= request:
            return VnpuTrim(template.memory, template)
    if request <= vnpu.memory_capacity:
        return VnpuTrim(vnpu.memory_allocatable, None)
    return VnpuTrim(0, None)


class DeviceConfigDocumentError(ValueError):
    """The document is neither a device ConfigMap nor a `device-config.yaml` payload."""


def payload_from_document(doc: Any) -> Any:
    """Accept a ConfigMap manifest or a bare payload (docs/contracts.md#interfaces) and return the payload,
    YAML-decoded.

    YAML decoding of the embedded `device-config.yaml` string is pure computation, so it lives here
    rather than in an adapter (through `safeyaml`, whose limits refuse an alias bomb or a too-deep document).
    """
    from vgpuctl.core.safeyaml import InputError, load  # local: only this entry point needs it

    if isinstance(doc, Mapping) and doc.get("kind") == "ConfigMap":
        data = doc.get("data") or {}
        if not isinstance(data, Mapping) or spec.DEVICE_CONFIG_KEY not in data:
            name = (doc.get("metadata") or {}).get("name", "?")
            raise DeviceConfigDocumentError(f"ConfigMap {name} has no data key {spec.DEVICE_CONFIG_KEY!r}")
        text = data[spec.DEVICE_CONFIG_KEY]
        if not isinstance(text, str):
            raise DeviceConfigDocumentError(f"data[{spec.DEVICE_CONFIG_KEY!r}] must be a string")
        try:
            return load(text)
        except InputError as exc:
            raise DeviceConfigDocumentError(f"{spec.DEVICE_CONFIG_KEY}: {exc}") from exc
    if doc is None or isinstance(doc, Mapping):
        return doc
    raise DeviceConfigDocumentError("expected a ConfigMap or a device-config.yaml mapping")
