"""Kustomize, the part of it vgpuctl's own manifests use: `resources`, and `patches` that are inline RFC 6902
JSON Patches with a `target`.

`deploy/` is applied with `kubectl apply -k`, and `vgpuctl install --webhook [--cluster-aware]` applies the
same kustomizations from package data; rendering them here, in one function, is what keeps the two equal
(the manifest tests render `deploy/` with it too). Pure: the kustomization and every resource arrive
parsed, a directory resource already built (the inline patches may still be YAML text); the files are
read at the edge (`vgpuctl.manifests.build` for the package and for `deploy/`). Anything else kustomize
can do is refused, not ignored, so a kustomization that grows a feature this lacks fails loudly instead
of being applied wrongly.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

import jsonpatch
import jsonpointer
import yaml

KUSTOMIZATION = "kustomization.yaml"
SUPPORTED_KEYS = frozenset({"apiVersion", "kind", "resources", "patches"})
TARGET_KEYS = frozenset({"group", "version", "kind", "name", "namespace"})
API_VERSION = "kustomize.config.k8s.io/v1beta1"


class KustomizeError(ValueError):
    """A kustomization this renderer cannot render faithfully, or a patch that does not apply."""


def resource_names(kustomization: Mapping[str, Any], *, where: str = "") -> list[str]:
    """The kustomization's `resources`, in order, once its keys are known to be supported."""
    at = f"{where}: " if where else ""
    if not isinstance(kustomization, Mapping):
        raise KustomizeError(f"{at}{KUSTOMIZATION} is not a mapping")
    unknown = set(kustomization) - SUPPORTED_KEYS
    if unknown:
        raise KustomizeError(f"{at}unsupported kustomization keys {sorted(unknown)} (supported: resources, "
                             "patches with a target and an inline JSON6902 patch)")
    if kustomization.get("kind", "Kustomization") != "Kustomization" or \
            kustomization.get("apiVersion", API_VERSION) != API_VERSION:
        raise KustomizeError(f"{at}not a {API_VERSION} Kustomization")
    names = kustomization.get("resources") or []
    if not isinstance(names, list) or not all(isinstance(n, str) and n for n in names):
        raise KustomizeError(f"{at}resources must be a list of paths")
    if len(names) != len(set(names)):
        raise KustomizeError(f"{at}a resource is listed twice")
    return list(names)


def build(kustomization: Mapping[str, Any], resources: Mapping[str, Sequence[Mapping[str, Any]]], *,
          where: str = "") -> list[dict[str, Any]]:
    """`kustomize build`: the objects of every resource (`resources` maps each listed path to its objects),
    in the listed order, with every patch applied to the objects its target matches. The inputs are left
    as they are."""
    at = f"{where}: " if where else ""
    objects: list[dict[str, Any]] = []
    for name in resource_names(kustomization, where=where):
        if name not in resources:
            raise KustomizeError(f"{at}resource {name} was not loaded")
        for obj in resources[name]:
            if not isinstance(obj, Mapping) or not isinstance(obj.get("metadata"), Mapping) or \
                    not obj["metadata"].get("name") or not obj.get("kind") or not obj.get("apiVersion"):
                raise KustomizeError(f"{at}{name}: an object without apiVersion, kind or metadata.name")
            objects.append(copy.deepcopy(dict(obj)))
    patches = kustomization.get("patches") or []
    if not isinstance(patches, list):
        raise KustomizeError(f"{at}patches must be a list")
    for number, patch in enumerate(patches, 1):
        target, ops = _patch(patch, f"{at}patch {number}")
        hits = [i for i, obj in enumerate(objects) if _matches(obj, target)]
        if not hits:
            raise KustomizeError(f"{at}patch {number}: target {dict(target)} matches nothing")
        for i in hits:
            try:
                objects[i] = apply_patch(objects[i], ops)
            except KustomizeError as exc:
                raise KustomizeError(f"{at}patch {number} on {objects[i]['kind']} "
                                     f"{objects[i]['metadata']['name']}: {exc}") from None
    ids = [_identity(o) for o in objects]
    if len(ids) != len(set(ids)):
        twice = sorted({i for i in ids if ids.count(i) > 1})
        raise KustomizeError(f"{at}duplicate objects: {', '.join(' '.join(str(p) for p in i if p) for i in twice)}")
    return objects


def _identity(obj: Mapping[str, Any]) -> tuple[str, str, str, str]:
    meta = obj["metadata"]
    return str(obj["apiVersion"]), str(obj["kind"]), str(meta.get("namespace") or ""), str(meta["name"])


def _patch(patch: Any, at: str) -> tuple[Mapping[str, str], list[Mapping[str, Any]]]:
    if not isinstance(patch, Mapping) or set(patch) != {"target", "patch"} or \
            not isinstance(patch["target"], Mapping) or set(patch["target"]) - TARGET_KEYS:
        raise KustomizeError(f"{at}: only inline JSON6902 patches with a target (group, version, kind, name, "
                             "namespace) are supported")
    ops = patch["patch"]
    if isinstance(ops, str):  # the inline form: YAML (or JSON) text
        try:
            ops = yaml.safe_load(ops)
        except yaml.YAMLError as exc:
            raise KustomizeError(f"{at}: the patch does not parse: {exc}") from None
    if not isinstance(ops, list) or not all(isinstance(op, Mapping) for op in ops):
        raise KustomizeError(f"{at}: the patch is not a JSON6902 list of operations")
    return patch["target"], ops


def _matches(obj: Mapping[str, Any], target: Mapping[str, str]) -> bool:
    group, _, version = str(obj["apiVersion"]).rpartition("/")
    actual = {"group": group, "version": version, "kind": obj["kind"], "name": obj["metadata"]["name"],
              "namespace": obj["metadata"].get("namespace") or ""}
    return all(actual[key] == value for key, value in target.items())


# --- RFC 6902 -------------------------------------------------------------------------------------

def apply_patch(document: Any, ops: Sequence[Mapping[str, Any]]) -> Any:
    """`document` with the RFC 6902 operations applied in order, by the `jsonpatch` library (the input is not
    changed; a replaced member keeps its position). A bad operation or path raises `KustomizeError`."""
    try:
        return jsonpatch.apply_patch(document, [dict(op) for op in ops], in_place=False)
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as exc:
        raise KustomizeError(f"JSON patch: {exc}") from None
    except (KeyError, IndexError, TypeError, ValueError) as exc:  # malformed operations the library trips on
        raise KustomizeError(f"JSON patch: {type(exc).__name__}: {exc}") from None
