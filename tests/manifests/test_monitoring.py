"""deploy/overlays/monitoring: the Grafana dashboard and the alert rules name only metrics (and labels) the
webhook really exports — read from the `/metrics` of a cluster-aware app synced against a local API
server — or Volcano's documented vGPU metrics; the ServiceMonitor and PrometheusRule (CRDs that
kubernetes-validate has no schema for) are checked field by field; and `kubectl kustomize` builds the
base and every overlay into exactly what `vgpuctl.core.kustomize` renders.

Volcano's names and labels: volcano-sh/volcano `pkg/scheduler/api/devices/nvidia/vgpu/metrics.go`
(commit ed72c7c815a9fd547a787134676f73d42e9d049c), subsystem `volcano`, labels `devID`, `NodeName`
(and `podName` on the per-pod two).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from pytest_httpserver import HTTPServer

from tests.kube.conftest import FakeCluster, client_for
from tests.manifests.conftest import BASE, DEPLOY, OVERLAYS
from tests.manifests.kustomize import render
from tests.webhook.conftest import DEVICE_CONFIG, admission_review
from tests.webhook.fake_watch_api import FakeApi
from tests.webhook.live import wait_for
from tests.webhook.test_alloc_metrics import watched_objects
from tests.webhook.test_cluster_aware import FAST, SYNC, new_pod
from vgpuctl.kube.watch import ClusterWatch
from vgpuctl.webhook.app import create_app
from vgpuctl.webhook.certs import service_dns_names
from vgpuctl.webhook.settings import Settings

MONITORING = DEPLOY / "overlays" / "monitoring"
DASHBOARD = MONITORING / "grafana-dashboard.json"
VOLCANO = {f"volcano_vgpu_device_{n}": {"devID", "NodeName"} for n in (
    "shared_number", "allocated_memory", "allocated_cores", "memory_limit")} | {
    f"volcano_vgpu_device_{n}": {"devID", "NodeName", "podName"} for n in (
        "memory_allocation_for_a_certain_pod", "core_allocation_for_a_certain_pod")}
# What Prometheus itself adds: the synthetic `up`, and the target labels a ServiceMonitor attaches.
PROMETHEUS: dict[str, set[str]] = {"up": set()}
TARGET_LABELS = {"job", "instance", "namespace", "pod", "service", "endpoint", "container"}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless", "bool",
            "offset", "inf", "nan"}
SUFFIXES = {"counter": ("_total", "_created"), "histogram": ("_bucket", "_sum", "_count", "_created"),
            "gauge": ("",), "summary": ("_sum", "_count", "_created"), "info": ("_info",), "unknown": ("",)}


# ---- what a query names ---------------------------------------------------------------------------

def _blank(expr: str) -> str:
    return re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)


def metric_names(expr: str) -> set[str]:
    """The metric names a PromQL expression selects (not functions, keywords, labels or numbers)."""
    text = _blank(expr)
    text = re.sub(r"\{[^}]*\}", " ", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", " ", text)  # ranges
    text = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", " ", text)
    names = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        word, before = match.group(), text[match.start() - 1] if match.start() else " "
        if word.lower() in KEYWORDS or before.isdigit() or before == "." or before == "$":
            continue  # a keyword, an exponent (1e3), a Grafana variable
        if text[match.end():].lstrip().startswith("("):
            continue  # a function or an aggregation
        names.add(word)
    return names


def label_names(expr: str) -> set[str]:
    """Labels an expression matches on or groups by."""
    text = _blank(expr)
    found = set()
    for block in re.findall(r"\{([^}]*)\}", text):
        found |= set(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)", block))
    for block in re.findall(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", text):
        found |= {w.strip() for w in block.split(",") if w.strip()}
    return found


def test_the_extractors_see_names_and_skip_the_rest() -> None:
    """The negative control: a misspelled metric or label would be caught."""
    expr = ('histogram_quantile(0.99, sum by (le, endpoint) (rate(vgpuctl_webhook_review_duration_seconds_bucket'
            '{endpoint="validate"}[$__rate_interval]))) - time() < 14 * 86400 and on (pod) up == 0 '
            '- max by (NodeName) (vgpuctl_device_podz{family=~"$family"})')
    assert metric_names(expr) == {"vgpuctl_webhook_review_duration_seconds_bucket", "up", "vgpuctl_device_podz"}
    assert label_names(expr) == {"le", "endpoint", "pod", "NodeName", "family"}


# ---- what the code exports ----------------------------------------------------------------------

@pytest.fixture(scope="module")
def exported() -> Iterator[dict[str, set[str]]]:
    """Metric name → its label names, from a synced cluster-aware app's /metrics after a denied review."""
    server = HTTPServer()
    server.start()
    api = FakeApi(FakeCluster(server))
    for obj in watched_objects():
        (api.nodes if obj["kind"] == "Node" else api.pods).put(obj)
    app = create_app(Settings(device_config_path=str(DEVICE_CONFIG), config_check_interval=0, cluster_aware=True,
                              cluster_watch=lambda sink: ClusterWatch(lambda: client_for(api.url), sink,
                                                                       options=FAST)))
    client = app.test_client()
    try:
        wait_for(lambda: client.get("/readyz").status_code == 200, SYNC, "the first sync")
        denied = client.post("/validate", json=admission_review(new_pod("unit", 1, "3Gi")))
        assert denied.get_json()["response"]["allowed"] is False  # a finding and a denial to count
        text = client.get("/metrics").get_data(as_text=True)
    finally:
        app.extensions["vgpuctl"].cluster.stop()
        api.close()
        server.clear()
        if server.is_running():
            server.stop()
    names: dict[str, set[str]] = {}
    for family in text_string_to_metric_families(text):
        for suffix in SUFFIXES[family.type]:
            names.setdefault(family.name + suffix, set())
        for sample in family.samples:
            names.setdefault(sample.name, set()).update(sample.labels)
    yield names


def queries() -> list[tuple[str, str]]:
    """(where, PromQL) of every dashboard target and alert rule."""
    dashboard = json.loads(DASHBOARD.read_text())
    found = [(f"dashboard panel {p['title']!r}", t["expr"]) for p in dashboard["panels"] for t in p.get("targets", [])]
    for obj in render(MONITORING):
        if obj["kind"] == "PrometheusRule":
            found += [(f"rule {r['alert']}", r["expr"]) for g in obj["spec"]["groups"] for r in g["rules"]]
    return found


def test_every_query_names_an_exported_metric_with_its_labels(exported: dict[str, set[str]]) -> None:
    known = {**exported, **VOLCANO, **PROMETHEUS}
    found = queries()
    assert len(found) >= 30
    for where, expr in found:
        names = metric_names(expr)
        assert names, (where, expr)
        unknown = names - known.keys()
        assert not unknown, f"{where} names {sorted(unknown)}, which nothing exports"
        labels = set().union(*(known[n] for n in names)) | TARGET_LABELS
        missing = label_names(expr) - labels
        assert not missing, f"{where} uses labels {sorted(missing)} that {sorted(names)} do not carry"


def test_dashboard_variables_read_exported_labels(exported: dict[str, set[str]]) -> None:
    dashboard = json.loads(DASHBOARD.read_text())
    variables = [v for v in dashboard["templating"]["list"] if v["type"] == "query"]
    assert {v["name"] for v in variables} == {"node", "family"}
    for variable in variables:
        metric, label = re.fullmatch(r"label_values\((\w+), (\w+)\)", variable["definition"]).groups()  # type: ignore[union-attr]
        assert label in exported[metric]
    used = {m for _, expr in queries() for m in re.findall(r"\$(\w+)", expr)} - {"__rate_interval"}
    assert used == {"node", "family"}
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])


def test_the_dashboard_covers_allocation_fragmentation_denials_and_certificates() -> None:
    text = " ".join(expr for _, expr in queries())
    for needed in ("vgpuctl_device_memory_allocated_bytes", "vgpuctl_device_cores_allocated",
                   "vgpuctl_device_slices_in_use", "vgpuctl_webhook_review_findings_total",
                   "vgpuctl_webhook_tls_cert_expiry_timestamp_seconds", "volcano_vgpu_device_allocated_memory"):
        assert needed in text, needed
    titles = {p["title"] for p in json.loads(DASHBOARD.read_text())["panels"]}
    assert {"Devices partly used", "Denials by code", "Certificate expires in", "Devices"} <= titles


# ---- the CRDs, checked by structure -------------------------------------------------------------

@cache
def monitoring() -> tuple[dict[str, Any], ...]:
    return tuple(render(MONITORING))


def one(kind: str) -> dict[str, Any]:
    (obj,) = [o for o in monitoring() if o["kind"] == kind]
    return obj


def test_service_monitor_scrapes_the_webhook_service_over_verified_https() -> None:
    monitor, service = one("ServiceMonitor"), one("Service")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    assert monitor["metadata"]["namespace"] == service["metadata"]["namespace"]
    assert set(monitor["spec"]) == {"selector", "namespaceSelector", "endpoints"}
    assert monitor["spec"]["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert monitor["spec"]["namespaceSelector"] == {"matchNames": [service["metadata"]["namespace"]]}
    (endpoint,) = monitor["spec"]["endpoints"]
    assert endpoint["port"] in {p["name"] for p in service["spec"]["ports"]}
    routes = {rule.rule for rule in create_app(Settings()).url_map.iter_rules()}
    assert endpoint["scheme"] == "https" and endpoint["path"] in routes
    tls = endpoint["tlsConfig"]
    assert "insecureSkipVerify" not in tls
    assert tls["serverName"] in service_dns_names(service["metadata"]["name"], service["metadata"]["namespace"])
    volumes = one("Deployment")["spec"]["template"]["spec"]["volumes"]
    secret = next(v for v in volumes if v["name"] == "tls")["secret"]["secretName"]
    assert tls["ca"] == {"secret": {"name": secret, "key": "ca.crt"}}
    assert re.fullmatch(r"\d+s", endpoint["interval"]) and re.fullmatch(r"\d+s", endpoint["scrapeTimeout"])


def test_prometheus_rule_has_the_alerts_and_each_is_complete() -> None:
    rule = one("PrometheusRule")
    assert rule["apiVersion"] == "monitoring.coreos.com/v1"
    assert rule["metadata"]["namespace"] == one("Service")["metadata"]["namespace"]
    alerts = {}
    for group in rule["spec"]["groups"]:
        assert set(group) == {"name", "rules"} and group["rules"]
        for r in group["rules"]:
            assert set(r) == {"alert", "expr", "for", "labels", "annotations"}, r.get("alert")
            assert re.fullmatch(r"[A-Z][A-Za-z]+", r["alert"]) and r["alert"] not in alerts
            assert re.fullmatch(r"\d+[smh]", r["for"])
            assert r["labels"]["severity"] in {"warning", "critical"}
            assert set(r["annotations"]) == {"summary", "description"}
            alerts[r["alert"]] = r["expr"]
    # webhook down or not ready, certificate expiring, node findings at error, watch not synced, denials
    expected = {"VgpuctlWebhookDown": "up", "VgpuctlWebhookNotReady": "vgpuctl_webhook_ready",
                "VgpuctlWebhookCertificateExpiring": "vgpuctl_webhook_tls_cert_expiry_timestamp_seconds",
                "VgpuctlNodeFindingError": "vgpuctl_node_findings",
                "VgpuctlClusterWatchNotSynced": "vgpuctl_webhook_cluster_synced",
                "VgpuctlHighDenialRate": "vgpuctl_webhook_reviews_total"}
    for alert, metric in expected.items():
        assert metric in metric_names(alerts[alert]), alert
    assert 'severity="error"' in alerts["VgpuctlNodeFindingError"]


def test_the_monitoring_overlay_is_the_cluster_aware_one_plus_its_two_objects() -> None:
    added = [o for o in monitoring() if o["apiVersion"] == "monitoring.coreos.com/v1"]
    assert sorted(o["kind"] for o in added) == ["PrometheusRule", "ServiceMonitor"]
    assert [o for o in monitoring() if o not in added] == render(DEPLOY / "overlays" / "cluster-aware")


# ---- kubectl kustomize against our renderer ------------------------------------------------------

def _identity(obj: dict[str, Any]) -> tuple[str, str, str, str]:
    meta = obj["metadata"]
    return obj["apiVersion"], obj["kind"], meta.get("namespace", ""), meta["name"]


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not installed: nothing to compare with")
@pytest.mark.parametrize("tree", [BASE, *OVERLAYS], ids=lambda t: str(t.relative_to(DEPLOY)))
def test_kubectl_kustomize_builds_what_our_renderer_renders(tree: Path) -> None:
    kubectl = shutil.which("kubectl")
    assert kubectl is not None
    done = subprocess.run([kubectl, "kustomize", str(tree)], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    theirs = sorted((o for o in yaml.safe_load_all(done.stdout) if o), key=_identity)
    ours = sorted(render(tree), key=_identity)
    assert [_identity(o) for o in theirs] == [_identity(o) for o in ours]
    assert theirs == ours


def test_the_readme_tables_every_allocation_metric_with_its_labels() -> None:
    from tests.manifests.conftest import ROOT
    from vgpuctl.core.allocation import METRICS

    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("### Metrics"):readme.index("### Dashboard and alerts")]
    rows = [line for line in section.splitlines() if line.startswith("| `vgpuctl_")]
    for metric in METRICS:
        (row,) = [r for r in rows if f"`{metric.name}`" in r]
        labels = row.split("|")[2]
        for label in metric.labels:
            assert f"`{label}`" in labels or ("same" in labels and label in rows[0].split("|")[2]), (metric.name, label)
    assert "deploy/overlays/monitoring" in readme[readme.index("### Dashboard and alerts"):]
