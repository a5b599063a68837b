"""A small kustomize renderer for our own `deploy/` tree (no kustomize binary in CI).

It supports exactly what `deploy/` uses — `resources` (files and directories with a kustomization) and
`patches` with a `target` and an inline RFC 6902 patch — and refuses anything else, so a kustomization
that grows a feature this renderer lacks fails the tests instead of being rendered wrongly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jsonpatch
import yaml

SUPPORTED_KEYS = {"apiVersion", "kind", "resources", "patches"}
TARGET_KEYS = {"group", "version", "kind", "name", "namespace"}


class UnsupportedKustomization(Exception):  # noqa: N818 - reads as a sentence in the test output
    pass


def _load_objects(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def _matches(obj: dict[str, Any], target: dict[str, str]) -> bool:
    group, _, version = obj["apiVersion"].rpartition("/")
    actual = {"group": group, "version": version, "kind": obj["kind"], "name": obj["metadata"]["name"],
              "namespace": obj["metadata"].get("namespace", "")}
    return all(actual[key] == value for key, value in target.items())


def render(directory: Path) -> list[dict[str, Any]]:
    kustomization = yaml.safe_load((directory / "kustomization.yaml").read_text())
    unknown = set(kustomization) - SUPPORTED_KEYS
    if unknown:
        raise UnsupportedKustomization(f"{directory}: unsupported kustomization keys {sorted(unknown)}")
    objects: list[dict[str, Any]] = []
    for resource in kustomization.get("resources", []):
        path = (directory / resource).resolve()
        objects.extend(render(path) if path.is_dir() else _load_objects(path))
    for patch in kustomization.get("patches", []):
        if set(patch) != {"target", "patch"} or set(patch["target"]) - TARGET_KEYS:
            raise UnsupportedKustomization(f"{directory}: only inline JSON6902 patches with a target are supported")
        ops = yaml.safe_load(patch["patch"])
        hits = [i for i, obj in enumerate(objects) if _matches(obj, patch["target"])]
        if not hits:
            raise UnsupportedKustomization(f"{directory}: patch target {patch['target']} matches nothing")
        for i in hits:
            objects[i] = jsonpatch.apply_patch(objects[i], ops)
    ids = [(o["apiVersion"], o["kind"], o["metadata"].get("namespace"), o["metadata"]["name"]) for o in objects]
    if len(ids) != len(set(ids)):
        raise UnsupportedKustomization(f"{directory}: duplicate objects")
    return objects
