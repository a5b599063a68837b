"""`vgpuctl snapshot save`: write what the doctor reads from a live cluster to a file, without Secrets.

The file has the shape of what `snapshotfile.KUBECTL_SNAPSHOT` prints (nodes, pods, configmaps, …, the DRA
kinds) plus the API server version and the kinds listed, so `doctor --snapshot`, `nodes --snapshot` and
`lint --snapshot` can run later, offline or on another machine (support cases, air-gapped clusters).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path
from typing import IO

import typer

from vgpuctl.cli.env import fail, guarded, stderr
from vgpuctl.cli.kubeopts import cluster_errors, connect, context_option, kubeconfig_option
from vgpuctl.core.findings import ExitStatus
from vgpuctl.errors import UsageError
from vgpuctl.snapshotfile import KUBECTL_SNAPSHOT, save_snapshot

KUBECTL_JSON = KUBECTL_SNAPSHOT.replace("-o yaml", "-o json")
EPILOG = f"""[bold]Examples[/bold]

  vgpuctl snapshot save cluster.yaml
  vgpuctl snapshot save cluster.json.gz --context prod
  vgpuctl snapshot save - --kubeconfig ~/.kube/lab | gzip > lab.yaml.gz
  vgpuctl doctor --snapshot cluster.yaml

Large clusters: prefer .json or .json.gz; JSON snapshots load far faster than YAML (README: measured).
Without vgpuctl on the machine that can reach the cluster, this makes an equivalent file:

  {KUBECTL_JSON} > cluster.json
"""

snapshot_app = typer.Typer(
    help="Save a cluster snapshot for `doctor --snapshot` and support cases.",
    no_args_is_help=True,
    rich_markup_mode="rich",
)


class _Progress:
    """`nodes: 1500 · pods: 40000…` rewritten in place on a terminal; one line per resource otherwise."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.tty = bool(getattr(stream, "isatty", lambda: False)())
        self.counts: dict[str, int] = {}
        self.current: str | None = None

    def __call__(self, resource: str, count: int) -> None:
        if not self.tty and self.current not in (None, resource):
            self._line(self.current)
        self.current = resource
        self.counts[resource] = count
        if self.tty:
            text = " · ".join(f"{name}: {n}" for name, n in self.counts.items())
            self.stream.write(f"\rreading {text}…")
            self.stream.flush()

    def _line(self, resource: str) -> None:
        self.stream.write(f"vgpuctl: read {resource}: {self.counts[resource]}\n")

    def done(self) -> None:
        if self.tty and self.counts:
            self.stream.write("\n")
        elif self.current is not None:
            self._line(self.current)
        self.current = None


def _check_writable(file: str) -> None:
    """Fail before a long cluster read rather than after it."""
    if file == "-":
        return
    target = Path(file)
    if target.is_dir():
        raise UsageError(f"{file}: is a directory")
    parent = target.parent
    if not parent.is_dir():
        raise UsageError(f"{file}: cannot write: directory {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{file}: cannot write: permission denied")


@guarded
def save_command(
    file: str = typer.Argument(..., metavar="FILE",
                               help="Output file: YAML, or JSON if it ends in .json; gzip if .gz; - for stdout."),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
) -> None:
    """Read Nodes, Pods, DaemonSets, Deployments, RuntimeClasses and the device ConfigMaps, and write them to FILE."""
    _check_writable(file)
    err = stderr()
    progress = _Progress(err)
    started = time.monotonic()
    with cluster_errors():
        from vgpuctl.kube.reader import read_cluster  # imports `kubernetes`: only when a cluster is read

        with connect(kubeconfig, context) as api:
            live = read_cluster(api, progress=progress)
    progress.done()
    for problem in live.problems:
        err.write(f"vgpuctl: warning: [{problem.code}] {problem.subject}: {problem.message}\n")
    if live.problems and not live.data.objects:
        raise fail(f"nothing could be read from the cluster, {file} not written", ExitStatus.INCOMPLETE)
    save_snapshot(file, live.data)
    kinds = Counter(obj.get("kind") for obj in live.data.objects)
    counts = ", ".join(f"{kinds[kind]} {kind.lower()}s" for kind in
                       ("Node", "Pod", "ConfigMap", "DaemonSet", "Deployment"))
    version = f"server {live.data.server_version}" if live.data.server_version else "server version unknown"
    failed = f"; {len(live.problems)} read(s) failed (VGK001, above)" if live.problems else ""
    where = "stdout" if file == "-" else file
    err.write(f"vgpuctl: wrote {where}: {counts}; {version}; {time.monotonic() - started:.1f}s{failed}\n")


def register(app: typer.Typer) -> None:
    snapshot_app.command("save", epilog=EPILOG)(save_command)
    app.add_typer(snapshot_app, name="snapshot")
