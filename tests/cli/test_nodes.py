"""`vgpuctl nodes --snapshot`: table, JSON contract, filters and exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.cli.conftest import EXAMPLES, validate

MIXED = str(Path(__file__).resolve().parents[1] / "fixtures" / "clusters" / "mixed.yaml")
BROKEN = EXAMPLES / "clusters" / "broken.yaml"


def test_json_is_schema_valid_and_reports_usage(run) -> None:
    result = run("nodes", "--snapshot", MIXED, "-o", "json")
    assert result.exit_code == 1  # gpu-old-plugin has a VGN002 error
    report = result.json()
    validate("node-report.schema.json", report)
    names = [n["name"] for n in report["nodes"]]
    assert names == sorted(names) and "cpu-1" not in names
    gpu_a = next(n for n in report["nodes"] if n["name"] == "gpu-a")
    assert gpu_a["devices"][0]["memoryUsed"] == 4096 and gpu_a["devices"][0]["pods"] == ["ml/trainer"]


def test_filters_and_clean_exit(run) -> None:
    result = run("nodes", "--snapshot", MIXED, "--family", "gpushare", "-o", "json")
    assert result.exit_code == 0
    assert [n["name"] for n in result.json()["nodes"]] == ["share-1"]
    assert [n["name"] for n in run("nodes", "gpu-a", "--snapshot", MIXED, "-o", "json").json()["nodes"]] == ["gpu-a"]


def test_table_shows_bars_pods_and_findings(run) -> None:
    result = run("nodes", "--snapshot", MIXED)
    assert "gpu-a" in result.stdout and "4096/40960" in result.stdout and "ml/trainer" in result.stdout
    assert "VGN002" in result.stdout and "group1-0" in result.stdout
    assert "\x1b[" not in result.stdout


def test_unknown_node_bad_selector_and_missing_file_are_usage_errors(run, tmp_path: Path) -> None:
    assert run("nodes", "nope", "--snapshot", MIXED).exit_code == 2
    bad = run("nodes", "--snapshot", MIXED, "-l", "a in ()")
    assert bad.exit_code == 2 and "in needs at least one value" in bad.stderr
    assert run("nodes", "--snapshot", MIXED, "-l", "a in (b)").exit_code == 0  # set-based, like kubectl
    result = run("nodes", "--snapshot", str(tmp_path / "missing.yaml"))
    assert result.exit_code == 2 and "no such file" in result.stderr


def test_unreachable_cluster_exits_3_with_one_line(run, tmp_path: Path) -> None:
    kubeconfig = tmp_path / "config"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\ncurrent-context: c\n"
        "clusters: [{name: c, cluster: {server: 'http://127.0.0.1:9'}}]\n"
        "contexts: [{name: c, context: {cluster: c, user: u}}]\nusers: [{name: u, user: {token: t}}]\n")
    result = run("nodes", "--kubeconfig", str(kubeconfig))
    assert result.exit_code == 3
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_table_marks_the_nodes_the_doctor_flags(run, tmp_path: Path) -> None:
    """Issue 15 §2: gpu-h100-0 looked like 8 healthy idle GPUs while doctor reported it broken."""
    lines = run("nodes", "--snapshot", str(BROKEN)).stdout.splitlines()
    head = next(i for i, line in enumerate(lines) if "gpu-h100-0" in line)
    assert lines[head].startswith("× gpu-h100-0") and lines[head].endswith("· 4 errors")
    block = lines[head:lines.index("", head)]
    assert {code for code in ("VGN004", "VGN005", "VGN008", "VGK004") if any(code in line for line in block)} == {
        "VGN004", "VGN005", "VGN008", "VGK004"}
    assert any(line.startswith("gpu-mig-0  vgpu") for line in lines)  # nothing flagged: no mark
    hami_only = tmp_path / "hami.yaml"
    hami_only.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "items": [{
        "apiVersion": "v1", "kind": "Node", "metadata": {"name": "hami-1", "annotations": {
            "hami.io/node-nvidia-register": '[{"id":"GPU-1","count":10,"devmem":40960,"devcore":100,'
                                            '"type":"NVIDIA A100","health":true}]'}}}]}))
    result = run("nodes", "--snapshot", str(hami_only))
    assert result.stdout.startswith("‼ hami-1  no device family · 0 devices Volcano sees · 1 warning\n"
                                    "  GPU stacks: hami (1 GPU)\n")  # its GPUs are shown, not a bare "0 devices"
    assert "VGN012" in result.stdout and result.exit_code == 0


def test_an_unknown_volcano_version_is_said_as_doctor_says_it(run, tmp_path: Path) -> None:
    """The node checks assume the newest Volcano when no vc-scheduler image is seen; `nodes` says so too."""
    bare = tmp_path / "bare.yaml"
    items = yaml.safe_load(Path(MIXED).read_text())["items"]
    bare.write_text(json.dumps({"apiVersion": "v1", "kind": "List",
                                "items": [i for i in items if i["kind"] != "Deployment"]}))
    nodes = run("nodes", "--snapshot", str(bare), "-o", "json")
    doctor = run("doctor", "--snapshot", str(bare), "-o", "json")
    note = [line for line in doctor.stderr.splitlines() if "Volcano version unknown" in line]
    assert note and note == [line for line in nodes.stderr.splitlines() if "Volcano version unknown" in line]
    assert run("nodes", "--snapshot", MIXED, "-o", "json").stderr == ""  # known from the vc-scheduler image
