"""What every command that reads a live cluster shares: `--kubeconfig`, `--context`, and exit 3.

`doctor`, `nodes`, `why` and `snapshot save` declare the same two options with these factories, connect
with `connect`, and wrap their cluster reads in `cluster_errors()`, so "which cluster" and "cannot reach
it" look the same everywhere. `kubernetes` is imported only when a command actually connects: it costs
~0.3 s, more than the rest of the CLI's start-up, and `lint` or `explain` never need it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import typer

from vgpuctl.cli.env import fail
from vgpuctl.core.findings import ExitStatus
from vgpuctl.errors import UsageError
from vgpuctl.kube.errors import ClusterUnreachable

if TYPE_CHECKING:
    from kubernetes.client import ApiClient


def kubeconfig_option() -> Any:
    return typer.Option(None, "--kubeconfig", metavar="FILE",
                        help="Kubeconfig file (default: $KUBECONFIG, then ~/.kube/config, then in-cluster).")


def context_option() -> Any:
    return typer.Option(None, "--context", metavar="NAME",
                        help="Kubeconfig context to use (default: the current context).")


def connect(kubeconfig: str | None, context: str | None) -> ApiClient:
    """A client for the chosen cluster; raises `UsageError` (exit 2) or `ClusterUnreachable` (exit 3)."""
    from vgpuctl.kube.kubeconfig import load_api_client

    return load_api_client(kubeconfig, context)


@contextmanager
def cluster_errors() -> Iterator[None]:
    """Turn `ClusterUnreachable` into exit 3 with its one-line reason (no traceback)."""
    try:
        yield
    except ClusterUnreachable as exc:
        raise fail(str(exc), ExitStatus.INCOMPLETE) from None


def refuse_live_options_with_snapshot(snapshot_path: str | None, kubeconfig: str | None, context: str | None) -> None:
    """`--kubeconfig`/`--context` choose a live cluster, which `--snapshot` replaces: given together, one of
    them would be ignored without a word, so it is a usage error (exit 2) naming both."""
    live = [flag for flag, value in (("--kubeconfig", kubeconfig), ("--context", context)) if value]
    if snapshot_path and live:
        raise UsageError(f"{' and '.join(live)} {'choose' if len(live) > 1 else 'chooses'} a live cluster; "
                         "--snapshot reads a file instead: give one or the other")
