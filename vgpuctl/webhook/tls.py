"""The serving certificate: is it usable (for /readyz), and the TLS context gunicorn serves with.

Rotation. gunicorn 27's gthread/sync workers ask for an `SSLContext` on every accepted connection (its
`ssl_context` hook, anchors §0.3), and the default builds a fresh one from the files each time. We
cache the context per worker and rebuild it only when the cert or key file changes (a `stat` per
connection instead of parsing PEM). If the new files do not load — the usual cause is catching a
rotation half-way, new certificate with the old key — the last good context keeps serving and the next
connection tries again, so neither in-flight nor new requests fail during a rotation. The minimum
protocol is TLS 1.2 whatever the files say.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import ssl
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vgpuctl.webhook.certs import PairError, key_matches, read_matching_pair, read_pem_pair

log = logging.getLogger("vgpuctl.webhook")

MINIMUM_TLS = ssl.TLSVersion.TLSv1_2


@dataclass(frozen=True)
class CertStatus:
    ok: bool
    reason: str  # why not ok; "" when ok
    not_after: dt.datetime | None = None
    serial: int | None = None


def _stat_key(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


def check_certificate(cert_file: str, key_file: str, *, margin: dt.timedelta,
                      now: dt.datetime | None = None) -> CertStatus:
    """Readable, parseable, matching key, currently valid and not expiring within `margin`."""
    now = now or dt.datetime.now(dt.UTC)
    try:
        cert, key = read_pem_pair(cert_file, key_file)
    except PairError as exc:
        return CertStatus(False, f"TLS certificate or key unreadable: {exc}")
    not_after = cert.not_valid_after_utc
    if not key_matches(key, cert):
        return CertStatus(False, "TLS key does not match the certificate", not_after, cert.serial_number)
    if now < cert.not_valid_before_utc:
        return CertStatus(False, f"TLS certificate not valid before {cert.not_valid_before_utc.isoformat()}",
                          not_after, cert.serial_number)
    if not_after - now < margin:
        return CertStatus(False, f"TLS certificate expires {not_after.isoformat()} (within {margin.days} days)",
                          not_after, cert.serial_number)
    return CertStatus(True, "", not_after, cert.serial_number)


def startup_problem(cert_file: str, key_file: str) -> str | None:
    """Why the pair cannot serve at all, checked before the server starts (a usage error), or None: each
    file readable PEM, the key the certificate's. Expiry is left to /readyz: a rotated Secret is served
    from the next connection without a restart."""
    try:
        read_matching_pair(cert_file, key_file)
    except PairError as exc:
        return str(exc)
    return None


class CertificateMonitor:
    """`check_certificate`, re-run only when the files change (and at least every `recheck` seconds, so
    the expiry margin is crossed on time)."""

    def __init__(self, cert_file: str, key_file: str, *, margin: dt.timedelta, recheck: float = 60.0,
                 clock: Callable[[], float] | None = None) -> None:
        import time

        self.cert_file = cert_file
        self.key_file = key_file
        self.margin = margin
        self.recheck = recheck
        self._clock = clock or time.monotonic
        self._lock = threading.Lock()
        self._key: object = None
        self._at = 0.0
        self._status = CertStatus(False, "not checked yet")

    def status(self) -> CertStatus:
        key = (_stat_key(self.cert_file), _stat_key(self.key_file))
        with self._lock:
            if key != self._key or self._clock() - self._at >= self.recheck:
                self._status = check_certificate(self.cert_file, self.key_file, margin=self.margin)
                self._key = key
                self._at = self._clock()
            return self._status


class ReloadingContext:
    """gunicorn's `ssl_context(conf, default_factory)` hook, caching the context until the files change."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._context: ssl.SSLContext | None = None
        self._key: object = None
        self._failed_key: object = None

    def __call__(self, conf: Any, default_factory: Callable[[], ssl.SSLContext]) -> ssl.SSLContext:
        key = (_stat_key(conf.certfile), _stat_key(conf.keyfile))
        context = self._context
        if context is not None and key == self._key:
            return context
        with self._lock:
            if self._context is not None and key == self._key:
                return self._context
            try:
                fresh = default_factory()
                fresh.minimum_version = MINIMUM_TLS
            except (OSError, ssl.SSLError, ValueError) as exc:
                if self._context is None:
                    raise  # nothing to fall back to: this connection fails, the next one retries
                if key != self._failed_key:
                    self._failed_key = key
                    log.warning("TLS files changed but do not load yet (%s: %s); still serving the previous "
                                "certificate", type(exc).__name__, exc)
                return self._context
            self._context, self._key = fresh, key
            log.info("TLS certificate loaded from %s", conf.certfile)
            return fresh
