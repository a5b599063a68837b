"""`webhook serve --cluster-aware`: the real kubernetes client lists and watches a local API server, and the
validating path judges with what it learns. Everything is driven over HTTP: API objects and faults on
the fake API server, admission reviews and probes on the app.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner

from tests.kube.conftest import FakeCluster, client_for, write_kubeconfig
from tests.unit.why.builders import gpu, vgpu_node
from tests.webhook.conftest import DEVICE_CONFIG, admission_review
from tests.webhook.fake_watch_api import FakeApi
from tests.webhook.live import LiveServer, wait_for
from vgpuctl.cli.app import app as cli
from vgpuctl.kube.watch import BOUND_PODS, ClusterWatch, WatchOptions
from vgpuctl.webhook.app import create_app
from vgpuctl.webhook.settings import Settings, SettingsError, build_settings

FAST = WatchOptions(watch_timeout=30, connect_timeout=2, list_timeout=10, backoff_initial=0.05, backoff_max=0.2)
SYNC = 20  # seconds: generous for a loaded CI machine; the tests poll, they do not sleep


def node(name: str, gpus: int) -> dict[str, Any]:
    obj = vgpu_node(name, *(gpu(f"GPU-{name}-{i}") for i in range(gpus)))
    return {"apiVersion": "v1", **obj}


def running(name: str, node_name: str, *allocations: tuple[str, int]) -> dict[str, Any]:
    ids = "".join(f"{uuid},NVIDIA,{memory},10:" for uuid, memory in allocations)
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ml", "annotations": {"volcano.sh/vgpu-ids-new": ids}},
            "spec": {"nodeName": node_name, "containers": [{"name": "main", "resources": {"limits": {
                "volcano.sh/vgpu-number": str(len(allocations))}}}]},
            "status": {"phase": "Running"}}


def new_pod(name: str, count: int, memory: int | str | None = None) -> dict[str, Any]:
    limits: dict[str, Any] = {"volcano.sh/vgpu-number": str(count)}
    if memory is not None:
        limits["volcano.sh/vgpu-memory"] = str(memory)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "team-a"},
            "spec": {"schedulerName": "volcano",
                     "containers": [{"name": "main", "image": "x", "resources": {"limits": limits}}]}}


BIG = new_pod("big", 5)  # more GPUs than any node has, until gpu-3 (8 GPUs) arrives
WAITS = new_pod("waits", 1, 20000)  # fits on an empty A100, but every GPU has less free now


def seed(api: FakeApi) -> None:
    """gpu-1: 4 GPUs with 36000 MiB used each; gpu-2: 2 GPUs with 30000 used: at most 10960 MiB free."""
    api.nodes.put(node("gpu-1", 4))
    api.nodes.put(node("gpu-2", 2))
    api.nodes.put({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "cpu-1"}, "status": {}})
    for i in range(4):
        api.pods.put(running(f"a{i}", "gpu-1", (f"GPU-gpu-1-{i}", 36000)))
    api.pods.put(running("b0", "gpu-2", ("GPU-gpu-2-0", 30000)))
    api.pods.put(running("b1", "gpu-2", ("GPU-gpu-2-1", 30000)))


@pytest.fixture
def api(httpserver: HTTPServer) -> Iterator[FakeApi]:
    fake = FakeApi(FakeCluster(httpserver))
    seed(fake)
    yield fake
    fake.close()


def aware_settings(api: FakeApi) -> Settings:
    return Settings(device_config_path=str(DEVICE_CONFIG), config_check_interval=0, cluster_aware=True,
                    cluster_watch=lambda sink: ClusterWatch(lambda: client_for(api.url), sink, options=FAST))


@pytest.fixture
def webhook(api: FakeApi) -> Iterator[FlaskClient]:
    app = create_app(aware_settings(api))
    yield app.test_client()
    app.extensions["vgpuctl"].cluster.stop()


def validate(client: FlaskClient, pod: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/validate", json=admission_review(pod))
    assert r.status_code == 200
    response: dict[str, Any] = r.json["response"]
    return response


def readiness(client: FlaskClient) -> tuple[int, dict[str, Any]]:
    r = client.get("/readyz")
    return r.status_code, r.json["checks"]["clusterWatch"]


def wait_synced(client: FlaskClient) -> dict[str, Any]:
    return wait_for(lambda: (lambda s: s[1] if s[0] == 200 else None)(readiness(client)), SYNC, "the first sync")


# ---- before and after the first sync ----------------------------------------------------------------

def test_not_ready_and_no_cluster_rules_until_the_first_sync(api: FakeApi) -> None:
    api.nodes.list_gate.clear()  # the node list stalls: nothing is synced
    app = create_app(aware_settings(api))
    client = app.test_client()
    try:
        wait_for(lambda: api.nodes.lists and api.pods.lists, SYNC, "both lists to be asked for")
        status, check = readiness(client)
        assert status == 503 and check["ok"] is False and check["synced"] is False
        assert check["reason"].startswith("waiting for the first list of") and "nodes" in check["reason"]
        # cluster-aware rules are skipped, not guessed: 5 GPUs is allowed for now
        assert validate(client, BIG)["allowed"] is True
        # the device-config rules still run
        unit = validate(client, new_pod("unit", 1, "3Gi"))
        assert unit["allowed"] is False and unit["status"]["message"].startswith("[VGP005]")

        api.nodes.list_gate.set()
        check = wait_synced(client)
        assert check == {"ok": True, "synced": True, "nodes": 3, "pods": 6, "lastSync": check["lastSync"],
                         "stale": False}
        denied = validate(client, BIG)
        assert denied["allowed"] is False and denied["status"]["code"] == 403
        assert denied["status"]["message"].startswith(
            '[VGP003] container "main": volcano.sh/vgpu-number: 5 exceeds the most GPUs on any vGPU node (4)')
    finally:
        app.extensions["vgpuctl"].cluster.stop()


def test_no_room_now_warns_and_a_watched_new_node_lets_the_pod_pass(webhook: FlaskClient, api: FakeApi) -> None:
    """The issue's done-when: watch events add a node; a pod that could not fit before now passes."""
    wait_synced(webhook)
    answer = validate(webhook, WAITS)
    assert answer["allowed"] is True
    assert answer["warnings"] == [
        "[VGX004] no node has room for this pod right now (2 device nodes); closest gpu-2: insufficient-memory: "
        "GPU 1: free memory 10960 MiB < 20000 MiB; it stays Pending until devices free up"]
    assert validate(webhook, BIG)["allowed"] is False

    api.nodes.put(node("gpu-3", 8))  # one ADDED event on the node watch

    wait_for(lambda: validate(webhook, BIG)["allowed"], SYNC, "the new node to reach the view")
    assert "warnings" not in validate(webhook, WAITS)
    metrics = webhook.get("/metrics").get_data(as_text=True)
    assert 'vgpuctl_webhook_fits_now_checks_total{outcome="no-fit"} 1.0' in metrics
    assert "vgpuctl_webhook_cluster_nodes 4.0" in metrics


def test_finished_pods_free_their_devices(webhook: FlaskClient, api: FakeApi) -> None:
    wait_synced(webhook)
    assert validate(webhook, WAITS).get("warnings")
    finished = running("b1", "gpu-2", ("GPU-gpu-2-1", 30000))
    finished["status"]["phase"] = "Succeeded"
    api.pods.put(finished)  # MODIFIED to Succeeded: Volcano stops counting it (the server's selector would say DELETED)
    wait_for(lambda: "warnings" not in validate(webhook, WAITS), SYNC, "the finished pod's GPU to be free")
    status, check = readiness(webhook)
    assert status == 200 and check["pods"] == 5


def test_the_mutating_path_is_unchanged(webhook: FlaskClient) -> None:
    wait_synced(webhook)
    r = webhook.post("/mutate", json=admission_review(BIG))
    assert r.json["response"]["allowed"] is True and "warnings" not in r.json["response"]


def test_lists_and_watches_ask_for_what_volcano_counts(webhook: FlaskClient, api: FakeApi) -> None:
    wait_synced(webhook)
    wait_for(lambda: api.pods.watches and api.nodes.watches, SYNC, "both watches")
    (pod_list,) = api.pods.lists
    assert pod_list.args["fieldSelector"] == BOUND_PODS.field_selector == \
        "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed"
    assert pod_list.args["limit"] == "500"
    watch = api.pods.watches[0].args
    assert watch["fieldSelector"] == BOUND_PODS.field_selector
    assert watch["allowWatchBookmarks"] == "true" and watch["resourceVersion"] == pod_list_version(api)
    assert "fieldSelector" not in api.nodes.lists[0].args
    assert api.nodes.lists[0].headers["Authorization"] == "Bearer t0ken-for-tests"


def pod_list_version(api: FakeApi) -> str:
    """The version the pod list answered with: the watch must start exactly there."""
    return str(min(int(w.args["resourceVersion"]) for w in api.pods.watches))


def test_a_device_config_change_rebuilds_the_view(api: FakeApi, tmp_path: Path) -> None:
    """gpuMemoryFactor 1 → 2: registered units are now twice the MiB, and the whole view is re-derived."""
    config = tmp_path / "device-config.yaml"
    config.write_text(DEVICE_CONFIG.read_text())
    settings = aware_settings(api)
    app = create_app(Settings(device_config_path=str(config), config_check_interval=0, cluster_aware=True,
                              cluster_watch=settings.cluster_watch))
    client = app.test_client()
    try:
        wait_synced(client)
        assert "free memory 10960 MiB < 20000 MiB" in validate(client, WAITS)["warnings"][0]
        edited = tmp_path / "edited.yaml"
        edited.write_text(DEVICE_CONFIG.read_text().replace("gpuMemoryFactor: 1", "gpuMemoryFactor: 2"))
        edited.replace(config)
        wait_for(lambda: "free memory 21920 MiB < 40000 MiB" in validate(client, WAITS)["warnings"][0], SYNC,
                 "the view to be rebuilt with the new factor")
    finally:
        app.extensions["vgpuctl"].cluster.stop()


# ---- 410 Gone and broken watches --------------------------------------------------------------------

@pytest.mark.parametrize("as_status", [False, True], ids=["error-event", "http-410"])
def test_gone_relists(webhook: FlaskClient, api: FakeApi, as_status: bool) -> None:
    wait_synced(webhook)
    wait_for(lambda: api.nodes.watches, SYNC, "the node watch")
    lists = len(api.nodes.lists)
    api.nodes.gone_as_status = as_status
    api.nodes.put(node("gpu-4", 8), silent=True)  # no event: only a new list can show it
    api.nodes.expire(disconnect=as_status)  # open stream: ERROR 410 event; or the reconnect gets HTTP 410

    wait_for(lambda: validate(webhook, BIG)["allowed"], SYNC, "the re-list to show gpu-4")
    assert len(api.nodes.lists) == lists + 1
    status, check = readiness(webhook)
    assert status == 200 and check["nodes"] == 4 and check["stale"] is False


def test_a_broken_watch_keeps_the_view_and_says_since_when(webhook: FlaskClient, api: FakeApi,
                                                           caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "vgpuctl.webhook")
    wait_synced(webhook)
    api.nodes.fail_watches = 500
    api.nodes.disconnect()

    check = wait_for(lambda: (lambda s: s[1] if s[1].get("stale") else None)(readiness(webhook)), SYNC,
                     "the break to show in /readyz")
    status, check = readiness(webhook)
    assert status == 200 and check["ok"] is True  # readiness does not flap with the API server
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", check["staleSince"])
    assert check["reason"].startswith("watch of nodes broken: HTTP 500")
    assert validate(webhook, BIG)["allowed"] is False  # the last view is still used
    wait_for(lambda: len(api.nodes.watches) >= 4, SYNC, "retries with backoff")
    broke = [r for r in caplog.records if "cluster watch of nodes broke" in r.getMessage()]
    assert len(broke) == 1 and broke[0].levelno == logging.WARNING  # once per outage, not per retry

    api.nodes.fail_watches = None
    wait_for(lambda: readiness(webhook)[1]["stale"] is False, SYNC, "the watch to recover")
    assert any("streaming again" in r.getMessage() for r in caplog.records)
    assert 'vgpuctl_webhook_cluster_stale 0.0' in webhook.get("/metrics").get_data(as_text=True)


def test_an_unreachable_api_server_keeps_the_webhook_not_ready(closed_port: int) -> None:
    settings = Settings(cluster_aware=True, cluster_watch=lambda sink: ClusterWatch(
        lambda: client_for(f"http://127.0.0.1:{closed_port}"), sink, options=FAST))
    app = create_app(settings)
    client = app.test_client()
    try:
        check = wait_for(lambda: (lambda s: s[1] if "refused" in s[1].get("reason", "") else None)(readiness(client)),
                         SYNC, "the connection failure to show")
        assert readiness(client)[0] == 503 and check["synced"] is False
        assert validate(client, BIG)["allowed"] is True  # nothing is guessed
    finally:
        app.extensions["vgpuctl"].cluster.stop()


@pytest.fixture
def closed_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ---- settings, CLI, and the real server ------------------------------------------------------------

def test_cluster_aware_reads_the_flag_then_the_environment() -> None:
    assert build_settings(env={}).cluster_aware is False
    assert build_settings(env={"VGPUCTL_CLUSTER_AWARE": "true"}).cluster_aware is True
    assert build_settings(env={"VGPUCTL_CLUSTER_AWARE": "0"}).cluster_aware is False
    assert build_settings(cluster_aware=True, env={"VGPUCTL_CLUSTER_AWARE": "false"}).cluster_aware is True
    with pytest.raises(SettingsError, match="VGPUCTL_CLUSTER_AWARE: expected true or false"):
        build_settings(env={"VGPUCTL_CLUSTER_AWARE": "maybe"})


def test_serve_cluster_aware_without_a_cluster_config_exits_3(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["webhook", "serve", "--cluster-aware"],
                                env={"KUBECONFIG": None, "KUBERNETES_SERVICE_HOST": None, "HOME": str(tmp_path)})
    assert result.exit_code == 3 and "no Kubernetes configuration" in result.stderr
    # A KUBECONFIG file that is not there is the user's input, like --kubeconfig: a usage error.
    result = CliRunner().invoke(cli, ["webhook", "serve", "--cluster-aware"],
                                env={"KUBECONFIG": str(tmp_path / "nowhere"), "HOME": str(tmp_path)})
    assert result.exit_code == 2 and "no such file" in result.stderr
    result = CliRunner().invoke(cli, ["webhook", "serve"], env={"VGPUCTL_CLUSTER_AWARE": "maybe"})
    assert result.exit_code == 2 and "VGPUCTL_CLUSTER_AWARE" in result.stderr


def test_serve_help_shows_the_option_and_an_example() -> None:
    result = CliRunner().invoke(cli, ["webhook", "serve", "--help"], env={"COLUMNS": "160"})
    assert "--cluster-aware" in result.stdout
    assert "vgpuctl webhook serve --cluster-aware --device-config device-config.yaml" in result.stdout


def serve_cluster_aware(api: FakeApi, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LiveServer:
    """A real `vgpuctl webhook serve --cluster-aware` (gunicorn, TLS) whose kubeconfig points at `api`."""
    from tests.webhook.test_server import make_certs

    make_certs(tmp_path / "tls")
    monkeypatch.setenv("KUBECONFIG", write_kubeconfig(tmp_path / "kubeconfig", {"fake": api.url}, "fake"))
    return LiveServer(tmp_path / "tls", tmp_path / "server.log", "--device-config", str(DEVICE_CONFIG),
                      "--cluster-aware")


def test_gunicorn_worker_watches_after_the_fork(api: FakeApi, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """`vgpuctl webhook serve --cluster-aware` for real: the watch starts in the gunicorn worker (the app is
    built after the fork), /readyz turns ready on sync, and the worker judges with the watched cluster."""
    live = serve_cluster_aware(api, tmp_path, monkeypatch)
    try:
        def ready() -> bool:
            return live.connection().call("GET", "/readyz")[0] == 200

        wait_for(ready, SYNC, "the worker's first sync")
        status, body = live.connection().post_json("/validate", admission_review(BIG))
        assert status == 200 and body["response"]["allowed"] is False
        assert "[VGP003]" in body["response"]["status"]["message"]
        api.nodes.put(node("gpu-3", 8))
        wait_for(lambda: live.connection().post_json("/validate", admission_review(BIG))[1]["response"]["allowed"],
                 SYNC, "the watched node to reach the worker")
    finally:
        live.stop()
    log = live.log()
    assert "Traceback" not in log, log
    assert "cluster view synced: 3 nodes, 6 bound device pods" in log


def test_a_new_view_is_warmed_before_requests_see_it(api: FakeApi) -> None:
    """Per-facts caches (every GPU's memory, the largest GPU count) are filled by the publisher thread, so
    the first request after a publish does not scan the fleet (16-20 ms at 5,000 nodes)."""
    app = create_app(aware_settings(api))
    try:
        client = app.test_client()
        wait_synced(client)
        facts = app.extensions["vgpuctl"].cluster.published.view.facts
        kinds = {key[0] for key in facts.memo if isinstance(key, tuple)}
        assert {"eligible-gpus", "largest-eligible"} <= kinds, kinds
        assert facts.max_gpus_per_node == 4
    finally:
        app.extensions["vgpuctl"].cluster.stop()


def test_junk_annotations_are_not_kept(webhook: FlaskClient, api: FakeApi, caplog: pytest.LogCaptureFixture) -> None:
    """Issue 23 item 2: pods whose volcano.sh/ annotations are junk cost the view nothing; an allocation
    annotation longer than Volcano ever writes is counted and logged once, not stored."""
    junk = "x" * 262_144
    for i in range(20):
        api.pods.put({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": f"junk{i}", "namespace": "evil", "annotations": {"volcano.sh/junk": junk}},
                      "spec": {"nodeName": "no-such-node", "containers": [{"name": "c"}]},
                      "status": {"phase": "Pending"}})
    for i in range(3):
        api.pods.put({"apiVersion": "v1", "kind": "Pod",
                      "metadata": {"name": f"long{i}", "namespace": "evil",
                                   "annotations": {"volcano.sh/vgpu-ids-new": junk}},
                      "spec": {"nodeName": "gpu-1", "containers": [{"name": "c"}]}, "status": {"phase": "Running"}})
    with caplog.at_level(logging.WARNING, logger="vgpuctl.webhook"):
        check = wait_synced(webhook)
        assert check["pods"] == 6  # the seeded device pods only
        metrics = webhook.get("/metrics").get_data(as_text=True)
        assert "vgpuctl_webhook_cluster_dropped_annotations_total 3.0" in metrics
    lines = [r.getMessage() for r in caplog.records if "longer than any allocation" in r.getMessage()]
    assert len(lines) == 1 and lines[0].startswith("cluster watch: pod evil/long")
    state = webhook.application.extensions["vgpuctl"].cluster
    assert all(not key.startswith("evil/") for key in state._pods)


def test_a_tainted_node_is_no_room_for_a_pod_that_does_not_tolerate_it(webhook: FlaskClient, api: FakeApi) -> None:
    """The watched nodes keep their taints and cordon: a pod that fits only gpu-3's devices, while gpu-3 is
    tainted, gets the no-room warning naming the taint; a toleration lifts it."""
    wait_synced(webhook)
    tainted = node("gpu-3", 8)
    tainted["spec"] = {"taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]}
    api.nodes.put(tainted)
    wait_for(lambda: validate(webhook, BIG)["allowed"], SYNC, "gpu-3 to reach the view")
    answer = validate(webhook, new_pod("wide", 8))
    assert answer["allowed"] is True
    assert any("[VGX004]" in w and "taint" in w for w in answer.get("warnings", [])), answer
    tolerant = new_pod("wide", 8)
    tolerant["spec"]["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}]
    assert "warnings" not in validate(webhook, tolerant)
