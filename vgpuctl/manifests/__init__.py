"""The Kubernetes manifests vgpuctl ships as package data: one source of truth for the webhook's objects.

`webhook/` holds the admission webhook's kustomize base — Namespace, ServiceAccount, device-config
ConfigMap, Deployment, Service, PodDisruptionBudget, NetworkPolicy and both webhook configurations —
and `cluster-aware/` the overlay that turns on `webhook serve --cluster-aware` (a read-only ClusterRole
and its binding, the service-account token, the flag, more memory, egress to the API server).
`vgpuctl install --webhook [--cluster-aware]` reads them from here (so a non-editable `pip install .` has
them), and the repository's `deploy/base/` and `deploy/overlays/cluster-aware/` are byte-for-byte copies
for `kubectl apply -k`, kept equal by a test (`SHIPPED` says which is which).

The overlay names its base as `deploy/` lays it out (`../../base`), so paths are resolved in `deploy/`'s
terms and mapped onto the package's folders here; the same `build` renders the `deploy/` tree itself
for the manifest tests. Reading files is I/O, so this lives outside the pure core: `build` hands the
parsed files to `vgpuctl.core.kustomize`, and the CLI hands the objects to `vgpuctl.core.install.webhook`.
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable
from importlib import resources
from typing import Any

import yaml

from vgpuctl.core.kustomize import KUSTOMIZATION, KustomizeError, resource_names
from vgpuctl.core.kustomize import build as kustomize

#: The `deploy/` directories the package ships: their path under `deploy/` → their folder here.
SHIPPED = {"base": "webhook", "overlays/cluster-aware": "cluster-aware"}
BASE = "base"
CLUSTER_AWARE = "overlays/cluster-aware"

#: Reads the file at a `/`-separated path relative to a tree's root; None when there is no such file.
Reader = Callable[[str], str | None]


def build(read: Reader, directory: str) -> list[dict[str, Any]]:
    """`kustomize build directory` over the tree `read` reads: resources (files, and directories holding a
    kustomization, built first) and patches, by `vgpuctl.core.kustomize`. A path leaving the tree is refused."""
    text = read(posixpath.join(directory, KUSTOMIZATION))
    if text is None:
        raise KustomizeError(f"{directory}: no {KUSTOMIZATION}")
    kustomization = yaml.safe_load(text)
    loaded: dict[str, list[dict[str, Any]]] = {}
    for name in resource_names(kustomization, where=directory):
        path = posixpath.normpath(posixpath.join(directory, name))
        if path == ".." or path.startswith("../") or posixpath.isabs(path):
            raise KustomizeError(f"{directory}: resource {name} is outside the tree")
        if read(posixpath.join(path, KUSTOMIZATION)) is not None:
            loaded[name] = build(read, path)
            continue
        content = read(path)
        if content is None:
            raise KustomizeError(f"{directory}: resource {name} does not exist")
        loaded[name] = [doc for doc in yaml.safe_load_all(content) if isinstance(doc, dict)]
    return kustomize(kustomization, loaded, where=directory)


def _packaged(path: str) -> str | None:
    """`read` for the package: `path` in `deploy/`'s terms, read from the folder that ships it."""
    for shipped in sorted(SHIPPED, key=len, reverse=True):
        if path.startswith(shipped + "/"):
            entry = resources.files(__name__).joinpath(SHIPPED[shipped], path[len(shipped) + 1:])
            return entry.read_text(encoding="utf-8") if entry.is_file() else None
    return None


def webhook_objects(*, cluster_aware: bool = False) -> list[dict[str, Any]]:
    """The webhook's objects, in the order the kustomization lists its resources: the base, or with
    `cluster_aware` the cluster-aware overlay built on it."""
    return build(_packaged, CLUSTER_AWARE if cluster_aware else BASE)
