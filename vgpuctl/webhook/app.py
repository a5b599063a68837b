"""The Flask app: `POST /mutate`, `POST /validate`, `GET /healthz`, `GET /readyz`, `GET /metrics`.

It sits in the path of every GPU pod creation, so two rules shape it:
- No input produces a 5xx. A body that is not an AdmissionReview is a 400 with a JSON error, a body over
  the limit 413, a non-JSON content type 415. An exception inside the rules becomes an AdmissionReview
  answer (the validating path denies, the mutating path admits unchanged) and a logged error.
- It never fails open by accident: the validating path allows only what `podrules.review` allows.

With `cluster_aware`, the validating path judges with the facts of a watched cluster (`cluster.py`) once
it has synced, and warns (never denies) when no node has room for a new pod right now.

One JSON log line per review (uid, kind, namespace/name, operation, allowed, codes, duration).
"""

from __future__ import annotations

import datetime as dt
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import orjson
from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException
from werkzeug.sansio.utils import get_content_length

from vgpuctl.core.clusterview import ClusterView
from vgpuctl.core.deviceconfig import DeviceConfig
from vgpuctl.core.facts import BUILTIN_DEVICE_CONFIG_SUMMARY, ClusterFacts
from vgpuctl.core.findings import Finding
from vgpuctl.core.podrules import Review, review
from vgpuctl.webhook.cluster import ClusterState, fits_now, no_room_finding
from vgpuctl.webhook.config_watch import DeviceConfigWatcher
from vgpuctl.webhook.metrics import WebhookMetrics
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
from vgpuctl.webhook.settings import Settings
from vgpuctl.webhook.tls import CertificateMonitor

log = logging.getLogger("vgpuctl.webhook")
review_log = logging.getLogger("vgpuctl.webhook.review")

JSON = "application/json"
_LOG_INFO = logging.INFO
_NEWLINE = orjson.OPT_APPEND_NEWLINE
_review_lines: LineBatcher | None = None  # set by `webhook serve`: review lines are batched onto a descriptor


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


DRAIN_FACTOR = 4  # a refused body up to 4 × the limit is still read (and dropped) so the client sees the 413


@dataclass
class _FactsCache:
    config: DeviceConfig | None
    facts: ClusterFacts


@dataclass(frozen=True)
class _ClusterFactsCache:
    view: ClusterView  # the view the facts came from
    base: ClusterFacts
    facts: ClusterFacts


class WebhookState:
    """Everything a request reads besides its body: settings, the device config, TLS status, metrics."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.metrics = WebhookMetrics()
        self.watcher: DeviceConfigWatcher | None = None
        self._config_loaded = False
        if settings.device_config_path:
            self.watcher = DeviceConfigWatcher(
                settings.device_config_path,
                interval=settings.config_check_interval,
                on_reload=self._count_reload,
            )
        else:  # once per serving process: the rules judge every review against the same built-in config
            log.info("no device config mounted: judging against Volcano's built-in device config (%s)",
                     BUILTIN_DEVICE_CONFIG_SUMMARY)
        self.certificate: CertificateMonitor | None = None
        if settings.cert_file and settings.key_file:
            self.certificate = CertificateMonitor(settings.cert_file, settings.key_file,
                                                  margin=dt.timedelta(days=settings.expiry_margin_days))
        self._facts = _FactsCache(None, self._make_facts(None))
        self.cluster: ClusterState | None = None
        self._cluster_facts: _ClusterFactsCache | None = None
        if settings.cluster_aware:
            self.cluster = ClusterState(
                base_facts=self.facts, device_config=self.watcher.current if self.watcher else lambda: None,
                volcano_version=settings.volcano_version, registry=self.metrics.registry,
                poll_interval=max(settings.config_check_interval, 0.5))
            self.metrics.add_text(self.cluster.allocation_text)

    def _count_reload(self, ok: bool) -> None:
        self.metrics.config_reloads.labels("success" if ok else "failure").inc()
        self._config_loaded = self._config_loaded or ok
        self.metrics.config_loaded.set(1 if self._config_loaded else 0)

    def _make_facts(self, config: DeviceConfig | None) -> ClusterFacts:
        s = self.settings
        return ClusterFacts(device_config=config, volcano_version=s.volcano_version,
                            scheduler_names=s.scheduler_names, privileged_severity=s.privileged_severity)

    def facts(self) -> ClusterFacts:
        """One `ClusterFacts` per config version, so its cached derived facts are reused across reviews."""
        config = self.watcher.current() if self.watcher else None
        cached = self._facts
        if cached.config is not config:
            cached = _FactsCache(config, self._make_facts(config))
            self._facts = cached
        return cached.facts

    def cluster_view(self) -> tuple[ClusterFacts, ClusterView] | None:
        """The facts of the watched cluster and its view; None when not cluster-aware or not synced yet."""
        published = self.cluster.published if self.cluster is not None else None
        if published is None:
            return None
        view = published.view
        base = self.facts()
        cached = self._cluster_facts
        if cached is None or cached.view is not view or cached.base is not base:
            # The view was merged onto the base of its time; after a device-config reload (until the view
            # is rebuilt) the node facts stay and the config is the current one. One facts value per pair,
            # so its derived facts (largest GPU count, memories) are computed once, not per review.
            facts = view.facts if view.base is base else replace(view.facts, device_config=base.device_config)
            cached = self._cluster_facts = _ClusterFactsCache(view, base, facts)
        return cached.facts, view

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        checks: dict[str, Any] = {}
        ready = True
        if self.certificate is not None:
            status = self.certificate.status()
            checks["tls"] = {"ok": status.ok, "reason": status.reason,
                             "notAfter": status.not_after.isoformat() if status.not_after else None}
            if status.not_after is not None:
                self.metrics.cert_expiry.set(status.not_after.timestamp())
            ready = ready and status.ok
        if self.watcher is not None:
            state = self.watcher.check()
            ok = state.config is not None
            checks["deviceConfig"] = {"ok": ok, "path": self.watcher.path, "lastError": state.error}
            ready = ready and ok
        if self.cluster is not None:
            ok, checks["clusterWatch"] = self.cluster.readiness()
            ready = ready and ok
        self.metrics.ready.set(1 if ready else 0)
        return ready, checks


def _json(body: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status=status, content_type=JSON)  # no charset to add for JSON


def _content_length(environ: dict[str, Any]) -> int | None:
    """The body's declared length; None for a chunked body. Plain digits (what every client sends) are
    read directly; anything else goes to werkzeug's own parser (`request.content_length` would build the
    whole header view first)."""
    text = environ.get("CONTENT_LENGTH")
    if text and text.isdigit() and text.isascii() and "HTTP_TRANSFER_ENCODING" not in environ:
        return int(text)
    return get_content_length(text, environ.get("HTTP_TRANSFER_ENCODING"))


def _error(status: int, message: str) -> Response:
    return _json({"error": message, "code": status}, status)


def create_app(settings: Settings) -> Flask:
    app = Flask("vgpuctl.webhook")
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    state = WebhookState(settings)
    app.extensions["vgpuctl"] = state
    if state.cluster is not None:
        # create_app runs in the serving process (gunicorn builds the app in each worker after the fork),
        # so the watch threads start where they are used.
        state.cluster.start(settings.cluster_watch)

    def admission(endpoint: Endpoint) -> Response:
        started = time.perf_counter()
        metrics = state.metrics
        environ = request.environ  # one proxy lookup; the rest reads the WSGI environ directly
        # The API server always sends exactly "application/json"; only anything else needs parsing.
        if environ.get("CONTENT_TYPE") != JSON and request.mimetype != JSON:
            metrics.rejected.labels(endpoint, "415").inc()
            return _error(415, f"Content-Type must be {JSON}, got {request.mimetype or 'none'!r}"[:300])
        length = _content_length(environ)
        if length is not None and length > settings.max_body_bytes:
            metrics.rejected.labels(endpoint, "413").inc()
            _discard_body(environ, length, settings.max_body_bytes * DRAIN_FACTOR)
            return _error(413, f"body of {length} bytes is over the limit of {settings.max_body_bytes}")
        raw = _read_body(environ, length, settings.max_body_bytes)
        if raw is None:  # chunked bodies have no Content-Length: the limit applies while reading
            metrics.rejected.labels(endpoint, "413").inc()
            return _error(413, f"body over the limit of {settings.max_body_bytes} bytes")
        try:
            parsed = parse_review(orjson.loads(raw))
        except orjson.JSONDecodeError as exc:
            metrics.rejected.labels(endpoint, "400").inc()
            return _error(400, f"body is not valid JSON: {exc}"[:300])
        except InvalidReviewError as exc:
            metrics.rejected.labels(endpoint, "400").inc()
            return _error(400, f"not an AdmissionReview: {exc}")
        decision, result, findings = _decide(endpoint, parsed)
        elapsed = time.perf_counter() - started
        metrics.reviews.record(endpoint, result, elapsed, findings)
        _log_review(endpoint, parsed, decision, result, elapsed)
        return _json(build_response(parsed.uid, decision, with_patch=endpoint == "mutate"))

    def _decide(endpoint: Endpoint, parsed: AdmissionRequest) -> tuple[Decision, str, tuple[Finding, ...]]:
        """The decision, the result label and the findings it was made from (for the metrics)."""
        if not reviewed(parsed) or parsed.obj is None:
            return ALLOW, "skipped", ()
        try:
            facts = state.facts()
            if endpoint == "mutate":
                verdict = review(parsed.obj, facts)
                if not verdict.checked:
                    return ALLOW, "skipped", ()
                decision = mutate_decision(verdict)
            else:
                cluster = state.cluster_view()
                judged = cluster[0] if cluster is not None else facts
                verdict = review(parsed.obj, judged, apply_defaults=False)
                if not verdict.checked:
                    return ALLOW, "skipped", ()
                before = None
                if parsed.operation == "UPDATE" and parsed.old_obj is not None:
                    before = review(parsed.old_obj, judged, apply_defaults=False)
                if cluster is not None and verdict.allowed and parsed.is_pod and parsed.operation == "CREATE":
                    verdict = _with_fits_now(parsed, verdict, cluster[1])
                decision = validate_decision(verdict, before)
        except Exception as exc:
            log.exception("internal error reviewing uid=%s on /%s", parsed.uid, endpoint)
            return internal_error_decision(endpoint, exc), "error", ()
        return decision, "allowed" if decision.allowed else "denied", verdict.findings

    def _with_fits_now(parsed: AdmissionRequest, verdict: Review, view: ClusterView) -> Review:
        """Add the warning when no node has room for the pod now. A bug here must not deny a pod the rules
        allow (the caller's error path would): it is logged and the pod goes on without the warning."""
        assert state.cluster is not None and parsed.obj is not None
        pod_spec = parsed.obj.get("spec")
        if isinstance(pod_spec, dict) and pod_spec.get("nodeName"):
            return verdict  # bound at creation: the scheduler never sees it
        try:
            answer = fits_now(parsed.obj, view)
        except Exception:
            log.exception("fits-now check failed for uid=%s; admitted without it", parsed.uid)
            return verdict
        state.cluster.metrics.fits_now_done(answer.outcome)
        finding = no_room_finding(parsed.obj, answer)
        return verdict if finding is None else replace(verdict, findings=(*verdict.findings, finding))

    @app.post("/mutate")
    def mutate() -> Response:
        return admission("mutate")

    @app.post("/validate")
    def validate() -> Response:
        return admission("validate")

    @app.get("/healthz")
    def healthz() -> Response:
        return _json({"status": "ok"})

    @app.get("/readyz")
    def readyz() -> Response:
        ready, checks = state.readiness()
        return _json({"status": "ready" if ready else "not ready", "checks": checks}, 200 if ready else 503)

    @app.get("/metrics")
    def metrics() -> Response:
        body, content_type = state.metrics.exposition()
        return Response(body, status=200, content_type=content_type)

    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Response:
        status = exc.code or 400
        return _error(status, exc.description or exc.name)

    @app.errorhandler(Exception)
    def unexpected(exc: Exception) -> Response:
        # Only reachable through a bug outside the review path (which handles its own errors). The
        # request was not an admission decision we could make, so it is answered as a bad request.
        log.exception("unexpected error handling %s %s", request.method, request.path)
        return _error(400, f"request could not be handled: {type(exc).__name__}")

    return app


def _discard_body(environ: dict[str, Any], length: int, cap: int) -> None:
    """Read and drop a refused body of moderate size, so the client (which is still sending it) receives
    the 413 instead of a reset connection. Beyond `cap` we answer without reading; the server then closes."""
    stream = environ.get("wsgi.input")
    if stream is None or length > cap:
        return
    left = length
    while left > 0:
        chunk = stream.read(min(65536, left))
        if not chunk:
            return
        left -= len(chunk)


def _read_body(environ: dict[str, Any], length: int | None, limit: int) -> bytes | None:
    """The body, or None when it is longer than `limit` (read at most `limit + 1` bytes to find out)."""
    if length is not None:
        if length > limit:
            return None
        stream = environ.get("wsgi.input")
        # The server bounds wsgi.input by Content-Length; reading it directly skips werkzeug's wrappers.
        return stream.read(length) if stream is not None and length else b""
    # Chunked: werkzeug's own limit silently truncates such bodies, so read the raw stream ourselves.
    stream = environ.get("wsgi.input")
    if stream is None or not environ.get("wsgi.input_terminated"):
        return b""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = stream.read(min(65536, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return None if size > limit else b"".join(chunks)


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
