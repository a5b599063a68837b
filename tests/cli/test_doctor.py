"""`vgpuctl doctor` end to end on the bundled snapshots: contract, exit codes, grouping, --pre, --node."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import EXAMPLES, validate

HEALTHY = str(EXAMPLES / "clusters" / "healthy.yaml")
BROKEN = str(EXAMPLES / "clusters" / "broken.yaml")


def test_healthy_cluster_passes_and_report_is_schema_valid(run) -> None:
    result = run("doctor", "--snapshot", HEALTHY, "-o", "json")
    assert result.exit_code == 0
    report = result.json()
    validate("doctor-report.schema.json", report)
    assert report["summary"]["errors"] == 0 and report["summary"]["warnings"] == 0
    assert report["versions"]["volcano"] == "1.15.1" and report["versions"]["kubernetes"] == "v1.31.4"
    assert report["versions"]["devicePlugins"]["volcano-vgpu-device-plugin"] == "1.12.0"
    categories = [c["category"] for c in report["checks"]]
    assert categories == sorted(categories, key=["kubernetes", "volcano", "scheduler-config", "device-config",
                                                 "device-plugins", "nodes", "webhook", "workloads"].index)
    assert run("doctor", "--snapshot", HEALTHY, "--fail-on", "warning").exit_code == 0


def test_broken_cluster_names_what_is_wrong(run) -> None:
    result = run("doctor", "--snapshot", BROKEN, "-o", "json")
    assert result.exit_code == 1
    report = result.json()
    validate("doctor-report.schema.json", report)
    codes = {f["code"] for f in report["findings"]}
    assert {"VGC003", "VGC005", "VGC006", "VGC008", "VGM007", "VGK005", "VGN002", "VGN005", "VGN008",
            "VGN012", "VGN018", "VGX001", "VGX002", "VGP001", "VGP005"} <= codes


def test_exit_code_is_the_same_in_every_format(run) -> None:
    assert {run("doctor", "--snapshot", BROKEN, "-o", fmt).exit_code for fmt in ("table", "json", "yaml")} == {1}


def test_table_marks_and_hints(run) -> None:
    out = run("doctor", "--snapshot", BROKEN).stdout
    assert "× predicates is enabled alongside deviceshare" in out
    assert "vgpuctl explain VGC003" in out and "√ " in out
    assert out.strip().splitlines()[-1].startswith("× ")


def test_same_problem_on_many_nodes_is_grouped_unless_all(run, tmp_path: Path) -> None:
    import yaml

    doc = yaml.safe_load(Path(HEALTHY).read_text())
    for item in doc["items"]:
        if item["kind"] == "Node" and item["metadata"]["name"].startswith("gpu-node"):
            item["metadata"]["labels"]["nvidia.com/cuda.driver.major"] = "418"
            item["metadata"]["labels"].pop("nvidia.com/cuda.driver-version.full")
    path = tmp_path / "old-driver.yaml"
    path.write_text(yaml.safe_dump(doc))
    grouped = [f for f in run("doctor", "--snapshot", str(path), "-o", "json").json()["findings"]
               if f["code"] == "VGN017"]
    assert len(grouped) == 1 and grouped[0]["subjects"] == ["node/gpu-node-0", "node/gpu-node-1"]
    expanded = [f for f in run("doctor", "--snapshot", str(path), "--all", "-o", "json").json()["findings"]
                if f["code"] == "VGN017"]
    assert len(expanded) == 2


def test_pre_runs_only_the_install_subset(run) -> None:
    report = run("doctor", "--snapshot", BROKEN, "--pre", "-o", "json").json()
    assert {c["category"] for c in report["checks"]} <= {"kubernetes", "volcano", "nodes"}


def test_unknown_volcano_version_is_said_on_stderr(run, tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("apiVersion: v1\nkind: List\nmetadata: {annotations: {vgpuctl.io/kinds: 'Node,Pod'}}\nitems: []\n")
    result = run("doctor", "--snapshot", str(path))
    assert "Volcano version unknown" in result.stderr and "Volcano version unknown" not in result.stdout


def test_node_mode_reports_missing_tools_without_crashing(run, tmp_path: Path) -> None:
    result = run("doctor", "--node", "--root", str(tmp_path), "-o", "json")
    report = result.json()
    validate("doctor-report.schema.json", report)
    assert report["source"] == "node"
    assert {c["category"] for c in report["checks"]} == {"host"}


def test_usage_errors(run) -> None:
    assert run("doctor", "--snapshot", "/nonexistent.yaml").exit_code == 2
    assert run("doctor", "--snapshot", HEALTHY, "--volcano-version", "x").exit_code == 2
    assert run("doctor", "--snapshot", HEALTHY, "--fail-on", "info").exit_code == 2
