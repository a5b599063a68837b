"""The JSON reports of a mid-size fleet stay exactly what they were before the speed work of issue 17.

`tests/fixtures/scale/fleet-150.json.gz` is `benchmarks/snapshot_gen.fleet(150, seed=17)` written compactly
and gzipped (the shape the scale benchmarks time: 30 pods per node, 8 with vGPU allocations, Volcano
installed, a few defects). The golden files next to it are what `vgpuctl nodes`/`doctor -o json` printed
on it before any speed change (`why` on `why-pod.yaml` too: recorded later, from the committed code
without the speed changes, and equal to what it printed after them). Every run regenerates the reports,
compares them parsed (key order and whitespace aside) and checks them against schemas/. To re-record
after an intended output change: `python tests/cli/test_scale_goldens.py`, and review the diff.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import validate

SCALE = Path(__file__).resolve().parents[1] / "fixtures" / "scale"
SNAPSHOT = SCALE / "fleet-150.json.gz"

# (golden file, command line after the snapshot option, schema, exit code)
CASES = {
    "nodes-150.golden.json.gz": (["nodes", "-o", "json"], "node-report.schema.json", 1),
    "doctor-150.golden.json": (["doctor", "-o", "json"], "doctor-report.schema.json", 1),
    "doctor-150-all.golden.json": (["doctor", "--all", "-o", "json"], "doctor-report.schema.json", 1),
    # a pod that fits nowhere, so every node is replayed (recorded once vgpuctl/core/why had been quiet)
    "why-150.golden.json": (["why", "-f", str(SCALE / "why-pod.yaml"), "-o", "json"], "why-report.schema.json", 1),
}


def _read(path: Path) -> Any:
    raw = path.read_bytes()
    return json.loads(gzip.decompress(raw) if path.suffix == ".gz" else raw)


@pytest.mark.parametrize("golden", sorted(CASES))
def test_a_report_on_the_mid_size_fleet_equals_its_golden(golden: str, run: Any) -> None:
    args, schema, exit_code = CASES[golden]
    result = run(*args, "--snapshot", str(SNAPSHOT))
    assert result.exit_code == exit_code, result.stderr
    report = result.json()
    validate(schema, report)
    expected = _read(SCALE / golden)
    if report != expected:  # name the first difference instead of printing two 600 kB documents
        assert _first_difference(report, expected) == "", golden


def test_the_goldens_are_not_trivial() -> None:
    """The fleet exercises what the speed work touches: every node listed with its 8 GPUs and their pods,
    and the doctor's findings on nodes, pods and configs."""
    nodes = _read(SCALE / "nodes-150.golden.json.gz")
    assert len(nodes["nodes"]) == 150
    assert all(len(n["devices"]) >= 8 for n in nodes["nodes"])
    assert sum(len(d["pods"]) for n in nodes["nodes"] for d in n["devices"]) > 1150
    assert {f["code"] for n in nodes["nodes"] for f in n["findings"]} >= {"VGN002", "VGN007"}
    doctor = _read(SCALE / "doctor-150.golden.json")
    assert {f["code"] for f in doctor["findings"]} >= {"VGN002", "VGN007", "VGX002", "VGC006"}
    assert doctor["versions"]["volcano"] == "1.15.1"
    why = _read(SCALE / "why-150.golden.json")
    assert why["verdict"] == "no-fit" and why["fits"] == []
    assert sum(u["count"] for u in why["unfit"]) == 150


def _first_difference(got: Any, want: Any, where: str = "$") -> str:
    if type(got) is not type(want):
        return f"{where}: {got!r:.200} != {want!r:.200}"
    if isinstance(got, dict):
        for key in sorted(set(got) | set(want)):
            if key not in got or key not in want:
                return f"{where}.{key}: only in {'the report' if key in got else 'the golden file'}"
            if (diff := _first_difference(got[key], want[key], f"{where}.{key}")):
                return diff
        return ""
    if isinstance(got, list):
        for i, (a, b) in enumerate(zip(got, want, strict=False)):
            if (diff := _first_difference(a, b, f"{where}[{i}]")):
                return diff
        return f"{where}: {len(got)} items != {len(want)}" if len(got) != len(want) else ""
    return "" if got == want else f"{where}: {got!r:.200} != {want!r:.200}"


def _record() -> None:
    from typer.testing import CliRunner

    from vgpuctl.cli.app import app

    for golden, (args, _, _) in CASES.items():
        out = CliRunner().invoke(app, [*args, "--snapshot", str(SNAPSHOT)]).stdout
        text = json.dumps(json.loads(out), indent=1, ensure_ascii=False) + "\n"
        path = SCALE / golden
        path.write_bytes(gzip.compress(text.encode(), 9, mtime=0) if path.suffix == ".gz" else text.encode())


if __name__ == "__main__":
    _record()
