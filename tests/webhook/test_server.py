"""The real thing: `vgpuctl webhook serve` under gunicorn with TLS on 127.0.0.1, certificates from
`vgpuctl webhook certs`, a real HTTPS client verifying the Service name — the API server's view."""

from __future__ import annotations

import json
import os
import ssl
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.webhook.conftest import DEVICE_CONFIG, GOLDEN, load_json
from tests.webhook.live import LiveServer, client_context, wait_for
from vgpuctl.cli.app import app as cli

SERVICE, NAMESPACE = "vgpuctl-webhook", "vgpuctl-system"


def make_certs(out: Path, *renew_with: str) -> str:
    result = CliRunner().invoke(cli, ["webhook", "certs", "--service", SERVICE, "--namespace", NAMESPACE,
                                      "--out", str(out), "--days", "30", "--write-ca-key", *renew_with])
    assert result.exit_code == 0, result.stderr
    return result.stdout.strip()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    root = tmp_path_factory.mktemp("live")
    make_certs(root / "tls")
    live = LiveServer(root / "tls", root / "server.log", "--device-config", str(DEVICE_CONFIG))
    try:
        yield live
    finally:
        live.stop()
    assert "Traceback" not in live.log(), live.log()


def test_certs_command_prints_the_ca_bundle(tmp_path: Path) -> None:
    import base64

    bundle = make_certs(tmp_path)
    assert base64.b64decode(bundle) == (tmp_path / "ca.crt").read_bytes()
    assert oct((tmp_path / "tls.key").stat().st_mode & 0o777) == "0o600"
    from cryptography import x509

    cert = x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes())
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName)
    assert names == [SERVICE, f"{SERVICE}.{NAMESPACE}", f"{SERVICE}.{NAMESPACE}.svc",
                     f"{SERVICE}.{NAMESPACE}.svc.cluster.local"]


@pytest.mark.parametrize("case", ["validate-vgpu-denied", "mutate-vgpu-defaults", "validate-job-denied"])
def test_real_server_answers_like_the_golden_files(server: LiveServer, case: str) -> None:
    connection = server.connection()
    try:
        status, answer = connection.post_json("/" + case.split("-", 1)[0], load_json(GOLDEN / f"{case}.in.json"))
        assert status == 200
        assert answer == load_json(GOLDEN / f"{case}.out.json")
        uid = answer["response"]["uid"]
        wait_for(lambda: f'"uid":"{uid}"' in server.log(), 5, "the review's log line")
        line = next(json.loads(x) for x in server.log().splitlines() if f'"uid":"{uid}"' in x)
        assert line["msg"] == "admission review" and line["allowed"] is answer["response"]["allowed"]
        assert isinstance(connection.sock, ssl.SSLSocket)
        assert connection.sock.version() in ("TLSv1.2", "TLSv1.3")
    finally:
        connection.close()


def test_keep_alive_serves_many_requests_on_one_connection(server: LiveServer) -> None:
    connection = server.connection()
    try:
        connection.connect()
        sock = connection.sock
        body = load_json(GOLDEN / "validate-vgpu-allowed.in.json")
        for _ in range(20):
            status, answer = connection.post_json("/validate", body)
            assert status == 200 and answer["response"]["allowed"] is True
        assert connection.sock is sock  # never reconnected
        assert connection.call("GET", "/readyz")[0] == 200
        assert b"vgpuctl_webhook_reviews_total" in server.metrics()
    finally:
        connection.close()


def test_tls_1_2_is_the_minimum(server: LiveServer) -> None:
    old = server.connection(client_context(server.ca_file, minimum=ssl.TLSVersion.TLSv1,
                                           maximum=ssl.TLSVersion.TLSv1_1))
    with pytest.raises(ssl.SSLError):
        old.call("GET", "/healthz")
    old.close()
    # The refusal is the server's: it saw a TLS 1.1 hello and answered "protocol version".
    wait_for(lambda: "UNSUPPORTED_PROTOCOL" in server.log(), 5, "the server to log the refused handshake")
    tls12 = server.connection(client_context(server.ca_file, maximum=ssl.TLSVersion.TLSv1_2))
    try:
        assert tls12.call("GET", "/healthz")[0] == 200
        assert isinstance(tls12.sock, ssl.SSLSocket) and tls12.sock.version() == "TLSv1.2"
    finally:
        tls12.close()


def test_the_certificate_must_name_the_service(server: LiveServer) -> None:
    from tests.webhook.live import ServiceConnection

    wrong = ServiceConnection(server.port, client_context(server.ca_file), server_hostname="other.default.svc")
    with pytest.raises(ssl.SSLCertVerificationError):
        wrong.call("GET", "/healthz")
    wrong.close()


def test_malformed_burst_leaves_the_server_healthy(server: LiveServer) -> None:
    bodies: list[tuple[bytes, str]] = [
        (b"", "application/json"),
        (b"\x00\xff\xfe binary", "application/json"),
        (b"{not json", "application/json"),
        (b"[" * 200_000, "application/json"),
        (b'{"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview"}', "application/json"),
        (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": []}', "application/json"),
        (b'{"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": "u", '
         b'"kind": {"group": "", "version": "v1", "kind": "Pod"}, "operation": "CREATE", "object": '
         b'{"spec": {"containers": [{"resources": {"limits": 7}}]}}}}', "application/json"),
        (b'{"x": "' + b"y" * (3 * 1024 * 1024) + b'"}', "application/json"),
        (b"<xml/>", "application/xml"),
        (os.urandom(4096), "application/octet-stream"),
    ]
    statuses = []
    for body, content_type in bodies * 3:
        connection = server.connection()
        try:
            statuses.append(connection.call("POST", "/validate", body, content_type)[0])
        finally:
            connection.close()
    assert set(statuses) <= {200, 400, 413, 415}, statuses
    assert {400, 413, 415} <= set(statuses)
    connection = server.connection()
    try:
        assert connection.call("GET", "/healthz")[0] == 200
        assert connection.call("GET", "/readyz")[0] == 200
    finally:
        connection.close()


def test_certificate_rotation_under_load(server: LiveServer, tmp_path: Path) -> None:
    """Continuous requests (a fresh TLS connection each, so every one sees the current files) while the
    serving pair is replaced twice: atomically (the `certs` command) and by in-place rewrites in the
    wrong order (certificate first). Zero failed requests; new connections get the new serial."""
    body = load_json(GOLDEN / "validate-vgpu-allowed.in.json")
    stop = threading.Event()
    failures: list[str] = []
    serials: list[int] = []

    def load() -> None:
        while not stop.is_set():
            connection = server.connection(timeout=5)
            try:
                status, answer = connection.post_json("/validate", body)
                if status != 200 or answer["response"]["allowed"] is not True:
                    failures.append(f"HTTP {status}: {answer}")
                serials.append(connection.peer_serial())
            except Exception as exc:
                failures.append(f"{type(exc).__name__}: {exc}")
            finally:
                connection.close()

    def current_serial() -> int:
        connection = server.connection()
        try:
            connection.connect()
            return connection.peer_serial()
        finally:
            connection.close()

    tls = server.cert_dir
    ca = ["--ca-cert", str(tls / "ca.crt"), "--ca-key", str(tls / "ca.key")]
    first = current_serial()
    client = threading.Thread(target=load, daemon=True)
    client.start()
    try:
        wait_for(lambda: len(serials) >= 20, 20, "requests before the rotation")
        make_certs(tls, *ca)  # atomic replacement, same CA
        second = wait_for(lambda: (s := current_serial()) != first and s, 10, "the rotated certificate")
        served = len(serials)
        wait_for(lambda: len(serials) >= served + 20, 20, "requests after the first rotation")

        staged = tmp_path / "staged"
        make_certs(staged, *ca)
        (tls / "tls.crt").write_bytes((staged / "tls.crt").read_bytes())  # new cert with the old key...
        served = len(serials)
        wait_for(lambda: len(serials) >= served + 10, 20, "requests while cert and key disagree")
        (tls / "tls.key").write_bytes((staged / "tls.key").read_bytes())  # ...then the matching key
        third = wait_for(lambda: (s := current_serial()) not in (first, second) and s, 10, "the third certificate")
        served = len(serials)
        wait_for(lambda: len(serials) >= served + 20, 20, "requests after the second rotation")
    finally:
        stop.set()
        client.join(timeout=10)
    assert not failures, failures[:5]
    assert {first, second, third} <= set(serials)
    assert "still serving the previous certificate" in server.log()


def test_metrics_and_admission_have_ports_of_their_own(server: LiveServer) -> None:
    """Issue 23 item 5: any pod could read node names and device UUIDs from /metrics on 8443 and post fake
    reviews to inflate the denial counters. Now each port serves only its own paths (and the probes)."""
    from tests.webhook.live import ServiceConnection

    review = load_json(GOLDEN / "validate-vgpu-allowed.in.json")
    admission = server.connection()
    metrics = ServiceConnection(server.metrics_port, client_context(server.ca_file))
    try:
        status, body = admission.call("GET", "/metrics")
        assert status == 404 and json.loads(body)["error"] == "/metrics is served on the metrics port, not this one"
        status, body = metrics.call("POST", "/validate", json.dumps(review).encode())
        assert status == 404 and b"admission port" in body
        assert metrics.call("GET", "/metrics")[0] == 200
        for connection in (admission, metrics):
            assert connection.call("GET", "/healthz")[0] == 200
            assert connection.call("GET", "/readyz")[0] == 200
        assert admission.post_json("/validate", review)[0] == 200
    finally:
        admission.close()
        metrics.close()


def test_ports_that_cannot_be_used_are_one_line_and_exit_2(tmp_path: Path) -> None:
    import socket
    import subprocess
    import sys

    def serve(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", "from vgpuctl.cli.app import main; main()", "webhook",
                               "serve", "--host", "127.0.0.1", *args], capture_output=True, text=True, timeout=60)

    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = str(busy.getsockname()[1])
        result = serve("--port", port, "--metrics-port", "0")
        assert result.returncode == 2
        assert result.stderr == f"vgpuctl: --port {port}: cannot listen on 127.0.0.1:{port}: Address already in use\n"
        result = serve("--port", "0", "--metrics-port", port)
        assert result.returncode == 2 and result.stderr.startswith(f"vgpuctl: --metrics-port {port}: cannot listen")
    result = serve("--port", "8443", "--metrics-port", "8443")
    assert result.returncode == 2 and "is the admission port" in result.stderr
