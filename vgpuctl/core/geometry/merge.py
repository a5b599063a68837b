"""`geometry merge`: one device config holding the vGPU plugin's `nvidia:` and the Ascend plugin's `vnpus:`.

Volcano reads exactly one device ConfigMap, with no merging with defaults (docs/volcano.md#device-config-loading), so a
cluster running
vGPU and Ascend vNPU together needs both sections in one document, with `vnpus` in the form its Volcano
version decodes (docs/volcano.md#device-config-schema, docs/device-plugins.md#vnpus-forms,
docs/device-plugins.md#merging-device-configs). The merge works on the raw payloads, not the model, so that every
entry survives — MIG models, groups, instances, chips, templates and unknown keys alike.

Rules: `nvidia` is ordered after the vGPU input, `vnpus` after the vNPU input; an entry of the other
input that is identical to one already present is not repeated; anything both inputs define differently
(an `nvidia` key, a MIG model's geometry, a `commonWord`'s entry, any other key) is a conflict — VGM014,
an error unless `prefer` names the input that wins, and then still a warning, because the device plugin
reading the losing ConfigMap disagrees with Volcano until it is updated. Output order depends only on
the inputs, so the result is byte-identical on rerun, and merging an input into the result again
changes nothing.
"""

from __future__ import annotations

import enum
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.deviceconfig import VnpusForm
from vgpuctl.core.findings import Severity
from vgpuctl.core.geometry.export import shape_vnpus
from vgpuctl.core.geometry.report import Emitter, LocatedFinding, sort_findings
from vgpuctl.core.geometry.validate import form_for, validate_payload
from vgpuctl.core.versions import NEWEST_VOLCANO, Version

ERROR, WARNING = Severity.ERROR, Severity.WARNING
_MISSING = object()


class Prefer(str, enum.Enum):
    VGPU = "vgpu"
    VNPU = "vnpu"


def _canon(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str)


def _diff(a: Any, b: Any, path: str, out: list[str]) -> None:
    """The paths below `path` where `a` and `b` differ (both mappings / equal-length lists: recurse)."""
    if isinstance(a, Mapping) and isinstance(b, Mapping):
        for key in list(a) + [k for k in b if k not in a]:
            if _canon(a.get(key, _MISSING)) != _canon(b.get(key, _MISSING)):
                _diff(a.get(key), b.get(key), f"{path}.{key}" if path else str(key), out)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for index, (x, y) in enumerate(zip(a, b, strict=True)):
            if _canon(x) != _canon(y):
                _diff(x, y, f"{path}[{index}]", out)
    else:
        out.append(path or "(the whole value)")


def _differing(a: Any, b: Any) -> str:
    paths: list[str] = []
    _diff(a, b, "", paths)
    shown = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    return shown


@dataclass
class _Merger:
    prefer: Prefer | None
    emitter: Emitter = field(default_factory=lambda: Emitter("merge", {}))

    def conflict(self, subject: str, what: str, vgpu: Any, vnpu: Any) -> Prefer:
        """Report a conflict; return the side whose value goes into the result."""
        differing = _differing(vgpu, vnpu)
        if self.prefer is None:
            self.emitter.emit("VGM014", ERROR, subject,
                              f"{what} differs between --vgpu and --vnpu (differing: {differing}); pass --prefer "
                              "vgpu|vnpu to choose, and make the other ConfigMap agree")
            return Prefer.VGPU if subject.startswith("nvidia") else Prefer.VNPU
        self.emitter.emit("VGM014", WARNING, subject,
                          f"{what} differs between --vgpu and --vnpu (differing: {differing}); --prefer "
                          f"{self.prefer.value} keeps the --{self.prefer.value} value, so the device plugin reading "
                          "the other ConfigMap disagrees with Volcano until it is updated")
        return self.prefer

    def mapping(self, path: str, first: Mapping[str, Any], second: Mapping[str, Any], first_is: Prefer,
                special: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Key-wise union in `first`'s order; `special[key](a, b)` merges a key's values itself."""
        out: dict[str, Any] = {}
        for key in list(first) + [k for k in second if k not in first]:
            a, b = first.get(key, _MISSING), second.get(key, _MISSING)
            if b is _MISSING or _canon(a) == _canon(b):
                out[key] = a
            elif a is _MISSING:
                out[key] = b
            elif special and key in special:
                out[key] = special[key](a, b)
            else:
                vgpu, vnpu = (a, b) if first_is is Prefer.VGPU else (b, a)
                winner = self.conflict(f"{path}.{key}" if path != "$" else str(key), f"{key!r}", vgpu, vnpu)
                out[key] = vgpu if winner is Prefer.VGPU else vnpu
        return out

    def mig(self, vgpu: Any, vnpu: Any) -> Any:
        """knownMigGeometries: per-model conflicts; entries of --vnpu identical to one of --vgpu dropped."""
        if not isinstance(vgpu, list) or not isinstance(vnpu, list):
            winner = self.conflict("nvidia.knownMigGeometries", "knownMigGeometries", vgpu, vnpu)
            return vgpu if winner is Prefer.VGPU else vnpu
        defs_a, defs_b = _model_definitions(vgpu), _model_definitions(vnpu)
        lost: dict[Prefer, set[str]] = {Prefer.VGPU: set(), Prefer.VNPU: set()}
        for model in [m for m in defs_a if m in defs_b and _canon(defs_a[m]) != _canon(defs_b[m])]:
            winner = self.conflict(f'nvidia.knownMigGeometries[models="{model}"]', f"the geometry of model {model!r}",
                                   defs_a[model], defs_b[model])
            lost[Prefer.VNPU if winner is Prefer.VGPU else Prefer.VGPU].add(model)
        first = _without_models(vgpu, lost[Prefer.VGPU])
        second = _without_models(vnpu, lost[Prefer.VNPU])
        seen = {_canon(e) for e in first}
        return first + [e for e in second if _canon(e) not in seen]

    def vnpu_entries(self, vnpu: list[Any], vgpu: list[Any]) -> list[Any]:
        """vnpus entries by commonWord, ordered after --vnpu; identical entries of --vgpu dropped."""
        by_a, by_b = _by_common_word(vgpu), _by_common_word(vnpu)
        lost: dict[Prefer, set[str]] = {Prefer.VGPU: set(), Prefer.VNPU: set()}
        for word in [w for w in by_b if w in by_a and set(by_a[w]) != set(by_b[w])]:
            a = [json.loads(x) for x in by_a[word]]
            b = [json.loads(x) for x in by_b[word]]
            winner = self.conflict(f'vnpus[commonWord="{word}"]', f"the vnpus entry {word!r}",
                                   a[0] if len(a) == 1 else a, b[0] if len(b) == 1 else b)
            lost[Prefer.VNPU if winner is Prefer.VGPU else Prefer.VGPU].add(word)
        first = [e for e in vnpu if _common_word(e) not in lost[Prefer.VNPU]]
        second = [e for e in vgpu if _common_word(e) not in lost[Prefer.VGPU]]
        seen = {_canon(e) for e in first}
        return first + [e for e in second if _canon(e) not in seen]


def _model_definitions(entries: list[Any]) -> dict[str, Any]:
    """model → its entry without `models`, from the first entry listing it (Volcano's first match)."""
    defs: dict[str, Any] = {}
    for entry in entries:
        if isinstance(entry, Mapping) and isinstance(entry.get("models"), list):
            body = {k: v for k, v in entry.items() if k != "models"}
            for model in entry["models"]:
                defs.setdefault(_canon(model) if not isinstance(model, str) else model, body)
    return defs


def _without_models(entries: list[Any], models: set[str]) -> list[Any]:
    if not models:
        return list(entries)
    out: list[Any] = []
    for entry in entries:
        if isinstance(entry, Mapping) and isinstance(entry.get("models"), list):
            kept = [m for m in entry["models"] if not (isinstance(m, str) and m in models)]
            if not kept:
                continue  # every model it defined lost its conflict; the finding says so
            entry = {k: (kept if k == "models" else v) for k, v in entry.items()}
        out.append(entry)
    return out


def _common_word(entry: Any) -> str | None:
    word = entry.get("commonWord") if isinstance(entry, Mapping) else None
    return word if isinstance(word, str) and word else None


def _by_common_word(entries: list[Any]) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for entry in entries:
        word = _common_word(entry)
        if word is not None and _canon(entry) not in out.setdefault(word, []):
            out[word].append(_canon(entry))
    return out


@dataclass(frozen=True, slots=True)
class _Vnpus:
    entries: Any  # a list, or the raw value when it is not one (kept whole)
    hami_core: Any = _MISSING
    extra: Mapping[str, Any] = field(default_factory=dict)


def _split_vnpus(raw: Any) -> _Vnpus | None:
    if raw is None:
        return None
    if isinstance(raw, Mapping):
        extra = {k: v for k, v in raw.items() if k not in ("hamiVnpuCore", "configs")}
        return _Vnpus(raw.get("configs") or [], raw.get("hamiVnpuCore", _MISSING), extra)
    return _Vnpus(raw)


@dataclass(frozen=True, slots=True)
class MergeResult:
    payload: dict[str, Any]
    form: VnpusForm
    version: Version
    findings: tuple[LocatedFinding, ...]
    notes: tuple[str, ...] = ()

    @property
    def errors(self) -> int:
        return sum(1 for f in self.findings if f.finding.severity is ERROR)

    @property
    def families(self) -> tuple[spec.Family, ...]:
        found: list[spec.Family] = []
        if self.payload.get("nvidia") is not None:
            found.append(spec.Family.VGPU)
        vnpus = self.payload.get("vnpus")
        entries = vnpus.get("configs") if isinstance(vnpus, Mapping) else vnpus
        if entries:
            found.append(spec.Family.ASCEND_HAMI)
        return tuple(found)

    def deviceshare_arguments(self, name: str, namespace: str) -> dict[str, Any]:
        """The `deviceshare` plugin arguments that make Volcano read this ConfigMap and use its families."""
        args: dict[str, Any] = {
            spec.ARG_KNOWN_GEOMETRIES_CM_NAME: name,
            spec.ARG_KNOWN_GEOMETRIES_CM_NAMESPACE: namespace,
        }
        for family in self.families:
            args[spec.ENABLE_ARG_BY_FAMILY[family]] = True
        return args


def _as_mapping(m: _Merger, raw: Any, flag: str) -> Mapping[str, Any]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        m.emitter.emit("VGM002", ERROR, flag, f"the {flag} input is not a device-config mapping; nothing of it can "
                                              "be merged")
        return {}
    return raw


def _section(m: _Merger, key: str, a: Any, b: Any) -> Any:
    """`nvidia` (or another top-level key) from both inputs: a is --vgpu's, b is --vnpu's."""
    if a is None or b is None or _canon(a) == _canon(b):
        return b if a is None else a
    if key == "nvidia" and isinstance(a, Mapping) and isinstance(b, Mapping):
        return m.mapping("nvidia", a, b, Prefer.VGPU, {"knownMigGeometries": m.mig})
    winner = m.conflict(key, f"the {key} section", a, b)
    return a if winner is Prefer.VGPU else b


def _merge_vnpus(m: _Merger, a: _Vnpus | None, b: _Vnpus | None, form: VnpusForm, version: Version,
                 notes: list[str]) -> Any:
    if a is None and b is None:
        return None
    sides = [s for s in (b, a) if s is not None]
    if a is not None and b is not None:
        if isinstance(a.entries, list) and isinstance(b.entries, list):
            entries: Any = m.vnpu_entries(b.entries, a.entries)
        elif _canon(a.entries) == _canon(b.entries):
            entries = b.entries
        else:
            winner = m.conflict("vnpus", "the vnpus section", a.entries, b.entries)
            entries = a.entries if winner is Prefer.VGPU else b.entries
        extra = m.mapping("vnpus", b.extra, a.extra, Prefer.VNPU)
    else:
        entries, extra = sides[0].entries, dict(sides[0].extra)
    cores = {side: s.hami_core for side, s in ((Prefer.VGPU, a), (Prefer.VNPU, b))
             if s is not None and s.hami_core is not _MISSING}
    hami_core = cores.get(Prefer.VNPU, cores.get(Prefer.VGPU, False))
    if len(cores) == 2 and _canon(cores[Prefer.VGPU]) != _canon(cores[Prefer.VNPU]):
        winner = m.conflict("vnpus.hamiVnpuCore", "hamiVnpuCore", cores[Prefer.VGPU], cores[Prefer.VNPU])
        hami_core = cores[winner]
    if form is VnpusForm.LIST:
        if hami_core is True:
            notes.append(f"hamiVnpuCore: true cannot be written in the list form and was left out; Volcano {version} "
                         "has no hami-core vNPU mode anyway")
        for key in extra:
            m.emitter.emit("VGM009", WARNING, f"vnpus.{key}",
                           f"vnpus.{key} cannot be kept: the list form Volcano {version} needs has no place for it")
        return entries
    return shape_vnpus(entries, form, hami_core, extra)


def merge_payloads(vgpu: Any, vnpu: Any, *, version: Version | None = None, prefer: Prefer | None = None
                   ) -> MergeResult:
    """Merge the vGPU plugin's payload (`nvidia:`) and the Ascend plugin's (`vnpus:`) for Volcano `version`."""
    target = version or NEWEST_VOLCANO
    m = _Merger(prefer, Emitter("merged", {}))
    a, b = _as_mapping(m, vgpu, "--vgpu"), _as_mapping(m, vnpu, "--vnpu")
    form = form_for(target)
    notes = [f"vnpus written in the {form.value} form: Volcano {target} "
             + ("decodes both forms" if form is VnpusForm.WRAPPER else "decodes only the list form")]
    payload: dict[str, Any] = {}
    nvidia = _section(m, "nvidia", a.get("nvidia"), b.get("nvidia"))
    if nvidia is not None:
        payload["nvidia"] = nvidia
    vnpus = _merge_vnpus(m, _split_vnpus(a.get("vnpus")), _split_vnpus(b.get("vnpus")), form, target, notes)
    if vnpus is not None:
        payload["vnpus"] = vnpus
        if form is VnpusForm.LIST:
            notes.append("the Ascend device plugin >= v1.3.0 and HAMi >= v2.9 read only the wrapper form: keep "
                         f"their own ConfigMap ({spec.ASCEND_DEVICE_CONFIGMAP}) and do not mount this one into them")
    others_a = {k: v for k, v in a.items() if k not in ("nvidia", "vnpus")}
    others_b = {k: v for k, v in b.items() if k not in ("nvidia", "vnpus")}
    payload.update(m.mapping("$", others_a, others_b, Prefer.VGPU))
    checked = validate_payload(payload, source="merged", version=target, vgpu_enabled=True, ascend_hami_enabled=True)
    findings = sort_findings([*m.emitter.findings, *checked])
    return MergeResult(payload, form, target, tuple(findings), tuple(notes))
