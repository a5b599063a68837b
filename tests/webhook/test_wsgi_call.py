"""The hand-off from the worker's event loop to the Flask app (`wsgi_call`), and the drop log (`worker`)."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest

from tests.webhook.conftest import GOLDEN, load_json
from vgpuctl.webhook.app import create_app
from vgpuctl.webhook.settings import Settings
from vgpuctl.webhook.worker import DROP_LOG_INTERVAL_S, DropLog
from vgpuctl.webhook.wsgi_call import Request, call_app, environ_for

SERVER = ("10.0.0.5", 8443)


def _request(target: bytes = b"/validate", body: bytes = b"", headers: tuple[tuple[bytes, bytes], ...] = (),
             **extra: Any) -> Request:
    return Request(method="POST", target=target, http_version="1.1",
                   headers=((b"content-type", b"application/json"), *headers), body=body,
                   client=("10.0.0.9", 40000), server=SERVER, **extra)


def test_environ_is_pep_3333() -> None:
    environ = environ_for(_request(b"/a%20b?x=1", b"{}", ((b"x-one", b"1"), (b"x-one", b"2"))), multiprocess=False)
    assert environ["PATH_INFO"] == "/a b" and environ["QUERY_STRING"] == "x=1"
    assert environ["CONTENT_TYPE"] == "application/json" and environ["CONTENT_LENGTH"] == "2"
    assert environ["HTTP_X_ONE"] == "1,2"  # repeated headers joined, as a proxy would
    assert environ["wsgi.input"].read() == b"{}" and environ["wsgi.url_scheme"] == "https"
    assert (environ["SERVER_NAME"], environ["SERVER_PORT"], environ["REMOTE_ADDR"]) == ("10.0.0.5", "8443", "10.0.0.9")


def test_headers_with_underscores_are_dropped() -> None:
    """`content_length` would become CONTENT_LENGTH and shadow the real one (request smuggling)."""
    environ = environ_for(_request(body=b"{}", headers=((b"content_length", b"999"), (b"x_forwarded_for", b"a"))),
                          multiprocess=False)
    assert environ["CONTENT_LENGTH"] == "2" and "HTTP_X_FORWARDED_FOR" not in environ


def test_absolute_form_target() -> None:
    assert environ_for(_request(b"https://svc.ns.svc/validate?x"), multiprocess=False)["PATH_INFO"] == "/validate"


def test_declared_length_of_a_body_not_kept() -> None:
    assert environ_for(_request(declared_length=10**9), multiprocess=False)["CONTENT_LENGTH"] == str(10**9)


def test_call_app_collects_the_answer() -> None:
    app = create_app(Settings())
    answer = call_app(app, _request(body=json.dumps(load_json(GOLDEN / "validate-vgpu-denied.in.json")).encode()))
    assert answer.status == 200 and answer.reason == b"OK"
    assert json.loads(answer.body) == load_json(GOLDEN / "validate-vgpu-denied.out.json")
    assert all(name not in (b"content-length", b"connection") for name, _ in answer.headers)
    too_big = call_app(app, _request(declared_length=10**9))
    assert too_big.status == 413 and json.loads(too_big.body)["code"] == 413


def test_call_app_write_callable_and_missing_start_response() -> None:
    def writes(environ: dict[str, Any], start_response: Any) -> list[bytes]:
        start_response("201 Created", [("X-A", "b"), ("Content-Length", "9")])(b"first ")
        return [b"second"]

    answer = call_app(writes, _request())
    assert (answer.status, answer.body, answer.headers) == (201, b"first second", ((b"x-a", b"b"),))
    with pytest.raises(RuntimeError):
        call_app(lambda environ, start_response: [b""], _request())


class _Counter:
    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def labels(self, reason: str) -> _Counter:
        self._reason = reason
        return self

    def inc(self) -> None:
        self.counts[self._reason] = self.counts.get(self._reason, 0) + 1


def test_drop_log_counts_every_drop_and_logs_a_flood_once_per_interval(caplog: pytest.LogCaptureFixture) -> None:
    now = [1000.0]
    drops = DropLog(clock=lambda: now[0])
    drops.counter = _Counter()
    with caplog.at_level(logging.INFO, logger="vgpuctl.webhook"):
        for _ in range(500):
            drops.record("header-timeout", ("10.0.0.9", 1), "request not received in time")
        drops.record("handshake-failed", ("10.0.0.9", 2), "TLS handshake failed: WRONG_VERSION")
        now[0] += DROP_LOG_INTERVAL_S
        drops.record("header-timeout", None, "request not received in time")
    assert drops.counter.counts == {"header-timeout": 501, "handshake-failed": 1}
    lines = [r.getMessage() for r in caplog.records]
    assert lines == [
        "dropped a connection from 10.0.0.9:1 (header-timeout): request not received in time",
        "dropped a connection from 10.0.0.9:2 (handshake-failed): TLS handshake failed: WRONG_VERSION",
        "dropped a connection from a client (header-timeout): request not received in time "
        "(and 499 more since the last such line)",
    ]
