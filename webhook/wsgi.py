"""WSGI entry of the admission webhook, for a gunicorn (or another WSGI server) you start yourself.

    cd webhook && gunicorn wsgi:app          # gunicorn reads ./gunicorn.conf.py: the settings `serve` uses

The app is the one `vgpuctl webhook serve` runs (`vgpuctl.webhook.app.create_app`), configured from the
same `VGPUCTL_*` environment variables (`vgpuctl.webhook.settings.build_settings`), built the way each
`serve` worker builds it (`vgpuctl.webhook.server.worker_app`). With VGPUCTL_CLUSTER_AWARE=true it
watches nodes and pods through the in-cluster account or KUBECONFIG, as `serve --cluster-aware` does.
"""

from __future__ import annotations

import os
from dataclasses import replace

from flask import Flask

from vgpuctl.webhook.app import create_app
from vgpuctl.webhook.server import ServerOptions, worker_app
from vgpuctl.webhook.settings import Settings, build_settings


def _settings() -> Settings:
    settings = build_settings(env=os.environ)
    if settings.cluster_aware:
        # The watch `serve --cluster-aware` starts (no --kubeconfig/--context here: the environment decides).
        from vgpuctl.cli.webhook import _cluster_watch_factory

        settings = replace(settings, cluster_watch=_cluster_watch_factory(None, None))
    return settings


_SETTINGS = _settings()
app: Flask = worker_app(lambda: create_app(_SETTINGS), ServerOptions().log_level)
