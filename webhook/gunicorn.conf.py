"""gunicorn configuration of the admission webhook: exactly the settings `vgpuctl webhook serve` passes
(`vgpuctl.webhook.server.gunicorn_options` with the `ServerOptions` defaults: 0.0.0.0:8443, TLS ≥ 1.2 with
certificate reload, one gthread worker with 4 threads, no access log, no control socket), so the two
cannot drift. gunicorn's own flags still win (`-b 127.0.0.1:9443`, `-w 2`, `--threads 8`).

The serving pair comes from VGPUCTL_TLS_CERT and VGPUCTL_TLS_KEY, the variables `serve` reads too (the
app checks the same files' expiry for /readyz). Used by `cd webhook && gunicorn wsgi:app`.
"""

from __future__ import annotations

import os

from vgpuctl.webhook.server import ServerOptions, gunicorn_options
from vgpuctl.webhook.settings import build_settings

_settings = build_settings(env=os.environ)
if not (_settings.cert_file and _settings.key_file):
    raise SystemExit("webhook/gunicorn.conf.py: set VGPUCTL_TLS_CERT and VGPUCTL_TLS_KEY to the serving "
                     "certificate and key (PEM); `vgpuctl webhook certs` makes a pair")

# gunicorn reads the module's names that are settings (bind, workers, threads, certfile, ssl_context, …).
globals().update(gunicorn_options(ServerOptions(), _settings.cert_file, _settings.key_file))
