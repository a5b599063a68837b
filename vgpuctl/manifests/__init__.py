"""The Kubernetes manifests vgpuctl ships as package data: one source of truth for the webhook's objects.

`webhook/` holds the admission webhook's kustomize base — Namespace, ServiceAccount, device-config
ConfigMap, Deployment, Service, PodDisruptionBudget, NetworkPolicy and both webhook configurations.
`vgpuctl install --webhook` reads them from here (so a non-editable `pip install .` has them), and the
repository's `deploy/base/` is a byte-for-byte copy for `kubectl apply -k`, kept equal by a test.

Reading files is I/O, so this lives outside the pure core: the CLI loads the objects and hands them to
`vgpuctl.core.install.webhook`, which plans with plain dicts.
"""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml

WEBHOOK_DIR = "webhook"
KUSTOMIZATION = "kustomization.yaml"


def webhook_files() -> dict[str, str]:
    """File name → text of every file of the packaged webhook base (kustomization.yaml included)."""
    folder = resources.files(__name__).joinpath(WEBHOOK_DIR)
    return {entry.name: entry.read_text(encoding="utf-8") for entry in folder.iterdir()
            if entry.is_file() and entry.name.endswith(".yaml")}


def webhook_objects() -> list[dict[str, Any]]:
    """The webhook's objects, in the order the kustomization lists its resources."""
    files = webhook_files()
    kustomization = yaml.safe_load(files[KUSTOMIZATION])
    objects: list[dict[str, Any]] = []
    for name in kustomization.get("resources") or []:
        objects += [doc for doc in yaml.safe_load_all(files[name]) if isinstance(doc, dict)]
    return objects
