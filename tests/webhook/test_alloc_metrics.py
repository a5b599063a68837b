"""Device allocation metrics on `/metrics` of the cluster-aware webhook, for every family.

The real kubernetes client lists and watches nodes and pods on a local API server (`fake_watch_api`)
serving the mixed cluster of `tests/fixtures/clusters/mixed.yaml` (vGPU hami-core and MIG, gpushare,
Ascend HAMi vNPU, MindCluster); the exposition is parsed with prometheus_client's own parser.
Label names `NodeName` and `devID` are those of Volcano's vGPU metrics (volcano-sh/volcano
`pkg/scheduler/api/devices/nvidia/vgpu/metrics.go`, commit ed72c7c815a9fd547a787134676f73d42e9d049c:
`volcano_vgpu_device_allocated_memory{devID,NodeName}` …), so dashboards join the two on them.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from flask import Flask
from flask.testing import FlaskClient
from prometheus_client.parser import text_string_to_metric_families
from pytest_httpserver import HTTPServer
from typer.testing import CliRunner

from tests.kube.conftest import FakeCluster, client_for, write_kubeconfig
from tests.webhook.fake_watch_api import FakeApi
from tests.webhook.live import LiveServer, wait_for
from tests.webhook.test_cluster_aware import FAST, SYNC, wait_synced
from vgpuctl.cli.app import app as cli
from vgpuctl.core.allocation import METRICS
from vgpuctl.kube.watch import ClusterWatch
from vgpuctl.webhook.app import create_app
from vgpuctl.webhook.settings import Settings

MIXED = Path(__file__).resolve().parents[1] / "fixtures" / "clusters" / "mixed.yaml"
MIB = 1 << 20
GPU1, GPU2 = "GPU-11111111-1111-1111-1111-111111111111", "GPU-22222222-2222-2222-2222-222222222222"
MIG = "GPU-33333333-3333-3333-3333-333333333333"
Series = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def watched_objects() -> list[dict[str, Any]]:
    """The Nodes and Pods of the mixed cluster (the webhook watches nothing else)."""
    items = yaml.safe_load(MIXED.read_text())["items"]
    return [{"apiVersion": "v1", **o} for o in items if o["kind"] in ("Node", "Pod")]


@pytest.fixture
def api(httpserver: HTTPServer) -> Iterator[FakeApi]:
    fake = FakeApi(FakeCluster(httpserver))
    for obj in watched_objects():
        (fake.nodes if obj["kind"] == "Node" else fake.pods).put(obj)
    yield fake
    fake.close()


def aware_app(api: FakeApi) -> Flask:
    """No device config mounted: Volcano's built-in one (gpuMemoryFactor 1), as `nodes` uses without a ConfigMap."""
    return create_app(Settings(cluster_aware=True, cluster_watch=lambda sink: ClusterWatch(
        lambda: client_for(api.url), sink, options=FAST)))


@pytest.fixture
def webhook(api: FakeApi) -> Iterator[FlaskClient]:
    app = aware_app(api)
    client = app.test_client()
    wait_synced(client)
    yield client
    app.extensions["vgpuctl"].cluster.stop()


def allocation(text: str) -> Series:
    """The vgpuctl_device_* / vgpuctl_node_* samples of an exposition, parsed by prometheus_client."""
    names = {m.name for m in METRICS}
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for family in text_string_to_metric_families(text) if family.name in names for s in family.samples}


def scrape(client: FlaskClient) -> Series:
    r = client.get("/metrics")
    assert r.status_code == 200
    return allocation(r.get_data(as_text=True))


def value(series: Series, name: str, **labels: str) -> float | None:
    """The one sample of `name` whose labels include `labels` (None if there is none)."""
    found = [v for (n, ls), v in series.items() if n == name and labels.items() <= dict(ls).items()]
    assert len(found) <= 1, (name, labels, found)
    return found[0] if found else None


def test_every_family_carries_what_the_allocation_annotations_say(webhook: FlaskClient) -> None:
    s = scrape(webhook)
    # vGPU hami-core: trainer's vgpu-ids-new books 2048 MiB and 30 % of GPU 1, 1024 MiB of GPU 2;
    # ml/finished (Succeeded, 8192 MiB) is not counted, as Volcano does not count it.
    gpu1 = {"NodeName": "gpu-a", "devID": GPU1, "family": "vgpu", "mode": "hami-core",
            "type": "NVIDIA-NVIDIA A100-PCIE-40GB"}
    assert value(s, "vgpuctl_device_memory_allocated_bytes", **gpu1) == 2048 * MIB
    assert value(s, "vgpuctl_device_memory_capacity_bytes", **gpu1) == 20480 * MIB
    assert value(s, "vgpuctl_device_cores_allocated", **gpu1) == 30
    assert value(s, "vgpuctl_device_cores_capacity", **gpu1) == 100
    assert value(s, "vgpuctl_device_pods", **gpu1) == 1
    assert (value(s, "vgpuctl_device_slots_used", **gpu1), value(s, "vgpuctl_device_slots_total", **gpu1)) == (1, 10)
    assert value(s, "vgpuctl_device_healthy", **gpu1) == 1
    assert value(s, "vgpuctl_device_memory_allocated_bytes", devID=GPU2) == 1024 * MIB
    assert value(s, "vgpuctl_device_healthy", devID=GPU2) == 0  # registered `false`
    # MIG: one pod on instance group1-0 of GPU 3
    assert value(s, "vgpuctl_device_memory_allocated_bytes", devID=MIG, mode="mig") == 2560 * MIB
    # Volcano's built-in device config (none mounted) defines no MIG group: the slice is not one anything
    # defines, so it is booked as "unknown" (a label value per made-up name would be unbounded).
    assert value(s, "vgpuctl_device_slices_in_use", devID=MIG, slice="unknown") == 1
    # gpushare: gpu-index 0 and a 4096 MiB limit, cards of 32768/2 MiB, card 1 in gpu-unhealthy-ids
    assert value(s, "vgpuctl_device_memory_allocated_bytes", NodeName="share-1", devID="0") == 4096 * MIB
    assert value(s, "vgpuctl_device_memory_capacity_bytes", NodeName="share-1", devID="0") == 16384 * MIB
    assert value(s, "vgpuctl_device_healthy", NodeName="share-1", devID="1") == 0
    assert value(s, "vgpuctl_device_cores_allocated", NodeName="share-1", devID="0") is None  # no cores accounted
    # Ascend HAMi vNPU: hami.io/Ascend310P-devices-allocated books 3072 MiB on npu-0-uuid
    npu = {"NodeName": "npu-1", "devID": "npu-0-uuid", "family": "ascend-hami", "type": "Ascend310P"}
    assert value(s, "vgpuctl_device_memory_allocated_bytes", **npu) == 3072 * MIB
    assert value(s, "vgpuctl_device_memory_capacity_bytes", **npu) == 21527 * MIB
    assert (value(s, "vgpuctl_device_slots_used", **npu), value(s, "vgpuctl_device_slots_total", **npu)) == (1, 7)
    assert value(s, "vgpuctl_device_cores_capacity", **npu) == 8
    # MindCluster: huawei.com/npu-core 1-vir02_1c: template vir02_1c (2 AI cores) on chip 1 of 8-core chips
    chip = {"NodeName": "mc-1", "devID": "1", "family": "ascend-mindcluster", "type": "310P3"}
    assert value(s, "vgpuctl_device_cores_allocated", **chip) == 2
    assert value(s, "vgpuctl_device_cores_capacity", **chip) == 8
    assert value(s, "vgpuctl_device_slices_in_use", slice="vir02_1c", **chip) == 1
    assert value(s, "vgpuctl_device_memory_allocated_bytes", **chip) is None  # no memory accounted
    # the doctor's node findings: a 5-field register entry on gpu-old-plugin, GPU 2 registered unhealthy
    assert value(s, "vgpuctl_node_findings", NodeName="gpu-old-plugin", code="VGN002", severity="error") == 1
    assert value(s, "vgpuctl_node_findings", NodeName="gpu-a", code="VGN007", severity="warning") == 1
    assert value(s, "vgpuctl_node_findings", NodeName="mc-1") is None


def test_the_metrics_are_the_nodes_report(webhook: FlaskClient, tmp_path: Path) -> None:
    """One computation: every device `vgpuctl nodes -o json` shows on the same objects has exactly its
    usage in the metrics, and every node finding it shows is counted under the node, by code."""
    snapshot = tmp_path / "cluster.yaml"
    snapshot.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": watched_objects()}))
    result = CliRunner().invoke(cli, ["nodes", "--snapshot", str(snapshot), "-o", "json"], env={"COLUMNS": "200"})
    assert result.exit_code in (0, 1), result.output
    report = json.loads(result.stdout)
    expected: Series = {}
    for node in report["nodes"]:
        for d in node["devices"]:
            labels = {"NodeName": node["name"], "devID": d["id"], "family": d["family"], "type": d["type"],
                      "mode": d["mode"]}

            def put(name: str, number: float, labels: dict[str, str] = labels, **extra: str) -> None:
                expected[(name, tuple(sorted({**labels, **extra}.items())))] = float(number)

            if d["memoryTotal"]:
                put("vgpuctl_device_memory_allocated_bytes", d["memoryUsed"] * MIB)
                put("vgpuctl_device_memory_capacity_bytes", d["memoryTotal"] * MIB)
            if d["coresTotal"]:
                put("vgpuctl_device_cores_allocated", d["coresUsed"])
                put("vgpuctl_device_cores_capacity", d["coresTotal"])
            if d["slotsTotal"]:
                put("vgpuctl_device_slots_used", d["slotsUsed"])
                put("vgpuctl_device_slots_total", d["slotsTotal"])
            put("vgpuctl_device_pods", len(d["pods"]))
            put("vgpuctl_device_healthy", 1 if d["health"] else 0)
            for name in set(d["slices"]):
                put("vgpuctl_device_slices_in_use", d["slices"].count(name), slice=name)
        for f in node["findings"]:
            key = ("vgpuctl_node_findings", tuple(sorted({"NodeName": node["name"], "code": f["code"],
                                                          "severity": f["severity"]}.items())))
            expected[key] = expected.get(key, 0.0) + 1
    assert len(expected) > 30
    assert scrape(webhook) == expected


def test_watch_events_move_the_gauges(webhook: FlaskClient, api: FakeApi) -> None:
    """A pod bound through the watch adds its booking; its deletion takes it away again."""
    gpu1 = {"NodeName": "gpu-a", "devID": GPU1}
    assert value(scrape(webhook), "vgpuctl_device_pods", **gpu1) == 1
    extra = {"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": "second", "namespace": "ml",
                          "annotations": {"volcano.sh/vgpu-ids-new": f"{GPU1},NVIDIA,5000,20:"}},
             "spec": {"nodeName": "gpu-a", "containers": [
                 {"name": "main", "resources": {"limits": {"volcano.sh/vgpu-number": "1"}}}]},
             "status": {"phase": "Running"}}
    api.pods.put(extra)
    s = wait_for(lambda: (lambda s: s if value(s, "vgpuctl_device_pods", **gpu1) == 2 else None)(scrape(webhook)),
                 SYNC, "the new pod to reach the metrics")
    assert value(s, "vgpuctl_device_memory_allocated_bytes", **gpu1) == (2048 + 5000) * MIB
    assert value(s, "vgpuctl_device_cores_allocated", **gpu1) == 30 + 20
    api.pods.delete(extra)
    s = wait_for(lambda: (lambda s: s if value(s, "vgpuctl_device_pods", **gpu1) == 1 else None)(scrape(webhook)),
                 SYNC, "the deletion to reach the metrics")
    assert value(s, "vgpuctl_device_memory_allocated_bytes", **gpu1) == 2048 * MIB


def test_a_node_that_stops_registering_raises_its_findings_gauge(webhook: FlaskClient, api: FakeApi) -> None:
    """The alert's signal: gpu-a loses its register annotation but still advertises vgpu-* resources (VGN001)."""
    node = next(o for o in watched_objects() if o["metadata"]["name"] == "gpu-a")
    assert value(scrape(webhook), "vgpuctl_node_findings", NodeName="gpu-a", code="VGN001") is None
    broken = copy.deepcopy(node)
    del broken["metadata"]["annotations"]["volcano.sh/node-vgpu-register"]
    api.nodes.put(broken)
    s = wait_for(lambda: (lambda s: s if value(s, "vgpuctl_node_findings", NodeName="gpu-a", code="VGN001")
                          else None)(scrape(webhook)), SYNC, "VGN001 on gpu-a")
    assert value(s, "vgpuctl_node_findings", NodeName="gpu-a", code="VGN001", severity="error") == 1
    assert value(s, "vgpuctl_device_pods", devID=GPU1) is None  # no register: no devices
    api.nodes.put(node)
    wait_for(lambda: value(scrape(webhook), "vgpuctl_node_findings", NodeName="gpu-a", code="VGN001") is None,
             SYNC, "the finding to clear")


def test_two_replicas_export_the_same_allocation(webhook: FlaskClient, api: FakeApi) -> None:
    """No per-process state in these gauges: a second app watching the same API exports the same samples."""
    other = aware_app(api)
    try:
        client = other.test_client()
        wait_synced(client)
        assert scrape(client) == scrape(webhook)
    finally:
        other.extensions["vgpuctl"].cluster.stop()


def ready_gauge(client: FlaskClient) -> float:
    text = client.get("/metrics").get_data(as_text=True)
    (family,) = [f for f in text_string_to_metric_families(text) if f.name == "vgpuctl_webhook_ready"]
    (sample,) = family.samples
    return float(sample.value)


def test_nothing_before_the_first_sync_and_the_ready_gauge_follows_readyz(api: FakeApi) -> None:
    """The allocation families carry no sample until synced; `vgpuctl_webhook_ready` (the alert's "not
    ready") is what the last /readyz answered."""
    api.nodes.list_gate.clear()
    app = aware_app(api)
    client = app.test_client()
    try:
        text = client.get("/metrics").get_data(as_text=True)
        families = {f.name: f for f in text_string_to_metric_families(text)}
        assert all(families[m.name].samples == [] for m in METRICS)  # declared, but nothing guessed
        assert client.get("/readyz").status_code == 503 and ready_gauge(client) == 0
        api.nodes.list_gate.set()
        wait_synced(client)
        assert ready_gauge(client) == 1
    finally:
        api.nodes.list_gate.set()
        app.extensions["vgpuctl"].cluster.stop()


def test_series_per_device_stay_within_the_documented_bound(webhook: FlaskClient) -> None:
    """README "Metrics": at most 8 series per device plus one per MIG slice / template in use."""
    per_device: dict[tuple[str, str], int] = {}
    for (name, labels), _ in scrape(webhook).items():
        ls = dict(labels)
        if name.startswith("vgpuctl_device_") and name != "vgpuctl_device_slices_in_use":
            per_device[ls["NodeName"], ls["devID"]] = per_device.get((ls["NodeName"], ls["devID"]), 0) + 1
    assert per_device[("gpu-a", GPU1)] == 8 and per_device[("npu-1", "npu-0-uuid")] == 8
    assert per_device[("share-1", "0")] == 4 and per_device[("mc-1", "0")] == 4
    assert max(per_device.values()) == 8


def test_the_gunicorn_worker_serves_the_allocation(api: FakeApi, tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """`vgpuctl webhook serve --cluster-aware` for real (gunicorn + TLS): /metrics carries the bookings."""
    from tests.webhook.test_server import make_certs

    make_certs(tmp_path / "tls")
    monkeypatch.setenv("KUBECONFIG", write_kubeconfig(tmp_path / "kubeconfig", {"fake": api.url}, "fake"))
    live = LiveServer(tmp_path / "tls", tmp_path / "server.log", "--cluster-aware")
    try:
        wait_for(lambda: live.connection().call("GET", "/readyz")[0] == 200, SYNC, "the worker's first sync")
        s = allocation(live.metrics().decode())
        assert value(s, "vgpuctl_device_memory_allocated_bytes", NodeName="npu-1") == 3072 * MIB
        assert value(s, "vgpuctl_node_findings", NodeName="gpu-old-plugin", code="VGN002") == 1
    finally:
        live.stop()
    assert "Traceback" not in live.log(), live.log()
