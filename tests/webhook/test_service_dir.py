"""`webhook/`, the deployable service: the Dockerfile's sources exist (no Docker engine here), gunicorn reads
`gunicorn.conf.py` to exactly the settings `vgpuctl webhook serve` uses, and `wsgi:app` serves — through
Flask's test client and under a real gunicorn with TLS started the way webhook/README.md says."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from gunicorn.app.base import Application  # type: ignore[import-untyped]
from gunicorn.config import Config  # type: ignore[import-untyped]
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from typer.testing import CliRunner

from tests.webhook.conftest import DEVICE_CONFIG
from tests.webhook.live import ServiceConnection, client_context, wait_for
from vgpuctl.cli.app import app as cli
from vgpuctl.webhook.server import ServerOptions, gunicorn_options

ROOT = Path(__file__).resolve().parents[2]
SERVICE_DIR = ROOT / "webhook"
CONF = SERVICE_DIR / "gunicorn.conf.py"
LISTENING = re.compile(r"Listening at: https://127\.0\.0\.1:(\d+)")


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VGPUCTL_", "GUNICORN_"))}
    return {**env, **extra}


@pytest.fixture(scope="module")
def tls(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("service-tls")
    result = CliRunner().invoke(cli, ["webhook", "certs", "--service", "vgpuctl-webhook", "--namespace",
                                      "vgpuctl-system", "--out", str(out), "--days", "30"])
    assert result.exit_code == 0, result.stderr
    return out


def test_the_dockerfile_lives_in_webhook_and_copies_what_exists() -> None:
    assert not (ROOT / "Dockerfile").exists()
    lines = [line.strip() for line in (SERVICE_DIR / "Dockerfile").read_text().splitlines()]
    copies = [line.split()[1:] for line in lines if line.startswith("COPY ") and "--from=" not in line]
    sources = [source for words in copies for source in words[:-1]]
    assert "vgpuctl" in sources and "pyproject.toml" in sources
    for source in sources:  # relative to the build context, the repository's root
        assert (ROOT / source).exists(), f"COPY {source}: not in the repository"
    # What the build needs besides the package: the license file pyproject names, and the schemas the
    # package's `schemas` link points at (inside the context, and copied).
    assert "LICENSE" in sources
    link = ROOT / "vgpuctl" / "schemas"
    assert link.is_symlink() and link.resolve() == (ROOT / "schemas").resolve()
    assert "schemas" in sources
    # The context sent is only what is copied (BuildKit's Dockerfile-named ignore file, an allow-list).
    kept = {line[1:].rstrip("/") for line in (SERVICE_DIR / "Dockerfile.dockerignore").read_text().splitlines()
            if line.startswith("!")}
    assert set(sources) == kept


def _lock() -> dict[str, tuple[str, list[str]]]:
    """webhook/requirements.lock: name → (version, hashes)."""
    pins: dict[str, tuple[str, list[str]]] = {}
    name = ""
    for line in (SERVICE_DIR / "requirements.lock").read_text().splitlines():
        line = line.strip()
        if "==" in line and not line.startswith(("#", "--")):
            name, version = line.rstrip(" \\").split("==")
            pins[canonicalize_name(name)] = (version, [])
        elif line.startswith("--hash=sha256:") and name:
            pins[canonicalize_name(name)][1].append(line.removeprefix("--hash=sha256:").rstrip(" \\"))
    return pins


def test_the_image_lock_pins_every_dependency_with_hashes() -> None:
    """Issue 23 item 13: the image installs from a hash-pinned lock. It must satisfy every requirement of
    the package and its [webhook] extra, and of the build backend, or the image would not be what
    pyproject.toml declares (CI also checks it installs with --require-hashes)."""
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    wanted = [Requirement(r) for r in project["project"]["dependencies"]
              + project["project"]["optional-dependencies"]["webhook"] + project["build-system"]["requires"]]
    pins = _lock()
    environment = {"python_version": "3.11", "python_full_version": "3.11.0", "extra": "webhook"}
    for requirement in wanted:
        if requirement.marker is not None and not requirement.marker.evaluate(environment):
            continue
        pin = pins.get(canonicalize_name(requirement.name))
        assert pin is not None, f"{requirement} is not in webhook/requirements.lock"
        assert requirement.specifier.contains(pin[0], prereleases=True), f"the lock pins {pin[0]}: {requirement}"
    assert all(hashes for _, hashes in pins.values()), "every pin carries its hashes"
    assert "--require-hashes" in (SERVICE_DIR / "Dockerfile").read_text()


def _config_from_file(path: Path) -> Config:
    """gunicorn's own loader (`Application.load_config_from_file`) onto a fresh Config."""
    loader = Application.__new__(Application)
    loader.cfg = Config()
    loader.load_config_from_file(str(path))
    return loader.cfg


def test_gunicorn_conf_is_the_settings_serve_uses(tls: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VGPUCTL_TLS_CERT", str(tls / "tls.crt"))
    monkeypatch.setenv("VGPUCTL_TLS_KEY", str(tls / "tls.key"))
    from_file = _config_from_file(CONF)
    # What `serve` gives gunicorn (WebhookServer.load_config sets these on its Config).
    serve = Config()
    options = gunicorn_options(ServerOptions(), str(tls / "tls.crt"), str(tls / "tls.key"))
    for key, value in options.items():
        serve.set(key, value)
    assert {k: s.get() for k, s in from_file.settings.items()} == {k: s.get() for k, s in serve.settings.items()}
    assert from_file.settings["bind"].get() == ["0.0.0.0:8443", "0.0.0.0:9443"]  # admission, then /metrics
    assert from_file.settings["worker_class"].get().__name__ == "VgpuctlWorker"
    assert from_file.settings["certfile"].get() == str(tls / "tls.crt")


def test_gunicorn_conf_without_a_tls_pair_says_what_to_set() -> None:
    result = subprocess.run([sys.executable, "-m", "gunicorn", "--check-config", "wsgi:app"], cwd=SERVICE_DIR,
                            env=_env(), capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "set VGPUCTL_TLS_CERT and VGPUCTL_TLS_KEY" in result.stderr


def test_wsgi_app_serves_healthz_through_the_test_client() -> None:
    probe = ("import json, wsgi; c = wsgi.app.test_client(); "
             "h = c.get('/healthz'); r = c.get('/readyz'); "
             "print(json.dumps([h.status_code, h.get_json(), r.get_json()['checks']]))")
    result = subprocess.run([sys.executable, "-c", probe], cwd=SERVICE_DIR, capture_output=True, text=True,
                            env=_env(VGPUCTL_DEVICE_CONFIG=str(DEVICE_CONFIG)), timeout=60)
    assert result.returncode == 0, result.stderr
    status, body, checks = json.loads(result.stdout)
    assert (status, body) == (200, {"status": "ok"})
    # The settings came from the environment, as `serve`'s do.
    assert checks["deviceConfig"] == {"ok": True, "path": str(DEVICE_CONFIG), "lastError": None}


@pytest.fixture(scope="module")
def gunicorn_server(tls: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, Path]]:
    """`cd webhook && gunicorn wsgi:app` (gunicorn finds ./gunicorn.conf.py itself), on a free port."""
    log = tmp_path_factory.mktemp("service-log") / "gunicorn.log"
    env = _env(VGPUCTL_TLS_CERT=str(tls / "tls.crt"), VGPUCTL_TLS_KEY=str(tls / "tls.key"),
               VGPUCTL_DEVICE_CONFIG=str(DEVICE_CONFIG))
    with open(log, "wb") as sink:
        process = subprocess.Popen([sys.executable, "-m", "gunicorn", "-b", "127.0.0.1:0", "wsgi:app"],
                                   cwd=SERVICE_DIR, env=env, stdout=subprocess.DEVNULL, stderr=sink,
                                   start_new_session=True)
    try:
        def port() -> str | None:
            if process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {process.returncode}: {log.read_text()}")
            match = LISTENING.search(log.read_text(errors="replace"))
            return match.group(1) if match else None

        yield int(wait_for(port, 30, "gunicorn to listen")), log
    finally:
        process.terminate()
        process.wait(timeout=15)


def _get(port: int, ca: Path, path: str) -> tuple[int, Any]:
    connection = ServiceConnection(port, client_context(ca / "ca.crt"))
    try:
        status, body = connection.call("GET", path)
    finally:
        connection.close()
    return status, json.loads(body)


def test_gunicorn_runs_wsgi_app_with_the_conf(gunicorn_server: tuple[int, Path], tls: Path) -> None:
    port, log = gunicorn_server

    def healthy() -> tuple[int, Any] | None:
        try:
            return _get(port, tls, "/healthz")
        except OSError:
            return None

    assert wait_for(healthy, 30, "/healthz") == (200, {"status": "ok"})
    status, ready = _get(port, tls, "/readyz")
    assert (status, ready["status"]) == (200, "ready"), ready  # the certificate and device config were found
    text = log.read_text()
    assert "Using worker: VgpuctlWorker" in text and "Traceback" not in text
