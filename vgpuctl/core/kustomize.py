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

def _tokens(pointer: Any) -> list[str]:
    """RFC 6901: "" is the whole document; otherwise "/"-separated tokens, `~1` → `/`, `~0` → `~`."""
    if not isinstance(pointer, str) or (pointer and not pointer.startswith("/")):
        raise KustomizeError(f"{pointer!r} is not a JSON pointer")
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]] if pointer else []


def _index(container: list[Any], token: str, *, end_ok: bool) -> int:
    if token == "-" and end_ok:
        return len(container)
    if not token.isdigit() or (token != "0" and token.startswith("0")):
        raise KustomizeError(f"{token!r} is not an array index")
    index = int(token)
    if index > len(container) or (index == len(container) and not end_ok):
        raise KustomizeError(f"array index {index} is out of range")
    return index


def _parent(doc: Any, tokens: list[str], pointer: str) -> Any:
    node = doc
    for token in tokens[:-1]:
        if isinstance(node, dict) and token in node:
            node = node[token]
        elif isinstance(node, list):
            node = node[_index(node, token, end_ok=False)]
        else:
            raise KustomizeError(f"path {pointer} does not exist")
    return node


def _get(doc: Any, pointer: str) -> Any:
    tokens = _tokens(pointer)
    if not tokens:
        return doc
    parent = _parent(doc, tokens, pointer)
    last = tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list):
        return parent[_index(parent, last, end_ok=False)]
    raise KustomizeError(f"path {pointer} does not exist")


def _add(doc: Any, pointer: str, value: Any) -> Any:
    tokens = _tokens(pointer)
    if not tokens:
        return value
    parent = _parent(doc, tokens, pointer)
    if isinstance(parent, dict):
        parent[tokens[-1]] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, tokens[-1], end_ok=True), value)
    else:
        raise KustomizeError(f"path {pointer} does not exist")
    return doc


def _remove(doc: Any, pointer: str) -> tuple[Any, Any]:
    tokens = _tokens(pointer)
    if not tokens:
        raise KustomizeError("cannot remove the whole document")
    parent = _parent(doc, tokens, pointer)
    last = tokens[-1]
    if isinstance(parent, dict) and last in parent:
        return doc, parent.pop(last)
    if isinstance(parent, list):
        return doc, parent.pop(_index(parent, last, end_ok=False))
    raise KustomizeError(f"path {pointer} does not exist")


def _same(a: Any, b: Any) -> bool:
    """JSON equality: `true` is not `1` (Python's `==` says it is); 1 and 1.0 are the same number."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and bool(a == b)


def _replace(doc: Any, pointer: str, value: Any) -> Any:
    """In place, so a replaced member keeps its position (as kustomize's output and `jsonpatch` keep it)."""
    tokens = _tokens(pointer)
    if not tokens:
        return value
    parent = _parent(doc, tokens, pointer)
    last = tokens[-1]
    if isinstance(parent, dict) and last in parent:
        parent[last] = value
    elif isinstance(parent, list):
        parent[_index(parent, last, end_ok=False)] = value
    else:
        raise KustomizeError(f"path {pointer} does not exist")
    return doc


def apply_patch(document: Any, ops: Sequence[Mapping[str, Any]]) -> Any:
    """`document` with the RFC 6902 operations applied, in order (the input is not changed). Every op of the
    RFC is supported; a path that does not exist, or a failed `test`, raises `KustomizeError`."""
    doc = copy.deepcopy(document)
    for op in ops:
        name, path = op.get("op"), op.get("path")
        if name in ("add", "replace", "test") and "value" not in op:
            raise KustomizeError(f"{name} {path}: no value")
        if name == "add":
            doc = _add(doc, str(path), copy.deepcopy(op["value"]))
        elif name == "remove":
            doc, _ = _remove(doc, str(path))
        elif name == "replace":
            doc = _replace(doc, str(path), copy.deepcopy(op["value"]))
        elif name in ("move", "copy"):
            source = op.get("from")
            if not isinstance(source, str):
                raise KustomizeError(f"{name} {path}: no from")
            value = copy.deepcopy(_get(doc, source))  # the "from" location must exist
            if name == "move" and path == source:
                continue
            if name == "move" and str(path).startswith(source + "/"):
                raise KustomizeError(f"move {source} into its own child {path}")
            if name == "move":
                doc, _ = _remove(doc, source)
            doc = _add(doc, str(path), value)
        elif name == "test":
            if not _same(_get(doc, str(path)), op["value"]):
                raise KustomizeError(f"test {path}: the value differs")
        else:
            raise KustomizeError(f"unknown JSON Patch op {name!r}")
    return doc
