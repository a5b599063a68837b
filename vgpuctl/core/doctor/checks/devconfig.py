"""Device config checks (`VGM`, docs/contracts.md#finding-families): the ConfigMap Volcano really reads, judged the way
Volcano reads it.

Volcano reads one ConfigMap (`deviceshare.KnownGeometriesCMName/Namespace`, default
kube-system/volcano-vgpu-device-config, key `device-config.yaml`) once per process and falls back to its
built-in defaults without a word (docs/volcano.md#device-config-loading). VGM002–VGM011 are the geometry validator's
findings on that
ConfigMap (`vgpuctl.core.geometry.validate`, one registered check per code), judged for the detected
Volcano version and the families `deviceshare` enables; subjects are `configmap/<ns>/<name>:<json path>`.
The rest needs the cluster: which ConfigMap exists (VGM001), which `vnpus` form the Ascend plugin and
HAMi accept (VGM003), whether the device plugins read the same settings (VGM012), and whether every MIG
model matches a GPU the nodes register (VGM013).

A missing ConfigMap is VGM001 only: VGM002–VGM011 then pass, because the built-in defaults Volcano runs on
are well-formed, and the VGM001 warning says exactly which defaults those are. Volcano < 1.12 has no
device ConfigMap at all, so the Volcano-side checks pass there too (VGK003/VGC010 report the version).
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.deviceconfig import DeviceConfig, parse_device_config
from vgpuctl.core.doctor.components import Component, as_map, components
from vgpuctl.core.doctor.framework import Category, CheckFn, DoctorContext, check
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.geometry import keys
from vgpuctl.core.geometry.documents import ROOT, DeviceConfigSource, parse_payload_text
from vgpuctl.core.geometry.report import LocatedFinding
from vgpuctl.core.geometry.validate import validate_source
from vgpuctl.core.safeyaml import InputError, load
from vgpuctl.core.versions import (
    ASCEND_PLUGIN_WRAPPER_SINCE,
    NEWEST_VOLCANO,
    Version,
    accepts_vnpus_wrapper,
    has_device_config,
)

CAT = Category.DEVICE_CONFIG
LOADABLE = "scheduler-config.loadable"
PARSES = "device-config.parses"
KEY = spec.DEVICE_CONFIG_KEY
WARNING = Severity.WARNING
ASCEND_PLUGIN, HAMI = "ascend-device-plugin", "hami"
# The first version of each reader whose `vnpus` field is the wrapper struct; older ones take only the list
# and newer ones only the wrapper, and both exit on the other form (docs/device-plugins.md#vnpus-forms).
WRAPPER_SINCE = {ASCEND_PLUGIN: (ASCEND_PLUGIN_WRAPPER_SINCE, "the Ascend device plugin"),
                 HAMI: (Version(2, 9, 0), "HAMi")}
# The vGPU plugin's lookup order (docs/device-plugins.md#vgpu-plugin-device-config).
VGPU_PLUGIN_NAMESPACES = (spec.DEVICE_CONFIGMAP_NAMESPACE, spec.SCHEDULER_NAMESPACE)
CMKey = tuple[str, str]


def _f(code: str, severity: Severity, subject: str, message: str) -> Finding:
    return Finding(code, severity, subject, message, hint_for(code))


def _version(ctx: DoctorContext) -> Version:
    return ctx.volcano_version or NEWEST_VOLCANO


def _name(key: CMKey) -> str:
    return f"{key[0]}/{key[1]}"


def _text(cm: Mapping[str, Any] | None) -> Any:
    """`data["device-config.yaml"]` (any type), or None when the ConfigMap or the key is absent."""
    return as_map(cm.get("data")).get(KEY) if cm is not None else None


def _payload(cm: Mapping[str, Any] | None) -> Mapping[str, Any] | None:
    """The decoded payload of a ConfigMap; None when absent, unreadable or not a mapping."""
    text = _text(cm)
    if not isinstance(text, str):
        return None
    try:
        doc = load(text)
    except InputError:
        return None
    return doc if isinstance(doc, Mapping) else {} if doc is None else None


@dataclass(frozen=True)
class _Target:
    """The ConfigMap Volcano reads."""

    key: CMKey
    obj: Mapping[str, Any] | None

    @property
    def subject(self) -> str:
        return f"configmap/{_name(self.key)}"

    def at(self, path: str) -> str:
        return self.subject if path == ROOT else f"{self.subject}:{path}"


def _target(ctx: DoctorContext) -> _Target:
    args = ctx.snapshot.deviceshare
    key = (args.geometries_cm_namespace, args.geometries_cm_name)
    return _Target(key, ctx.snapshot.configmaps.get(key))


def _families(ctx: DoctorContext) -> list[spec.Family]:
    """The families that read the device config, enabled in `deviceshare` or registered by some node."""
    args = ctx.snapshot.deviceshare
    on = {f for n in ctx.snapshot.nodes for f in n.families} | set(args.families)
    return [f for f in (spec.Family.VGPU, spec.Family.ASCEND_HAMI) if f in on]


def _vgpu_plugin_key(ctx: DoctorContext) -> CMKey | None:
    """The ConfigMap the vGPU device plugin reads: a fixed name, found in kube-system, else volcano-system."""
    return next(((ns, spec.DEVICE_CONFIGMAP) for ns in VGPU_PLUGIN_NAMESPACES
                 if (ns, spec.DEVICE_CONFIGMAP) in ctx.snapshot.configmaps), None)


# --- VGM001 ---------------------------------------------------------------------------------------


@check("device-config.present", CAT, "VGM001", "The device ConfigMap Volcano reads exists",
       needs=(LOADABLE,), reads=("configmaps",))
def present(ctx: DoctorContext) -> Iterator[Finding]:
    families = _families(ctx)
    target = _target(ctx)
    if not families or not has_device_config(_version(ctx)):
        return
    if target.obj is None:
        what = "does not exist"
    elif KEY not in as_map(target.obj.get("data")):
        what = f"has no data key {KEY!r}"
    else:
        return
    conf = ctx.snapshot.scheduler_conf
    plugin = conf.plugin(spec.PLUGIN_DEVICESHARE) if conf else None
    named = plugin is not None and any(k in plugin.arguments for k in (spec.ARG_KNOWN_GEOMETRIES_CM_NAME,
                                                                       spec.ARG_KNOWN_GEOMETRIES_CM_NAMESPACE))
    origin = "named by deviceshare.KnownGeometriesCM*" if named else "Volcano's default"
    effects = []
    if spec.Family.VGPU in families:
        effects.append("no knownMigGeometries (mig-mode GPUs are scheduled as hami-core) and no "
                       "vgpu-memory-percentage resource")
    if spec.Family.ASCEND_HAMI in families:
        effects.append("vnpus holds Ascend310P only (every other Ascend chip is never registered)")
    if spec.Family.VGPU in families and _vgpu_plugin_key(ctx) is None:
        effects.append(f"the vGPU device plugin, looking for {spec.DEVICE_CONFIGMAP} in "
                       f"{' then '.join(VGPU_PLUGIN_NAMESPACES)}, runs on an all-zero config")
    sections = [s for f, s in ((spec.Family.VGPU, "nvidia"), (spec.Family.ASCEND_HAMI, "vnpus")) if f in families]
    others = sorted(_name(k) for k, cm in ctx.snapshot.configmaps.items()
                    if k != target.key and all(s in (_payload(cm) or {}) for s in sections))
    elsewhere = f"; {', '.join(others)} carries {KEY}: point deviceshare.KnownGeometriesCMName/Namespace " \
                "at it" if others else ""
    yield _f("VGM001", WARNING, target.subject,
             f"ConfigMap {_name(target.key)} ({origin}) {what}: Volcano silently runs on its built-in defaults — "
             f"{'; '.join(effects)}{elsewhere}")


# --- VGM002–VGM011: the geometry validator on the ConfigMap Volcano reads -------------------------


@functools.lru_cache(maxsize=16)
def _validate_text(source: str, text: str, version: Version, vgpu: bool, ascend: bool
                   ) -> tuple[LocatedFinding, ...]:
    src = parse_payload_text(text, source)
    return tuple(validate_source(src, version=version, vgpu_enabled=vgpu, ascend_hami_enabled=ascend))


def _validated(ctx: DoctorContext) -> tuple[LocatedFinding, ...]:
    """Every VGM002–VGM011 finding of the ConfigMap Volcano reads (none when it is absent: VGM001)."""
    version, target, args = _version(ctx), _target(ctx), ctx.snapshot.deviceshare
    text = _text(target.obj)
    if text is None or not has_device_config(version):
        return ()
    if not isinstance(text, str):
        bad = DeviceConfigSource(target.subject, error=f"data[{KEY!r}] is not a string")
        return tuple(validate_source(bad, version=version))
    return _validate_text(target.subject, text, version, args.vgpu, args.ascend_hami)


def _doctor_finding(target: _Target, located: LocatedFinding, note: str = "") -> Finding:
    f = located.finding
    where = f" ({KEY} line {located.line})" if located.line is not None else ""
    return Finding(f.code, f.severity, target.at(f.subject), f"{f.message}{note}{where}", f.hint)


def _from_validator(code: str) -> CheckFn:
    def run(ctx: DoctorContext) -> Iterator[Finding]:
        target = _target(ctx)
        return (_doctor_finding(target, lf) for lf in _validated(ctx) if lf.finding.code == code)

    run.__name__ = f"validator_{code.lower()}"
    return run


# --- VGM003: the vnpus form each reader accepts ---------------------------------------------------


def _mounted(obj: Mapping[str, Any]) -> list[str]:
    """Names of the ConfigMaps a workload's pod template mounts (plain and projected volumes)."""
    pod = as_map(as_map(as_map(obj.get("spec")).get("template")).get("spec"))
    names: list[str] = []
    for volume in pod.get("volumes") or []:
        volume = as_map(volume)
        sources = [as_map(volume.get("configMap"))]
        sources += [as_map(as_map(s).get("configMap")) for s in as_map(volume.get("projected")).get("sources") or []]
        names += [s["name"] for s in sources if isinstance(s.get("name"), str)]
    return names


def _device_configs_of(ctx: DoctorContext, component: Component) -> list[CMKey]:
    """The device ConfigMaps a plugin reads: those it mounts, else the default `hami-scheduler-device`."""
    namespace = component.namespace or spec.DEVICE_CONFIGMAP_NAMESPACE
    mounted = _mounted(component.obj)
    names = mounted or [spec.ASCEND_DEVICE_CONFIGMAP]
    found = [(namespace, n) for n in names if isinstance(_text(ctx.snapshot.configmaps.get((namespace, n))), str)]
    return list(dict.fromkeys(found))


def _vnpus_readers(ctx: DoctorContext) -> Iterator[tuple[Component, CMKey]]:
    seen: set[tuple[str, Version, CMKey]] = set()
    for component in components(ctx.snapshot):
        if component.name not in WRAPPER_SINCE or component.version is None:
            continue  # an unknown version is not guessed
        for key in _device_configs_of(ctx, component):
            if (component.name, component.version, key) not in seen:
                seen.add((component.name, component.version, key))
                yield component, key


def _form(payload: Mapping[str, Any] | None) -> str | None:
    vnpus = payload.get("vnpus") if payload is not None else None
    return "wrapper" if isinstance(vnpus, Mapping) else "list" if isinstance(vnpus, list) else None


def _wants(component: Component) -> str:
    since, _ = WRAPPER_SINCE[component.name]
    return "wrapper" if component.version is not None and component.version.core >= since.core else "list"


_OWN_COPY = "give Volcano its own list-form copy and point deviceshare.KnownGeometriesCMName at it"


def vnpus_form(ctx: DoctorContext) -> Iterator[Finding]:
    target, version = _target(ctx), _version(ctx)
    readers = [] if "daemonsets" in ctx.unreadable else list(_vnpus_readers(ctx))
    if ctx.snapshot.scheduler_conf is not None:  # which ConfigMap Volcano reads is known only then
        sharing = [c for c, k in readers if k == target.key and _wants(c) == "wrapper"]
        note = (f"; {WRAPPER_SINCE[sharing[0].name][1]} {sharing[0].version} reads the same ConfigMap and needs the "
                f"wrapper form, so {_OWN_COPY}") if sharing else ""
        yield from (_doctor_finding(target, lf, note) for lf in _validated(ctx) if lf.finding.code == "VGM003")
    for component, key in readers:
        form, wants = _form(_payload(ctx.snapshot.configmaps.get(key))), _wants(component)
        if form is None or form == wants:
            continue
        both = ""
        if key == target.key and wants == "wrapper" and not accepts_vnpus_wrapper(version) and \
                has_device_config(version) and ctx.snapshot.scheduler_conf is not None:
            both = f"; Volcano {version} reads it too and needs the list form, so {_OWN_COPY}"
        yield _f("VGM003", Severity.ERROR, f"configmap/{_name(key)}:vnpus",
                 f"vnpus is in the {form} form, but {WRAPPER_SINCE[component.name][1]} {component.version} "
                 f"({component.kind} {component.namespace}/{component.object_name}) decodes only the {wants} "
                 f"form: it fails to load its config and exits{both}")


# One check per code, in code order. VGM003 also asks the Ascend plugin and HAMi, which do not depend on the
# scheduler ConfigMap, so it runs without it (and then judges only the plugins' ConfigMaps).
for _id, _code, _description, _fn, _needs in (
    (PARSES, "VGM002", "device-config.yaml parses with Volcano's schema", None, (LOADABLE,)),
    ("device-config.vnpus-form", "VGM003", "Every reader accepts the vnpus form it is given", vnpus_form, ()),
    ("device-config.nvidia-section", "VGM004", "The nvidia section names the vGPU resources", None, (LOADABLE,)),
    ("device-config.resource-names", "VGM005", "vGPU resource names are the ones Volcano checks on nodes", None,
     (LOADABLE,)),
    ("device-config.vnpus", "VGM006", "vnpus entries are unique and their memory values possible", None,
     (LOADABLE,)),
    ("device-config.mig-geometry", "VGM007", "MIG geometries are well-formed", None, (LOADABLE,)),
    ("device-config.scaling", "VGM008", "gpuMemoryFactor, deviceSplitCount and deviceCoreScaling are non-zero",
     None, (LOADABLE,)),
    ("device-config.known-keys", "VGM009", "Every device-config key is one some reader knows", None, (LOADABLE,)),
    ("device-config.effective-keys", "VGM010", "Device-config keys have an effect on the Volcano path", None,
     (LOADABLE,)),
    ("device-config.volcano-flavour", "VGM011", "The nvidia section is in Volcano's flavour, not HAMi's", None,
     (LOADABLE,)),
):
    check(_id, CAT, _code, _description, needs=_needs, reads=("configmaps",))(_fn or _from_validator(_code))


# --- VGM012: Volcano and the device plugins read the same settings --------------------------------


def _differing(a: Any, b: Any, order: Sequence[str], ignore: Sequence[str] = ()) -> list[str]:
    if not isinstance(a, Mapping) or not isinstance(b, Mapping):
        return [] if a == b else ["(the whole section)"]
    rest = sorted(str(k) for k in {*a, *b} if k not in order)
    return [k for k in (*order, *rest) if k not in ignore and a.get(k) != b.get(k)]


def _nvidia_agree(ctx: DoctorContext, target: _Target, volcano: Mapping[str, Any]) -> Iterator[Finding]:
    plugin_key = _vgpu_plugin_key(ctx)
    if plugin_key == target.key:
        return
    subject = target.at("nvidia")
    if plugin_key is None:
        yield _f("VGM012", WARNING, subject,
                 f"Volcano reads {_name(target.key)}, but the vGPU device plugin reads {spec.DEVICE_CONFIGMAP} from "
                 f"{' then '.join(VGPU_PLUGIN_NAMESPACES)}, and neither exists: the plugin runs on an all-zero "
                 "config (gpuMemoryFactor 0, deviceSplitCount 0) unless its flags set the values")
        return
    plugin = _payload(ctx.snapshot.configmaps.get(plugin_key))
    if plugin is None:
        return
    diff = _differing(volcano.get("nvidia"), plugin.get("nvidia"), keys.NVIDIA, keys.NVIDIA_NO_EFFECT)
    if diff:
        yield _f("VGM012", WARNING, subject,
                 f"nvidia differs in {', '.join(diff)} between {_name(target.key)} (read by Volcano) and "
                 f"{_name(plugin_key)} (read by the vGPU device plugin): the plugin registers GPUs under one "
                 "setting and Volcano books them under the other")


def _memory(template: Mapping[str, Any]) -> float:
    memory = template.get("memory")
    return float(memory) if isinstance(memory, int | float) and not isinstance(memory, bool) else float("inf")


def _vnpu_entries(payload: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    raw = payload.get("vnpus")
    entries = raw.get("configs") if isinstance(raw, Mapping) else raw
    found: dict[str, Mapping[str, Any]] = {}
    for entry in entries if isinstance(entries, list) else []:
        entry = as_map(entry)
        templates = [as_map(t) for t in entry.get("templates") or [] if isinstance(t, Mapping)]
        ordered = sorted(templates, key=_memory)  # Volcano sorts templates by memory at load
        found.setdefault(str(entry.get("commonWord")), {**entry, "templates": ordered})
    return found


def _ascend_plugin_keys(ctx: DoctorContext) -> list[tuple[CMKey, str]]:
    plugins = [c for c in components(ctx.snapshot) if c.name == ASCEND_PLUGIN]
    found = [(k, f"mounted by {c.kind} {c.namespace}/{c.object_name}") for c in plugins
             for k in _device_configs_of(ctx, c)]
    default = (spec.DEVICE_CONFIGMAP_NAMESPACE, spec.ASCEND_DEVICE_CONFIGMAP)
    if not plugins and default in ctx.snapshot.configmaps:
        found.append((default, "the Ascend device plugin's default"))
    return list(dict.fromkeys(found))


def _vnpus_agree(ctx: DoctorContext, target: _Target, volcano: Mapping[str, Any]) -> Iterator[Finding]:
    mine = _vnpu_entries(volcano)
    for key, how in _ascend_plugin_keys(ctx):
        plugin = _payload(ctx.snapshot.configmaps.get(key))
        if key == target.key or plugin is None:
            continue
        theirs = _vnpu_entries(plugin)
        diffs = [f"{word}.{k}" for word in mine if word in theirs
                 for k in _differing(mine[word], theirs[word], keys.VNPU) if k in keys.VNPU]
        for side, words in ((target.key, [w for w in mine if w not in theirs]),
                            (key, [w for w in theirs if w not in mine])):
            diffs += [f"only in {_name(side)}: {', '.join(words)}"] if words else []
        if diffs:
            yield _f("VGM012", WARNING, target.at("vnpus"),
                     f"vnpus differs between {_name(target.key)} (read by Volcano) and {_name(key)} ({how}): "
                     f"{', '.join(diffs)}; the plugin registers chips and templates that Volcano books differently")


@check("device-config.plugins-agree", CAT, "VGM012", "Volcano and the device plugins read the same device config",
       needs=(LOADABLE,), reads=("configmaps",))
def plugins_agree(ctx: DoctorContext) -> Iterator[Finding]:
    target, args = _target(ctx), ctx.snapshot.deviceshare
    volcano = _payload(target.obj)
    if volcano is None or not has_device_config(_version(ctx)):
        return  # absent: VGM001; unreadable: VGM002
    if args.vgpu:
        yield from _nvidia_agree(ctx, target, volcano)
    if args.ascend_hami:
        yield from _vnpus_agree(ctx, target, volcano)


# --- VGM013: MIG models against the GPUs the nodes register ---------------------------------------


def _volcano_config(ctx: DoctorContext) -> DeviceConfig | None:
    """The config Volcano runs on, or None when it runs on its defaults (absent, unparseable, wrong form)."""
    version, payload = _version(ctx), _payload(_target(ctx).obj)
    if payload is None or not has_device_config(version):
        return None
    config = parse_device_config(payload).config
    if config is None or (_form(payload) == "wrapper" and not accepts_vnpus_wrapper(version)):
        return None
    return config


@check("device-config.mig-models", CAT, "VGM013", "Every MIG model matches a GPU some node registers",
       needs=(LOADABLE, PARSES), reads=("configmaps", "nodes"))
def mig_models(ctx: DoctorContext) -> Iterator[Finding]:
    config = _volcano_config(ctx)
    devices = [d for n in ctx.snapshot.nodes for d in n.devices if d.family is spec.Family.VGPU]
    if config is None or not any(d.mode == "mig" for d in devices):
        return
    types = sorted({d.type for d in devices})
    orphans = sorted({d.type for d in devices if d.mode == "mig" and config.nvidia.geometry_for(d.type) is None})
    target, guesses = _target(ctx), {t.rsplit(" ", 1)[-1]: t for t in orphans}  # "NVIDIA-NVIDIA A30" → "A30"
    for index, geometry in enumerate(config.nvidia.known_mig_geometries):
        if any(geometry.matches(t) for t in types):
            continue
        close = [g for m in geometry.models for g in difflib.get_close_matches(m, list(guesses), n=1, cutoff=0.6)]
        mean = f"; did you mean {close[0]!r} (mig GPU type {guesses[close[0]]!r})?" if close else ""
        shown = ", ".join(repr(t) for t in types[:4]) + (", …" if len(types) > 4 else "")
        yield _f("VGM013", WARNING, target.at(f"nvidia.knownMigGeometries[{index}].models"),
                 f"no node's GPU type contains any of {', '.join(repr(m) for m in geometry.models)} (types: "
                 f"{shown}): Volcano never uses this geometry{mean}")
