"""A real `vgpuctl webhook serve` (gunicorn + TLS) in a subprocess on 127.0.0.1, and an HTTPS client for it.

The server binds port 0 and we read the port gunicorn chose from its "Listening at" log line, so
parallel runs never race for a port. Everything waits by polling with a deadline; `stop()` terminates
the process it started (by pid, then its own process group if it does not exit).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

T = TypeVar("T")

SERVICE_HOST = "vgpuctl-webhook.vgpuctl-system.svc"  # the name the API server dials
LISTENING = re.compile(r"Listening at: https://127\.0\.0\.1:(\d+)")
METRICS_LISTENING = re.compile(r"Listening at: https://127\.0\.0\.1:\d+,https://127\.0\.0\.1:(\d+)")
CLI = "from vgpuctl.cli.app import main; main()"


def wait_for(predicate: Callable[[], T | None], timeout: float, what: str, interval: float = 0.02) -> T:
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(interval)  # a poll interval, not a wait for an event


def client_context(ca_file: str | Path, *, minimum: ssl.TLSVersion | None = None,
                   maximum: ssl.TLSVersion | None = None) -> ssl.SSLContext:
    context = ssl.create_default_context(cafile=str(ca_file))
    if minimum is not None or maximum is not None:
        context.set_ciphers("DEFAULT:@SECLEVEL=0")  # let the client offer old protocols, so the server decides
    with warnings.catch_warnings():  # TLS 1.0/1.1 are deprecated: that is the point of offering them
        warnings.simplefilter("ignore", DeprecationWarning)
        if minimum is not None:
            context.minimum_version = minimum
        if maximum is not None:
            context.maximum_version = maximum
    return context


class ServiceConnection(http.client.HTTPSConnection):
    """Connects to 127.0.0.1 but verifies the certificate for the Service name, as the API server does."""

    def __init__(self, port: int, context: ssl.SSLContext, server_hostname: str = SERVICE_HOST,
                 timeout: float = 10.0) -> None:
        super().__init__("127.0.0.1", port, context=context, timeout=timeout)
        self._server_hostname = server_hostname
        self._ssl_context = context

    def connect(self) -> None:
        raw = socket.create_connection((self.host, self.port), self.timeout)
        # Like Go's net/http (the API server's client): no Nagle, or headers and body written separately
        # wait ~40 ms for the server's delayed ACK.
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = self._ssl_context.wrap_socket(raw, server_hostname=self._server_hostname)

    def peer_serial(self) -> int:
        from cryptography import x509

        assert isinstance(self.sock, ssl.SSLSocket)
        der = self.sock.getpeercert(binary_form=True)
        assert der is not None
        return x509.load_der_x509_certificate(der).serial_number

    def call(self, method: str, path: str, body: bytes | None = None,
             content_type: str = "application/json") -> tuple[int, bytes]:
        headers = {"Content-Type": content_type} if body is not None else {}
        self.request(method, path, body=body, headers=headers)
        response = self.getresponse()
        return response.status, response.read()

    def post_json(self, path: str, document: Any) -> tuple[int, Any]:
        status, data = self.call("POST", path, json.dumps(document).encode())
        return status, json.loads(data)


class LiveServer:
    def __init__(self, cert_dir: Path, log_file: Path, *extra: str, threads: int = 4) -> None:
        self.cert_dir = cert_dir
        self.log_file = log_file
        self.ca_file = cert_dir / "ca.crt"
        args = [sys.executable, "-c", CLI, "webhook", "serve", "--host", "127.0.0.1", "--port", "0",
                "--cert", str(cert_dir / "tls.crt"), "--key", str(cert_dir / "tls.key"),
                "--workers", "1", "--threads", str(threads),
                *(() if "--metrics-port" in extra else ("--metrics-port", "0")), *extra]
        env = {k: v for k, v in os.environ.items() if not k.startswith("VGPUCTL_")}
        self._log = open(log_file, "wb")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self._log, env=env,
                                        start_new_session=True)
        try:
            self.port = int(wait_for(self._listening_port, 30, "gunicorn to listen"))
            self.metrics_port = int(wait_for(lambda: METRICS_LISTENING.search(self.log()), 5,
                                             "the metrics listener").group(1))
            wait_for(self._healthy, 30, "a worker to answer /healthz")
        except BaseException:
            self.stop()
            raise

    def _listening_port(self) -> str | None:
        if self.process.poll() is not None:
            raise RuntimeError(f"server exited with {self.process.returncode}: {self.log()}")
        match = LISTENING.search(self.log())
        return match.group(1) if match else None

    def _healthy(self) -> bool:
        try:
            return self.connection().call("GET", "/healthz")[0] == 200
        except OSError:
            return False

    def log(self) -> str:
        return self.log_file.read_text(errors="replace")

    def connection(self, context: ssl.SSLContext | None = None, timeout: float = 10.0) -> ServiceConnection:
        return ServiceConnection(self.port, context or client_context(self.ca_file), timeout=timeout)

    def metrics(self) -> bytes:
        """GET /metrics on the metrics port."""
        connection = ServiceConnection(self.metrics_port, client_context(self.ca_file))
        try:
            status, body = connection.call("GET", "/metrics")
        finally:
            connection.close()
        assert status == 200, (status, body)
        return body

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)  # our own session: the master and its workers
                self.process.wait(timeout=5)
        self._log.close()
