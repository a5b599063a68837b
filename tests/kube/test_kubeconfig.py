"""Choosing the cluster: --kubeconfig, --context, KUBECONFIG, ~/.kube/config, in-cluster — and the errors."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.kube.conftest import TOKEN, FakeCluster, write_kubeconfig
from vgpuctl.errors import UsageError
from vgpuctl.kube.errors import ClusterUnreachable
from vgpuctl.kube.kubeconfig import load_api_client
from vgpuctl.kube.reader import read_cluster


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty home directory, so a developer's own ~/.kube/config never leaks into a test."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    (tmp_path / "home").mkdir()
    return tmp_path / "home"


def test_kubeconfig_and_context_pick_the_cluster(cluster: FakeCluster, tmp_path: Path, closed_port: int) -> None:
    cluster.serve()
    path = write_kubeconfig(tmp_path / "config", {"lab": cluster.url, "prod": f"http://127.0.0.1:{closed_port}"},
                            current="prod")
    with load_api_client(path, "lab", environ={}) as api:
        assert read_cluster(api).data.server_version == "v1.30.2"
    assert cluster.requests()[0].headers["Authorization"] == f"Bearer {TOKEN}"
    with load_api_client(path, None, environ={}) as api, pytest.raises(ClusterUnreachable, match="refused"):
        read_cluster(api)


def test_kubeconfig_env_list_merges_existing_files(cluster: FakeCluster, tmp_path: Path, home: Path) -> None:
    path = write_kubeconfig(tmp_path / "config", {"lab": cluster.url}, current="lab")
    env = {"KUBECONFIG": os.pathsep.join([str(tmp_path / "missing"), path])}
    with load_api_client(environ=env) as api:
        assert api.configuration.host == cluster.url
    # A file the user named that is not there is a usage error (exit 2), as for --kubeconfig.
    with pytest.raises(UsageError, match=r"^KUBECONFIG=.*missing: no such file$"):
        load_api_client(environ={"KUBECONFIG": str(tmp_path / "missing")})


def test_default_path_under_home(cluster: FakeCluster, home: Path) -> None:
    (home / ".kube").mkdir()
    write_kubeconfig(home / ".kube" / "config", {"lab": cluster.url}, current="lab")
    with load_api_client(environ={}) as api:
        assert api.configuration.host == cluster.url


def test_bad_flags_are_usage_errors(cluster: FakeCluster, tmp_path: Path) -> None:
    path = write_kubeconfig(tmp_path / "config", {"lab": cluster.url, "ci": cluster.url})
    with pytest.raises(UsageError, match=r"^--kubeconfig /nope/config: no such file$"):
        load_api_client("/nope/config", environ={})
    with pytest.raises(UsageError, match=r"^--context prod: no such context in --kubeconfig .* \(contexts: lab, ci\)$"):
        load_api_client(path, "prod", environ={})
    with pytest.raises(UsageError, match=r"no current-context set; pass --context \(contexts: lab, ci\)$"):
        load_api_client(path, environ={})
    (tmp_path / "broken").write_text("clusters: [\n")
    with pytest.raises(UsageError, match=r"^--kubeconfig .*broken: cannot read kubeconfig .*broken: "):
        load_api_client(str(tmp_path / "broken"), environ={})


def test_nothing_configured_is_unreachable(home: Path) -> None:
    with pytest.raises(ClusterUnreachable, match=r"^no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG"):
        load_api_client(environ={})


def test_in_cluster_without_service_account_is_unreachable(home: Path) -> None:
    environ = {"KUBERNETES_SERVICE_HOST": "10.96.0.1", "KUBERNETES_SERVICE_PORT": "443"}
    if Path("/var/run/secrets/kubernetes.io/serviceaccount/token").exists():
        with load_api_client(environ=environ) as api:  # really inside a pod: the service account works
            assert api.configuration.host == "https://10.96.0.1:443"
        return
    with pytest.raises(ClusterUnreachable, match=r"^in-cluster configuration: Service token file does not exist"):
        load_api_client(environ=environ)
    with pytest.raises(UsageError, match="--context x: no kubeconfig found"):
        load_api_client(context="x", environ=environ)
