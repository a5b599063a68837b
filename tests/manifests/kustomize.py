"""`kustomize build` of a directory of our own `deploy/` tree (no kustomize binary in CI), with the product's
renderer: `vgpuctl.manifests.build` reads the files, `vgpuctl.core.kustomize` builds — the same code that
renders the packaged manifests `install --webhook [--cluster-aware]` applies, so the tests check what ships.

It supports exactly what `deploy/` uses — `resources` (files and directories with a kustomization) and
`patches` with a `target` and an inline RFC 6902 patch — and refuses anything else
(`UnsupportedKustomization`), so a kustomization that grows a feature the renderer lacks fails the tests
instead of being rendered wrongly.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.manifests.conftest import DEPLOY
from vgpuctl.core.kustomize import KustomizeError as UnsupportedKustomization
from vgpuctl.manifests import build

__all__ = ["UnsupportedKustomization", "render"]


def _reader(root: Path) -> Any:
    def read(path: str) -> str | None:
        file = root / path
        return file.read_text(encoding="utf-8") if file.is_file() else None

    return read


def render(directory: Path, root: Path = DEPLOY) -> list[dict[str, Any]]:
    """The objects of `directory`, a kustomization under `root` (default: the repository's `deploy/`)."""
    return build(_reader(root), directory.resolve().relative_to(root.resolve()).as_posix())
