"""Connections that stall, flood or misbehave must not starve the fail-closed webhook (issue 23, item 1).

A real `vgpuctl webhook serve` with short deadlines and a single thread: the old gthread worker read each
new connection on a pool thread without a deadline, so one silent connection per thread stopped every
review. Each test opens raw TCP/TLS connections the way an attacker or a broken client would and checks
what the API server would see. Waits are generous multiples of the configured deadlines (functional
checks, not timings).
"""

from __future__ import annotations

import json
import re
import selectors
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.webhook.conftest import DEVICE_CONFIG, GOLDEN, load_json
from tests.webhook.live import SERVICE_HOST, LiveServer, client_context, wait_for
from tests.webhook.test_server import make_certs

DEADLINE = 0.5  # seconds: handshake, headers and body deadlines of the server under test
GENEROUS = 15.0  # seconds: how long a test waits for something the server must do within DEADLINE
REVIEW = json.dumps(load_json(GOLDEN / "validate-vgpu-allowed.in.json")).encode()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("stall")
    make_certs(root / "tls")
    live = LiveServer(root / "tls", root / "server.log", "--device-config", str(DEVICE_CONFIG),
                      "--handshake-timeout", str(DEADLINE), "--header-timeout", str(DEADLINE),
                      "--body-timeout", str(DEADLINE), "--keepalive-timeout", "1", "--max-connections", "48",
                      threads=1)
    try:
        yield live
    finally:
        live.stop()
    assert "Traceback" not in live.log(), live.log()


def _tls(server: LiveServer, timeout: float = GENEROUS) -> ssl.SSLSocket:
    raw = socket.create_connection(("127.0.0.1", server.port), timeout=timeout)
    return client_context(server.ca_file).wrap_socket(raw, server_hostname=SERVICE_HOST)


def _request(body: bytes = REVIEW, path: str = "/validate", extra: str = "") -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: {SERVICE_HOST}\r\nContent-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n{extra}\r\n").encode() + body


def _read_answer(sock: socket.socket) -> tuple[int, bytes, bytes]:
    """(status, headers, body) of one HTTP/1.1 answer with a Content-Length."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, f"closed before an answer: {data!r}"
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    match = re.search(rb"(?i)content-length: *(\d+)", head)
    length = int(match.group(1)) if match else 0
    while len(rest) < length:
        chunk = sock.recv(65536)
        assert chunk
        rest += chunk
    return status, head, rest[:length]


def _review_answered(server: LiveServer) -> None:
    connection = server.connection(timeout=GENEROUS)
    try:
        status, answer = connection.post_json("/validate", json.loads(REVIEW))
        assert status == 200 and answer["response"]["allowed"] is True
    finally:
        connection.close()


def _closed_by_server(sock: socket.socket, within: float = GENEROUS) -> bool:
    """True once the server closes (EOF, reset, or an answer then EOF), watching for `within` seconds."""
    sock.setblocking(False)
    selector = selectors.DefaultSelector()
    selector.register(sock, selectors.EVENT_READ)
    deadline = time.monotonic() + within
    try:
        while time.monotonic() < deadline:
            if not selector.select(timeout=0.1):
                continue
            try:
                if not sock.recv(65536):
                    return True
            except (ssl.SSLWantReadError, BlockingIOError):
                continue
            except OSError:
                return True
        return False
    finally:
        selector.close()


def _stalled(server: LiveServer, kind: str) -> socket.socket:
    if kind == "tcp-silent":
        return socket.create_connection(("127.0.0.1", server.port), timeout=GENEROUS)
    if kind == "tls-one-byte":
        raw = socket.create_connection(("127.0.0.1", server.port), timeout=GENEROUS)
        raw.sendall(b"\x16")
        return raw
    tls = _tls(server)
    if kind == "half-header":
        tls.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\n")
    else:  # body-unfinished
        tls.sendall(_request(b"{" * 4096)[:-4000])
    return tls


def _dropped(server: LiveServer) -> dict[str, float]:
    return {m.group(1).decode(): float(m.group(2)) for m in
            re.finditer(rb'vgpuctl_webhook_connections_dropped_total\{reason="([a-z-]+)"\} ([0-9.e+]+)',
                        server.metrics())}


KINDS = ("tcp-silent", "tls-one-byte", "half-header", "body-unfinished")


def test_stalled_connections_take_no_thread_and_are_dropped(server: LiveServer) -> None:
    before = _dropped(server)
    # Ones that need a handshake first, while the server is not yet busy with the others.
    stalled = [(kind, _stalled(server, kind)) for kind in sorted(KINDS * 6, key=lambda k: k in KINDS[:2])]
    try:
        # 24 stalled connections and one thread: a review is still answered (the old worker: never).
        _review_answered(server)
        for kind, sock in stalled:
            assert _closed_by_server(sock), f"the server kept a {kind} connection open"
    finally:
        for _, sock in stalled:
            sock.close()
    after = _dropped(server)
    assert after["handshake-timeout"] - before["handshake-timeout"] >= 12  # tcp-silent + tls-one-byte
    assert after["header-timeout"] - before["header-timeout"] >= 6
    assert after["body-timeout"] - before["body-timeout"] >= 6
    assert "dropped a connection from 127.0.0.1" in server.log()


def test_a_half_sent_request_is_answered_408(server: LiveServer) -> None:
    sock = _tls(server)
    try:
        sock.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\n")
        status, head, body = _read_answer(sock)
        assert status == 408 and b"connection: close" in head.lower()
        assert json.loads(body) == {"error": "request not received in time", "code": 408}
        assert _closed_by_server(sock)
    finally:
        sock.close()


def test_headers_over_the_limit_are_431(server: LiveServer) -> None:
    sock = _tls(server)
    try:
        sock.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nX-Junk: " + b"a" * 20_000 + b"\r\n\r\n")
        status, _, _ = _read_answer(sock)
        assert status == 431
    finally:
        sock.close()


def test_a_body_far_over_the_limit_is_refused_unread(server: LiveServer) -> None:
    """100 MiB announced, nothing sent: the app answers 413 from the declared length at once (no body
    deadline to wait out), and the connection closes."""
    sock = _tls(server)
    try:
        sock.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 104857600\r\n\r\n")
        status, head, body = _read_answer(sock)
        assert status == 413 and json.loads(body)["code"] == 413 and b"104857600" in body
        assert b"connection: close" in head.lower()
    finally:
        sock.close()


def test_expect_100_continue_chunked_and_pipelined_requests(server: LiveServer) -> None:
    sock = _tls(server)
    try:
        sock.sendall(_request(b"", extra="Expect: 100-continue\r\n").replace(
            b"Content-Length: 0", b"Content-Length: %d" % len(REVIEW)))
        assert sock.recv(64).startswith(b"HTTP/1.1 100 ")
        sock.sendall(REVIEW)
        assert _read_answer(sock)[0] == 200
        chunked = (b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                   b"Transfer-Encoding: chunked\r\n\r\n" + b"%x\r\n" % len(REVIEW) + REVIEW + b"\r\n0\r\n\r\n")
        sock.sendall(chunked + _request())  # two requests in one write
        first, second = _read_answer(sock), _read_answer(sock)
        assert first[0] == second[0] == 200
        assert json.loads(first[2])["response"]["allowed"] is True
    finally:
        sock.close()


def test_idle_keep_alive_connections_are_closed(server: LiveServer) -> None:
    sock = _tls(server)
    try:
        sock.sendall(_request())
        assert _read_answer(sock)[0] == 200
        assert _closed_by_server(sock)  # --keepalive-timeout 1
    finally:
        sock.close()


def test_at_the_connection_limit_the_oldest_waiting_one_gives_way(server: LiveServer) -> None:
    """48 connections allowed: 60 silent ones cannot lock out a review; the oldest silent ones are cut for
    newcomers (and the rest by their deadline)."""
    silent = [socket.create_connection(("127.0.0.1", server.port), timeout=GENEROUS) for _ in range(60)]
    try:
        _review_answered(server)
        assert _closed_by_server(silent[0])
        wait_for(lambda: _dropped(server)["too-many-connections"] >= 12, GENEROUS, "evictions to be counted")
    finally:
        for sock in silent:
            sock.close()


def test_the_flags_are_checked(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from vgpuctl.cli.app import app as cli

    for flag, value in (("--header-timeout", "0"), ("--body-timeout", "abc"), ("--max-connections", "0"),
                        ("--handshake-timeout", "inf")):
        result = CliRunner().invoke(cli, ["webhook", "serve", flag, value])
        assert result.exit_code == 2, (flag, result.output)
