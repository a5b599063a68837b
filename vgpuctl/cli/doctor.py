"""`vgpuctl doctor`: check a cluster (live or a snapshot) or a node, say what Volcano will do, and how to fix it."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import NoReturn

import typer

from vgpuctl.cli.clustersource import load_cluster
from vgpuctl.cli.env import guarded, make_console, note, stdout
from vgpuctl.cli.kubeopts import context_option, kubeconfig_option
from vgpuctl.cli.options import (
    FailOn,
    PrivilegedPolicy,
    fail_on_option,
    output_option,
    read_volcano_version,
    snapshot_option,
    volcano_version_option,
)
from vgpuctl.core import spec
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.doctor import DoctorReport, diagnose
from vgpuctl.core.findings import ExitStatus, Severity
from vgpuctl.core.versions import Version
from vgpuctl.errors import UsageError
from vgpuctl.render import OutputFormat, dump
from vgpuctl.snapshotfile import KUBECTL_SNAPSHOT, gc_paused
from vgpuctl.sources import load_device_config

EPILOG = f"""[bold]Examples[/bold]

  vgpuctl doctor                                   # the cluster of the current kubeconfig context
  vgpuctl doctor --snapshot examples/clusters/broken.yaml
  {KUBECTL_SNAPSHOT.replace("-o yaml", "-o json")} > snap.json
  vgpuctl doctor --snapshot snap.json
  vgpuctl doctor -q                                # only the checks that warn or fail
  vgpuctl doctor -o json --fail-on warning         # for CI: exit 1 on any warning
  vgpuctl doctor --pre                             # can `vgpuctl install` succeed here?
  vgpuctl doctor --node --device-config device-config.yaml   # on a GPU/NPU node itself
"""


@guarded
def doctor_command(
    snapshot: str | None = snapshot_option(help="Check a snapshot file (kubectl get … -o yaml/json), not a cluster."),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
    node: bool = typer.Option(False, "--node", help="Check this machine as a GPU/NPU node: driver, MIG, runtime, "
                              "nvidia-smi / npu-smi (add --snapshot or --device-config to compare with the geometry)."),
    root: str | None = typer.Option(None, "--root", metavar="DIR",
                                    help="With --node: where the host's filesystem is mounted (e.g. /host in a pod; "
                                    "default /)."),
    device_config: str | None = typer.Option(None, "--device-config", metavar="FILE",
                                             help="With --node: the device ConfigMap or payload to compare with."),
    pre: bool = typer.Option(False, "--pre", help="Only what decides whether `vgpuctl install` can succeed."),
    expand: bool = typer.Option(False, "--all", help="List every subject instead of grouping the same problem."),
    quiet: bool = typer.Option(False, "-q", "--quiet",
                               help="Table output: only the checks that warn or fail (the summary counts them all)."),
    volcano_version: str | None = volcano_version_option(
        help="Override the Volcano version read from the vc-scheduler image."),
    scheduler_name: list[str] = typer.Option([], "--scheduler-name", metavar="NAME",
                                             help="A Volcano scheduler name (repeatable; default: volcano)."),
    privileged: PrivilegedPolicy | None = typer.Option(None, "--privileged", show_default="error",
                                                       help="Severity of VGP016 on existing pods (default: error)."),
    output: OutputFormat = output_option(),
    fail_on: FailOn = fail_on_option(),
) -> None:
    """Check GPU/NPU sharing end to end: versions, scheduler config, device config, plugins, nodes, pods."""
    _refuse_ignored_options(node, root=root, device_config=device_config, kubeconfig=kubeconfig, context=context,
                            pre=pre, scheduler_name=bool(scheduler_name), privileged=privileged is not None)
    version = read_volcano_version(volcano_version)
    if node:
        report = _node_report(snapshot, device_config, root or "/", version)
        _emit(report, output, expand, fail_on, quiet)
    # The collector stays off for the whole command, not only the load: the checks and the report make
    # hundreds of thousands of objects (benchmarks/doctor_scale.py).
    with gc_paused():
        loaded = load_cluster(snapshot, kubeconfig, context, volcano_version=version, index_pods=True)
        unreadable = loaded.unreadable
        if {"nodes", "pods"} <= unreadable and "configmaps" in unreadable:
            note("could not read the cluster: " + "; ".join(p.message for p in loaded.problems[:3]))
            raise typer.Exit(int(ExitStatus.INCOMPLETE))
        report = diagnose(
            loaded.snapshot,
            now=datetime.now(UTC),
            volcano_version=version,
            source=loaded.source,
            unreadable=unreadable,
            read_problems=tuple(loaded.problems),
            scheduler_names=tuple(scheduler_name) or spec.DEFAULT_SCHEDULER_NAMES,
            privileged_severity=Severity((privileged or PrivilegedPolicy.ERROR).value),
            pre=pre,
        )
        _emit(report, output, expand, fail_on, quiet)


def _refuse_ignored_options(node: bool, **given: str | bool | None) -> None:
    """An option the chosen mode never reads is a usage error, not silently ignored: `--root` and
    `--device-config` belong to `--node`; `--kubeconfig`, `--context`, `--pre`, `--scheduler-name` and
    `--privileged` (which judge the cluster's pods) to a cluster check.
    (`--snapshot` with `--kubeconfig`/`--context`: `load_cluster`.)"""
    node_only, cluster_only = ("root", "device_config"), ("kubeconfig", "context", "pre", "scheduler_name",
                                                                  "privileged")
    unread = [name for name in (cluster_only if node else node_only) if given.get(name)]
    if unread:
        flags = " and ".join("--" + name.replace("_", "-") for name in unread)
        raise UsageError(f"{flags} {'is' if len(unread) == 1 else 'are'} not read "
                         f"{'with --node (it checks this machine)' if node else 'without --node'}")


def _node_report(snapshot: str | None, device_config: str | None, root: str, version: Version | None) -> DoctorReport:
    from vgpuctl.node_probe import collect
    from vgpuctl.snapshotfile import load_snapshot

    if not os.path.isdir(root):  # nothing under it would be found, and every check would say so as a finding
        raise UsageError(f"--root {root}: {'not a directory' if os.path.exists(root) else 'no such directory'}")
    cluster = build_snapshot([])
    if snapshot:
        data = load_snapshot(snapshot)
        cluster = build_snapshot(data.objects, data.server_version, volcano_version=version, kinds=data.kinds)
    return diagnose(cluster, now=datetime.now(UTC), volcano_version=version, source="node",
                    host=collect(root), device_config=load_device_config(device_config) if device_config else None)


def _emit(report: DoctorReport, output: OutputFormat, expand: bool, fail_on: FailOn, quiet: bool) -> NoReturn:
    for line in report.notes:
        note(line)
    out = stdout()
    if output is OutputFormat.TABLE:
        from vgpuctl.render.doctor import render_doctor  # rich: not for -o json (benchmarks/doctor_scale.py)

        render_doctor(report, make_console(out), expand=expand, problems_only=quiet)
    else:
        out.write(dump(report.to_dict(group=not expand), output))
    raise typer.Exit(int(report.exit_status(Severity(fail_on.value))))


def register(app: typer.Typer) -> None:
    app.command("doctor", epilog=EPILOG)(doctor_command)
