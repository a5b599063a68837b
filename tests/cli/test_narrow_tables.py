"""Tables lose no fact at 80 columns: `vgpuctl nodes` drops the bars before any figure, moves a device's pods
under its row rather than cutting a name (issue 27), cuts TYPE or MODE with an ellipsis, and only then drops
columns, saying which; `install --help` keeps option names whole."""

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
STACKS = "STACKS"  # the column of a node where several GPU stacks offer GPUs (docs/stacks.md)
BAR_CELLS = re.compile("[█░]")
FINDING_LINE = re.compile(r"  \S")  # a continuation line of a row starts with three spaces (the empty #)


def _invoke(*args: str, columns: int) -> Any:
    result = CliRunner().invoke(app, list(args), env={"COLUMNS": str(columns), "NO_COLOR": "1"},
                                catch_exceptions=False)
    assert result.exit_code in (0, 1), result.stderr
    return result


def _tables(text: str) -> list[list[dict[str, str]]]:
    """Each device table as rows of {header: the cell's text}, read by column position under the header line;
    a device's pods and stacks moved under its row (`   pods: a, b` and its continuation lines) are put back
    as its PODS and STACKS, and the note on dropped columns as the key `dropped`."""
    tables: list[list[dict[str, str]]] = []
    lines = text.splitlines()
    for at, line in enumerate(lines):
        if not line.startswith("#  "):
            continue
        headers = re.split(r"  +", line.strip())
        starts = [line.index(h) for h in headers]
        rows: list[dict[str, str]] = []
        field = ""
        for body in lines[at + 1:]:
            if not body.strip() or FINDING_LINE.match(body):  # the blank line or the node's findings
                break
            under = re.match(r"   (pods|stacks): (.*)", body)
            if under:
                field = under.group(1).upper()
                rows[-1][field] = under.group(2).strip()
            elif body.startswith("   ("):
                field = "dropped"
                rows[-1]["dropped"] = body.strip()
            elif body.startswith("    "):  # a continuation line of the field above
                rows[-1][field] += " " + body.strip()
            else:
                ends = [*starts[1:], None]
                rows.append({h: body[s:e].strip() for h, s, e in zip(headers, starts, ends, strict=True)})
        tables.append(rows)
    return tables


def _shown(cell: str) -> str:
    """A figure cell without its bar (drawn when the table has room)."""
    return BAR_CELLS.sub("", cell).strip()


def _cut(shown: str, whole: str) -> bool:
    """`shown` is `whole`, or a start of it cut with an ellipsis."""
    return shown == whole or (shown.endswith("…") and whole.startswith(shown[:-1]))


def _figure(used: int, total: int) -> str:
    return f"{used}/{total}" if total > 0 else "–"


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("snapshot", SNAPSHOTS, ids=[s.stem for s in SNAPSHOTS])
def test_nodes_at_80_columns_keeps_every_figure_and_every_name_whole(snapshot: Path, columns: int) -> None:
    report = _invoke("nodes", "--snapshot", str(snapshot), "-o", "json", columns=columns)
    nodes = [n for n in json.loads(report.stdout)["nodes"] if n["devices"]]
    text = _invoke("nodes", "--snapshot", str(snapshot), columns=columns).stdout
    table_lines = [line for line in text.splitlines() if not line.startswith(("  ", "×", "‼", "i "))]
    assert all(cell_len(line.rstrip()) <= columns for line in table_lines)
    tables = _tables(text)
    assert len(tables) == len(nodes)
    for node, rows in zip(nodes, tables, strict=True):
        assert len(rows) == len(node["devices"])
        for device, row in zip(node["devices"], rows, strict=True):
            assert "dropped" not in row  # at 80 columns every column is there, whole or cut
            assert row["#"] == str(device["index"])
            assert _shown(row["MEMORY (MiB)"]) == _figure(device["memoryUsed"], device["memoryTotal"])
            assert _shown(row["CORES"]) == _figure(device["coresUsed"], device["coresTotal"])
            assert _shown(row["SLOTS"]) == _figure(device["slotsUsed"], device["slotsTotal"])
            assert row["HEALTH"] == ("ok" if device["health"] else "unhealthy")
            assert _cut(row["MODE"], device["mode"])
            # Names are whole: on the row, or under it with the rest of the device's pods.
            pods = ", ".join(device["pods"])
            if device["slices"]:
                pods += f"  [{', '.join(device['slices'])}]"
            assert row.get("PODS", "–") == (pods or "–")
            assert _cut(row["TYPE"], device["type"].removeprefix("NVIDIA-").removeprefix("NVIDIA "))
            if "stacks" in node and len(device.get("stacks", [])) > 1:
                assert row[STACKS] == ", ".join(device["stacks"])
            elif "stacks" not in node:
                assert STACKS not in row


def test_a_long_pod_name_is_never_cut(tmp_path: Path) -> None:
    """Issue 27: at 80 columns `ml/infere|nce-7f9c-|abcde` was folded over three lines."""
    text = _invoke("nodes", "--snapshot", str(SNAPSHOTS[0]), columns=80).stdout
    assert "   pods: ml/inference-7f9c-abcde" in text.splitlines()


def test_columns_dropped_at_30_columns_are_named(tmp_path: Path) -> None:
    report = json.loads(_invoke("nodes", "--snapshot", str(SNAPSHOTS[0]), "-o", "json", columns=30).stdout)
    text = _invoke("nodes", "--snapshot", str(SNAPSHOTS[0]), columns=30).stdout
    tables = _tables(text)
    nodes = [n for n in report["nodes"] if n["devices"]]
    for node, rows in zip(nodes, tables, strict=True):
        headers = set(rows[0]) - {"dropped", "PODS", "STACKS"}
        assert {"#", "MEMORY (MiB)"} <= headers
        missing = [h for h in ("DEVICE", "TYPE", "MODE", "HEALTH", "CORES", "SLOTS") if h not in headers]
        assert missing  # 30 columns cannot hold them all
        note = rows[-1]["dropped"]
        assert all(h in note for h in missing) and "-o json" in note
        for device, row in zip(node["devices"], rows, strict=True):
            assert _shown(row["MEMORY (MiB)"]) == _figure(device["memoryUsed"], device["memoryTotal"])


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


def _on_a_terminal(*args: str, columns: int) -> str:
    """vgpuctl's stdout on a real pseudo-terminal `columns` wide (a finding folds only on a terminal)."""
    import fcntl
    import os
    import struct
    import subprocess
    import sys
    import termios

    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"} | {"NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-c", "from vgpuctl.cli.app import main; main()", *args],
                            stdout=slave, stderr=subprocess.DEVNULL, env=env)
    os.close(slave)
    chunks: list[bytes] = []
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(master)
    assert proc.wait(timeout=120) in (0, 1)
    return re.sub("\x1b\\[[0-9;]*m", "", b"".join(chunks).decode().replace("\r\n", "\n"))  # NO_COLOR keeps bold


def test_a_folded_finding_keeps_its_indent_on_a_terminal() -> None:
    out = _on_a_terminal("nodes", "--snapshot", str(SNAPSHOTS[0]), columns=80)
    lines = out.splitlines()
    assert all(cell_len(line.rstrip()) <= 80 for line in lines if not line.startswith("   pods: "))
    at = next(i for i, line in enumerate(lines) if line.startswith("  × VGN005  "))
    folded = []
    for line in lines[at + 1:]:
        if not line.startswith(" " * 12) or not line.strip():
            break
        folded.append(line)
    assert folded, lines[at:at + 3]  # the message is longer than 80 columns: it folded, under itself
    message = " ".join([lines[at][len("  × VGN005  "):], *(line.strip() for line in folded)])
    piped = _invoke("nodes", "--snapshot", str(SNAPSHOTS[0]), columns=80).stdout
    assert f"  × VGN005  {message}" in piped.splitlines()  # piped: one line, the same words
