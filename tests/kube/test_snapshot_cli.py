"""`vgpuctl snapshot save` end to end: the real CLI, a real kubeconfig, real HTTP to a scripted API server."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.kube.conftest import FakeCluster, write_kubeconfig
from vgpuctl.cli.app import app
from vgpuctl.snapshotfile import load_snapshot


class Run:
    def __init__(self, tmp_path: Path) -> None:
        self.tmp_path = tmp_path

    def __call__(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
        result = CliRunner().invoke(app, ["snapshot", "save", *args], env=env, catch_exceptions=False)
        return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def run(tmp_path: Path) -> Run:
    return Run(tmp_path)


@pytest.fixture
def kubeconfig(cluster: FakeCluster, tmp_path: Path) -> str:
    return write_kubeconfig(tmp_path / "kubeconfig", {"lab": cluster.url}, current="lab")


def test_save_writes_a_snapshot_that_loads_back(cluster: FakeCluster, run: Run, kubeconfig: str,
                                                tmp_path: Path) -> None:
    cluster.serve(nodes=1200, pods=7)
    target = tmp_path / "cluster.yaml.gz"
    code, out, err = run(str(target), "--kubeconfig", kubeconfig)

    assert code == 0, err
    assert out == ""
    data = load_snapshot(str(target))
    assert data.server_version == "v1.30.2"
    kinds = [o["kind"] for o in data.objects]
    assert kinds.count("Node") == 1200 and kinds.count("Pod") == 7 and "Secret" not in kinds
    assert not any("secret" in r.path for r in cluster.requests())
    assert err.splitlines()[-1].startswith(
        f"vgpuctl: wrote {target}: 1200 nodes, 7 pods, 2 configmaps, 1 daemonsets, 1 deployments; server v1.30.2; ")
    assert "vgpuctl: read nodes: 1200" in err.splitlines()  # progress goes to stderr, one line per resource


def test_save_to_stdout_via_kubeconfig_env(cluster: FakeCluster, run: Run, kubeconfig: str, tmp_path: Path) -> None:
    cluster.serve()
    code, out, err = run("-", env={"KUBECONFIG": kubeconfig})
    assert code == 0, err
    (tmp_path / "out.yaml").write_text(out)
    assert len(load_snapshot(str(tmp_path / "out.yaml")).objects) == 3 + 4 + 1 + 1 + 2


def test_failed_list_is_a_warning_and_the_file_is_still_written(cluster: FakeCluster, run: Run, kubeconfig: str,
                                                                tmp_path: Path) -> None:
    cluster.serve()
    cluster.fail_status("/api/v1/namespaces/kube-system/configmaps", 403, "Forbidden", "configmaps is forbidden")
    code, _, err = run(str(tmp_path / "s.json"), "--kubeconfig", kubeconfig)
    assert code == 0
    assert ("vgpuctl: warning: [VGK001] list/configmaps/kube-system: cannot list configmaps in namespace "
            "kube-system: HTTP 403 FORBIDDEN: configmaps is forbidden; checks that need them are skipped") in err
    assert err.rstrip().endswith("; 1 read(s) failed (VGK001, above)")
    assert len(load_snapshot(str(tmp_path / "s.json")).objects) == 3 + 4 + 1 + 1 + 1


def test_unreachable_server_exits_3_with_one_line(run: Run, tmp_path: Path, closed_port: int) -> None:
    config = write_kubeconfig(tmp_path / "kubeconfig", {"gone": f"http://127.0.0.1:{closed_port}"}, current="gone")
    code, out, err = run(str(tmp_path / "s.yaml"), "--kubeconfig", config)
    assert code == 3
    assert out == ""
    assert err == (f"vgpuctl: cannot reach the Kubernetes API: cannot connect to http://127.0.0.1:{closed_port}: "
                   "connection refused\n")
    assert not (tmp_path / "s.yaml").exists()


def test_unauthorized_exits_3(cluster: FakeCluster, run: Run, kubeconfig: str, tmp_path: Path) -> None:
    cluster.serve()
    cluster.fail_status("/version", 401, "Unauthorized", "Unauthorized")
    code, _, err = run(str(tmp_path / "s.yaml"), "--kubeconfig", kubeconfig)
    assert code == 3
    assert err.count("\n") == 1 and "rejected the credentials (HTTP 401 UNAUTHORIZED: Unauthorized)" in err


def test_nothing_readable_exits_3_without_a_file(cluster: FakeCluster, run: Run, kubeconfig: str,
                                                 tmp_path: Path) -> None:
    cluster.serve()
    for path in list(cluster.routes):
        if path != "/version":
            cluster.fail_status(path, 403, "Forbidden", "forbidden")
    code, _, err = run(str(tmp_path / "s.yaml"), "--kubeconfig", kubeconfig)
    assert code == 3
    assert err.splitlines()[-1] == f"vgpuctl: nothing could be read from the cluster, {tmp_path / 's.yaml'} not written"
    assert not (tmp_path / "s.yaml").exists()


def test_bad_arguments_exit_2_before_any_request(cluster: FakeCluster, run: Run, kubeconfig: str,
                                                 tmp_path: Path) -> None:
    cluster.serve()
    code, _, err = run(str(tmp_path / "no-such-dir" / "s.yaml"), "--kubeconfig", kubeconfig)
    assert (code, err) == (2, f"vgpuctl: {tmp_path / 'no-such-dir' / 's.yaml'}: cannot write: directory "
                              f"{tmp_path / 'no-such-dir'} does not exist\n")
    code, _, err = run(str(tmp_path), "--kubeconfig", kubeconfig)
    assert (code, err) == (2, f"vgpuctl: {tmp_path}: is a directory\n")
    code, _, err = run(str(tmp_path / "s.yaml"), "--kubeconfig", kubeconfig, "--context", "prod")
    assert (code, err) == (2, f"vgpuctl: --context prod: no such context in --kubeconfig {kubeconfig} "
                              "(contexts: lab)\n")
    code, _, err = run(str(tmp_path / "s.yaml"), "--kubeconfig", str(tmp_path / "nope"))
    assert (code, err) == (2, f"vgpuctl: --kubeconfig {tmp_path / 'nope'}: no such file\n")
    assert cluster.requests() == []
