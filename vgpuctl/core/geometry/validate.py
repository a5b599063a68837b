"""`geometry validate`: every VGM finding that the device config alone determines (VGM002–VGM011).

Volcano never says a word about its device config: a type error makes it run on built-in defaults, an
unknown key is dropped, a bad MIG group name corrupts bookings later. This module reads the payload
the way Volcano does (`parse_device_config`) *and* the way a careful reviewer would (the raw keys), and
reports each problem once, at the JSON path and line where it sits. Facts the file does not hold (is
`VGPUEnable` on? which Volcano runs?) are parameters; the Volcano version defaults to the newest.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping, Sequence
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.deviceconfig import DeviceConfig, VnpusForm, parse_device_config
from vgpuctl.core.findings import Severity
from vgpuctl.core.geometry import keys
from vgpuctl.core.geometry.documents import ROOT, DeviceConfigSource, join_path
from vgpuctl.core.geometry.report import Emitter, LocatedFinding, sort_findings
from vgpuctl.core.geometry.semantics import check_nvidia, check_vnpus
from vgpuctl.core.versions import NEWEST_VOLCANO, Version, accepts_vnpus_wrapper

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
FALLBACK = "Volcano rejects the whole document and silently runs on its built-in defaults (no MIG, Ascend310P only)"


def validate_source(src: DeviceConfigSource, *, version: Version | None = None,
                    vgpu_enabled: bool | None = None, ascend_hami_enabled: bool | None = None
                    ) -> list[LocatedFinding]:
    """Validate one device config found by `find_device_configs` (payload, read error or missing key)."""
    if src.missing_key:
        e = Emitter(src.source, {})
        e.emit("VGM001", WARNING, src.configmap_subject,
               f"ConfigMap has no data key {spec.DEVICE_CONFIG_KEY!r}; Volcano silently uses its built-in "
               "defaults (no MIG geometries, no memory-percentage resource, Ascend310P only)", src.error_line)
        return e.findings
    if src.error is not None:
        e = Emitter(src.source, {})
        e.emit("VGM002", ERROR, ROOT, f"{src.error}; {FALLBACK}", src.error_line)
        return e.findings
    return validate_payload(src.payload, lines=src.lines, source=src.source, version=version,
                            vgpu_enabled=vgpu_enabled, ascend_hami_enabled=ascend_hami_enabled)


def validate_payload(payload: Any, *, lines: Mapping[str, int] | None = None, source: str = "",
                     version: Version | None = None, vgpu_enabled: bool | None = None,
                     ascend_hami_enabled: bool | None = None) -> list[LocatedFinding]:
    """All VGM002–VGM011 findings of a YAML-decoded `device-config.yaml` payload, in file order.

    `version` is the Volcano release to judge for (newest when None). `vgpu_enabled` /
    `ascend_hami_enabled` say whether `deviceshare` enables the family; None means unknown, and the
    checks that need it (a missing section) are skipped rather than guessed.
    """
    e = Emitter(source, lines or {})
    target = version or NEWEST_VOLCANO
    if payload is not None and not isinstance(payload, Mapping):
        e.emit("VGM002", ERROR, ROOT, f"the document is not a mapping of sections; {FALLBACK}")
        return e.findings
    top: Mapping[str, Any] = payload or {}
    suppressed = _hami_geometries(e, top)
    parsed = parse_device_config(top)
    for problem in parsed.problems:
        if not any(problem.path == p or problem.path.startswith((p + ".", p + "[")) for p in suppressed):
            e.emit("VGM002", ERROR, problem.path, f"{problem.message}; {FALLBACK}")
    _check_keys(e, top)
    _check_form(e, top, target)
    nvidia = _section(top, "nvidia")
    if nvidia is not None and nvidia.has_nvidia:
        check_nvidia(e, nvidia.nvidia, top.get("nvidia"), target)
    elif top.get("nvidia") is None and vgpu_enabled:
        e.emit("VGM004", ERROR, ROOT, "VGPUEnable is on but the device config has no nvidia: section; every "
                                      "resource name is empty, so Volcano never recognises a vGPU pod")
    vnpus = _section(top, "vnpus")
    if vnpus is not None:
        check_vnpus(e, vnpus, top.get("vnpus"), ascend_hami_enabled=bool(ascend_hami_enabled))
    return sort_findings(e.findings)


def _section(top: Mapping[str, Any], key: str) -> DeviceConfig | None:
    """The config with only `key` parsed, so one broken section does not hide the other's problems."""
    if key not in top:
        return DeviceConfig() if key == "vnpus" else None
    return parse_device_config({key: top[key]}).config


def _hami_geometries(e: Emitter, top: Mapping[str, Any]) -> list[str]:
    """VGM011 for HAMi ≤ 2.9's list-of-lists geometries; their type errors are not repeated as VGM002."""
    nvidia = top.get("nvidia")
    entries = nvidia.get("knownMigGeometries") if isinstance(nvidia, Mapping) else None
    paths: list[str] = []
    if not isinstance(entries, list):
        return paths
    for index, entry in enumerate(entries):
        groups = entry.get("allowedGeometries") if isinstance(entry, Mapping) else None
        if isinstance(groups, list) and any(isinstance(g, list) for g in groups):
            path = f"nvidia.knownMigGeometries[{index}].allowedGeometries"
            paths.append(path)
            e.emit("VGM011", ERROR, path,
                   "HAMi's list-of-lists geometry (no group names, per-instance core) in a Volcano device "
                   f"config; {FALLBACK}")
    return paths


def _unknown(e: Emitter, path: str, key: str, known: Sequence[str], where: str) -> None:
    if key == keys.MIGSTRATEGY:
        e.emit("VGM009", WARNING, path, f"{key!r} is not a device-config key (every reader ignores it); MIG mode "
                                        "is set per node with operatingmode: mig in volcano-vgpu-node-config")
        return
    guess = keys.MISSPELLINGS.get(key) or next(iter(difflib.get_close_matches(key, known, n=1, cutoff=0.75)), None)
    if guess is None:
        guess = next((k for k in known if k.lower() == key.lower()), None)
    suffix = f"; did you mean {guess!r}?" if guess else ""
    e.emit("VGM009", WARNING, path, f"unknown key {key!r} in {where}: Volcano and the device plugins ignore it, "
                                    f"so the setting it was meant to change keeps its zero value{suffix}")


def _check_mapping(e: Emitter, raw: Any, path: str, known: Sequence[str], where: str) -> Mapping[str, Any]:
    if not isinstance(raw, Mapping):
        return {}
    for key in raw:
        if isinstance(key, str) and key not in known:
            _unknown(e, join_path(path, key), key, known, where)
    return raw


def _items(raw: Any) -> list[tuple[int, Any]]:
    return list(enumerate(raw)) if isinstance(raw, list) else []


def _check_keys(e: Emitter, top: Mapping[str, Any]) -> None:
    for key in top:
        if isinstance(key, str) and key not in keys.TOP:
            _unknown(e, join_path(ROOT, key), key, keys.TOP, "the top level (Volcano reads only nvidia and vnpus)")
    nvidia = top.get("nvidia")
    if isinstance(nvidia, Mapping):
        _check_nvidia_keys(e, nvidia)
    vnpus = top.get("vnpus")
    prefix = "vnpus"
    if isinstance(vnpus, Mapping):
        _check_mapping(e, vnpus, "vnpus", keys.VNPUS_WRAPPER, "the vnpus wrapper")
        vnpus, prefix = vnpus.get("configs"), "vnpus.configs"
    for index, entry in _items(vnpus):
        path = f"{prefix}[{index}]"
        if not isinstance(entry, Mapping):
            continue
        for key in entry:
            if key in keys.VNPU_OTHER_READERS:
                _vnpu_other_reader(e, entry, f"{path}.{key}", key)
            elif isinstance(key, str) and key not in keys.VNPU:
                _unknown(e, join_path(path, key), key, keys.VNPU, "a vnpus entry")
        for t_index, template in _items(entry.get("templates")):
            _check_mapping(e, template, f"{path}.templates[{t_index}]", keys.VNPU_TEMPLATE, "a vnpus template")


def _vnpu_other_reader(e: Emitter, entry: Mapping[str, Any], path: str, key: str) -> None:
    note = keys.VNPU_OTHER_READERS[key]
    if key == "resourceCoreName":
        derived = f"{entry.get('resourceName') or ''}{spec.ASCEND_CORE_SUFFIX}"
        if entry.get(key) == derived:
            return  # says what Volcano derives anyway
        note = f"{note} ({derived!r}), so pods using {entry.get(key)!r} are never booked cores by Volcano"
    e.emit("VGM010", INFO, path, f"{key} has no effect on the Volcano path: {note}")


def _check_nvidia_keys(e: Emitter, nvidia: Mapping[str, Any]) -> None:
    for key in nvidia:
        path = join_path("nvidia", key)
        if key in keys.NVIDIA_HAMI_ERRORS:
            e.emit("VGM011", ERROR, path, f"{key}: {keys.NVIDIA_HAMI_ERRORS[key]}")
        elif key in keys.NVIDIA_NO_EFFECT:
            e.emit("VGM010", INFO, path, f"{key} is parsed but has no effect on the Volcano path (neither the "
                                         "scheduler nor the vGPU device plugin applies it)")
        elif key in keys.NVIDIA_HAMI_ONLY:
            e.emit("VGM009", WARNING, path, f"{key} is a HAMi-only setting; Volcano and the vGPU device plugin "
                                            "ignore it")
        elif isinstance(key, str) and key not in keys.NVIDIA and key not in keys.NVIDIA_PLUGIN_ONLY:
            _unknown(e, path, key, keys.NVIDIA, "the nvidia section")
    for index, entry in _items(nvidia.get("knownMigGeometries")):
        path = f"nvidia.knownMigGeometries[{index}]"
        entry_map = _check_mapping(e, entry, path, keys.MIG_ENTRY, "a knownMigGeometries entry")
        for g_index, group in _items(entry_map.get("allowedGeometries")):
            gpath = f"{path}.allowedGeometries[{g_index}]"
            group_map = _check_mapping(e, group, gpath, keys.MIG_GROUP, "a MIG group")
            for i_index, instance in _items(group_map.get("geometries")):
                _check_mapping(e, instance, f"{gpath}.geometries[{i_index}]", keys.MIG_INSTANCE, "a MIG instance")


def _check_form(e: Emitter, top: Mapping[str, Any], version: Version) -> None:
    if isinstance(top.get("vnpus"), Mapping) and not accepts_vnpus_wrapper(version):
        e.emit("VGM003", ERROR, "vnpus",
               f"vnpus uses the wrapper form (hamiVnpuCore, configs), which Volcano {version} cannot decode: "
               "the whole device config falls back to the built-in defaults (no MIG, Ascend310P only)")


def form_for(version: Version) -> VnpusForm:
    """The `vnpus` form to write for a Volcano release: the wrapper where it is understood, else the list."""
    return VnpusForm.WRAPPER if accepts_vnpus_wrapper(version) else VnpusForm.LIST
