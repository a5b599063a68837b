"""Run the webhook app under gunicorn (its embedding API), TLS only, in vgpuctl's own worker class.

Why these settings:
- `worker.GuardedWorker`: connections are read on an event loop under deadlines (TLS handshake, headers,
  body, idle keep-alive: `connection.Limits`), and only a complete request takes one of `threads` threads,
  so connections that stall cost no thread (gunicorn's gthread worker let 4 of them starve every review).
- one worker by default: metrics live in the worker (see `metrics`), and a replica is cheap, so scale
  with replicas; `--workers` is there for a node with spare cores.
- TLS ≥ 1.2, and the context is rebuilt only when the certificate files change (`tls.ReloadingContext`),
  so a rotated Secret is served from the next connection without a restart or a failed request.
- no control socket (gunicorn 27 would create one under $HOME, which a read-only root filesystem
  refuses and parallel test servers would share), heartbeat files in /dev/shm (read-only root FS).
"""

from __future__ import annotations

import ctypes
import json
import logging
import math
import os
import shutil
import socket
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from flask import Flask
from gunicorn.app.base import BaseApplication  # type: ignore[import-untyped]

from vgpuctl.errors import RECURSION_LIMIT
from vgpuctl.webhook import heap
from vgpuctl.webhook.admission import flush_review_lines, write_review_lines_to
from vgpuctl.webhook.app import create_app
from vgpuctl.webhook.certs import self_signed_pair
from vgpuctl.webhook.connection import Limits
from vgpuctl.webhook.settings import DEFAULT_MAX_BODY_BYTES, ENV_PREFIX, Settings, SettingsError
from vgpuctl.webhook.tls import ReloadingContext
from vgpuctl.webhook.worker import worker_class_for

log = logging.getLogger("vgpuctl.webhook")


@dataclass(frozen=True)
class ServerOptions:
    host: str = "0.0.0.0"
    port: int = 8443  # /mutate, /validate (and the probes)
    metrics_port: int = 9443  # /metrics (and the probes): its own port, so policy can keep the two apart
    workers: int = 1
    threads: int = 4
    keepalive: float = 30.0  # seconds an idle keep-alive connection is kept; the API server reuses them
    handshake_timeout: float = 5.0  # seconds for the TLS handshake
    header_timeout: float = 5.0  # for the request line and headers
    body_timeout: float = 10.0  # for the body, and again for writing the answer
    max_connections: int = 1000  # open connections per worker; more are closed at once
    timeout: int = 30
    graceful_timeout: int = 10
    log_level: str = "info"

    @property
    def binds(self) -> list[str]:
        """Where gunicorn listens: the admission port first (the worker tells the listeners apart by this
        order: `worker.LISTENER_ROLES`), then the metrics port."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return [f"{host}:{self.port}", f"{host}:{self.metrics_port}"]


# The connection deadlines and limits a flag or VGPUCTL_<NAME> sets: (field, environment name, type, minimum).
CONNECTION_OPTIONS = (
    ("handshake_timeout", "HANDSHAKE_TIMEOUT", float, 0.1),
    ("header_timeout", "HEADER_TIMEOUT", float, 0.1),
    ("body_timeout", "BODY_TIMEOUT", float, 0.1),
    ("keepalive", "KEEPALIVE_TIMEOUT", float, 1.0),
    ("max_connections", "MAX_CONNECTIONS", int, 1),
    ("metrics_port", "METRICS_PORT", int, 0),
)


def build_server_options(env: Mapping[str, str] | None = None, **flags: Any) -> ServerOptions:
    """ServerOptions from flags (None: not given) falling back to `VGPUCTL_<NAME>` (`CONNECTION_OPTIONS`),
    then the defaults; `SettingsError` for a value that is not a number or below its minimum."""
    env = env or {}
    values: dict[str, Any] = {k: v for k, v in flags.items() if v is not None}
    for name, env_name, kind, minimum in CONNECTION_OPTIONS:
        raw = values.get(name, env.get(ENV_PREFIX + env_name) or None)
        if raw is None:
            continue
        try:
            value = kind(raw)
        except (TypeError, ValueError):
            raise SettingsError(f"{ENV_PREFIX}{env_name} / --{name.replace('_', '-')}: not a number: {raw!r}") from None
        if not math.isfinite(value) or value < minimum:
            raise SettingsError(f"--{name.replace('_', '-')}: must be at least {minimum}, got {raw!r}")
        values[name] = value
    options = ServerOptions(**values)
    if options.metrics_port > 65535:
        raise SettingsError(f"--metrics-port: {options.metrics_port} is not a port (0-65535)")
    if options.metrics_port == options.port and options.port != 0:
        raise SettingsError(f"--metrics-port: {options.metrics_port} is the admission port (--port); /metrics "
                            "has a port of its own so network policy can keep the two apart")
    return options


def unavailable_address(options: ServerOptions) -> str | None:
    """Why a port cannot be listened on (in use, not permitted), checked before gunicorn starts: it would
    retry for seconds, log a dozen lines and exit 1, which in vgpuctl means "findings"."""
    for flag, port in (("--port", options.port), ("--metrics-port", options.metrics_port)):
        if port == 0:
            continue
        family = socket.AF_INET6 if ":" in options.host else socket.AF_INET
        try:
            with socket.socket(family, socket.SOCK_STREAM) as probe:
                probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn binds
                probe.bind((options.host, port))
        except OSError as exc:
            return f"{flag} {port}: cannot listen on {options.host}:{port}: {exc.strerror or exc}"
    return None


class _JsonFormatter(logging.Formatter):
    """One JSON object per line; review lines (already JSON) pass through unchanged."""

    def format(self, record: logging.LogRecord) -> str:
        message = record.getMessage()
        if record.name == "vgpuctl.webhook.review":
            return message
        line: dict[str, Any] = {"level": record.levelname.lower(), "logger": record.name, "msg": message}
        if record.exc_info:
            line["exc"] = self.formatException(record.exc_info)
        return json.dumps(line)


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """stderr, after the review lines still batched: the process's log stays in order."""

    def emit(self, record: logging.LogRecord) -> None:
        flush_review_lines()
        super().emit(record)


def configure_logging(level: str = "info") -> None:
    # From the logging HOWTO's "Optimization": a log line per review should not walk the stack or look up
    # thread names, which no line prints (the process id stays: gunicorn's own format prints it).
    logging._srcfile = None
    logging.logThreads = False
    logging.logMultiprocessing = False
    logger = logging.getLogger("vgpuctl.webhook")
    if any(getattr(h, "_vgpuctl", False) for h in logger.handlers):
        return
    handler = _Handler(sys.stderr)
    handler.setFormatter(_JsonFormatter())
    handler._vgpuctl = True  # type: ignore[attr-defined]
    logger.addHandler(handler)
    logger.setLevel(level.upper())
    logger.propagate = False
    try:
        write_review_lines_to(sys.stderr.fileno())
    except (AttributeError, OSError, ValueError):  # stderr without a file descriptor: keep logging
        write_review_lines_to(None)


_reloading_context = ReloadingContext()


def _ssl_context(conf: Any, default_factory: Any) -> Any:
    return _reloading_context(conf, default_factory)


def _worker_exit(_arbiter: Any, _worker: Any) -> None:
    flush_review_lines()


def connection_limits(options: ServerOptions, max_body_bytes: int) -> Limits:
    return Limits(handshake=options.handshake_timeout, header=options.header_timeout, body=options.body_timeout,
                  keepalive=options.keepalive, max_body_bytes=max_body_bytes,
                  max_connections=options.max_connections)


def gunicorn_options(options: ServerOptions, cert_file: str, key_file: str,
                     max_body_bytes: int = DEFAULT_MAX_BODY_BYTES) -> dict[str, Any]:
    shm = "/dev/shm"
    return {
        "bind": options.binds,
        "workers": options.workers,
        "worker_class": worker_class_for(connection_limits(options, max_body_bytes)),
        "threads": options.threads,
        "worker_connections": options.max_connections,
        "keepalive": max(1, round(options.keepalive)),
        "timeout": options.timeout,
        "graceful_timeout": options.graceful_timeout,
        "certfile": cert_file,
        "keyfile": key_file,
        "ssl_context": _ssl_context,
        "accesslog": None,
        "errorlog": "-",
        "loglevel": options.log_level,
        "control_socket_disable": True,
        "worker_tmp_dir": shm if os.path.isdir(shm) and os.access(shm, os.W_OK) else None,
        "proc_name": "vgpuctl-webhook",
        "worker_exit": _worker_exit,
    }


class WebhookServer(BaseApplication):  # type: ignore[misc]
    """gunicorn serving `app_factory()` (each worker builds its own app after the fork)."""

    def __init__(self, app_factory: Any, options: dict[str, Any], log_level: str = "info") -> None:
        self._factory = app_factory
        self._options = options
        self._log_level = log_level
        super().__init__()

    def load_config(self) -> None:
        for key, value in self._options.items():
            self.cfg.set(key, value)

    def load(self) -> Flask:
        return worker_app(self._factory, self._log_level)


M_MMAP_THRESHOLD = -3  # glibc's mallopt parameter (malloc.h)
MMAP_THRESHOLD = 128 * 1024


def return_big_blocks_to_the_system() -> bool:
    """Pin glibc's mmap threshold at its 128 KiB default. Left dynamic, glibc raises it to the largest block
    freed: after a list page of big pods (a 256 KiB annotation each) every later 256 KiB string comes from
    the heap and the memory stays with the process — RSS 3.1× a clean cluster's after the junk was dropped
    (benchmarks/cluster_memory.py); pinned, 1.0×. False where there is no glibc (musl, macOS): nothing done."""
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    return bool(mallopt(M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def worker_app(app_factory: Any, log_level: str = "info") -> Flask:
    """The app a worker serves, built after the fork: here and in `webhook/wsgi.py` (a gunicorn you start)."""
    return_big_blocks_to_the_system()
    # A review's values can nest as deep as orjson builds them (1,024): a rule quoting one must not die of it.
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))
    configure_logging(log_level)
    app: Flask = app_factory()
    # Everything alive now (modules, the app, the device config) lives as long as the worker: move it
    # out of the collector's reach, so the garbage collections each review's allocations trigger stay
    # small instead of re-scanning the whole heap.
    heap.freeze()
    return app


def serve(settings: Settings, options: ServerOptions, *, announce: Any = None) -> None:
    """Run until signalled. Without cert/key files in `settings`, a throw-away self-signed pair is made
    (for local use: the API server would need its CA in the webhook's caBundle)."""
    scratch: str | None = None
    try:
        if not settings.cert_file or not settings.key_file:
            scratch = tempfile.mkdtemp(prefix="vgpuctl-webhook-tls-")
            cert, key, ca = self_signed_pair(scratch)
            settings = settings.with_tls(cert, key)
            if announce is not None:
                announce(f"no --cert/--key: serving a self-signed certificate for localhost, 127.0.0.1 and ::1; "
                         f"its CA is {ca}")
        assert settings.cert_file and settings.key_file
        server = WebhookServer(lambda: create_app(settings),
                               gunicorn_options(options, settings.cert_file, settings.key_file,
                                                settings.max_body_bytes),
                               options.log_level)
        server.run()
    finally:
        if scratch:
            shutil.rmtree(scratch, ignore_errors=True)
