"""Cluster data never speaks to the admin's terminal (kubectl's CVE-2021-25743 class): names, annotation values,
device types and ids, file names reach every human output with their control characters escaped, and never as
rich markup; JSON and YAML stay exact.

The snapshots are the bundled examples with hostile values put where a cluster (or a file) can put them.
"""

from __future__ import annotations

import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.conftest import EXAMPLES, validate
from vgpuctl.cli.env import make_console

#: Any control character but the newline: what must never reach a terminal from data.
RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")
NODE = "npu\x1b]0;owned\x07[bold]node[/bold]"  # retitles the terminal; markup rich would eat
MODE = "MIG\x1b[41m\r\n√ 0 errors\x9b2J"  # colours, forges a line, clears the screen (8-bit CSI)
TYPE = "NVIDIA-NVIDIA A100\x1b[5m[blink]"
GPU_NODE = "gpu-[bold]node[/bold]-0\x1b]0;x\x07"


def _hostile(source: Path, tmp_path: Path, **replace: str) -> Path:
    """A snapshot as JSON, each string `old` (a key) replaced by its hostile value."""
    text = json.dumps(yaml.safe_load(source.read_text()))
    for old, new in replace.items():
        text = text.replace(json.dumps(old)[1:-1], json.dumps(new)[1:-1])
    path = tmp_path / f"hostile-{source.stem}.json"
    path.write_text(text)
    return path


@pytest.fixture
def broken(tmp_path: Path) -> Path:
    """broken.yaml as JSON with a hostile node name, a hostile vgpu-mode on notebook-bob, a hostile GPU type."""
    doc = yaml.safe_load((EXAMPLES / "clusters" / "broken.yaml").read_text())
    for item in doc["items"]:
        if item["metadata"].get("name") == "notebook-bob":
            item["metadata"]["annotations"]["volcano.sh/vgpu-mode"] = MODE
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(doc))
    return _hostile(path, tmp_path, **{"npu-node-0": NODE, "NVIDIA-NVIDIA H100 80GB HBM3": TYPE})


def _shown(value: str) -> str:
    """How a value is shown: each control character as Python writes it in a string literal."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in value)


def _clean(*outputs: str) -> None:
    for output in outputs:
        assert not RAW.search(output), repr(RAW.search(output))


def test_doctor_shows_hostile_values_escaped(run, broken: Path) -> None:
    result = run("doctor", "--snapshot", str(broken))
    assert result.exit_code == 1
    _clean(result.stdout, result.stderr)
    assert _shown(MODE) in result.stdout and _shown(NODE) in result.stdout  # the finding and its subject
    assert "\n√ 0 errors" not in result.stdout  # no forged line


def test_nodes_shows_hostile_names_and_types_escaped(run, broken: Path) -> None:
    result = run("nodes", "--snapshot", str(broken))
    _clean(result.stdout, result.stderr)
    assert _shown(NODE) in result.stdout  # the header line, literally: `[bold]` included
    assert _shown(TYPE.removeprefix("NVIDIA-NVIDIA ")) in result.stdout  # the TYPE column


def test_why_shows_the_rejected_value_escaped(run, broken: Path) -> None:
    result = run("why", "notebook-bob", "-n", "ml", "--snapshot", str(broken))
    assert result.exit_code == 1
    _clean(result.stdout, result.stderr)
    assert _shown(MODE) in result.stdout


def test_why_prints_node_names_literally_not_as_markup(run, tmp_path: Path) -> None:
    snapshot = _hostile(EXAMPLES / "clusters" / "healthy.yaml", tmp_path, **{"gpu-node-0": GPU_NODE})
    result = run("why", "-f", str(EXAMPLES / "vgpu" / "deployment.yaml"), "--snapshot", str(snapshot))
    assert result.exit_code == 0
    _clean(result.stdout, result.stderr)
    assert _shown(GPU_NODE) in result.stdout  # `[bold]…[/bold]` as written, not made bold and dropped


def test_lint_shows_file_names_and_values_escaped(run, tmp_path: Path) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "p", "namespace": "ml", "annotations": {"volcano.sh/vgpu-mode": MODE}},
           "spec": {"schedulerName": "volcano", "containers": [
               {"name": "c", "image": "i", "resources": {"limits": {"volcano.sh/vgpu-number": 1}}}]}}
    name = "pod\x1b[31m[red]x.yaml"
    (tmp_path / name).write_text(yaml.safe_dump(pod))
    result = run("lint", str(tmp_path))
    assert result.exit_code == 1
    _clean(result.stdout, result.stderr)
    assert _shown(name) in result.stdout and _shown(MODE) in result.stdout


def test_usage_errors_quote_values_on_one_line(run, broken: Path) -> None:
    for args in (("why", "gone\x1b[2J\nvgpuctl: fine", "--snapshot", str(broken)),
                 ("nodes", "gone\x1b[2J\nx", "--snapshot", str(broken))):
        result = run(*args)
        assert result.exit_code == 2
        _clean(result.stderr)
        assert len(result.stderr.splitlines()) == 1 and "gone\\x1b[2J\\n" in result.stderr


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_json_and_yaml_keep_the_values_exact(run, broken: Path, fmt: str) -> None:
    result = run("doctor", "--snapshot", str(broken), "-o", fmt)
    report: Any = json.loads(result.stdout) if fmt == "json" else yaml.safe_load(result.stdout)
    validate("doctor-report.schema.json", report)
    messages = [f["message"] for f in report["findings"]]
    assert any(MODE in m for m in messages)  # the raw value, control characters and all
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout and "\r" not in result.stdout  # as escapes
    _clean(result.stdout)  # the 8-bit CSI (U+009B) too, which JSON encoders write raw


def test_yaml_keeps_a_next_line_character_exact(run, broken: Path, tmp_path: Path) -> None:
    """PyYAML writes U+0085 (NEL, a C1 control) raw in single quotes, where it reads back as a space."""
    path = _hostile(broken, tmp_path, **{MODE: "MIG\x85x"})
    result = run("doctor", "--snapshot", str(path), "-o", "yaml")
    assert "\x85" not in result.stdout
    assert any("MIG\x85x" in f["message"] for f in yaml.safe_load(result.stdout)["findings"])


def test_the_console_prints_no_markup_and_no_raw_control_whoever_prints() -> None:
    """The last guard, for lines a command prints itself: `make_console` reads nothing as markup and escapes
    control characters, keeping the layout's line breaks."""
    out = io.StringIO()
    make_console(out).print(f"note: {MODE} {NODE}\nnext line")
    printed = out.getvalue()
    _clean(printed)  # rich itself drops BEL and CR; the rest is escaped
    assert printed.startswith("note: MIG\\x1b[41m\n√ 0 errors\\x9b2J npu\\x1b]0;owned[bold]node[/bold]")
    assert printed.endswith("\nnext line\n")
