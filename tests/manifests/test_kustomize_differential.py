"""`vgpuctl.core.kustomize` (what `install --webhook [--cluster-aware]` renders, and what the manifest tests
check) against the real `kubectl kustomize`, on `deploy/base` and every directory under `deploy/overlays`
(found, not listed: an overlay added later is compared too).

Why the project keeps its own renderer: the core is pure (no subprocess, import-linter), `install` must work
where no kubectl or kustomize binary is installed (a plain `pip install`), and it renders the package's own
manifests only, refusing any kustomize feature it lacks (`KustomizeError`) rather than rendering it wrongly.
This test is what keeps it honest: object for object, the same output as kustomize.

One intended difference: `kubectl kustomize` sorts objects by kind by default (`--reorder legacy`); the core
keeps the order the kustomizations declare, as `kubectl kustomize --reorder none` does, and `install`
applies in its own order anyway. Compared exactly with `--reorder none`, as a multiset with the default.
"""

from __future__ import annotations

import shutil
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.manifests.conftest import DEPLOY
from tests.manifests.kustomize import render

KUBECTL = shutil.which("kubectl")
TREES = [DEPLOY / "base", *sorted(p for p in (DEPLOY / "overlays").iterdir() if p.is_dir())]

pytestmark = pytest.mark.skipif(KUBECTL is None, reason="kubectl is not installed: nothing to compare against")


@cache
def kubectl_kustomize(tree: Path, *flags: str) -> tuple[int, str, str]:
    assert KUBECTL is not None
    done = subprocess.run([KUBECTL, "kustomize", *flags, str(tree)], capture_output=True, text=True, timeout=120)
    return done.returncode, done.stdout, done.stderr


def _objects(text: str) -> list[dict[str, Any]]:
    return [o for o in yaml.safe_load_all(text) if o is not None]


def _key(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    return obj["apiVersion"], obj["kind"], obj["metadata"].get("namespace", ""), obj["metadata"]["name"]


def test_every_overlay_is_found() -> None:
    names = {t.name for t in TREES}
    assert {"base", "cert-manager", "cluster-aware", "cluster-aware-cert-manager"} <= names
    assert all((t / "kustomization.yaml").is_file() for t in TREES), "a directory under deploy/ without a kustomization"


@pytest.mark.parametrize("tree", TREES, ids=[str(t.relative_to(DEPLOY)) for t in TREES])
def test_the_same_objects_as_kubectl_kustomize(tree: Path) -> None:
    code, out, err = kubectl_kustomize(tree)
    assert code == 0, err
    theirs = _objects(out)
    ours = render(tree)
    assert sorted(map(_key, ours)) == sorted(map(_key, theirs))
    assert sorted(ours, key=_key) == sorted(theirs, key=_key)


@pytest.mark.parametrize("tree", TREES, ids=[str(t.relative_to(DEPLOY)) for t in TREES])
def test_in_the_declared_order_like_reorder_none(tree: Path) -> None:
    code, out, err = kubectl_kustomize(tree, "--reorder", "none")
    if code != 0 and "reorder" in err:
        pytest.skip(f"this kubectl has no --reorder: {err.strip()}")
    assert code == 0, err
    assert render(tree) == _objects(out)
