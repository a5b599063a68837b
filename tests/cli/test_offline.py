"""Offline, end to end (issue 27): `install --dry-run` and `uninstall --dry-run` plan against a snapshot file
exactly what a live dry run plans from the same objects, and `geometry merge cluster:NS/NAME` reads the
ConfigMap from a snapshot. The live side is the stateful local API server the install tests use."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from pytest_httpserver import HTTPServer

from tests.cli.conftest import EXAMPLES, ROOT, validate
from tests.install.conftest import KINDS, StatefulCluster
from tests.kube.conftest import write_kubeconfig

HEALTHY = EXAMPLES / "clusters" / "healthy.yaml"
BROKEN = EXAMPLES / "clusters" / "broken.yaml"


def _timeless(output: str) -> str:
    """The output without the moment it was planned at (the backup ConfigMap's name carries it, to the second)."""
    return re.sub(r"-\d{8}-\d{6}z-", "-<when>-", output)


def _served(httpserver: HTTPServer, tmp_path: Path, source: Path) -> tuple[str, str]:
    """A live cluster holding the objects of `source`, and a snapshot of that cluster as `snapshot save` writes
    it (every object as the server keeps it, the kinds listed): (kubeconfig, snapshot file)."""
    kube = StatefulCluster(httpserver)
    for obj in yaml.safe_load(source.read_text())["items"]:
        if obj["kind"] in KINDS.values():
            kube.put(obj)
    objects = list(kube.objects.values())
    listed = sorted({o["kind"] for o in objects} | {"Node", "Pod", "ConfigMap", "DaemonSet", "Deployment"})
    snapshot = tmp_path / "snapshot.yaml"
    snapshot.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List",
                                        "metadata": {"annotations": {"vgpuctl.io/kinds": ",".join(listed)}},
                                        "items": objects}))
    return write_kubeconfig(tmp_path / "kubeconfig", {"lab": kube.url}, current="lab"), str(snapshot)


@pytest.mark.parametrize("source", [HEALTHY, BROKEN], ids=lambda p: p.stem)
@pytest.mark.parametrize("command", [("install", "--mode", "vgpu"), ("install", "--mode", "vnpu-hami"),
                                     ("uninstall",)], ids=lambda c: "-".join(c))
def test_a_dry_run_against_a_snapshot_is_the_live_dry_run(run: Any, httpserver: HTTPServer, tmp_path: Path,
                                                          source: Path, command: tuple[str, ...]) -> None:
    kubeconfig, snapshot = _served(httpserver, tmp_path, source)
    live = run(*command, "--dry-run", "--kubeconfig", kubeconfig, "-o", "json")
    offline = run(*command, "--dry-run", "--snapshot", snapshot, "-o", "json")
    assert live.exit_code == offline.exit_code == 0, (live.stderr, offline.stderr)
    validate("install-report.schema.json", offline.json())
    assert _timeless(offline.stdout) == _timeless(live.stdout)
    live_table = run(*command, "--dry-run", "--kubeconfig", kubeconfig)
    offline_table = run(*command, "--dry-run", "--snapshot", snapshot)
    assert _timeless(offline_table.stdout) == _timeless(live_table.stdout)  # the same plan and the same diffs
    assert "--- " in offline_table.stdout or "nothing to change" in offline_table.stdout
    # what the snapshot cannot say is said once, on stderr
    assert "the snapshot holds no" in offline_table.stderr and "ServiceAccount" in offline_table.stderr


def test_a_snapshot_without_dry_run_is_refused(run: Any) -> None:
    result = run("install", "--mode", "vgpu", "--snapshot", str(HEALTHY))
    assert result.exit_code == 2 and result.stdout == ""
    assert "--snapshot plans against a file" in result.stderr and "--dry-run" in result.stderr
    assert run("uninstall", "--snapshot", str(HEALTHY)).exit_code == 2


def test_a_snapshot_with_a_live_cluster_option_is_refused(run: Any) -> None:
    result = run("install", "--mode", "vgpu", "--dry-run", "--snapshot", str(HEALTHY), "--context", "prod")
    assert result.exit_code == 2 and "--context chooses a live cluster" in result.stderr


def test_a_plain_kubectl_snapshot_plans_too(run: Any) -> None:
    """No `vgpuctl.io/kinds`: the kinds the documented `kubectl get` lists are taken as listed."""
    result = run("install", "--mode", "vgpu", "--dry-run", "--snapshot", str(HEALTHY), "-o", "json")
    assert result.exit_code == 0, result.stderr
    report = result.json()
    validate("install-report.schema.json", report)
    assert report["dryRun"] is True


def test_merge_reads_a_configmap_from_a_snapshot(run: Any, tmp_path: Path) -> None:
    snapshot = yaml.safe_load(HEALTHY.read_text())
    stored = next(o for o in snapshot["items"] if o["kind"] == "ConfigMap"
                  and o["metadata"]["name"] == "volcano-vgpu-device-config")
    extracted = tmp_path / "vgpu.yaml"
    extracted.write_text(yaml.safe_dump(stored))
    vnpu = str(ROOT / "tests" / "fixtures" / "hami-scheduler-device.yaml")
    offline = run("geometry", "merge", "--vgpu", "cluster:kube-system/volcano-vgpu-device-config", "--vnpu", vnpu,
                  "--snapshot", str(HEALTHY), "--volcano-version", "v1.15.1", "-o", "json")
    from_file = run("geometry", "merge", "--vgpu", str(extracted), "--vnpu", vnpu, "--volcano-version", "v1.15.1",
                    "-o", "json")
    assert offline.exit_code == from_file.exit_code == 0, offline.stderr
    assert offline.json() == from_file.json()


def test_merge_names_what_the_snapshot_holds_when_the_configmap_is_not_there(run: Any) -> None:
    result = run("geometry", "merge", "--vgpu", "cluster:kube-system/nope", "--vnpu", "cluster:kube-system/nada",
                 "--snapshot", str(HEALTHY))
    assert result.exit_code == 2 and result.stdout == ""
    assert "no ConfigMap kube-system/nope" in result.stderr
    assert "kube-system/volcano-vgpu-device-config" in result.stderr  # what it does hold


def test_merge_cluster_options_need_a_cluster_input(run: Any) -> None:
    vgpu = str(EXAMPLES / "volcano-vgpu-device-config.yaml")
    vnpu = str(ROOT / "tests" / "fixtures" / "hami-scheduler-device.yaml")
    result = run("geometry", "merge", "--vgpu", vgpu, "--vnpu", vnpu, "--snapshot", str(HEALTHY))
    assert result.exit_code == 2 and "no input is one" in result.stderr
    conflict = run("geometry", "merge", "--vgpu", "cluster:kube-system/x", "--vnpu", vnpu, "--snapshot", str(HEALTHY),
                   "--kubeconfig", "/x")
    assert conflict.exit_code == 2 and "--kubeconfig chooses a live cluster" in conflict.stderr


@pytest.mark.parametrize("command", [["validate"], ["show"], ["export", "-o", "json"]])
def test_validate_show_and_export_read_a_configmap_from_a_snapshot(run: Any, tmp_path: Path,
                                                                   command: list[str]) -> None:
    """Each answers for `cluster:NS/NAME --snapshot` exactly what it answers for the ConfigMap written to a file
    (the source named aside)."""
    snapshot = yaml.safe_load(HEALTHY.read_text())
    stored = next(o for o in snapshot["items"] if o["kind"] == "ConfigMap"
                  and o["metadata"]["name"] == "volcano-vgpu-device-config")
    extracted = tmp_path / "vgpu.yaml"
    extracted.write_text(yaml.safe_dump(stored))
    ref = "cluster:kube-system/volcano-vgpu-device-config"
    json_out = [] if "-o" in command else ["-o", "json"]
    offline = run("geometry", command[0], ref, *command[1:], *json_out, "--snapshot", str(HEALTHY))
    from_file = run("geometry", command[0], str(extracted), *command[1:], *json_out)
    assert offline.exit_code == from_file.exit_code, offline.stderr
    assert offline.exit_code in (0, 1) and offline.stdout
    assert offline.stdout.replace(ref, "SRC") == from_file.stdout.replace(str(extracted), "SRC")


def test_explain_reads_its_config_from_a_snapshot(run: Any, tmp_path: Path) -> None:
    stored = next(o for o in yaml.safe_load(HEALTHY.read_text())["items"] if o["kind"] == "ConfigMap"
                  and o["metadata"]["name"] == "volcano-vgpu-device-config")
    extracted = tmp_path / "vgpu.yaml"
    extracted.write_text(yaml.safe_dump(stored))
    ask = ["geometry", "explain", "--model", "NVIDIA A100-SXM4-40GB", "--memory", "3000", "-o", "json"]
    ref = "cluster:kube-system/volcano-vgpu-device-config"
    offline = run(*ask, "--config", ref, "--snapshot", str(HEALTHY))
    from_file = run(*ask, "--config", str(extracted))
    assert offline.exit_code == from_file.exit_code == 0, offline.stderr
    assert offline.json()["config"] == ref
    assert {**offline.json(), "config": None} == {**from_file.json(), "config": None}
    assert offline.json()["fits"] is True


@pytest.mark.parametrize("command", [
    ["geometry", "validate", str(EXAMPLES / "volcano-vgpu-device-config.yaml")],
    ["geometry", "show", str(EXAMPLES / "volcano-vgpu-device-config.yaml")],
    ["geometry", "export", str(EXAMPLES / "volcano-vgpu-device-config.yaml")],
    ["geometry", "explain", "--chip", "Ascend310P", "--memory", "3000"],
])
def test_cluster_options_without_a_cluster_input_are_refused(run: Any, command: list[str]) -> None:
    result = run(*command, "--snapshot", str(HEALTHY))
    assert result.exit_code == 2 and "no input is one" in result.stderr and result.stdout == ""
    both = run(*command[:2], "cluster:kube-system/x", "--snapshot", str(HEALTHY), "--context", "c") \
        if command[1] != "explain" else run(*command, "--config", "cluster:kube-system/x", "--snapshot", str(HEALTHY),
                                            "--context", "c")
    assert both.exit_code == 2 and "--context chooses a live cluster" in both.stderr
