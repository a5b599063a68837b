"""The device ConfigMap Volcano reads: create it, or add the missing section to the one that exists.

A section an admin already has (`nvidia:`, `vnpus:`) is never replaced: install only adds a section that
is absent, taking the device plugin's shipped default (`shipped_device_config.py`), through the geometry merge so the
result has the `vnpus` form the Volcano version decodes (docs/volcano.md#device-config-schema). An existing `vnpus`
keeps its form,
unless it is the wrapper and this Volcano reads only the list — then Volcano would silently fall back
to its built-ins (310P only, no MIG), so the merge rewrites it as a list and says so.

What install added is recorded in the annotation `vgpuctl.io/installed` (`{"v":1,"created":bool,
"sections":{name: hash}}`), so uninstall deletes the ConfigMap it created, or removes the sections it
added — each only while it is still exactly what install wrote; an edited one is kept, with a note.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from vgpuctl.core import spec
from vgpuctl.core.findings import Severity
from vgpuctl.core.geometry.export import configmap_object as configmap
from vgpuctl.core.geometry.merge import Prefer, merge_payloads
from vgpuctl.core.install.modes import InstallError, Mode
from vgpuctl.core.install.scheduler_edit import RECORD_ANNOTATION
from vgpuctl.core.install.shipped_device_config import default_nvidia, default_vnpus
from vgpuctl.core.safeyaml import InputError, load
from vgpuctl.core.versions import Version, accepts_vnpus_wrapper

MANAGED_BY = "app.kubernetes.io/managed-by"
MANAGER = "vgpuctl"


@dataclass(frozen=True, slots=True)
class DeviceConfigEdit:
    desired: dict[str, Any] | None  # the ConfigMap to write; None when nothing changes
    current: Mapping[str, Any] | None
    payload_text: str  # the device-config.yaml the cluster will hold afterwards ("" when none)
    notes: tuple[str, ...] = field(default=())

    @property
    def changed(self) -> bool:
        return self.desired is not None


def section_hash(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=str).encode()).hexdigest()[:16]


def dump_payload(payload: Mapping[str, Any]) -> str:
    return yaml.safe_dump(dict(payload), sort_keys=False, default_flow_style=False, allow_unicode=True, width=120)


def payload_of(cm: Mapping[str, Any] | None, where: str) -> tuple[str, dict[str, Any] | None]:
    """(text, parsed payload) of a device ConfigMap; (\"\", None) when it has no device-config.yaml."""
    data = (cm or {}).get("data") or {}
    text = data.get(spec.DEVICE_CONFIG_KEY) if isinstance(data, Mapping) else None
    if not isinstance(text, str):
        return "", None
    try:
        payload = load(text)
    except InputError as exc:
        raise InstallError(f"{where}: {spec.DEVICE_CONFIG_KEY}: {exc}; fix it first "
                           "(vgpuctl geometry validate shows where)") from None
    if payload is None:
        return text, {}
    if not isinstance(payload, dict):
        raise InstallError(f"{where}: {spec.DEVICE_CONFIG_KEY} is not a mapping; fix it first")
    return text, payload


def _annotations(obj: Mapping[str, Any] | None) -> dict[str, str]:
    annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}
    return dict(annotations) if isinstance(annotations, Mapping) else {}


def _record(cm: Mapping[str, Any] | None) -> dict[str, Any]:
    text = _annotations(cm).get(RECORD_ANNOTATION)
    try:
        record = json.loads(text) if text else {}
    except ValueError:
        record = {}
    return record if isinstance(record, dict) else {}


def plan_device_config(current: Mapping[str, Any] | None, *, name: str, namespace: str, modes: Iterable[Mode],
                       version: Version) -> DeviceConfigEdit:
    where = f"ConfigMap {namespace}/{name}"
    text, existing = payload_of(current, where)
    base = existing or {}
    wanted = set(modes)
    additions: dict[str, Any] = {}
    if Mode.VGPU in wanted and base.get("nvidia") is None:
        additions["nvidia"] = default_nvidia()
    vnpus = base.get("vnpus")
    if Mode.VNPU_HAMI in wanted and not (vnpus.get("configs") if isinstance(vnpus, Mapping) else vnpus):
        additions["vnpus"] = default_vnpus()
    wrapper_unreadable = isinstance(vnpus, Mapping) and not accepts_vnpus_wrapper(version)
    if not additions and not (wrapper_unreadable and Mode.VNPU_HAMI in wanted):
        return DeviceConfigEdit(None, current, text)
    merged = merge_payloads(base, additions, version=version, prefer=Prefer.VGPU)
    payload = dict(merged.payload)
    notes = [f"{where}: adds the {section} section (the device plugin's default)" for section in additions]
    if "vnpus" not in additions and vnpus is not None and not wrapper_unreadable:
        payload["vnpus"] = vnpus  # keep the admin's form: the Ascend plugin reading it may need exactly that
    elif wrapper_unreadable and "vnpus" not in additions:
        notes.append(f"{where}: vnpus rewritten in the list form: Volcano {version} reads only that form, and on "
                     "the wrapper it silently falls back to its built-ins (Ascend310P only, no MIG)")
    notes += [f"{where}: {f.finding.code} {f.finding.subject}: {f.finding.message}" for f in merged.findings
              if f.finding.severity is Severity.ERROR]
    record = _record(current)
    sections = dict(record.get("sections") or {})
    for section in additions:
        sections[section] = section_hash(payload[section])
    created = current is None or bool(record.get("created"))
    new_record = json.dumps({"v": 1, "created": created, "sections": sections}, sort_keys=True,
                            separators=(",", ":"))
    new_text = dump_payload(payload)
    if current is None:
        desired = configmap(name, namespace, {spec.DEVICE_CONFIG_KEY: new_text}, labels={MANAGED_BY: MANAGER},
                            annotations={RECORD_ANNOTATION: new_record})
    else:
        desired = json.loads(json.dumps(current))
        desired.setdefault("metadata", {}).setdefault("annotations", {})[RECORD_ANNOTATION] = new_record
        desired.setdefault("data", {})[spec.DEVICE_CONFIG_KEY] = new_text
    return DeviceConfigEdit(desired, current, new_text, tuple(notes))


def plan_device_config_removal(current: Mapping[str, Any] | None) -> tuple[str, dict[str, Any] | None, list[str]]:
    """("delete" | "update" | "keep", the updated ConfigMap, notes) for uninstall."""
    if current is None:
        return "keep", None, []
    record = _record(current)
    if not record:
        return "keep", None, []
    meta = current.get("metadata") or {}
    where = f"ConfigMap {meta.get('namespace')}/{meta.get('name')}"
    text, payload = payload_of(current, where)
    payload = dict(payload or {})
    notes: list[str] = []
    sections: Mapping[str, str] = record.get("sections") or {}
    for section, digest in sections.items():
        if section in payload and section_hash(payload[section]) == digest:
            del payload[section]
        elif section in payload:
            notes.append(f"{where}: kept the {section} section: it was edited after vgpuctl added it")
    leftover = [k for k in payload if payload[k] is not None]
    if record.get("created") and not leftover:
        return "delete", None, notes
    if record.get("created"):
        notes.append(f"{where}: not deleted: it holds content vgpuctl did not write ({', '.join(leftover)})")
    desired = json.loads(json.dumps(current))
    desired["metadata"]["annotations"].pop(RECORD_ANNOTATION, None)
    desired.setdefault("data", {})[spec.DEVICE_CONFIG_KEY] = dump_payload(payload) if payload != (
        load(text) or {}) else text
    return "update", desired, notes
