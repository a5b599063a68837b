"""One source of truth for the webhook's manifests: `vgpuctl/manifests/webhook/` and
`vgpuctl/manifests/cluster-aware/` (package data, what `install --webhook [--cluster-aware]` applies) and
`deploy/base/` and `deploy/overlays/cluster-aware/` (what `kubectl apply -k` applies) hold the same bytes,
both are built by the same renderer, and the package declares them, so a non-editable `pip install .`
ships them."""

from __future__ import annotations

import fnmatch
import tomllib
from pathlib import Path

import pytest

from tests.manifests.conftest import BASE, DEPLOY, ROOT
from tests.manifests.kustomize import render
from vgpuctl.manifests import SHIPPED, _packaged, webhook_objects

PACKAGED = ROOT / "vgpuctl" / "manifests" / "webhook"
PAIRS = sorted((DEPLOY / deploy, ROOT / "vgpuctl" / "manifests" / folder) for deploy, folder in SHIPPED.items())
PAIR_IDS = [str(d.relative_to(DEPLOY)) for d, _ in PAIRS]


@pytest.mark.parametrize(("deploy", "packaged"), PAIRS, ids=PAIR_IDS)
def test_every_shipped_deploy_directory_is_a_byte_for_byte_copy(deploy: Path, packaged: Path) -> None:
    sync = f"cp {packaged.relative_to(ROOT)}/*.yaml {deploy.relative_to(ROOT)}/"
    names = {p.name for p in packaged.glob("*.yaml")}
    assert {p.name for p in deploy.glob("*.yaml")} == names, f"{deploy} and {packaged} list different files: {sync}"
    for name in sorted(names):
        assert (deploy / name).read_bytes() == (packaged / name).read_bytes(), \
            f"{deploy.relative_to(ROOT)}/{name} differs from {packaged.relative_to(ROOT)}/{name} (the source): {sync}"
    shipped = str(deploy.relative_to(DEPLOY))  # what `install` reads, through the reader `webhook_objects` uses
    for name in sorted(names):
        assert _packaged(f"{shipped}/{name}") == (packaged / name).read_text(encoding="utf-8"), \
            f"the package does not ship {packaged.relative_to(ROOT)}/{name}"


def test_install_reads_the_objects_kustomize_renders_from_deploy_base() -> None:
    assert webhook_objects() == render(BASE)


def test_install_cluster_aware_reads_the_objects_kustomize_renders_from_the_overlay() -> None:
    overlay = webhook_objects(cluster_aware=True)
    assert overlay == render(DEPLOY / "overlays" / "cluster-aware")
    assert [o["kind"] for o in overlay][-2:] == ["ClusterRole", "ClusterRoleBinding"]
    assert webhook_objects() == render(BASE)  # building the overlay never changes the base it read


def test_the_package_data_declaration_covers_every_manifest() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["vgpuctl.manifests"]
    for _, packaged in PAIRS:
        for path in packaged.glob("*.yaml"):
            relative = str(path.relative_to(PACKAGED.parent))
            assert any(fnmatch.fnmatch(relative, p) for p in patterns), relative
    assert (PACKAGED.parent / "__init__.py").exists()  # a real package, so setuptools installs its data


@pytest.mark.parametrize("path", sorted(p for _, packaged in PAIRS for p in packaged.glob("*.yaml")),
                         ids=lambda p: f"{p.parent.name}/{p.name}")
def test_packaged_files_parse(path: Path) -> None:
    import yaml

    assert list(yaml.safe_load_all(path.read_text()))
