"""gunicorn configuration of the admission webhook: exactly the settings `vgpuctl webhook serve` passes
(`vgpuctl.webhook.server.gunicorn_options` with the `ServerOptions` defaults: 0.0.0.0:8443, TLS ≥ 1.2 with
certificate reload, one vgpuctl worker (`vgpuctl.webhook.worker`: connections read under deadlines, 4
threads for the app), no access log, no control socket), so the two cannot drift. The connection deadlines
read the same VGPUCTL_HANDSHAKE_TIMEOUT, …_HEADER_TIMEOUT, …_BODY_TIMEOUT, …_KEEPALIVE_TIMEOUT and
…_MAX_CONNECTIONS as `serve`. gunicorn's own flags still win (`-b 127.0.0.1:9443`, `-w 2`, `--threads 8`).

The serving pair comes from VGPUCTL_TLS_CERT and VGPUCTL_TLS_KEY, the variables `serve` reads too (the
app checks the same files' expiry for /readyz). Used by `cd webhook && gunicorn wsgi:app`.
"""

from __future__ import annotations

import os

from vgpuctl.webhook.server import build_server_options, gunicorn_options
from vgpuctl.webhook.settings import SettingsError, build_settings

try:
    _settings = build_settings(env=os.environ)
    _options = build_server_options(os.environ)
except SettingsError as _exc:
    raise SystemExit(f"webhook/gunicorn.conf.py: {_exc}") from None
if not (_settings.cert_file and _settings.key_file):
    raise SystemExit("webhook/gunicorn.conf.py: set VGPUCTL_TLS_CERT and VGPUCTL_TLS_KEY to the serving "
                     "certificate and key (PEM); `vgpuctl webhook certs` makes a pair")

# gunicorn reads the module's names that are settings (bind, workers, threads, certfile, ssl_context, …).
globals().update(gunicorn_options(_options, _settings.cert_file, _settings.key_file, _settings.max_body_bytes))
