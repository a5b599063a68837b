"""`vgpuctl doctor --node` end to end: a `--root` that is not there is a usage error, and on a machine with
nothing to observe no check passes (each is skipped with the reason, in the table and the JSON)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from tests.cli.conftest import validate
from vgpuctl.cli.app import app


def doctor_node(root: Path | str, tmp_path: Path, *args: str) -> Any:
    """`doctor --node` with no nvidia-smi or npu-smi on PATH (an empty directory) and the node named gpu-1."""
    (tmp_path / "bin").mkdir(exist_ok=True)
    env = {"PATH": str(tmp_path / "bin"), "NODE_NAME": "gpu-1"}
    return CliRunner().invoke(app, ["doctor", "--node", "--root", str(root), *args], env=env, catch_exceptions=False)


def test_a_root_that_is_not_a_directory_is_a_usage_error(tmp_path: Path) -> None:
    """Before: accepted, and every file under it "not found" (exit 1)."""
    (tmp_path / "file").write_text("")
    for root, why in ((tmp_path / "missing", "no such directory"), (tmp_path / "file", "not a directory")):
        result = doctor_node(root, tmp_path)
        assert result.exit_code == 2 and result.stdout == ""
        assert result.stderr == f"vgpuctl: --root {root}: {why}\n"


def test_nothing_observed_is_skipped_not_passed(tmp_path: Path) -> None:
    (tmp_path / "root").mkdir()
    report = doctor_node(tmp_path / "root", tmp_path, "-o", "json")
    assert report.exit_code == 1
    data = json.loads(report.stdout)
    validate("doctor-report.schema.json", data)
    assert [(c["code"], c["status"]) for c in data["checks"]] == [
        ("VGN019", "fail"), ("VGN017", "skip"), ("VGN019", "skip"), ("VGN019", "skip"), ("VGN019", "skip")]
    assert all(c["reason"] for c in data["checks"][1:])
    assert [f["subject"] for f in data["findings"]] == ["node/gpu-1:driver"]
    assert data["summary"]["skipped"] == 4
    table = doctor_node(tmp_path / "root", tmp_path).stdout
    assert "√" not in table
    assert "– nvidia is the default runtime of the container engine in use  (skipped: no NVIDIA GPU seen" in table
