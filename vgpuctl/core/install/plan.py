"""An install or uninstall as an ordered list of steps: object, action, how to write it, and a diff.

The planner is pure: it gets the objects the writer read (`ClusterState`) and returns a `Plan`. The
writer applies the steps in order and stops at the first failure, so the order is chosen to leave a
cluster usable at every point: device ConfigMap, then the plugins, then node labels, and only then the
scheduler config (after a backup of it), and last the scheduler restart; `install --webhook` appends
the admission webhook after all that (`webhook.install_plan`: a readiness wait, then its configurations).
A step whose object already matches is `unchanged` and costs no write, which is what makes a rerun
complete an interrupted install and a second install write nothing. Uninstall's planning, which reuses
the steps defined here, is in `removal`.
"""

from __future__ import annotations

import copy
import difflib
import enum
import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import yaml

from vgpuctl.core import spec
from vgpuctl.core.doctor.components import image_parts
from vgpuctl.core.geometry.export import configmap_object as configmap
from vgpuctl.core.install.devconf import (
    MANAGED_BY,
    MANAGER,
    DeviceConfigEdit,
    plan_device_config,
)
from vgpuctl.core.install.modes import DEVICE_CONFIG_MODES, InstallError, Mode, check_modes, parse_nodes
from vgpuctl.core.install.plugins import (
    ASCEND_NODE_LABEL,
    NAMESPACE,
    choose_version,
    every_plugin_object,
    render_plugin,
)
from vgpuctl.core.install.scheduler_edit import (
    RECORD_ANNOTATION,
    SchedulerEdit,
    SchedulerOptions,
    args_of,
    dump_conf,
    dump_record,
    load_conf,
    parse_record,
    plan_install,
    registration_key,
)
from vgpuctl.core.scheduler_config import DeviceshareArgs
from vgpuctl.core.selector import Selector, node_labels
from vgpuctl.core.versions import NEWEST_VOLCANO, Version, VersionError, parse_version

ADDED_LABELS = "vgpuctl.io/added-labels"
CONFIG_HASH = "vgpuctl.io/device-config-hash"
RESTARTED_AT = "kubectl.kubernetes.io/restartedAt"
BACKUP_OF = "vgpuctl.io/backup-of"


class Action(str, enum.Enum):
    CREATE = "create"
    UPDATE = "update"
    DELETE = "delete"
    RESTART = "restart"
    UNCHANGED = "unchanged"
    KEEP = "keep"  # exists and is not vgpuctl's: left alone
    WAIT = "wait"  # no write: poll until the object is ready (the webhook Deployment before its configurations)


class Method(str, enum.Enum):
    APPLY = "apply"  # server-side apply, field manager vgpuctl (objects vgpuctl owns)
    CREATE = "create"  # POST (a ConfigMap that may already exist and then is not ours)
    REPLACE = "replace"  # PUT with the resourceVersion that was read (optimistic concurrency)
    MERGE = "merge"  # JSON merge patch (node labels, the restart annotation)
    DELETE = "delete"
    WAIT = "wait"  # GET until ready, with a deadline
    NONE = "none"


WRITES = (Action.CREATE, Action.UPDATE, Action.DELETE, Action.RESTART)


@dataclass(frozen=True, slots=True, order=True)
class Ref:
    api_version: str
    kind: str
    namespace: str | None
    name: str

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"


def ref_of(obj: Mapping[str, Any]) -> Ref:
    meta = obj.get("metadata") or {}
    return Ref(str(obj.get("apiVersion")), str(obj.get("kind")), meta.get("namespace"), str(meta.get("name")))


SCHEDULER_CM = Ref("v1", "ConfigMap", spec.SCHEDULER_NAMESPACE, spec.SCHEDULER_CONFIGMAP)


@dataclass(frozen=True, slots=True)
class Step:
    ref: Ref
    action: Action
    method: Method
    body: dict[str, Any] | None = None  # the object (apply, create, replace) or the patch (merge)
    diff: str = ""
    note: str = ""

    @property
    def writes(self) -> bool:
        return self.action in WRITES


@dataclass(frozen=True, slots=True)
class Plan:
    steps: tuple[Step, ...]
    notes: tuple[str, ...] = ()
    volcano_version: Version = NEWEST_VOLCANO

    @property
    def writes(self) -> tuple[Step, ...]:
        return tuple(s for s in self.steps if s.writes)

    @property
    def todo(self) -> tuple[Step, ...]:
        """What the writer does, in order: the writes and the readiness waits between them."""
        return tuple(s for s in self.steps if s.writes or s.action is Action.WAIT)


@dataclass(frozen=True, slots=True)
class ClusterState:
    """What the writer read: objects by reference (absent ones missing), nodes, the scheduler Deployment."""

    objects: Mapping[Ref, Mapping[str, Any]]
    nodes: Sequence[Mapping[str, Any]] = ()
    scheduler_deployment: Mapping[str, Any] | None = None

    def get(self, ref: Ref) -> Mapping[str, Any] | None:
        return self.objects.get(ref)


@dataclass(frozen=True, slots=True)
class InstallOptions:
    modes: tuple[Mode, ...]
    volcano_version: Version | None = None
    device_plugin_versions: Mapping[Mode, str] = field(default_factory=dict)
    nodes: str | None = None
    policy: str | None = None
    weight: int | None = None
    restart: bool = True


# --- rendering diffs ------------------------------------------------------------------------------

class _Dumper(yaml.SafeDumper):
    pass


def _str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _str)


def to_yaml(obj: Any) -> str:
    if obj is None:
        return ""
    return yaml.dump(obj, Dumper=_Dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=120)


def unified(ref: Ref, before: Any, after: Any, *, label_after: str = "planned") -> str:
    lines = difflib.unified_diff(to_yaml(before).splitlines(keepends=True), to_yaml(after).splitlines(keepends=True),
                                 fromfile=f"{ref} (cluster)", tofile=f"{ref} ({label_after})")
    return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


def project(current: Any, desired: Any) -> Any:
    """`current` restricted to the fields `desired` sets (what server-side apply compares and owns)."""
    if isinstance(desired, Mapping) and isinstance(current, Mapping):
        return {k: project(current[k], v) for k, v in desired.items() if k in current}
    if isinstance(desired, list) and isinstance(current, list) and len(desired) == len(current):
        return [project(c, d) for c, d in zip(current, desired, strict=True)]
    return current


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def labels_of(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


def annotations_of(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return ((obj or {}).get("metadata") or {}).get("annotations") or {}


def owned(obj: Mapping[str, Any] | None) -> bool:
    return labels_of(obj).get(MANAGED_BY) == MANAGER


def apply_step(desired: dict[str, Any], current: Mapping[str, Any] | None) -> Step:
    ref = ref_of(desired)
    if current is None:
        return Step(ref, Action.CREATE, Method.APPLY, desired, unified(ref, None, desired))
    if not owned(current):
        return Step(ref, Action.KEEP, Method.NONE, note="exists and is not managed by vgpuctl: left as it is")
    before = project(current, desired)
    if _canon(before) == _canon(desired):
        return Step(ref, Action.UNCHANGED, Method.NONE)
    return Step(ref, Action.UPDATE, Method.APPLY, desired, unified(ref, before, desired))


def create_only_step(desired: dict[str, Any], current: Mapping[str, Any] | None) -> Step:
    """A ConfigMap an admin edits (node configs): created when absent, never overwritten."""
    ref = ref_of(desired)
    if current is None:
        return Step(ref, Action.CREATE, Method.CREATE, desired, unified(ref, None, desired))
    return Step(ref, Action.UNCHANGED if owned(current) else Action.KEEP, Method.NONE)


# --- the cluster's scheduler ----------------------------------------------------------------------

def detect_volcano(state: ClusterState) -> Version | None:
    for container in ((((state.scheduler_deployment or {}).get("spec") or {}).get("template") or {})
                      .get("spec") or {}).get("containers") or []:
        name, tag = image_parts(str(container.get("image", "")))
        if name == "vc-scheduler":
            try:
                return parse_version(tag)
            except VersionError:
                return None
    return None


def scheduler_text(state: ClusterState) -> tuple[Mapping[str, Any], str]:
    cm = state.get(SCHEDULER_CM)
    if cm is None:
        raise InstallError(f"ConfigMap {spec.SCHEDULER_NAMESPACE}/{spec.SCHEDULER_CONFIGMAP} not found: is Volcano "
                           "installed? (vgpuctl doctor --pre)")
    text = (cm.get("data") or {}).get(spec.SCHEDULER_CONF_KEY)
    if not isinstance(text, str):
        raise InstallError(f"ConfigMap {spec.SCHEDULER_CONFIGMAP} has no {spec.SCHEDULER_CONF_KEY} key")
    return cm, text


def scheduler_body(cm: Mapping[str, Any], edit: SchedulerEdit) -> dict[str, Any]:
    """The scheduler ConfigMap after `edit`, keeping its resourceVersion for the conditional PUT."""
    body = copy.deepcopy(dict(cm))
    meta = body.setdefault("metadata", {})
    meta.pop("managedFields", None)
    annotations = meta.setdefault("annotations", {}) or {}
    if edit.record is None:
        annotations.pop(RECORD_ANNOTATION, None)
    else:
        annotations[RECORD_ANNOTATION] = dump_record(edit.record)
    meta["annotations"] = annotations
    body["data"] = {**(body.get("data") or {}), spec.SCHEDULER_CONF_KEY: edit.text}
    return body


def scheduler_step(cm: Mapping[str, Any], text: str, edit: SchedulerEdit, label: str) -> Step:
    if not edit.changed:
        return Step(SCHEDULER_CM, Action.UNCHANGED, Method.NONE)
    body = scheduler_body(cm, edit)
    # The record annotation is bookkeeping, not something to review: the diff shows the configuration.
    shown_before = {spec.SCHEDULER_CONF_KEY: dump_conf(load_conf(text))}
    shown_after = {spec.SCHEDULER_CONF_KEY: edit.text}
    note = (f"what vgpuctl changed is recorded in the annotation {RECORD_ANNOTATION}; comments and formatting "
            "of the original are normalised (the backup keeps the original text)")
    return Step(SCHEDULER_CM, Action.UPDATE, Method.REPLACE, body,
                unified(SCHEDULER_CM, shown_before, shown_after, label_after=label), note)


def backup_name(now: datetime, data: Mapping[str, str]) -> str:
    """`…-backup-<UTC time>-<content hash>`: two backups within one second (install, then uninstall) differ."""
    digest = hashlib.sha256(_canon(data).encode()).hexdigest()[:6]
    return f"{spec.SCHEDULER_CONFIGMAP}-backup-{now.strftime('%Y%m%d-%H%M%S')}z-{digest}"


def backup_step(cm: Mapping[str, Any], now: datetime) -> Step:
    data = {k: v for k, v in (cm.get("data") or {}).items() if isinstance(v, str)}
    backup = configmap(backup_name(now, data), spec.SCHEDULER_NAMESPACE, data,
                       labels={MANAGED_BY: MANAGER, BACKUP_OF: spec.SCHEDULER_CONFIGMAP},
                       annotations={"vgpuctl.io/backed-up-at": now.strftime("%Y-%m-%dT%H:%M:%SZ")})
    ref = ref_of(backup)
    return Step(ref, Action.CREATE, Method.CREATE, backup, "",
                note=f"a copy of {spec.SCHEDULER_CONFIGMAP} as it was before this change")


def _template_annotations(deployment: Mapping[str, Any] | None) -> Mapping[str, Any]:
    template = ((deployment or {}).get("spec") or {}).get("template") or {}
    return (template.get("metadata") or {}).get("annotations") or {}


def config_hash(args: DeviceshareArgs, device_payload: str) -> str:
    return hashlib.sha256(_canon([registration_key(args), device_payload]).encode()).hexdigest()[:16]


def restart_step(state: ClusterState, digest: str, needed: bool, now: datetime, restart: bool) -> tuple[Step | None,
                                                                                                          str | None]:
    deployment = state.scheduler_deployment
    current = _template_annotations(deployment).get(CONFIG_HASH)
    if not needed or current == digest:
        return None, None
    if not restart:
        return None, ("--no-restart: the scheduler reads the device ConfigMap and its device types once per "
                      "process; restart it yourself (vgpuctl doctor reports VGC011 until then)")
    if deployment is None:
        return None, ("no vc-scheduler Deployment found in volcano-system: restart the Volcano scheduler yourself, "
                      "it reads the device ConfigMap and its device types once per process")
    patch = {"spec": {"template": {"metadata": {"annotations": {
        CONFIG_HASH: digest, RESTARTED_AT: now.strftime("%Y-%m-%dT%H:%M:%SZ")}}}}}
    step = Step(ref_of({"apiVersion": "apps/v1", "kind": "Deployment", **deployment}), Action.RESTART, Method.MERGE,
                patch, note="rolling restart: Volcano reads device types and the device ConfigMap once per process")
    return step, None


# --- install --------------------------------------------------------------------------------------

def geometry_target(text: str, modes: Sequence[Mode]) -> tuple[str, str]:
    args = args_of(load_conf(text))
    return args.geometries_cm_name, args.geometries_cm_namespace


def refs_to_read(scheduler_cm: Mapping[str, Any] | None, modes: Sequence[Mode]) -> list[Ref]:
    """Everything install or uninstall may touch, given the scheduler ConfigMap already read."""
    refs = [Ref("v1", "ConfigMap", spec.DEVICE_CONFIGMAP_NAMESPACE, spec.DEVICE_CONFIGMAP)]
    text = ((scheduler_cm or {}).get("data") or {}).get(spec.SCHEDULER_CONF_KEY)
    if isinstance(text, str):
        try:
            name, namespace = geometry_target(text, modes)
            refs.append(Ref("v1", "ConfigMap", namespace, name))
        except InstallError:
            pass
    for obj in every_plugin_object():
        refs.append(ref_of(obj))
    return sorted(set(refs))


def _version(state: ClusterState, options: InstallOptions, notes: list[str]) -> Version:
    if options.volcano_version is not None:
        return options.volcano_version
    detected = detect_volcano(state)
    if detected is not None:
        return detected
    notes.append(f"Volcano version unknown (no vc-scheduler image seen): planning for the newest release, "
                 f"{NEWEST_VOLCANO}; pass --volcano-version to be exact")
    return NEWEST_VOLCANO


def _label_steps(state: ClusterState, selector: Selector, notes: list[str]) -> list[Step]:
    key, value = ASCEND_NODE_LABEL
    steps: list[Step] = []
    matched = [n for n in state.nodes if selector.matches(node_labels(n))]
    if not matched:
        notes.append(f"--nodes {selector.text!r} matches no node: no node is labelled {key}={value}")
    for node in matched:
        labels = node_labels(node)
        name = str((node.get("metadata") or {}).get("name"))
        ref = Ref("v1", "Node", None, name)
        if labels.get(key) == value:
            steps.append(Step(ref, Action.UNCHANGED, Method.NONE))
            continue
        added = sorted({*str(annotations_of(node).get(ADDED_LABELS, "")).split(","), key} - {""})
        patch = {"metadata": {"labels": {key: value}, "annotations": {ADDED_LABELS: ",".join(added)}}}
        before = {"labels": {key: labels[key]} if key in labels else {}}
        steps.append(Step(ref, Action.UPDATE, Method.MERGE, patch,
                          unified(ref, before, {"labels": {key: value}}), note=f"label {key}={value}"))
    return steps


def plan(state: ClusterState, options: InstallOptions, *, now: datetime) -> Plan:
    """Everything `vgpuctl install` would do to reach `options` from `state`."""
    notes: list[str] = []
    version = _version(state, options, notes)
    cm, text = scheduler_text(state)
    record = parse_record(annotations_of(cm).get(RECORD_ANNOTATION))
    modes = tuple(dict.fromkeys(options.modes))
    before_args = args_of(load_conf(text))
    check_modes(modes, before_args.families, version)
    name, namespace = geometry_target(text, modes)
    if Mode.VNPU_HAMI in modes and namespace != NAMESPACE:
        raise InstallError(f"the device ConfigMap Volcano reads is in {namespace}, but the Ascend device plugin "
                           f"runs in {NAMESPACE} and can only mount a ConfigMap of its own namespace")
    sched_edit = plan_install(text, SchedulerOptions(modes, version, options.policy, options.weight, name, namespace),
                              record)
    notes += sched_edit.notes
    steps: list[Step] = []

    device_ref = Ref("v1", "ConfigMap", namespace, name)
    device_edit = DeviceConfigEdit(None, state.get(device_ref), "")
    if DEVICE_CONFIG_MODES.intersection(modes):
        device_edit = plan_device_config(state.get(device_ref), name=name, namespace=namespace, modes=modes,
                                         version=version)
        notes += device_edit.notes
        if device_edit.desired is None:
            steps.append(Step(device_ref, Action.UNCHANGED, Method.NONE))
        elif device_edit.current is None:
            steps.append(Step(device_ref, Action.CREATE, Method.CREATE, device_edit.desired,
                              unified(device_ref, None, device_edit.desired)))
        else:
            before = {"data": dict(device_edit.current.get("data") or {}),
                      "annotations": dict(annotations_of(device_edit.current))}
            after = {"data": device_edit.desired["data"], "annotations": device_edit.desired["metadata"]["annotations"]}
            steps.append(Step(device_ref, Action.UPDATE, Method.REPLACE, device_edit.desired,
                              unified(device_ref, before, after)))

    for mode in modes:
        choice = choose_version(mode, version, options.device_plugin_versions.get(mode))
        notes.append(f"{mode.value} device plugin {choice.version}: {choice.reason}")
        rendered = render_plugin(choice, options.nodes, name, state.nodes)
        notes += rendered.notes
        for obj in rendered.objects:
            current = state.get(ref_of(obj))
            step = create_only_step(obj, current) if obj["kind"] == "ConfigMap" else apply_step(obj, current)
            steps.append(step)
        if rendered.label_nodes and options.nodes:
            steps += _label_steps(state, parse_nodes(options.nodes), notes)

    sched = scheduler_step(cm, text, sched_edit, "after install")
    if sched.writes:
        steps.append(backup_step(cm, now))
    steps.append(sched)
    digest = config_hash(sched_edit.after, device_edit.payload_text)
    # A restart an earlier run planned but did not do (it failed, or --no-restart) is still owed: the
    # records say a registration or device-config change happened, and the Deployment has no hash yet.
    owed = bool((record or {}).get("restartRequested")) or RECORD_ANNOTATION in annotations_of(device_edit.current)
    deployed = _template_annotations(state.scheduler_deployment).get(CONFIG_HASH)
    needed = sched_edit.registration_changed or device_edit.changed or deployed is not None or owed
    restart, note = restart_step(state, digest, needed, now, options.restart)
    if restart is not None:
        steps.append(restart)
    if note:
        notes.append(note)
    return Plan(tuple(steps), tuple(notes), version)


def replan_scheduler(cm: Mapping[str, Any], options: InstallOptions, version: Version) -> Step:
    """The scheduler ConfigMap step again, on a freshly read ConfigMap (after a 409)."""
    state = ClusterState({SCHEDULER_CM: cm})
    _, text = scheduler_text(state)
    record = parse_record(annotations_of(cm).get(RECORD_ANNOTATION))
    modes = tuple(dict.fromkeys(options.modes))
    check_modes(modes, args_of(load_conf(text)).families, version)
    name, namespace = geometry_target(text, modes)
    edit = plan_install(text, SchedulerOptions(modes, version, options.policy, options.weight, name, namespace),
                        record)
    return scheduler_step(cm, text, edit, "after install")
