"""`vgpuctl why`: a cluster-wide cause said once at the top; findings errors first; the GPU-stack findings of the
nodes a pod fits (docs/stacks.md), the same as `nodes` shows."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.conftest import EXAMPLES, validate

HEALTHY = EXAMPLES / "clusters" / "healthy.yaml"
MIXED = Path(__file__).resolve().parents[1] / "fixtures" / "clusters" / "mixed-stacks.yaml"
CONFIGMAP = "volcano-scheduler-configmap"


def _write(tmp_path: Path, name: str, obj: Any) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(obj))
    return str(path)


def _vgpu_pod(tmp_path: Path, **spec: Any) -> str:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "try", "namespace": "ml"},
           "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "resources": {"limits": {
               "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "1000"}}}], **spec}}
    return _write(tmp_path, "pod.yaml", pod)


def _healthy_with(tmp_path: Path, conf: str | None) -> str:
    """The healthy cluster with its scheduler config replaced by `conf` (None: the ConfigMap removed)."""
    snapshot = yaml.safe_load(HEALTHY.read_text())
    items = []
    for item in snapshot["items"]:
        if item["kind"] == "ConfigMap" and item["metadata"]["name"] == CONFIGMAP:
            if conf is None:
                continue
            item["data"]["volcano-scheduler.conf"] = conf
        items.append(item)
    snapshot["items"] = items
    return _write(tmp_path, "cluster.yaml", snapshot)


def _conf(**deviceshare: Any) -> str:
    plugins: list[dict[str, Any]] = [{"name": "predicates"}]
    if deviceshare:
        plugins.append({"name": "deviceshare", "arguments": deviceshare})
    return yaml.safe_dump({"actions": "enqueue, allocate, backfill", "tiers": [{"plugins": plugins}]})


@pytest.mark.parametrize(("conf", "code", "says"), [
    (None, "VGC001", "ConfigMap volcano-system/volcano-scheduler-configmap is not found"),
    ("tiers: [unclosed", "VGC001", "Volcano cannot load this configuration"),
    (_conf(), "VGC002", "the deviceshare plugin is in no tier"),
    (_conf(**{"deviceshare.VGPUEnable": "yes"}), "VGC005", "the vgpu family is off"),
    (_conf(**{"deviceshare.AscendHAMiVNPUEnable": True}), None, "deviceshare.VGPUEnable is off"),
], ids=["missing", "unreadable", "no-deviceshare", "unreadable-flag", "flag-off"])
def test_a_cluster_wide_cause_is_said_once_at_the_top(run, tmp_path: Path, conf: str | None, code: str | None,
                                                      says: str) -> None:
    snapshot, pod = _healthy_with(tmp_path, conf), _vgpu_pod(tmp_path)
    result = run("why", "-f", pod, "--snapshot", snapshot, "-o", "json")
    assert result.exit_code == 1
    report = result.json()
    validate("why-report.schema.json", report)
    assert report["verdict"] == "no-fit" and report["cause"]["code"] == code and says in report["cause"]["message"]
    assert report["cause"]["hint"] and report["unfit"] == [] and report["closest"] == [] and report["fits"] == []
    table = run("why", "-f", pod, "--snapshot", snapshot)
    assert table.exit_code == 1
    lines = table.stdout.splitlines()
    assert lines[1].startswith("× fits no node: ") and says in lines[1]  # at the top, under the pod's line
    assert lines[2].startswith("  fix: ")
    assert table.stdout.count(says) == 1
    assert "Closest nodes" not in table.stdout and "not-device-node" not in table.stdout


def test_with_the_family_on_the_nodes_are_replayed_and_no_cause_is_said(run, tmp_path: Path) -> None:
    snapshot = _healthy_with(tmp_path, _conf(**{"deviceshare.VGPUEnable": True}))
    report = run("why", "-f", _vgpu_pod(tmp_path), "--snapshot", snapshot, "-o", "json").json()
    assert "cause" not in report and report["verdict"] == "fits"


def test_findings_are_sorted_errors_first(run, tmp_path: Path) -> None:
    # Container "a" only warns (VGP009: cores with vgpu-mode mig are not enforced); "b", after it, is an error
    # (VGP004): the rules say the warning first, why says the error first.
    containers = [{"name": name, "resources": {"limits": {
        "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "5120", "volcano.sh/vgpu-cores": cores}}}
        for name, cores in (("a", "10"), ("b", "150"))]
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {"name": "two", "namespace": "ml", "annotations": {"volcano.sh/vgpu-mode": "mig"}},
           "spec": {"schedulerName": "volcano", "containers": containers}}
    path = _write(tmp_path, "two.yaml", pod)
    lint = run("lint", path, "--snapshot", str(HEALTHY), "-o", "json").json()["items"][0]["findings"]
    assert [(f["code"], f["severity"]) for f in lint if f["severity"] != "info"] == \
        [("VGP009", "warning"), ("VGP004", "error")]  # the rule core's own order
    report = run("why", "-f", path, "--snapshot", str(HEALTHY), "-o", "json").json()
    assert [(f["code"], f["severity"]) for f in report["findings"]] == [("VGP004", "error"), ("VGP009", "warning")]
    table = run("why", "-f", path, "--snapshot", str(HEALTHY)).stdout
    assert table.index("VGP004") < table.index("VGP009")


def _node_findings(run) -> dict[str, list[dict[str, Any]]]:
    nodes = run("nodes", "--snapshot", str(MIXED), "-o", "json").json()["nodes"]
    stack = {"VGN012", "VGN020", "VGN021", "VGN022"}
    return {n["name"]: [f for f in n["findings"] if f["code"] in stack] for n in nodes}


def test_a_fit_on_a_node_with_shared_gpus_carries_the_stack_findings_nodes_shows(run, tmp_path: Path) -> None:
    result = run("why", "-f", _vgpu_pod(tmp_path), "--snapshot", str(MIXED), "-o", "json")
    assert result.exit_code == 0
    report = result.json()
    validate("why-report.schema.json", report)
    expected = _node_findings(run)
    fits = {f["node"]: f.get("stackFindings", []) for f in report["fits"]}
    assert set(fits) == set(expected) and "gpu-ok-1" in fits
    for node, findings in fits.items():
        assert findings == expected[node], node  # one truth: the doctor's node checks, as nodes shows them
    assert fits["gpu-ok-1"] == [] and "stackFindings" not in next(f for f in report["fits"] if f["node"] == "gpu-ok-1")
    assert [f["code"] for f in fits["gpu-ts-1"]] == ["VGN020"] and [f["code"] for f in fits["gpu-hami-1"]] == ["VGN012"]


def test_the_human_answer_puts_the_code_beside_the_node(run, tmp_path: Path) -> None:
    table = run("why", "-f", _vgpu_pod(tmp_path), "--snapshot", str(MIXED)).stdout
    rows = {line.split()[0]: line for line in table.splitlines() if line.startswith("gpu-")}
    assert "× VGN020" in rows["gpu-ts-1"] and "‼ VGN020" in rows["gpu-split-1"] and "× VGN012" in rows["gpu-hami-1"]
    assert "VGN" not in rows["gpu-ok-1"]
    assert "the device plugin or kubelet may then give the same GPU to a second pod" in table
    assert "gpu-ok-1  " not in table.split("GPUs another stack also hands out")[1]


@pytest.mark.parametrize(("node", "codes"), [("gpu-ts-1", ["VGN020"]), ("gpu-ok-1", [])])
def test_gang_placements_carry_them_too(run, tmp_path: Path, node: str, codes: list[str]) -> None:
    deployment = yaml.safe_load((EXAMPLES / "vgpu" / "deployment.yaml").read_text())
    deployment["spec"]["template"]["spec"]["nodeSelector"] = {"kubernetes.io/hostname": node}
    report = run("why", "-f", _write(tmp_path, "deploy.yaml", deployment), "--snapshot", str(MIXED), "-o",
                 "json").json()
    validate("why-report.schema.json", report)
    placements = report["gang"]["placements"]
    assert placements and {p["node"] for p in placements} == {node}
    assert all([f["code"] for f in p.get("stackFindings", [])] == codes for p in placements)
