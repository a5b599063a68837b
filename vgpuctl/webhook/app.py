"""The Flask app: `POST /mutate`, `POST /validate`, `GET /healthz`, `GET /readyz`, `GET /metrics` (the last
on its own port under `webhook serve`).

Wiring only: what a request reads besides its body is the process's `state.WebhookState`; an admission
review is answered by `admission.Admission` (no input produces a 5xx, the validating path never fails open
by accident); bodies and JSON answers are `bodies`.
"""

from __future__ import annotations

import logging

from flask import Flask, Response, request
from werkzeug.exceptions import HTTPException

from vgpuctl.webhook.admission import Admission
from vgpuctl.webhook.bodies import error_response, json_response
from vgpuctl.webhook.settings import Settings
from vgpuctl.webhook.state import WebhookState
from vgpuctl.webhook.wsgi_call import LISTENER_KEY

log = logging.getLogger("vgpuctl.webhook")


def create_app(settings: Settings) -> Flask:
    app = Flask("vgpuctl.webhook")
    app.config["MAX_CONTENT_LENGTH"] = settings.max_body_bytes
    state = WebhookState(settings)
    app.extensions["vgpuctl"] = state
    if state.cluster is not None:
        # create_app runs in the serving process (gunicorn builds the app in each worker after the fork),
        # so the watch threads start where they are used.
        state.cluster.start(settings.cluster_watch)
        if state.dra is not None:
            state.dra.start(settings.dra_watch)
    _listener_guard(app)
    _admission_routes(app, Admission(state))
    _probe_routes(app, state)
    _error_handlers(app)
    return app


_ONLY_ON = {"/mutate": "admission", "/validate": "admission", "/metrics": "metrics"}


def _listener_guard(app: Flask) -> None:
    """Under `webhook serve` the admission calls and /metrics have ports of their own (the worker says which
    one a request came on), so a NetworkPolicy can open the first to the API server and the second to the
    monitoring namespace only: node names, device UUIDs and allocations are not for every pod, nor are fake
    reviews that inflate the denial counters. The probes answer on both. Another WSGI server: no guard."""

    @app.before_request
    def right_listener() -> Response | None:
        listener = request.environ.get(LISTENER_KEY)
        wanted = _ONLY_ON.get(request.path)
        if listener is None or wanted is None or listener == wanted:
            return None
        return error_response(404, f"{request.path} is served on the {wanted} port, not this one")


def _admission_routes(app: Flask, admission: Admission) -> None:
    @app.post("/mutate")
    def mutate() -> Response:
        return admission.answer("mutate")

    @app.post("/validate")
    def validate() -> Response:
        return admission.answer("validate")


def _probe_routes(app: Flask, state: WebhookState) -> None:
    @app.get("/healthz")
    def healthz() -> Response:
        return json_response({"status": "ok"})

    @app.get("/readyz")
    def readyz() -> Response:
        ready, checks = state.readiness()
        return json_response({"status": "ready" if ready else "not ready", "checks": checks},
                             200 if ready else 503)

    @app.get("/metrics")
    def metrics() -> Response:
        chunks, content_type = state.metrics.exposition()
        response = Response(chunks, status=200, content_type=content_type)  # streamed as the chunks are
        response.content_length = sum(len(chunk) for chunk in chunks)
        return response


def _error_handlers(app: Flask) -> None:
    @app.errorhandler(HTTPException)
    def http_error(exc: HTTPException) -> Response:
        status = exc.code or 400
        return error_response(status, exc.description or exc.name)

    @app.errorhandler(Exception)
    def unexpected(exc: Exception) -> Response:
        # Only reachable through a bug outside the review path (which handles its own errors). The
        # request was not an admission decision we could make, so it is answered as a bad request.
        log.exception("unexpected error handling %s %s", request.method, request.path)
        return error_response(400, f"request could not be handled: {type(exc).__name__}")
