"""`vgpuctl why` live: the real client over real HTTP gives the same answer as `--snapshot`."""

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
