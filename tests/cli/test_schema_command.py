"""`vgpuctl schema [NAME]`: the JSON Schemas are package data (`vgpuctl/schemas`, a link to the repository's
`schemas/`: one copy), readable through importlib.resources, printed exactly as written. (That the built
wheel carries them is checked by .ci/run's smoke step, which installs the project non-editable.)"""

from __future__ import annotations

import fnmatch
import json
import tomllib
from importlib import resources
from typing import Any

import pytest

from tests.cli.conftest import ROOT, SCHEMAS

NAMES = sorted(p.name.removesuffix(".schema.json") for p in SCHEMAS.glob("*.schema.json"))


def test_the_package_reads_the_repository_schemas() -> None:
    link = ROOT / "vgpuctl" / "schemas"
    assert link.is_symlink() and link.resolve() == SCHEMAS.resolve()
    packaged = resources.files("vgpuctl").joinpath("schemas")
    assert sorted(e.name for e in packaged.iterdir() if e.name.endswith(".json")) == \
        sorted(p.name for p in SCHEMAS.glob("*.json"))
    # Every schema is matched by the package-data pattern the wheel is built with.
    data = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["vgpuctl"]
    for path in SCHEMAS.glob("*.json"):
        assert any(fnmatch.fnmatch(f"schemas/{path.name}", pattern) for pattern in data), path.name


def test_without_a_name_it_lists_the_names(run: Any) -> None:
    result = run("schema")
    assert result.exit_code == 0
    assert result.stdout.splitlines() == NAMES and len(NAMES) >= 7


@pytest.mark.parametrize("name", NAMES)
def test_it_prints_the_schema_as_written(run: Any, name: str) -> None:
    result = run("schema", name)
    assert result.exit_code == 0
    assert result.stdout == (SCHEMAS / f"{name}.schema.json").read_text()
    assert json.loads(result.stdout)["$schema"].endswith("2020-12/schema")


def test_the_file_name_works_too_and_an_unknown_name_is_a_usage_error(run: Any) -> None:
    assert run("schema", "doctor-report.schema.json").stdout == run("schema", "doctor-report").stdout
    result = run("schema", "doctor")
    assert result.exit_code == 2 and result.stdout == ""
    assert "no schema 'doctor'" in result.stderr and "doctor-report" in result.stderr
    assert "Traceback" not in result.stderr
