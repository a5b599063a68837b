"""`vgpuctl why` live: the real client over real HTTP gives the same answer as `--snapshot`, and a failed list is said,
never read as an empty cluster (`nodes` likewise for the nodes it is asked about)."""

from __future__ import annotations

from pathlib import Path

from tests.kube.conftest import FakeCluster, write_kubeconfig
from tests.kube.test_doctor_live import run, serve_fixture

BROKEN = Path(__file__).resolve().parents[2] / "examples" / "clusters" / "broken.yaml"


def test_live_why_equals_snapshot_why(cluster: FakeCluster, tmp_path: Path) -> None:
    serve_fixture(cluster, BROKEN)
    config = write_kubeconfig(tmp_path / "config", {"fake": cluster.url}, current="fake")
    live_code, live, _ = run("why", "ml/notebook-bob", "--kubeconfig", config, "-o", "json")
    snap_code, snap, _ = run("why", "ml/notebook-bob", "--snapshot", str(BROKEN), "-o", "json")
    assert live_code == snap_code == 1
    assert live == snap
    assert live["verdict"] == "rejected" and [f["code"] for f in live["findings"]] == ["VGP001", "VGP005"]


def _live(cluster: FakeCluster, tmp_path: Path) -> str:
    serve_fixture(cluster, BROKEN)
    return write_kubeconfig(tmp_path / "config", {"fake": cluster.url}, current="fake")


def _pod(tmp_path: Path) -> str:
    pod = tmp_path / "pod.yaml"
    pod.write_text("apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: ml}\nspec:\n  containers:\n"
                   "  - name: c\n    resources: {limits: {volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 1024}}\n")
    return str(pod)


def test_a_forbidden_pod_or_node_list_stops_why_and_says_which(cluster: FakeCluster, tmp_path: Path) -> None:
    """Without the pods a full node would read as empty (and a pod as missing, "no pod": exit 2 before): exit 3."""
    config = _live(cluster, tmp_path)
    pod = _pod(tmp_path)
    cluster.fail_status("/api/v1/pods", 403, "Forbidden", 'pods is forbidden: User "tester" cannot list pods')
    for args in (("ml/notebook-bob",), ("-f", pod)):
        code, report, err = run("why", *args, "--kubeconfig", config, "-o", "json")
        assert code == 3 and report is None and len(err.strip().splitlines()) == 1
        assert "cannot list pods" in err and "403" in err and "no pod" not in err
    cluster.fail_status("/api/v1/nodes", 403, "Forbidden", "nodes is forbidden")
    code, _, err = run("why", "-f", pod, "--kubeconfig", config, "-o", "json")
    assert code == 3 and "cannot list nodes" in err
    # Without the scheduler's ConfigMap the answer would be "not found, no family enabled": not so, unread
    serve_fixture(cluster, BROKEN)
    cluster.fail_status("/api/v1/namespaces/volcano-system/configmaps", 403, "Forbidden", "configmaps is forbidden")
    code, _, err = run("why", "-f", pod, "--kubeconfig", config, "-o", "json")
    assert code == 3 and "cannot list configmaps in namespace volcano-system" in err and "not found" not in err


def test_another_failed_list_is_a_note_on_the_answer(cluster: FakeCluster, tmp_path: Path) -> None:
    config = _live(cluster, tmp_path)
    pod = _pod(tmp_path)
    snap_code, snap, _ = run("why", "-f", pod, "--snapshot", str(BROKEN), "-o", "json")
    assert not any(n.startswith("not read from the cluster") for n in snap["notes"])
    cluster.fail_status("/apis/apps/v1/daemonsets", 403, "Forbidden", "daemonsets is forbidden")
    code, report, _ = run("why", "-f", pod, "--kubeconfig", config, "-o", "json")
    assert code == snap_code and report["fits"] == snap["fits"]
    assert [n for n in report["notes"] if n.startswith("not read from the cluster: daemonsets (")]


def test_nodes_named_on_a_forbidden_node_list_is_not_no_such_node(cluster: FakeCluster, tmp_path: Path) -> None:
    config = _live(cluster, tmp_path)
    cluster.fail_status("/api/v1/nodes", 403, "Forbidden", "nodes is forbidden")
    code, _, err = run("nodes", "gpu-node-0", "--kubeconfig", config, "-o", "json")
    assert code == 3 and "cannot look up gpu-node-0" in err and "403" in err and "no such node" not in err
