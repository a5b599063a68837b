"""Answering one AdmissionReview on `POST /mutate` or `POST /validate`: read the body, decide, record.

Two rules shape it (it sits in the path of every GPU pod creation):
- No input produces a 5xx. A body that is not an AdmissionReview is a 400 with a JSON error, a body over
  the limit 413, a non-JSON content type 415. An exception inside the rules becomes an AdmissionReview
  answer (the validating path denies, the mutating path admits unchanged) and a logged error.
- It never fails open by accident: the validating path allows only what `podrules.review` allows.

With `cluster_aware`, the validating path judges with the facts of a watched cluster (`cluster.py`) once
it has synced, and warns (never denies) when no node has room for a new pod right now.

One JSON log line per review (uid, kind, namespace/name, operation, allowed, codes, duration).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

import orjson
from flask import Response, request

from vgpuctl.core.clusterview import ClusterView
from vgpuctl.core.findings import Finding
from vgpuctl.core.podrules import Review, review
from vgpuctl.webhook.bodies import (
    DRAIN_FACTOR,
    JSON,
    content_length,
    discard_body,
    error_response,
    json_response,
    read_body,
)
from vgpuctl.webhook.cluster_state import fits_now, no_room_finding
from vgpuctl.webhook.review import (
    ALLOW,
    AdmissionRequest,
    Decision,
    Endpoint,
    InvalidReviewError,
    build_response,
    internal_error_decision,
    mutate_decision,
    parse_review,
    reviewed,
    validate_decision,
)
from vgpuctl.webhook.reviewlog import LineBatcher
from vgpuctl.webhook.state import WebhookState

log = logging.getLogger("vgpuctl.webhook")
review_log = logging.getLogger("vgpuctl.webhook.review")

_LOG_INFO = logging.INFO
_NEWLINE = orjson.OPT_APPEND_NEWLINE
_review_lines: LineBatcher | None = None  # set by `webhook serve`: review lines are batched onto a descriptor


class Admission:
    """The handler of both admission endpoints, over the process's `WebhookState`."""

    def __init__(self, state: WebhookState) -> None:
        self.state = state
        self.limit = state.settings.max_body_bytes

    def answer(self, endpoint: Endpoint) -> Response:
        started = time.perf_counter()
        metrics = self.state.metrics
        parsed = self._read(endpoint)
        if isinstance(parsed, Response):
            metrics.rejected.labels(endpoint, str(parsed.status_code)).inc()
            return parsed
        decision, result, findings = self._decide(endpoint, parsed)
        elapsed = time.perf_counter() - started
        metrics.reviews.record(endpoint, result, elapsed, findings)
        _log_review(endpoint, parsed, decision, result, elapsed)
        return json_response(build_response(parsed.uid, decision, with_patch=endpoint == "mutate"))

    def _read(self, endpoint: Endpoint) -> AdmissionRequest | Response:
        """The AdmissionReview in the body, or the 415/413/400 answer that refuses it."""
        limit = self.limit
        environ = request.environ  # one proxy lookup; the rest reads the WSGI environ directly
        # The API server always sends exactly "application/json"; only anything else needs parsing.
        if environ.get("CONTENT_TYPE") != JSON and request.mimetype != JSON:
            return error_response(415, f"Content-Type must be {JSON}, got {request.mimetype or 'none'!r}"[:300])
        length = content_length(environ)
        if length is not None and length > limit:
            discard_body(environ, length, limit * DRAIN_FACTOR)
            return error_response(413, f"body of {length} bytes is over the limit of {limit}")
        raw = read_body(environ, length, limit)
        if raw is None:  # chunked bodies have no Content-Length: the limit applies while reading
            return error_response(413, f"body over the limit of {limit} bytes")
        try:
            return parse_review(orjson.loads(raw))
        except orjson.JSONDecodeError as exc:
            return error_response(400, f"body is not valid JSON: {exc}"[:300])
        except InvalidReviewError as exc:
            return error_response(400, f"not an AdmissionReview: {exc}")

    def _decide(self, endpoint: Endpoint, parsed: AdmissionRequest) -> tuple[Decision, str, tuple[Finding, ...]]:
        """The decision, the result label and the findings it was made from (for the metrics)."""
        if not reviewed(parsed) or parsed.obj is None:
            return ALLOW, "skipped", ()
        try:
            if endpoint == "mutate":
                verdict = review(parsed.obj, self.state.facts())
                if not verdict.checked:
                    return ALLOW, "skipped", ()
                decision = mutate_decision(verdict)
            else:
                verdict, decision = self._validate(parsed, parsed.obj)
                if not verdict.checked:
                    return ALLOW, "skipped", ()
        except Exception as exc:
            log.exception("internal error reviewing uid=%s on /%s", parsed.uid, endpoint)
            return internal_error_decision(endpoint, exc), "error", ()
        return decision, "allowed" if decision.allowed else "denied", verdict.findings

    def _validate(self, parsed: AdmissionRequest, obj: Mapping[str, Any]) -> tuple[Review, Decision]:
        """The validating verdict, judged with the watched cluster's facts once synced; an UPDATE is judged
        against the verdict on the old object."""
        cluster = self.state.cluster_view()
        judged = cluster[0] if cluster is not None else self.state.facts()
        verdict = review(obj, judged, apply_defaults=False)
        if not verdict.checked:
            return verdict, ALLOW
        before = None
        if parsed.operation == "UPDATE" and parsed.old_obj is not None:
            before = review(parsed.old_obj, judged, apply_defaults=False)
        if cluster is not None and verdict.allowed and parsed.is_pod and parsed.operation == "CREATE":
            verdict = self._with_fits_now(parsed, verdict, cluster[1])
        return verdict, validate_decision(verdict, before)

    def _with_fits_now(self, parsed: AdmissionRequest, verdict: Review, view: ClusterView) -> Review:
        """Add the warning when no node has room for the pod now. A bug here must not deny a pod the rules
        allow (the caller's error path would): it is logged and the pod goes on without the warning."""
        cluster = self.state.cluster
        assert cluster is not None and parsed.obj is not None
        pod_spec = parsed.obj.get("spec")
        if isinstance(pod_spec, dict) and pod_spec.get("nodeName"):
            return verdict  # bound at creation: the scheduler never sees it
        try:
            answer = fits_now(parsed.obj, view)
        except Exception:
            log.exception("fits-now check failed for uid=%s; admitted without it", parsed.uid)
            return verdict
        cluster.metrics.fits_now_done(answer.outcome)
        finding = no_room_finding(parsed.obj, answer)
        return verdict if finding is None else replace(verdict, findings=(*verdict.findings, finding))


def write_review_lines_to(fd: int | None) -> None:
    """Send review log lines to `fd` in batches (`reviewlog.LineBatcher`) instead of through `logging`.

    A line per review is the webhook's busiest log; `logging` spends ~15 µs of the request on a record,
    a handler lock and a flush, and even one `write` per line costs the serving worker ~20 µs. The
    `vgpuctl.webhook.review` logger's level still decides whether lines are written."""
    global _review_lines
    if _review_lines is not None:
        _review_lines.flush()
    _review_lines = LineBatcher(fd) if fd is not None else None


def flush_review_lines() -> None:
    """Write the pending review lines now (before another log record, and when a worker exits)."""
    if _review_lines is not None:
        _review_lines.flush_quietly()


def _log_review(endpoint: str, req: AdmissionRequest, decision: Decision, result: str, elapsed: float) -> None:
    if not review_log.isEnabledFor(_LOG_INFO):
        return
    line = orjson.dumps({
        "msg": "admission review",
        "endpoint": endpoint,
        "uid": req.uid,
        "kind": f"{req.group}/{req.version}/{req.kind}" if req.group else f"{req.version}/{req.kind}",
        "namespace": req.namespace,
        "name": req.name or _generate_name(req.obj),
        "operation": req.operation,
        "dryRun": req.dry_run,
        "allowed": decision.allowed,
        "result": result,
        "codes": decision.codes,
        "patchOps": len(decision.patch) if endpoint == "mutate" else 0,
        "durationMs": int(elapsed * 1e6 + 0.5) / 1000,  # to the µs, as round(…, 3) but without its dtoa
    }, option=_NEWLINE)
    if _review_lines is not None:
        try:
            _review_lines.write(line)
            return
        except OSError:  # stderr gone or full: fall back to logging, which reports its own failures
            pass
    review_log.info(line[:-1].decode())


def _generate_name(obj: Mapping[str, Any] | None) -> str:
    """Pods from controllers have no name at CREATE yet, only `generateName`."""
    meta = obj.get("metadata") if obj else None
    if isinstance(meta, dict):
        name = meta.get("name") or meta.get("generateName")
        if isinstance(name, str):
            return name
    return ""
