"""`vgpuctl install` / `uninstall`: set device sharing up on a Volcano cluster, or take it back, losing nothing.

Read what is there, plan (pure, `vgpuctl.core.install`), show the plan, write it (`vgpuctl.kube.writer`),
then run the scheduler-config, device-config and device-plugin doctor checks on a fresh read.
Exit codes: 0 done, 1 the checks after applying found errors, 2 usage error or a refused combination of
modes, 3 could not complete (unreachable cluster, a failed write — rerun to finish).
"""

from __future__ import annotations

import shlex
import sys
from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from vgpuctl.cli.env import fail, guarded, make_console, stdout
from vgpuctl.cli.kubeopts import cluster_errors, connect, context_option, kubeconfig_option
from vgpuctl.core.cluster import build_snapshot
from vgpuctl.core.doctor import diagnose
from vgpuctl.core.doctor.framework import Category
from vgpuctl.core.doctor.report import DoctorReport
from vgpuctl.core.findings import ExitStatus, Severity
from vgpuctl.core.install import InstallError, InstallOptions, Mode, Plan, plan, plan_removal
from vgpuctl.core.install.modes import fatal_combination
from vgpuctl.core.install.plan import replan_scheduler, replan_scheduler_uninstall
from vgpuctl.core.install.selector import parse_selector
from vgpuctl.core.versions import Version, VersionError, parse_version
from vgpuctl.render.doctor import render_doctor
from vgpuctl.render.install import render_outcome, render_plan
from vgpuctl.sources import UsageError

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

EPILOG = """[bold]Examples[/bold]

  vgpuctl install --mode vgpu --dry-run              # show every change as a diff, write nothing
  vgpuctl install --mode vgpu --nodes gpu=on --policy binpack --weight 10
  vgpuctl install --mode vgpu --mode vnpu-hami --nodes 'accelerator in (huawei-Ascend910B3)'
  vgpuctl install --mode vnpu-hami --device-plugin-version vnpu-hami=v1.4.0
  vgpuctl uninstall --dry-run
"""

AFTER_CATEGORIES = (Category.SCHEDULER_CONFIG, Category.DEVICE_CONFIG, Category.DEVICE_PLUGINS)


def _plugin_versions(values: list[str], modes: tuple[Mode, ...]) -> dict[Mode, str]:
    """`V` (every rendered plugin) or `MODE=V` (one), repeatable."""
    chosen: dict[Mode, str] = {}
    for value in values:
        if "=" in value:
            name, version = value.split("=", 1)
            try:
                mode = Mode(name.strip())
            except ValueError:
                raise UsageError(f"--device-plugin-version {value}: unknown mode {name!r}") from None
            chosen[mode] = version.strip()
        else:
            chosen.update(dict.fromkeys(modes, value.strip()))
    for mode, version in chosen.items():
        try:
            parse_version(version)
        except VersionError as exc:
            raise UsageError(f"--device-plugin-version {mode.value}={version}: {exc}") from None
    return chosen


def _check_after(client: ApiClient, version: Version) -> DoctorReport:
    from vgpuctl.kube.reader import read_cluster

    read = read_cluster(client)
    snapshot = build_snapshot(read.data.objects, read.data.server_version, volcano_version=version)
    report = diagnose(snapshot, now=datetime.now(timezone.utc), volcano_version=version, source="live",
                      read_problems=tuple(read.problems))
    return DoctorReport(report.source, [r for r in report.results if r.check.category in AFTER_CATEGORIES],
                        report.versions, report.notes)


def _run(the_plan: Plan, client: ApiClient, *, dry_run: bool, verb: str, rerun: str, replan: Any,
         version: Version) -> NoReturn:
    from vgpuctl.kube.writer import apply_plan

    out = stdout()
    console = make_console(out)
    render_plan(the_plan, console, verb=verb, diffs=dry_run)
    if dry_run:
        console.print()
        console.print("Dry run: nothing was written." if the_plan.writes else
                      "Dry run: nothing to change (a real run would make 0 writes).")
        raise typer.Exit(int(ExitStatus.OK))
    with cluster_errors():
        result = apply_plan(client, the_plan, replan_scheduler=replan)
    for note in result.notes:
        console.print(f"  - {note}")
    render_outcome(the_plan, result.applied, result.failed, result.error, result.not_applied, console, rerun=rerun)
    if not result.ok:
        raise typer.Exit(int(ExitStatus.INCOMPLETE))
    with cluster_errors():
        report = _check_after(client, version)
    console.print()
    render_doctor(report, console)
    raise typer.Exit(int(report.exit_status(Severity.ERROR)))


@guarded
def install_command(
    mode: list[Mode] = typer.Option(..., "--mode", help="Device family to turn on (repeatable)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and a diff per object; write nothing."),
    volcano_version: str | None = typer.Option(None, "--volcano-version", metavar="V",
                                               help="Override the Volcano version read from the vc-scheduler image."),
    device_plugin_version: list[str] = typer.Option(
        [], "--device-plugin-version", metavar="[MODE=]V",
        help="Device plugin image tag (default: the one matching the Volcano version); MODE= for one plugin."),
    nodes: str | None = typer.Option(None, "--nodes", metavar="SELECTOR",
                                     help="Label selector of the device nodes the plugins run on "
                                          "(vnpu-hami: these nodes are labelled ascend=on)."),
    policy: str | None = typer.Option(None, "--policy", metavar="binpack|spread",
                                      help="deviceshare.SchedulePolicy (device order inside a node)."),
    weight: int | None = typer.Option(None, "--weight", metavar="N", min=1,
                                      help="deviceshare.ScheduleWeight (default 10 when unset or 0)."),
    no_restart: bool = typer.Option(False, "--no-restart",
                                    help="Do not restart the scheduler after changing device types or the device "
                                         "ConfigMap (then restart it yourself)."),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
) -> None:
    """Turn GPU/NPU sharing on: scheduler config, device ConfigMap, device plugins — nothing else touched."""
    modes = tuple(dict.fromkeys(mode))
    problem = fatal_combination(m.family for m in modes)
    if problem:
        raise UsageError(f"refusing --mode {' --mode '.join(m.value for m in modes)}: {problem}")
    if policy is not None and policy not in ("binpack", "spread"):
        raise UsageError(f"--policy {policy}: expected binpack or spread")
    try:
        version = parse_version(volcano_version) if volcano_version else None
        if nodes is not None:
            parse_selector(nodes)
    except VersionError as exc:
        raise UsageError(f"--volcano-version: {exc}") from None
    except InstallError as exc:
        raise UsageError(str(exc)) from None
    options = InstallOptions(modes, version, _plugin_versions(device_plugin_version, modes), nodes, policy, weight,
                             restart=not no_restart)
    from vgpuctl.kube.writer import read_state

    with cluster_errors():
        client = connect(kubeconfig, context)
        state = read_state(client, modes)
    try:
        the_plan = plan(state, options, now=datetime.now(timezone.utc))
    except InstallError as exc:
        raise fail(str(exc), ExitStatus.INCOMPLETE) from None
    rerun = "vgpuctl " + " ".join(shlex.quote(a) for a in sys.argv[1:]) if len(sys.argv) > 1 else "vgpuctl install"
    _run(the_plan, client, dry_run=dry_run, verb="install", rerun=rerun,
         replan=lambda cm: replan_scheduler(cm, options, the_plan.volcano_version), version=the_plan.volcano_version)


@guarded
def uninstall_command(
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and a diff per object; write nothing."),
    no_restart: bool = typer.Option(False, "--no-restart", help="Do not restart the scheduler afterwards."),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
) -> None:
    """Take back what install did: scheduler edits undone, vgpuctl's objects deleted, yours left alone."""
    from vgpuctl.kube.writer import read_state

    with cluster_errors():
        client = connect(kubeconfig, context)
        state = read_state(client)
    try:
        the_plan = plan_removal(state, now=datetime.now(timezone.utc), restart=not no_restart)
    except InstallError as exc:
        raise fail(str(exc), ExitStatus.INCOMPLETE) from None
    _run(the_plan, client, dry_run=dry_run, verb="uninstall", rerun="vgpuctl uninstall",
         replan=replan_scheduler_uninstall, version=the_plan.volcano_version)


def register(app: typer.Typer) -> None:
    app.command("install", epilog=EPILOG)(install_command)
    app.command("uninstall")(uninstall_command)
