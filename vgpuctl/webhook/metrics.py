"""Prometheus metrics of one app instance, in its own registry.

A registry per app (not the process-global default) keeps tests independent and makes what `/metrics`
serves exactly what this app recorded. Under gunicorn each worker process is one app, so the
Deployment runs one worker per pod (threads for concurrency, replicas for scale): counters then never
appear to reset between scrapes that land on different workers.
"""

from __future__ import annotations

from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

# Admission calls are expected in the low milliseconds; the API server gives up at timeoutSeconds (5 s).
LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class WebhookMetrics:
    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.reviews = Counter(
            "vgpuctl_webhook_reviews", "Admission reviews answered, by endpoint and result "
            "(allowed, denied, skipped: not a reviewed operation, error: internal error).",
            ["endpoint", "result"], registry=self.registry)
        self.findings = Counter(
            "vgpuctl_webhook_review_findings", "Findings in answered reviews, by endpoint, finding code and severity.",
            ["endpoint", "code", "severity"], registry=self.registry)
        self.latency = Histogram(
            "vgpuctl_webhook_review_duration_seconds", "Time to parse, review and answer one AdmissionReview.",
            ["endpoint"], buckets=LATENCY_BUCKETS, registry=self.registry)
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
        self._reviews: dict[tuple[str, str], Any] = {}
        self._latency: dict[str, Any] = {}
        self._findings: dict[tuple[str, str, str], Any] = {}
        for endpoint in ("mutate", "validate"):
            for result in ("allowed", "denied", "skipped", "error"):
                self.reviews.labels(endpoint, result)
            self.latency.labels(endpoint)
        for result in ("success", "failure"):
            self.config_reloads.labels(result)

    # Label children, cached: `labels()` validates and locks on every call, which the hot path can skip.
    def review_done(self, endpoint: str, result: str, seconds: float) -> None:
        key = (endpoint, result)
        child = self._reviews.get(key)
        if child is None:
            child = self._reviews[key] = self.reviews.labels(endpoint, result)
        child.inc()
        histogram = self._latency.get(endpoint)
        if histogram is None:
            histogram = self._latency[endpoint] = self.latency.labels(endpoint)
        histogram.observe(seconds)

    def finding(self, endpoint: str, code: str, severity: str) -> None:
        key = (endpoint, code, severity)
        child = self._findings.get(key)
        if child is None:
            child = self._findings[key] = self.findings.labels(endpoint, code, severity)
        child.inc()

    def exposition(self) -> tuple[bytes, str]:
        return generate_latest(self.registry), CONTENT_TYPE_LATEST
