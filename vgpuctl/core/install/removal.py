"""`vgpuctl uninstall` planned as data: take back what install changed, following install's own records.

What install did is known from what it wrote, never from a label alone: the scheduler ConfigMap's edits
from its record annotation (`vgpuctl.io/installed`, `scheduler_edit.py`), the device ConfigMap from the same
annotation on it (`devconf`: deleted when install created it, else only the sections it added), a backup
from `vgpuctl.io/backup-of` (kept), and the device plugins' objects from their names — those install's
manifests give them — together with install's label (an object of that name without it was there before
and is kept). `app.kubernetes.io/managed-by: vgpuctl` alone was also written by `geometry merge` before
it stopped labelling its output: such a ConfigMap is left as it is. The webhook's objects are taken back
by `webhook.removal_plan` on the same principle.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.install.devconf import plan_device_config_removal
from vgpuctl.core.install.plan import (
    ADDED_LABELS,
    BACKUP_OF,
    SCHEDULER_CM,
    Action,
    ClusterState,
    Method,
    Plan,
    Ref,
    Step,
    annotations_of,
    backup_step,
    config_hash,
    detect_volcano,
    labels_of,
    owned,
    ref_of,
    restart_step,
    scheduler_step,
    scheduler_text,
    unified,
)
from vgpuctl.core.install.plugins import every_plugin_object
from vgpuctl.core.install.scheduler_edit import RECORD_ANNOTATION, parse_record, plan_uninstall
from vgpuctl.core.selector import node_labels
from vgpuctl.core.versions import NEWEST_VOLCANO


def replan_scheduler_uninstall(cm: Mapping[str, Any]) -> Step:
    _, text = scheduler_text(ClusterState({SCHEDULER_CM: cm}))
    edit = plan_uninstall(text, parse_record(annotations_of(cm).get(RECORD_ANNOTATION)))
    return scheduler_step(cm, text, edit, "after uninstall")


NOT_INSTALLED = ("labelled managed-by vgpuctl but not created by install (no record of it, e.g. written by "
                 "`vgpuctl geometry merge` before it stopped labelling its output): left as it is")


def install_refs() -> frozenset[Ref]:
    """The objects install creates under a name of its own (the device plugins' manifests): uninstall deletes
    one of these when it carries install's label. The device ConfigMap is install's only by its record
    (`vgpuctl.io/installed`), the scheduler ConfigMap's edits by theirs, a backup by `vgpuctl.io/backup-of`;
    a label alone, which other tools (and older `geometry merge`) also write, never makes an object install's."""
    return frozenset(ref_of(obj) for obj in every_plugin_object())

def plan_removal(state: ClusterState, *, now: datetime, restart: bool = True) -> Plan:
    """Everything `vgpuctl uninstall` would do: take back the scheduler edits, delete what vgpuctl created."""
    notes: list[str] = []
    cm, text = scheduler_text(state)
    record = parse_record(annotations_of(cm).get(RECORD_ANNOTATION))
    edit = plan_uninstall(text, record)
    notes += edit.notes
    steps: list[Step] = []
    sched = scheduler_step(cm, text, edit, "after uninstall")
    if sched.writes:
        steps.append(backup_step(cm, now))
    steps.append(sched)

    device_changed = False
    device_payload = ""
    ours = install_refs()
    for ref in sorted(r for r in state.objects if r.kind == "ConfigMap" and r != SCHEDULER_CM):
        current = state.objects[ref]
        if labels_of(current).get(BACKUP_OF):
            continue
        if RECORD_ANNOTATION in annotations_of(current):
            action, desired, more = plan_device_config_removal(current)
            notes += more
            is_target = (ref.name, ref.namespace) == (edit.before.geometries_cm_name,
                                                      edit.before.geometries_cm_namespace)
            if action == "delete":
                steps.append(Step(ref, Action.DELETE, Method.DELETE, None, unified(ref, current.get("data"), None)))
                device_changed = device_changed or is_target
            elif action == "update" and desired is not None:
                steps.append(Step(ref, Action.UPDATE, Method.REPLACE, desired,
                                  unified(ref, current.get("data"), desired.get("data"))))
                device_changed = device_changed or is_target
                device_payload = str((desired.get("data") or {}).get(spec.DEVICE_CONFIG_KEY, ""))
        elif owned(current) and ref in ours:
            steps.append(Step(ref, Action.DELETE, Method.DELETE, None, unified(ref, current.get("data"), None)))
        elif owned(current):
            steps.append(Step(ref, Action.KEEP, Method.NONE, note=NOT_INSTALLED))
    for ref in sorted(r for r in state.objects if r.kind != "ConfigMap"):
        if owned(state.objects[ref]) and ref in ours:
            steps.append(Step(ref, Action.DELETE, Method.DELETE, None, f"delete {ref}\n"))
    for node in state.nodes:
        added = [k for k in str(annotations_of(node).get(ADDED_LABELS, "")).split(",") if k]
        if not added:
            continue
        name = str((node.get("metadata") or {}).get("name"))
        ref = Ref("v1", "Node", None, name)
        patch = {"metadata": {"labels": dict.fromkeys(added), "annotations": {ADDED_LABELS: None}}}
        steps.append(Step(ref, Action.UPDATE, Method.MERGE, patch,
                          unified(ref, {"labels": {k: node_labels(node).get(k) for k in added}}, {"labels": {}}),
                          note=f"remove the label(s) vgpuctl added: {', '.join(added)}"))
    if edit.registration_changed or device_changed:
        step, note = restart_step(state, config_hash(edit.after, device_payload), True, now, restart)
        if step is not None:
            steps.append(step)
        if note:
            notes.append(note)
    if record is not None:
        notes.append(f"backups ({spec.SCHEDULER_CONFIGMAP}-backup-*) are kept; delete them when no longer needed")
    return Plan(tuple(steps), tuple(notes), detect_volcano(state) or NEWEST_VOLCANO)
