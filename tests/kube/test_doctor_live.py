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
         "Deployment": ("/apis/apps/v1/deployments", "apps/v1", "DeploymentList"),
         "RuntimeClass": ("/apis/node.k8s.io/v1/runtimeclasses", "node.k8s.io/v1", "RuntimeClassList")}


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


# ---- VGK008: the ascend RuntimeClass ------------------------------------------------------------------

ASCEND_PLUGIN = {"apiVersion": "apps/v1", "kind": "DaemonSet",
                 "metadata": {"name": "hami-ascend-device-plugin", "namespace": "kube-system"},
                 "spec": {"template": {"spec": {
                     "containers": [{"name": "plugin", "image": "docker.io/projecthami/ascend-device-plugin:v1.4.0"}],
                     "nodeSelector": {"ascend": "on"}}}}}
ASCEND_RUNTIMECLASS = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "ascend"},
                       "handler": "ascend"}


def with_ascend_plugin(tmp_path: Path, *extra: dict[str, Any]) -> Path:
    """mixed.yaml plus ascend-device-plugin v1.4.0 (which ships and requires RuntimeClass `ascend`)."""
    doc = yaml.safe_load(MIXED.read_text())
    doc["items"] += [ASCEND_PLUGIN, *extra]
    path = tmp_path / "ascend.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def vgk008(report: dict[str, Any]) -> tuple[str, str, list[dict[str, Any]]]:
    (check,) = [c for c in report["checks"] if c["code"] == "VGK008"]
    return check["status"], check["reason"], [f for f in report["findings"] if f["code"] == "VGK008"]


def test_vgk008_live_reports_the_missing_ascend_runtimeclass(cluster: FakeCluster, tmp_path: Path) -> None:
    """Project-HAMi/ascend-device-plugin `ascend-runtimeclass.yaml` (since v1.3.0) and v1.4.0 `docs/volcano.md`
    ("`runtimeClassName: ascend` ... is required for all Ascend Pods"): the live read lists node.k8s.io/v1
    RuntimeClasses, so a cluster without `ascend` is reported."""
    serve_fixture(cluster, with_ascend_plugin(tmp_path))
    config = write_kubeconfig(tmp_path / "config", {"fake": cluster.url}, current="fake")
    _, report, _ = run("doctor", "--kubeconfig", config, "-o", "json")
    status, _, (finding,) = vgk008(report)
    assert status == "fail" and finding["subject"] == "runtimeclass/ascend"
    assert "ascend-device-plugin in use (v1.4.0) requires" in finding["message"]


def test_vgk008_live_passes_when_the_runtimeclass_exists(cluster: FakeCluster, tmp_path: Path) -> None:
    serve_fixture(cluster, with_ascend_plugin(tmp_path, ASCEND_RUNTIMECLASS))
    config = write_kubeconfig(tmp_path / "config", {"fake": cluster.url}, current="fake")
    _, report, _ = run("doctor", "--kubeconfig", config, "-o", "json")
    assert vgk008(report)[0] == "pass" and vgk008(report)[2] == []


def test_vgk008_live_forbidden_or_absent_runtimeclasses_skip(cluster: FakeCluster, tmp_path: Path) -> None:
    serve_fixture(cluster, with_ascend_plugin(tmp_path))
    config = write_kubeconfig(tmp_path / "config", {"fake": cluster.url}, current="fake")
    cluster.fail_status("/apis/node.k8s.io/v1/runtimeclasses", 403, "Forbidden", "runtimeclasses is forbidden")
    _, report, _ = run("doctor", "--kubeconfig", config, "-o", "json")
    status, reason, findings = vgk008(report)
    assert (status, findings) == ("skip", []) and "could not list runtimeclasses" in reason
    # Kubernetes < 1.20 has no node.k8s.io/v1: a 404 is no failure, and the check says why it skipped
    cluster.fail_status("/apis/node.k8s.io/v1/runtimeclasses", 404, "NotFound", "the server could not find it")
    _, report, _ = run("doctor", "--kubeconfig", config, "-o", "json")
    status, reason, findings = vgk008(report)
    assert (status, findings) == ("skip", []) and "serves no node.k8s.io/v1 RuntimeClasses" in reason
    assert not any(f["code"] == "VGK001" for f in report["findings"])


def test_vgk008_snapshot_without_runtimeclasses_skips_and_saved_snapshot_judges(
        cluster: FakeCluster, tmp_path: Path) -> None:
    """A `kubectl get nodes,pods,configmaps,daemonsets,deployments` file cannot say the RuntimeClass is missing;
    `vgpuctl snapshot save` records that it listed RuntimeClasses (List annotation `vgpuctl.io/kinds`)."""
    plain = with_ascend_plugin(tmp_path)
    _, report, _ = run("doctor", "--snapshot", str(plain), "-o", "json")
    status, reason, findings = vgk008(report)
    assert (status, findings) == ("skip", []) and "the snapshot holds no RuntimeClass list" in reason

    serve_fixture(cluster, plain)
    config = write_kubeconfig(tmp_path / "config", {"fake": cluster.url}, current="fake")
    saved = tmp_path / "saved.json"
    assert CliRunner().invoke(app, ["snapshot", "save", str(saved), "--kubeconfig", config]).exit_code == 0
    assert "RuntimeClass" in yaml.safe_load(saved.read_text())["metadata"]["annotations"]["vgpuctl.io/kinds"]
    _, report, _ = run("doctor", "--snapshot", str(saved), "-o", "json")
    assert vgk008(report)[0] == "fail"
