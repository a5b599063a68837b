"""Tables lose no fact at 80 columns: `vgpuctl nodes` drops the bars before any figure and wraps names
rather than cutting them (as `kubectl get` keeps every column); `install --help` keeps option names whole."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len
from typer.testing import CliRunner

from tests.cli.conftest import EXAMPLES
from vgpuctl.cli.app import app

CLUSTERS = Path(__file__).resolve().parents[1] / "fixtures" / "clusters"
SNAPSHOTS = [EXAMPLES / "clusters" / "broken.yaml", CLUSTERS / "mixed.yaml", CLUSTERS / "mixed-stacks.yaml"]
HEADERS = ("#", "DEVICE", "TYPE", "MODE", "HEALTH", "MEMORY (MiB)", "CORES", "SLOTS", "PODS")
STACKS = "STACKS"  # the column of a node where several GPU stacks offer GPUs (docs/stacks.md)
BAR_CELLS = re.compile("[█░]")
FINDING_LINE = re.compile(r"  \S")  # a continuation line of a row starts with three spaces (the empty #)


def _invoke(*args: str, columns: int) -> Any:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(columns), "NO_COLOR": "1"},
                                catch_exceptions=False)
    assert result.exit_code in (0, 1), result.stderr
    return result


def _tables(text: str) -> list[list[dict[str, str]]]:
    """Each device table as rows of {header: the cell's text, its wrapped lines joined}, read by column
    position under the header line (so a folded name is put back together)."""
    tables: list[list[dict[str, str]]] = []
    lines = text.splitlines()
    for at, line in enumerate(lines):
        if not line.startswith("#  DEVICE"):
            continue
        headers = (*HEADERS, STACKS) if f"  {STACKS}" in line else HEADERS
        starts = [line.index(h) for h in headers]
        rows: list[dict[str, str]] = []
        for body in lines[at + 1:]:
            if not body.strip() or FINDING_LINE.match(body):  # the blank line or the node's findings
                break
            cells = {h: body[s:e].strip() for h, s, e in zip(headers, starts, [*starts[1:], None], strict=True)}
            if cells["#"]:
                rows.append(cells)
            else:  # a continuation line of the row above
                for header, value in cells.items():
                    rows[-1][header] += value
        tables.append(rows)
    return tables


def _figure(used: int, total: int) -> str:
    return f"{used}/{total}" if total > 0 else "–"


@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=[s.stem for s in SNAPSHOTS])
def test_nodes_at_80_columns_keeps_every_column_and_figure(snapshot: Path) -> None:
    report = _invoke("nodes", "--snapshot", str(snapshot), "-o", "json", columns=80)
    nodes = [n for n in json.loads(report.stdout)["nodes"] if n["devices"]]
    text = _invoke("nodes", "--snapshot", str(snapshot), columns=80).stdout
    table_lines = [line for line in text.splitlines() if not line.startswith(("  ", "×", "‼", "i "))]
    assert all(cell_len(line.rstrip()) <= 80 for line in table_lines)
    tables = _tables(text)
    assert len(tables) == len(nodes)
    for node, rows in zip(nodes, tables, strict=True):
        assert len(rows) == len(node["devices"])
        for device, row in zip(node["devices"], rows, strict=True):
            assert row["#"] == str(device["index"])
            assert row["MEMORY (MiB)"] == _figure(device["memoryUsed"], device["memoryTotal"])
            assert row["CORES"] == _figure(device["coresUsed"], device["coresTotal"])
            assert row["SLOTS"] == _figure(device["slotsUsed"], device["slotsTotal"])
            assert row["HEALTH"] == ("ok" if device["health"] else "unhealthy")
            assert row["MODE"] == device["mode"]
            # Names may wrap (a folded line loses its spaces when put back), never lose a character.
            pods = ", ".join(device["pods"]) or "–"
            if device["slices"]:
                pods += f"  [{', '.join(device['slices'])}]"
            assert row["PODS"].replace(" ", "") == pods.replace(" ", "")
            assert row["TYPE"].replace(" ", "") in device["type"].replace(" ", "")
            assert row["TYPE"].replace(" ", "").endswith(device["type"].split("NVIDIA")[-1].replace(" ", ""))
            if "stacks" in node:  # every stack offering the GPU, whole, or – where only one is known to
                assert row[STACKS].replace(" ", "") == ", ".join(device.get("stacks", ["–"])).replace(" ", "")
            else:
                assert STACKS not in row


def test_nodes_keeps_the_bars_when_they_fit() -> None:
    wide = _invoke("nodes", "--snapshot", str(SNAPSHOTS[0]), columns=200).stdout
    narrow = _invoke("nodes", "--snapshot", str(SNAPSHOTS[0]), columns=80).stdout
    assert BAR_CELLS.search(wide) and "██░░░░░░░░ 10240/40960" in wide
    assert not BAR_CELLS.search(narrow) and "10240/40960" in narrow


def _option_names(help_text: str) -> set[str]:
    return set(re.findall(r"--[a-z][a-z0-9-]*[a-z0-9]", help_text))


def test_install_help_at_80_columns_names_every_option_whole() -> None:
    wide = _invoke("install", "--help", columns=200).stdout
    narrow = _invoke("install", "--help", columns=80).stdout
    assert "--webhook-image" in wide
    assert _option_names(narrow) == _option_names(wide)
    assert all(cell_len(line.rstrip()) <= 80 for line in narrow.splitlines())
