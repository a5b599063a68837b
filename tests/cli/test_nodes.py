"""`vgpuctl nodes --snapshot`: table, JSON contract, filters and exit codes."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import validate

MIXED = str(Path(__file__).resolve().parents[1] / "fixtures" / "clusters" / "mixed.yaml")


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
