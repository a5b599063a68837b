"""Prometheus metrics of one app instance, in its own registry.

A registry per app (not the process-global default) keeps tests independent and makes what `/metrics`
serves exactly what this app recorded. Under gunicorn each worker process is one app, so the
Deployment runs one worker per pod (threads for concurrency, replicas for scale): counters then never
appear to reset between scrapes that land on different workers.
"""

from __future__ import annotations

import bisect
import itertools
import threading
import time
from collections.abc import Callable, Iterable, Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge, generate_latest
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST
from prometheus_client.samples import Sample
from prometheus_client.utils import floatToGoString

from vgpuctl.core.findings import Finding, Severity
from vgpuctl.webhook.connection import DROP_REASONS

# Admission calls are expected in the low milliseconds; the API server gives up at timeoutSeconds (5 s).
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


ENDPOINTS = ("mutate", "validate")
RESULTS = ("allowed", "denied", "skipped", "error")
REVIEWS_HELP = ("Admission reviews answered, by endpoint and result (allowed, denied, skipped: not a reviewed "
                "operation, error: internal error).")
FINDINGS_HELP = "Findings in answered reviews, by endpoint, finding code and severity."
LATENCY_HELP = "Time to parse, review and answer one AdmissionReview."
_BOUNDS = [*(floatToGoString(b) for b in LATENCY_BUCKETS), "+Inf"]  # type: ignore[no-untyped-call]  # `le` labels


class ReviewStats:
    """The three metrics every review updates: reviews, findings and latency, as a custom collector.

    prometheus_client's Counter and Histogram take a lock and make several calls per update (a histogram
    two locks); with a finding or two that is ~7 calls and ~5 locks per review, ~3-7 µs of the serving
    worker's CPU (`benchmarks/webhook_load.py`). Here one lock covers a review's whole update, and the
    families are built when /metrics is scraped, through the library's custom-collector API — the same
    names, labels, buckets and `_created` samples as the Counter/Histogram pair."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        now = time.time()
        self._reviews: dict[tuple[str, str], list[float]] = {(e, r): [0, now] for e in ENDPOINTS for r in RESULTS}
        self._findings: dict[tuple[str, str, Severity], list[float]] = {}
        # per endpoint: observations per bucket (not cumulative; the last is +Inf), sum, created
        self._latency: dict[str, tuple[list[int], list[float]]] = {
            e: ([0] * (len(LATENCY_BUCKETS) + 1), [0.0, now]) for e in ENDPOINTS}

    def record(self, endpoint: str, result: str, seconds: float, findings: Iterable[Finding] = ()) -> None:
        bucket = bisect.bisect_left(LATENCY_BUCKETS, seconds)  # `le`: the first bound >= seconds
        with self._lock:
            count = self._reviews.get((endpoint, result))
            if count is None:
                count = self._reviews[endpoint, result] = [0, time.time()]
            count[0] += 1
            latency = self._latency.get(endpoint)
            if latency is None:
                latency = self._latency[endpoint] = ([0] * (len(LATENCY_BUCKETS) + 1), [0.0, time.time()])
            latency[0][bucket] += 1
            latency[1][0] += seconds
            for finding in findings:
                key = (endpoint, finding.code, finding.severity)
                found = self._findings.get(key)
                if found is None:
                    found = self._findings[key] = [0, time.time()]
                found[0] += 1

    def collect(self) -> Iterator[Metric]:
        with self._lock:
            reviews = [(k, v[0], v[1]) for k, v in self._reviews.items()]
            findings = [(k, v[0], v[1]) for k, v in self._findings.items()]
            latency = [(e, list(b), s[0], s[1]) for e, (b, s) in self._latency.items()]
        family = CounterMetricFamily("vgpuctl_webhook_reviews", REVIEWS_HELP, labels=["endpoint", "result"])
        for (endpoint, result), value, created in reviews:
            family.add_metric([endpoint, result], value, created=created)
        yield family
        family = CounterMetricFamily("vgpuctl_webhook_review_findings", FINDINGS_HELP,
                                     labels=["endpoint", "code", "severity"])
        for (endpoint, code, severity), value, created in findings:
            family.add_metric([endpoint, code, severity.value], value, created=created)
        yield family
        histogram = HistogramMetricFamily("vgpuctl_webhook_review_duration_seconds", LATENCY_HELP,
                                          labels=["endpoint"])
        for endpoint, counts, total, created in latency:
            cumulative = list(itertools.accumulate(counts))
            histogram.add_metric([endpoint], list(zip(_BOUNDS, cumulative, strict=True)), total)
            histogram.samples.append(Sample("vgpuctl_webhook_review_duration_seconds_created",
                                            {"endpoint": endpoint}, created))
        yield histogram


class WebhookMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.reviews = ReviewStats()
        self.registry.register(self.reviews)
        self.rejected = Counter(
            "vgpuctl_webhook_invalid_requests", "Requests refused before review, by endpoint and HTTP status "
            "(400 not an AdmissionReview, 413 too large, 415 not JSON).",
            ["endpoint", "status"], registry=self.registry)
        self.config_reloads = Counter(
            "vgpuctl_webhook_device_config_reloads", "Device config (re)loads from the mounted file, by result.",
            ["result"], registry=self.registry)
        self.config_loaded = Gauge(
            "vgpuctl_webhook_device_config_loaded", "1 when a device config is in use (0: none configured or none "
            "could be loaded).", registry=self.registry)
        self.cert_expiry = Gauge(
            "vgpuctl_webhook_tls_cert_expiry_timestamp_seconds", "notAfter of the serving certificate (Unix time), "
            "as of the last readiness check.", registry=self.registry)
        self.ready = Gauge(
            "vgpuctl_webhook_ready", "1 when the last readiness check (/readyz, the kubelet's probe) passed, else 0.",
            registry=self.registry)
        self.dropped = Counter(
            "vgpuctl_webhook_connections_dropped", "Connections the server closed before answering them, by reason "
            "(handshake-timeout, handshake-failed, header-timeout, body-timeout, write-timeout, malformed, "
            "too-many-connections): a rise is a misconfigured client or connections held open on purpose.",
            ["reason"], registry=self.registry)
        for result in ("success", "failure"):
            self.config_reloads.labels(result)
        for reason in DROP_REASONS:
            self.dropped.labels(reason)
        self._texts: list[Callable[[], list[bytes]]] = []

    def add_text(self, source: Callable[[], list[bytes]]) -> None:
        """Families served after the registry's, already in the text format, as chunks (the cluster's
        allocation gauges, pre-rendered per node: `alloc_metrics`); their names must not be in the registry."""
        self._texts.append(source)

    def exposition(self) -> tuple[list[bytes], str]:
        """The body as chunks, never joined: the allocation families of 5,000 nodes are ~57 MB, and each copy
        of them is that much more peak memory for the scrape (benchmarks/cluster_aware.py)."""
        chunks = [generate_latest(self.registry)]
        for source in self._texts:
            chunks.extend(source())
        return chunks, CONTENT_TYPE_LATEST
