"""A cluster vgpuctl cannot use is one line on stderr and exit 3, the same for every command that reads it
(issue 27): a kubeconfig whose exec credential plugin is missing, an API server URL that answers 404 to
everything. Real processes (the client's logging is configured per process) against a real local HTTP
server (pytest-httpserver)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
import yaml
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

COMMANDS = [("doctor",), ("nodes",), ("why", "ml/x")]


def vgpuctl(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from vgpuctl.cli.app import main; main()", *args],
                          capture_output=True, text=True, timeout=120)


def kubeconfig(path: Path, server: str, user: dict[str, object]) -> str:
    path.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "lab",
        "clusters": [{"name": "lab", "cluster": {"server": server}}],
        "users": [{"name": "me", "user": user}],
        "contexts": [{"name": "lab", "context": {"cluster": "lab", "user": "me"}}]}))
    return str(path)


def one_line_exit_3(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 3, (result.returncode, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("vgpuctl: "), result.stderr
    return lines[0]


@pytest.fixture
def answers_404(httpserver: HTTPServer) -> str:
    """Something that is not an API server: 404 with a Status-like body for every path."""
    def not_found(request: Request) -> Response:
        body = {"kind": "Status", "code": 404, "message": f"no route {request.path}"}
        return Response(orjson.dumps(body), status=404, content_type="application/json")

    httpserver.expect_request(re.compile(".*")).respond_with_handler(not_found)
    return httpserver.url_for("").rstrip("/")


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_missing_exec_credential_plugin(tmp_path: Path, answers_404: str, command: tuple[str, ...]) -> None:
    config = kubeconfig(tmp_path / "kc.yaml", answers_404, {"exec": {
        "apiVersion": "client.authentication.k8s.io/v1beta1", "command": "no-such-credential-plugin-xyz"}})
    line = one_line_exit_3(vgpuctl(*command, "--kubeconfig", config))
    assert "exec credential plugin failed" in line and "no-such-credential-plugin-xyz" in line
    assert "ERROR:root" not in line and "WARNING:urllib3" not in line


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: c[0])
def test_a_server_that_answers_404_to_everything(tmp_path: Path, answers_404: str, command: tuple[str, ...]) -> None:
    config = kubeconfig(tmp_path / "kc.yaml", answers_404, {"token": "t"})
    line = one_line_exit_3(vgpuctl(*command, "--kubeconfig", config))
    assert line == (f"vgpuctl: {answers_404} does not serve the Kubernetes API (GET /api/v1/nodes: HTTP 404); "
                    "check the server URL of the kubeconfig context")


def test_install_against_it_says_the_same(tmp_path: Path, answers_404: str) -> None:
    config = kubeconfig(tmp_path / "kc.yaml", answers_404, {"token": "t"})
    line = one_line_exit_3(vgpuctl("install", "--mode", "vgpu", "--dry-run", "--kubeconfig", config))
    assert "does not serve the Kubernetes API (GET /api/v1/nodes: HTTP 404)" in line
