"""Issue 15 §6: a cluster that does not answer is described the same way by `install`, `uninstall` and
`doctor` (which server, what happened, the timeout that really applied), never with urllib3's pool
internals ("HTTPSConnectionPool(host=…): Read timed out. (read timeout=5.0)").

Real kubernetes client, real sockets: a port nothing listens on (refused) and a server that accepts
connections and never says a word (with https: the TLS handshake never completes, and urllib3 runs the
handshake under the *connect* timeout, though it calls the failure a read timeout)."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes.client import ApiClient, Configuration

from tests.install.test_install_live import run
from tests.kube.conftest import write_kubeconfig
from vgpuctl.core.install.plan import Action, Method, Plan, Ref, Step
from vgpuctl.kube.errors import ClusterUnreachable
from vgpuctl.kube.kubeconfig import tune_configuration
from vgpuctl.kube.writer import apply_plan, read_state

INTERNALS = ("ConnectionPool", "Max retries", "urllib3", "NewConnectionError", "object at 0x")


@pytest.fixture
def silent() -> Iterator[int]:
    """A port that accepts TCP connections, reads what it is sent, and never answers."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    server.settimeout(0.2)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            held.append(conn)

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield int(server.getsockname()[1])
    stop.set()
    thread.join(2)
    for conn in held:
        conn.close()
    server.close()


@pytest.fixture
def refused() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def client(url: str) -> ApiClient:
    configuration = Configuration(host=url)
    configuration.verify_ssl = False
    return ApiClient(tune_configuration(configuration))


def test_a_tls_handshake_that_never_completes_names_the_connect_timeout(silent: int) -> None:
    url = f"https://127.0.0.1:{silent}"
    started = time.monotonic()
    with pytest.raises(ClusterUnreachable) as caught:
        read_state(client(url), timeout=(0.3, 20))
    assert time.monotonic() - started < 5  # the 20 s read timeout never applied
    message = str(caught.value)
    assert message == (f"cannot reach the Kubernetes API: no answer from {url} within 0.3s (connect timeout: the TLS "
                       "handshake never completed)")


def test_a_server_that_never_responds_names_the_read_timeout(silent: int) -> None:
    url = f"http://127.0.0.1:{silent}"
    with pytest.raises(ClusterUnreachable) as caught:
        read_state(client(url), timeout=(20, 0.3))
    assert str(caught.value) == f"cannot reach the Kubernetes API: no answer from {url} within 0.3s (read timeout)"


def test_a_write_that_cannot_connect_says_so_without_urllib3_internals(refused: int) -> None:
    """After the state was read, a failure is a failed write: the step names the request and the server."""
    url = f"http://127.0.0.1:{refused}"
    ref = Ref("v1", "ConfigMap", "kube-system", "x")
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "namespace": "kube-system"}}
    result = apply_plan(client(url), Plan((Step(ref, Action.CREATE, Method.CREATE, body),)), timeout=(1, 1))
    assert result.failed is not None
    assert result.error == (f"POST /api/v1/namespaces/kube-system/configmaps: cannot connect to {url}: "
                            "connection refused")


def _stderr_lines(kubeconfig: str) -> dict[str, str]:
    out = {}
    for command in (("install", "--mode", "vgpu"), ("uninstall",), ("doctor",)):
        result = run(*command, "--kubeconfig", kubeconfig)
        assert result.exit_code == 3, (command, result.stdout, result.stderr)
        assert result.stderr.count("\n") == 1, result.stderr
        assert not any(word in result.stderr for word in INTERNALS), result.stderr
        out[command[0]] = result.stderr
    return out


def test_install_uninstall_and_doctor_say_the_same_of_a_refused_connection(refused: int, tmp_path: Path) -> None:
    url = f"http://127.0.0.1:{refused}"
    lines = _stderr_lines(write_kubeconfig(tmp_path / "kc", {"gone": url}, current="gone"))
    expected = f"vgpuctl: cannot reach the Kubernetes API: cannot connect to {url}: connection refused\n"
    assert lines == {"install": expected, "uninstall": expected, "doctor": expected}


def test_install_uninstall_and_doctor_say_the_same_of_a_silent_https_server(silent: int, tmp_path: Path) -> None:
    """The commands' own timeouts apply (5 s connect, 30 s read): the handshake ends after 5 s, and the
    message says 5 s (the doctor used to say "within 30s" after 5.5 s)."""
    url = f"https://127.0.0.1:{silent}"
    started = time.monotonic()
    lines = _stderr_lines(write_kubeconfig(tmp_path / "kc", {"silent": url}, current="silent"))
    assert time.monotonic() - started < 3 * 10
    expected = (f"vgpuctl: cannot reach the Kubernetes API: no answer from {url} within 5s (connect timeout: the TLS "
                "handshake never completed)\n")
    assert lines == {"install": expected, "uninstall": expected, "doctor": expected}
