"""Turn device sharing on in `volcano-scheduler.conf`, and off again, touching nothing else.

Install edits the parsed YAML structure (yaml.v2 and PyYAML both read YAML 1.1 the same way for this
file) and re-emits it: every action, tier, plugin, argument and configuration it does not need to touch
is carried over as it was. What it changes is recorded (`Record`, kept as JSON in the ConfigMap
annotation `vgpuctl.io/installed`) with the value each key had before, so `uninstall` can take back
exactly that — and leaves alone anything an admin changed after the install. Values are written with
the types Volcano reads (docs/volcano.md#argument-parsing): real YAML bools, an int `ScheduleWeight`, strings for the
rest, and
`init-params` arguments as strings (they are decoded as `map[string]string`).

Planning against a config that already has everything changes nothing and returns the original text,
so a rerun writes nothing.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from vgpuctl.core import spec
from vgpuctl.core.install.modes import DEVICE_CONFIG_MODES, InstallError, Mode
from vgpuctl.core.safeyaml import InputError, load
from vgpuctl.core.scheduler_config import DeviceshareArgs, PluginConf, deviceshare_args, get_bool, get_int
from vgpuctl.core.versions import Version, has_device_config

RECORD_ANNOTATION = "vgpuctl.io/installed"
RECORD_VERSION = 1
DEFAULT_WEIGHT = 10
INIT_PARAMS = "init-params"
PRESET_VIRTUAL_DEVICE = "presetVirtualDevice"

Record = dict[str, Any]


@dataclass(frozen=True, slots=True)
class SchedulerOptions:
    modes: tuple[Mode, ...]
    version: Version
    policy: str | None = None
    weight: int | None = None
    geometry_name: str = spec.DEVICE_CONFIGMAP
    geometry_namespace: str = spec.DEVICE_CONFIGMAP_NAMESPACE


@dataclass(frozen=True, slots=True)
class SchedulerEdit:
    text: str  # the new volcano-scheduler.conf; the original text itself when nothing changed
    changed: bool
    record: Record | None  # the record to store (None: remove the annotation)
    registration_changed: bool  # enable flags or the device ConfigMap's name changed: needs a restart
    before: DeviceshareArgs
    after: DeviceshareArgs
    notes: tuple[str, ...] = field(default=())


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def load_conf(text: str) -> dict[str, Any]:
    """The raw structure of a scheduler config, checked to be one install can edit safely."""
    try:
        raw = load(text) if text.strip() else {}
    except InputError as exc:
        raise InstallError(f"{spec.SCHEDULER_CONF_KEY}: {exc}; fix it first") from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise InstallError(f"{spec.SCHEDULER_CONF_KEY} is not a YAML mapping; fix it first")
    tiers = raw.get("tiers")
    if tiers is not None and not isinstance(tiers, list):
        raise InstallError(f"{spec.SCHEDULER_CONF_KEY}: tiers is not a list; fix it first")
    for index, tier in enumerate(tiers or []):
        if not isinstance(tier, dict) or not isinstance(tier.get("plugins", []), list):
            raise InstallError(f"{spec.SCHEDULER_CONF_KEY}: tiers[{index}] has no plugins list; fix it first")
    configurations = raw.get("configurations")
    if configurations is not None and not isinstance(configurations, list):
        raise InstallError(f"{spec.SCHEDULER_CONF_KEY}: configurations is not a list; fix it first")
    return raw


def dump_conf(conf: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(conf), sort_keys=False, default_flow_style=False, allow_unicode=True, width=120)


def _tiers(conf: dict[str, Any]) -> list[dict[str, Any]]:
    return conf.get("tiers") or []


def _find_plugin(conf: dict[str, Any], name: str) -> tuple[int, int] | None:
    """(tier, position) of the first plugin called `name` — the one Volcano's lookup finds."""
    for t, tier in enumerate(_tiers(conf)):
        for p, entry in enumerate(tier.get("plugins") or []):
            if isinstance(entry, dict) and entry.get("name") == name:
                return t, p
    return None


def _plugin(conf: dict[str, Any], name: str) -> dict[str, Any] | None:
    where = _find_plugin(conf, name)
    return _tiers(conf)[where[0]]["plugins"][where[1]] if where else None


def args_of(conf: dict[str, Any]) -> DeviceshareArgs:
    entry = _plugin(conf, spec.PLUGIN_DEVICESHARE)
    if entry is None:
        return deviceshare_args(None)
    arguments = entry.get("arguments")
    return deviceshare_args(PluginConf(spec.PLUGIN_DEVICESHARE, 0, arguments if isinstance(arguments, Mapping) else {}))


def registration_key(args: DeviceshareArgs) -> tuple[Any, ...]:
    """What the scheduler reads once per process (docs/volcano.md#architecture): the families it registers and the
    device ConfigMap."""
    return (tuple(sorted(f.value for f in args.families)), args.geometries_cm_name, args.geometries_cm_namespace)


def parse_record(text: str | None) -> Record | None:
    if not text:
        return None
    try:
        record = json.loads(text)
    except ValueError:
        raise InstallError(f"the annotation {RECORD_ANNOTATION} on {spec.SCHEDULER_CONFIGMAP} is not JSON; "
                           "remove it or restore the configuration from a backup ConfigMap") from None
    if not isinstance(record, dict) or record.get("v") != RECORD_VERSION:
        raise InstallError(f"the annotation {RECORD_ANNOTATION} on {spec.SCHEDULER_CONFIGMAP} was not written by "
                           "this vgpuctl version")
    return record


def dump_record(record: Record) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


class _Editor:
    """One install pass over a config, writing into `record` what it changes (first `previous` wins)."""

    def __init__(self, conf: dict[str, Any], record: Record | None) -> None:
        self.conf = conf
        self.record: Record = copy.deepcopy(record) if record else {"v": RECORD_VERSION}
        self.changed = False
        self.notes: list[str] = []

    def flag(self, *path: str) -> None:
        node = self.record
        for key in path[:-1]:
            node = node.setdefault(key, {})
        node.setdefault(path[-1], True)
        self.changed = True

    def container_created(self, name: str, previous: Any, present: bool) -> None:
        created = self.record.setdefault("created", {})
        if name not in created:
            created[name] = {"previous": previous} if present else {}
        self.changed = True

    def set_value(self, section: str, mapping: dict[str, Any], key: str, value: Any) -> None:
        entries = self.record.setdefault(section, {})
        entry = entries.get(key)
        if entry is None:
            entry = {"previous": mapping[key]} if key in mapping else {}
            entries[key] = entry
        entry["value"] = value
        mapping[key] = value
        self.changed = True

    # --- plugins ----------------------------------------------------------------------------------
    def ensure_tier(self) -> int:
        """The tier device sharing goes into: predicates' tier, else the last one, else a new one."""
        where = _find_plugin(self.conf, spec.PLUGIN_PREDICATES)
        if where is not None:
            return where[0]
        tiers = _tiers(self.conf)
        if tiers:
            return len(tiers) - 1
        if not isinstance(self.conf.get("tiers"), list):
            self.container_created("tiers", self.conf.get("tiers"), "tiers" in self.conf)
            self.conf["tiers"] = []
        self.conf["tiers"].append({"plugins": []})
        self.record["tierAdded"] = len(self.conf["tiers"]) - 1
        self.changed = True
        return len(self.conf["tiers"]) - 1

    def ensure_plugins(self) -> dict[str, Any]:
        """The deviceshare entry (added after predicates when absent), with predicates added before it."""
        if _find_plugin(self.conf, spec.PLUGIN_DEVICESHARE) is None:
            t = self.ensure_tier()
            plugins = _tiers(self.conf)[t].setdefault("plugins", [])
            after = _find_plugin(self.conf, spec.PLUGIN_PREDICATES)
            position = after[1] + 1 if after is not None and after[0] == t else len(plugins)
            plugins.insert(position, {"name": spec.PLUGIN_DEVICESHARE, "arguments": {}})
            self.flag("plugins", spec.PLUGIN_DEVICESHARE, "added")
        t, p = _find_plugin(self.conf, spec.PLUGIN_DEVICESHARE) or (0, 0)
        if _find_plugin(self.conf, spec.PLUGIN_PREDICATES) is None:
            _tiers(self.conf)[t]["plugins"].insert(p, {"name": spec.PLUGIN_PREDICATES})
            self.flag("plugins", spec.PLUGIN_PREDICATES, "added")
            self.notes.append("added the predicates plugin: it is what writes the device allocation annotations")
        entry = _plugin(self.conf, spec.PLUGIN_DEVICESHARE)
        assert entry is not None
        arguments = entry.get("arguments")
        if arguments is None:
            self.container_created("deviceshare.arguments", None, "arguments" in entry)
            entry["arguments"] = {}
        elif not isinstance(arguments, dict):
            raise InstallError("the deviceshare plugin's arguments are not a mapping; fix them first")
        return entry

    # --- arguments --------------------------------------------------------------------------------
    def ensure_args(self, options: SchedulerOptions) -> None:
        entry = self.ensure_plugins()
        args: dict[str, Any] = entry["arguments"]
        for mode in options.modes:
            if mode.enable_arg not in args or get_bool(args[mode.enable_arg])[0] is not True:
                self.set_value("arguments", args, mode.enable_arg, True)
        if options.policy is not None and args.get(spec.ARG_SCHEDULE_POLICY) != options.policy:
            self.set_value("arguments", args, spec.ARG_SCHEDULE_POLICY, options.policy)
        current_weight = get_int(args[spec.ARG_SCHEDULE_WEIGHT])[0] if spec.ARG_SCHEDULE_WEIGHT in args else None
        if options.weight is not None:
            if current_weight != options.weight or not isinstance(args.get(spec.ARG_SCHEDULE_WEIGHT), int):
                self.set_value("arguments", args, spec.ARG_SCHEDULE_WEIGHT, options.weight)
        elif not current_weight or current_weight <= 0:
            self.set_value("arguments", args, spec.ARG_SCHEDULE_WEIGHT, DEFAULT_WEIGHT)
            self.notes.append(f"set {spec.ARG_SCHEDULE_WEIGHT}: {DEFAULT_WEIGHT} (with 0 Volcano scores no node by "
                              "its devices); pass --weight to choose")
        if DEVICE_CONFIG_MODES.intersection(options.modes) and has_device_config(options.version):
            for key, value in ((spec.ARG_KNOWN_GEOMETRIES_CM_NAME, options.geometry_name),
                               (spec.ARG_KNOWN_GEOMETRIES_CM_NAMESPACE, options.geometry_namespace)):
                if not isinstance(args.get(key), str) or not args[key]:
                    self.set_value("arguments", args, key, value)

    def ensure_mindcluster(self) -> None:
        configurations = self.conf.get("configurations")
        if not isinstance(configurations, list):
            self.container_created("configurations", configurations, "configurations" in self.conf)
            configurations = self.conf["configurations"] = []
        entry = next((c for c in configurations if isinstance(c, dict) and c.get("name") == INIT_PARAMS), None)
        if entry is None:
            configurations.append({"name": INIT_PARAMS, "arguments": {PRESET_VIRTUAL_DEVICE: "false"}})
            self.flag("initParams", "added")
            return
        arguments = entry.get("arguments")
        if not isinstance(arguments, dict):
            if arguments is not None:
                raise InstallError(f"configurations[{INIT_PARAMS}].arguments is not a mapping; fix it first")
            self.container_created("init-params.arguments", None, "arguments" in entry)
            arguments = entry["arguments"] = {}
        if arguments.get(PRESET_VIRTUAL_DEVICE) != "false":
            self.set_value("initParams", arguments, PRESET_VIRTUAL_DEVICE, "false")
            self.notes.append(f"set configurations[{INIT_PARAMS}].{PRESET_VIRTUAL_DEVICE}: \"false\" (dynamic vNPU "
                              "needs it)")


def plan_install(text: str, options: SchedulerOptions, record: Record | None = None) -> SchedulerEdit:
    """The scheduler config with device sharing on for `options.modes` (see the module docstring)."""
    original = load_conf(text)
    conf = copy.deepcopy(original)
    before = args_of(original)
    editor = _Editor(conf, record)
    editor.ensure_args(options)
    if Mode.VNPU_MINDCLUSTER in options.modes:
        editor.ensure_mindcluster()
    if not editor.changed or _canon(conf) == _canon(original):
        return SchedulerEdit(text, False, record, False, before, before)
    after = args_of(conf)
    registration_changed = registration_key(before) != registration_key(after)
    if registration_changed:
        editor.record["restartRequested"] = True
    return SchedulerEdit(dump_conf(conf), True, editor.record, registration_changed, before, after,
                         tuple(editor.notes))


# --- uninstall -------------------------------------------------------------------------------------

def _restore(section: Mapping[str, Any], mapping: dict[str, Any], where: str, notes: list[str]) -> None:
    for key, entry in section.items():
        if not isinstance(entry, dict) or "value" not in entry:
            continue
        if key not in mapping or _canon(mapping[key]) != _canon(entry["value"]):
            shown = repr(mapping[key]) if key in mapping else "absent"
            notes.append(f"left {where}{key} as it is ({shown}): it changed after vgpuctl set it")
            continue
        if "previous" in entry:
            mapping[key] = entry["previous"]
        else:
            del mapping[key]


def _restore_container(parent: dict[str, Any], key: str, created: Mapping[str, Any] | None) -> None:
    """Put back a container install created, if it is empty again."""
    if created is None or key not in parent or parent[key] not in ({}, [], None):
        return
    if "previous" in created:
        parent[key] = created["previous"]
    else:
        del parent[key]


def plan_uninstall(text: str, record: Record | None) -> SchedulerEdit:
    """Take back what `record` says install changed, where it is still as install left it."""
    original = load_conf(text)
    before = args_of(original)
    if record is None:
        return SchedulerEdit(text, False, None, False, before, before,
                             (f"{spec.SCHEDULER_CONFIGMAP} has no {RECORD_ANNOTATION} annotation: vgpuctl changed "
                              "nothing there, so nothing is taken back",))
    conf = copy.deepcopy(original)
    notes: list[str] = []
    created: Mapping[str, Any] = record.get("created", {})
    plugins_record: Mapping[str, Any] = record.get("plugins", {})

    configurations = conf.get("configurations")
    if isinstance(configurations, list):
        index = next((i for i, c in enumerate(configurations)
                      if isinstance(c, dict) and c.get("name") == INIT_PARAMS), None)
        if index is not None:
            entry = configurations[index]
            arguments = entry.get("arguments")
            if isinstance(arguments, dict) and record.get("initParams", {}).get("added"):
                if arguments == {PRESET_VIRTUAL_DEVICE: "false"} and set(entry) == {"name", "arguments"}:
                    del configurations[index]
                else:
                    notes.append(f"kept configurations[{INIT_PARAMS}]: it has settings vgpuctl did not add")
            elif isinstance(arguments, dict):
                _restore({k: v for k, v in record.get("initParams", {}).items() if k != "added"}, arguments,
                         f"configurations[{INIT_PARAMS}].", notes)
                _restore_container(entry, "arguments", created.get("init-params.arguments"))
        _restore_container(conf, "configurations", created.get("configurations"))

    entry = _plugin(conf, spec.PLUGIN_DEVICESHARE)
    if entry is not None:
        arguments = entry.get("arguments")
        if isinstance(arguments, dict):
            _restore(record.get("arguments", {}), arguments, "", notes)
        if plugins_record.get(spec.PLUGIN_DEVICESHARE, {}).get("added"):
            if not entry.get("arguments") and set(entry) <= {"name", "arguments"}:
                t, p = _find_plugin(conf, spec.PLUGIN_DEVICESHARE) or (0, 0)
                del _tiers(conf)[t]["plugins"][p]
            else:
                notes.append("kept the deviceshare plugin: it has arguments vgpuctl did not set")
        else:
            _restore_container(entry, "arguments", created.get("deviceshare.arguments"))
    if plugins_record.get(spec.PLUGIN_PREDICATES, {}).get("added"):
        where = _find_plugin(conf, spec.PLUGIN_PREDICATES)
        if where is not None and _tiers(conf)[where[0]]["plugins"][where[1]] == {"name": spec.PLUGIN_PREDICATES}:
            del _tiers(conf)[where[0]]["plugins"][where[1]]
    tier_added = record.get("tierAdded")
    tiers = _tiers(conf)
    if isinstance(tier_added, int) and tier_added < len(tiers) and tiers[tier_added] == {"plugins": []}:
        del tiers[tier_added]
    _restore_container(conf, "tiers", created.get("tiers"))

    after = args_of(conf)
    if _canon(conf) == _canon(original):
        return SchedulerEdit(text, False, None, False, before, after, tuple(notes))
    return SchedulerEdit(dump_conf(conf), True, None, registration_key(before) != registration_key(after),
                         before, after, tuple(notes))


__all__ = ["RECORD_ANNOTATION", "SchedulerEdit", "SchedulerOptions", "dump_record",
           "parse_record", "plan_install", "plan_uninstall"]
