"""`vgpuctl nodes` on a node whose GPUs only HAMi's NVIDIA plugin registers (issue 24 part 4): the GPUs are shown, with
VGN012 saying Volcano sees none, instead of a bare "0 devices"."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.cli.conftest import validate

MIXED = Path(__file__).resolve().parents[1] / "fixtures" / "clusters" / "mixed-stacks.yaml"


def _hami_only(tmp_path: Path) -> str:
    """The mixed-stacks cluster with gpu-hami-1's Volcano vGPU registration and resources removed: HAMi's alone."""
    snapshot = yaml.safe_load(MIXED.read_text())
    for item in snapshot["items"]:
        if item["kind"] == "Node" and item["metadata"]["name"] == "gpu-hami-1":
            del item["metadata"]["annotations"]["volcano.sh/node-vgpu-register"]
            for part in ("capacity", "allocatable"):
                resources = item["status"][part]
                item["status"][part] = {k: v for k, v in resources.items() if not k.startswith("volcano.sh/")}
    path = tmp_path / "hami-only.yaml"
    path.write_text(yaml.safe_dump(snapshot))
    return str(path)


def _node(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(n for n in report["nodes"] if n["name"] == name)


def test_hami_only_gpus_are_shown_with_vgn012(run, tmp_path: Path) -> None:
    snapshot = _hami_only(tmp_path)
    result = run("nodes", "--snapshot", snapshot, "-o", "json")
    report = result.json()
    validate("node-report.schema.json", report)
    node = _node(report, "gpu-hami-1")
    assert node["devices"] == [] and node["families"] == []
    assert node["stacks"] == [{"name": "hami", "source": "hami.io/node-nvidia-register", "gpus": 2}]
    assert [(f["code"], f["severity"]) for f in node["findings"]] == [("VGN012", "warning")]
    assert "Volcano vGPU sees no GPU here" in node["findings"][0]["message"]
    assert "stacks" not in _node(report, "gpu-ok-1")  # one stack Volcano reads: nothing to say
    table = run("nodes", "--snapshot", snapshot, "gpu-hami-1").stdout
    assert "0 devices Volcano sees" in table and "GPU stacks: hami (2 GPUs)" in table and "VGN012" in table
    ok = run("nodes", "--snapshot", snapshot, "gpu-ok-1").stdout
    assert "GPU stacks" not in ok and "Volcano sees" not in ok
