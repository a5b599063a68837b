"""The Volcano scheduler configuration (`volcano-scheduler.conf`) as the scheduler itself reads it.

Volcano parses the file with yaml.v2 into `map[string]interface{}` and reads plugin arguments with
`GetBool` (a real bool, or a string Go's `strconv.ParseBool` accepts), `GetInt` (only a real int) and
`GetString` (only a string); anything else is ignored with a log line and the default stays
(docs/volcano.md#argument-parsing).
This module reproduces exactly that, so the doctor and the cluster model know which device families
are really on and which ConfigMap holds the device config — and can say why a setting is silently off.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core import spec

# Go strconv.ParseBool: the only strings that mean a bool.
GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})
GO_FALSE = frozenset({"0", "f", "F", "FALSE", "false", "False"})

BOOL_ARGS = (
    spec.ARG_GPU_SHARING_ENABLE,
    spec.ARG_GPU_NUMBER_ENABLE,
    spec.ARG_VGPU_ENABLE,
    spec.ARG_NODE_LOCK_ENABLE,
    spec.ARG_ASCEND_MINDCLUSTER_ENABLE,
    spec.ARG_ASCEND_HAMI_ENABLE,
)
STRING_ARGS = (spec.ARG_SCHEDULE_POLICY, spec.ARG_KNOWN_GEOMETRIES_CM_NAME, spec.ARG_KNOWN_GEOMETRIES_CM_NAMESPACE)
INT_ARGS = (spec.ARG_SCHEDULE_WEIGHT,)


@dataclass(frozen=True, slots=True)
class PluginConf:
    name: str
    tier: int
    arguments: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class SchedulerConf:
    actions: tuple[str, ...]
    plugins: tuple[PluginConf, ...]
    configurations: tuple[Mapping[str, Any], ...] = ()

    def plugin(self, name: str) -> PluginConf | None:
        return next((p for p in self.plugins if p.name == name), None)

    def configuration(self, name: str) -> Mapping[str, Any] | None:
        return next((c for c in self.configurations if c.get("name") == name), None)


@dataclass(frozen=True, slots=True)
class ArgIssue:
    """An argument Volcano ignores (wrong type, unparseable bool) — it keeps the default instead."""

    key: str
    value: Any
    reason: str


@dataclass(frozen=True, slots=True)
class DeviceshareArgs:
    gpu_sharing: bool = False
    gpu_number: bool = False
    vgpu: bool = False
    node_lock: bool = False
    ascend_mindcluster: bool = False
    ascend_hami: bool = False
    schedule_policy: str = ""
    schedule_weight: int = 0
    geometries_cm_name: str = spec.DEVICE_CONFIGMAP
    geometries_cm_namespace: str = spec.DEVICE_CONFIGMAP_NAMESPACE
    exclusive_rules: Any = None
    issues: tuple[ArgIssue, ...] = field(default=())
    unknown_keys: tuple[str, ...] = ()

    @property
    def families(self) -> frozenset[spec.Family]:
        on = {
            spec.Family.GPUSHARE: self.gpu_sharing,
            spec.Family.GPUNUMBER: self.gpu_number,
            spec.Family.VGPU: self.vgpu,
            spec.Family.ASCEND_MINDCLUSTER: self.ascend_mindcluster,
            spec.Family.ASCEND_HAMI: self.ascend_hami,
        }
        return frozenset(f for f, enabled in on.items() if enabled)


class SchedulerConfError(ValueError):
    pass


def parse_scheduler_conf(text: str) -> SchedulerConf:
    """Parse `volcano-scheduler.conf`; raises SchedulerConfError when Volcano could not load it either."""
    from vgpuctl.core.safeyaml import InputError, load

    try:
        raw = load(text)
    except InputError as exc:
        raise SchedulerConfError(str(exc)) from exc
    if raw is None:
        raw = {}
    if not isinstance(raw, Mapping):
        raise SchedulerConfError("the configuration is not a YAML mapping")
    actions_raw = raw.get("actions", "")
    actions = tuple(a.strip() for a in str(actions_raw).split(",") if a.strip()) if actions_raw else ()
    plugins: list[PluginConf] = []
    tiers = raw.get("tiers") or []
    if not isinstance(tiers, list):
        raise SchedulerConfError("tiers is not a list")
    for tier_index, tier in enumerate(tiers):
        entries = tier.get("plugins") if isinstance(tier, Mapping) else None
        for entry in entries if isinstance(entries, list) else []:
            if isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
                args = entry.get("arguments")
                plugins.append(PluginConf(entry["name"], tier_index, args if isinstance(args, Mapping) else {}))
    configurations = tuple(c for c in raw.get("configurations") or [] if isinstance(c, Mapping))
    return SchedulerConf(actions, tuple(plugins), configurations)


def get_bool(value: Any) -> tuple[bool | None, str]:
    """Volcano's GetBool: (value, "") when read, (None, why) when ignored."""
    if isinstance(value, bool):
        return value, ""
    if isinstance(value, str):
        if value in GO_TRUE:
            return True, ""
        if value in GO_FALSE:
            return False, ""
        return None, f"{value!r} is not a boolean Go's ParseBool accepts, so it is ignored (false)"
    return None, f"{value!r} is not a boolean, so it is ignored (false)"


def get_bool_strict(value: Any) -> tuple[bool | None, str]:
    """Volcano < 1.15's `Arguments.GetBool` (`pkg/scheduler/framework/arguments.go`): only a real boolean; anything
    else, a quoted `"true"` included, is ignored with a log line and the default stays."""
    if isinstance(value, bool):
        return value, ""
    return None, f"{value!r} is not an unquoted boolean, so Volcano before 1.15 ignores it (false)"


def get_int(value: Any) -> tuple[int | None, str]:
    if isinstance(value, int) and not isinstance(value, bool):
        return value, ""
    if isinstance(value, str):
        return None, f"{value!r} is a quoted string; Volcano reads only an unquoted integer, so it stays 0"
    return None, f"{value!r} is not an integer; Volcano reads only an unquoted integer, so it stays 0"


def deviceshare_args(plugin: PluginConf | None) -> DeviceshareArgs:
    """The `deviceshare` arguments as the plugin reads them; absent plugin → everything off."""
    if plugin is None:
        return DeviceshareArgs()
    args = plugin.arguments
    issues: list[ArgIssue] = []
    values: dict[str, Any] = {}
    typed: tuple[tuple[Iterable[str], Callable[[Any], tuple[Any, str]]], ...] = ((BOOL_ARGS, get_bool),
                                                                              (INT_ARGS, get_int))
    for keys, read in typed:
        for key in keys:
            if key in args:
                value, why = read(args[key])
                if value is None:
                    issues.append(ArgIssue(key, args[key], why))
                else:
                    values[key] = value
    for key in STRING_ARGS:
        if key in args:
            if isinstance(args[key], str):
                values[key] = args[key]
            else:
                issues.append(ArgIssue(key, args[key], f"{args[key]!r} is not a string, so it is ignored"))
    unknown = tuple(k for k in args if isinstance(k, str) and k.startswith("deviceshare.")
                    and k not in spec.DEVICESHARE_ARGS)
    return DeviceshareArgs(
        gpu_sharing=values.get(spec.ARG_GPU_SHARING_ENABLE, False),
        gpu_number=values.get(spec.ARG_GPU_NUMBER_ENABLE, False),
        vgpu=values.get(spec.ARG_VGPU_ENABLE, False),
        node_lock=values.get(spec.ARG_NODE_LOCK_ENABLE, False),
        ascend_mindcluster=values.get(spec.ARG_ASCEND_MINDCLUSTER_ENABLE, False),
        ascend_hami=values.get(spec.ARG_ASCEND_HAMI_ENABLE, False),
        schedule_policy=values.get(spec.ARG_SCHEDULE_POLICY, ""),
        schedule_weight=values.get(spec.ARG_SCHEDULE_WEIGHT, 0),
        # An empty string is what Volcano would use too (it only defaults when the key is absent).
        geometries_cm_name=values.get(spec.ARG_KNOWN_GEOMETRIES_CM_NAME, spec.DEVICE_CONFIGMAP),
        geometries_cm_namespace=values.get(spec.ARG_KNOWN_GEOMETRIES_CM_NAMESPACE, spec.DEVICE_CONFIGMAP_NAMESPACE),
        exclusive_rules=args.get(spec.ARG_GPU_EXCLUSIVE_RULES),
        issues=tuple(issues),
        unknown_keys=unknown,
    )
