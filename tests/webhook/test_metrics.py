"""The review metrics' custom collector exposes exactly what prometheus_client's Counter and Histogram would."""

from __future__ import annotations

import re
import threading

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from vgpuctl.core.findings import Finding, Severity
from vgpuctl.webhook.metrics import (
    ENDPOINTS,
    FINDINGS_HELP,
    LATENCY_BUCKETS,
    LATENCY_HELP,
    RESULTS,
    REVIEWS_HELP,
    ReviewStats,
)

CREATED = re.compile(r"^(\S+_created\{[^}]*\}) \S+$", re.M)


def reference(events: list[tuple[str, str, float, list[Finding]]]) -> str:
    """What the Counter/Histogram pair the collector replaces exposes for the same reviews."""
    registry = CollectorRegistry()
    reviews = Counter("vgpuctl_webhook_reviews", REVIEWS_HELP, ["endpoint", "result"], registry=registry)
    findings = Counter("vgpuctl_webhook_review_findings", FINDINGS_HELP, ["endpoint", "code", "severity"],
                       registry=registry)
    latency = Histogram("vgpuctl_webhook_review_duration_seconds", LATENCY_HELP, ["endpoint"],
                        buckets=LATENCY_BUCKETS, registry=registry)
    for endpoint in ENDPOINTS:
        for result in RESULTS:
            reviews.labels(endpoint, result)
        latency.labels(endpoint)
    for endpoint, result, seconds, found in events:
        reviews.labels(endpoint, result).inc()
        latency.labels(endpoint).observe(seconds)
        for f in found:
            findings.labels(endpoint, f.code, f.severity.value).inc()
    return generate_latest(registry).decode()


def exposed(events: list[tuple[str, str, float, list[Finding]]]) -> str:
    registry = CollectorRegistry()
    stats = ReviewStats()
    registry.register(stats)
    for endpoint, result, seconds, found in events:
        stats.record(endpoint, result, seconds, found)
    return generate_latest(registry).decode()


def without_timestamps(text: str) -> str:
    return CREATED.sub(r"\1 T", text)


finding = st.builds(Finding, st.sampled_from(["VGP001", "VGP009", "VGA003"]), st.sampled_from(list(Severity)),
                    st.just("s"), st.just("m"))
event = st.tuples(st.sampled_from(ENDPOINTS), st.sampled_from(RESULTS),
                  st.one_of(st.sampled_from(LATENCY_BUCKETS), st.floats(0, 10, allow_nan=False)),
                  st.lists(finding, max_size=3))


@settings(max_examples=60, deadline=None)
@given(st.lists(event, max_size=25))
def test_exposition_matches_counter_and_histogram(events):
    assert without_timestamps(exposed(events)) == without_timestamps(reference(events))


def test_a_bound_itself_falls_in_its_own_bucket():
    text = exposed([("validate", "allowed", 0.001, [])])
    assert 'vgpuctl_webhook_review_duration_seconds_bucket{endpoint="validate",le="0.0005"} 0.0' in text
    assert 'vgpuctl_webhook_review_duration_seconds_bucket{endpoint="validate",le="0.001"} 1.0' in text


def test_concurrent_records_are_all_counted():
    stats = ReviewStats()
    one = [Finding("VGP009", Severity.ERROR, "s", "m")]

    def work():
        for _ in range(2000):
            stats.record("validate", "denied", 0.0004, one)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    registry = CollectorRegistry()
    registry.register(stats)
    text = generate_latest(registry).decode()
    assert 'vgpuctl_webhook_reviews_total{endpoint="validate",result="denied"} 8000.0' in text
    assert 'vgpuctl_webhook_review_findings_total{code="VGP009",endpoint="validate",severity="error"} 8000.0' in text
    assert 'vgpuctl_webhook_review_duration_seconds_count{endpoint="validate"} 8000.0' in text
