"""One source of truth for the webhook's manifests: `vgpuctl/manifests/webhook/` (package data, what
`install --webhook` applies) and `deploy/base/` (what `kubectl apply -k` applies) hold the same bytes,
and the package declares them, so a non-editable `pip install .` ships them."""

from __future__ import annotations

import fnmatch
import sys
from pathlib import Path

import pytest

from tests.manifests.conftest import BASE, ROOT
from tests.manifests.kustomize import render
from vgpuctl.manifests import webhook_files, webhook_objects

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

PACKAGED = ROOT / "vgpuctl" / "manifests" / "webhook"
SYNC = "cp vgpuctl/manifests/webhook/*.yaml deploy/base/"


def test_deploy_base_is_a_byte_for_byte_copy_of_the_packaged_manifests() -> None:
    packaged = {p.name for p in PACKAGED.glob("*.yaml")}
    copied = {p.name for p in BASE.glob("*.yaml")}
    assert copied == packaged, f"deploy/base and vgpuctl/manifests/webhook list different files: {SYNC}"
    for name in sorted(packaged):
        assert (BASE / name).read_bytes() == (PACKAGED / name).read_bytes(), \
            f"deploy/base/{name} differs from vgpuctl/manifests/webhook/{name} (the source): {SYNC}"


def test_install_reads_the_objects_kustomize_renders_from_deploy_base() -> None:
    assert webhook_objects() == render(BASE)
    assert set(webhook_files()) == {p.name for p in PACKAGED.glob("*.yaml")}


def test_the_package_data_declaration_covers_every_manifest() -> None:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    patterns = config["tool"]["setuptools"]["package-data"]["vgpuctl.manifests"]
    for path in PACKAGED.glob("*.yaml"):
        relative = str(path.relative_to(PACKAGED.parent))
        assert any(fnmatch.fnmatch(relative, p) for p in patterns), relative
    assert (PACKAGED.parent / "__init__.py").exists()  # a real package, so setuptools installs its data


@pytest.mark.parametrize("name", sorted(p.name for p in PACKAGED.glob("*.yaml")))
def test_packaged_files_parse(name: str) -> None:
    import yaml

    assert list(yaml.safe_load_all(Path(PACKAGED / name).read_text()))
