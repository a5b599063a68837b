"""`vgpuctl doctor` live, end to end: the real client against a local API server serving a whole cluster
reports exactly what `--snapshot` reports on the same objects; API faults skip only what they block."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tests.kube.conftest import FakeCluster, write_kubeconfig
from vgpuctl.cli.app import app

MIXED = Path(__file__).resolve().parents[1] / "fixtures" / "clusters" / "mixed.yaml"
LISTS = {"Node": ("/api/v1/nodes", "v1", "NodeList"), "Pod": ("/api/v1/pods", "v1", "PodList"),
         "DaemonSet": ("/apis/apps/v1/daemonsets", "apps/v1", "DaemonSetList"),
         "Deployment": ("/apis/apps/v1/deployments", "apps/v1", "DeploymentList")}


def serve_fixture(cluster: FakeCluster, path: Path = MIXED) -> None:
    """Serve every object of a snapshot file the way kube-apiserver lists them."""
    items: list[dict[str, Any]] = yaml.safe_load(path.read_text())["items"]
    cluster.version = {"major": "1", "minor": "31", "gitVersion": "v1.31.4"}
    cluster.serve(nodes=0, pods=0, configmaps={}, daemonsets=0, deployments=0)
    for kind, (path, api_version, list_kind) in LISTS.items():
        cluster.serve_list(path, api_version, list_kind, [strip(i) for i in items if i["kind"] == kind])
    for namespace in ("volcano-system", "kube-system"):
        cms = [strip(i) for i in items if i["kind"] == "ConfigMap" and i["metadata"]["namespace"] == namespace]
        cluster.serve_list(f"/api/v1/namespaces/{namespace}/configmaps", "v1", "ConfigMapList", cms)


def strip(obj: dict[str, Any]) -> dict[str, Any]:
    """List answers carry items without apiVersion/kind."""
    return {k: v for k, v in obj.items() if k not in ("apiVersion", "kind")}


def run(*args: str) -> tuple[int, Any, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    data = yaml.safe_load(result.stdout) if result.stdout.strip().startswith("{") else None
    return result.exit_code, data, result.stderr


@pytest.fixture
def kubeconfig(cluster: FakeCluster, tmp_path: Path) -> str:
    serve_fixture(cluster)
    return write_kubeconfig(tmp_path / "config", {"fake": cluster.url}, current="fake")


def test_live_report_equals_snapshot_report(kubeconfig: str) -> None:
    live_code, live, _ = run("doctor", "--kubeconfig", kubeconfig, "-o", "json")
    snap_code, snap, _ = run("doctor", "--snapshot", str(MIXED), "-o", "json")
    assert live["source"] == "live" and snap["source"] == "snapshot"
    live.pop("source")
    snap.pop("source")
    assert live == snap
    assert live_code == snap_code


def test_a_forbidden_list_skips_the_checks_that_need_it(cluster: FakeCluster, kubeconfig: str) -> None:
    cluster.fail_status("/api/v1/pods", 403, "Forbidden", 'pods is forbidden: User "tester" cannot list pods')
    code, report, _ = run("doctor", "--kubeconfig", kubeconfig, "-o", "json")
    assert any(f["code"] == "VGK001" and "403" in f["message"] for f in report["findings"])
    restart = next(c for c in report["checks"] if c["code"] == "VGC011")
    assert restart["status"] == "skip" and "could not list pods" in restart["reason"]
    assert code == 1


def test_unreachable_cluster_exits_3(tmp_path: Path, closed_port: int) -> None:
    config = write_kubeconfig(tmp_path / "config", {"gone": f"http://127.0.0.1:{closed_port}"}, current="gone")
    code, _, err = run("doctor", "--kubeconfig", config)
    assert code == 3 and len(err.strip().splitlines()) == 1 and "Traceback" not in err
