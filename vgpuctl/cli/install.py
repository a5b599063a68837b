"""`vgpuctl install` / `uninstall`: set device sharing up on a Volcano cluster, or take it back, losing nothing.

Read what is there, plan (pure, `vgpuctl.core.install`), show the plan, write it (`vgpuctl.kube.writer`),
then run the scheduler-config, device-config and device-plugin doctor checks (and the webhook's) on a
fresh read. `--webhook` adds the admission webhook from the packaged manifests (`vgpuctl.manifests`,
the same files as deploy/base; with `--cluster-aware`, the overlay of deploy/overlays/cluster-aware built
on them) with certificates made at the edge (`cli/install_tls.py`): the core plans with PEM text. A dry run may
plan against a snapshot file instead of the cluster (`cli/install_source.py`).
Exit codes: 0 done, 1 the checks after applying found problems at or above --fail-on (after uninstall,
not the findings that only restate its result: `core.install.aftercheck`), 2 usage error or a
refused combination of modes, 3 could not complete (unreachable cluster, a failed write, a webhook that
did not become ready — rerun to finish).
"""

from __future__ import annotations

import re
import shlex
import sys
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from vgpuctl.cli.env import fail, guarded, make_console, note, stdout
from vgpuctl.cli.install_source import read_install_state
from vgpuctl.cli.install_tls import require_cryptography, webhook_tls
from vgpuctl.cli.kubeopts import cluster_errors, context_option, kubeconfig_option
from vgpuctl.cli.options import (
    FailOn,
    fail_on_option,
    output_option,
    read_volcano_version,
    snapshot_option,
    volcano_version_option,
)
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.doctor import diagnose
from vgpuctl.core.doctor.framework import Category
from vgpuctl.core.doctor.report import DoctorReport
from vgpuctl.core.findings import ExitStatus, Severity
from vgpuctl.core.install.aftercheck import after_uninstall
from vgpuctl.core.install.modes import InstallError, Mode, fatal_combination, parse_nodes
from vgpuctl.core.install.plan import InstallOptions, Plan, Ref, ref_of, replan_scheduler
from vgpuctl.core.install.removal import replan_scheduler_uninstall
from vgpuctl.core.install.webhook import (
    WebhookOptions,
    install_plan,
    layout,
    removal_plan,
    retired_refs,
    webhook_refs,
)
from vgpuctl.core.versions import Version
from vgpuctl.errors import UsageError
from vgpuctl.render import OutputFormat, dump
from vgpuctl.render.doctor import render_doctor
from vgpuctl.render.install import install_report, render_outcome, render_plan

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

EPILOG = """[bold]Examples[/bold]

  vgpuctl install --mode vgpu --dry-run              # show every change as a diff, write nothing
  vgpuctl install --mode vgpu --nodes gpu=on --policy binpack --weight 10
  vgpuctl install --mode vgpu --mode vnpu-hami --nodes 'accelerator in (huawei-Ascend910B3)'
  vgpuctl install --mode vnpu-hami --device-plugin-version vnpu-hami=v1.4.0
  vgpuctl install --mode vgpu --webhook              # and the admission webhook, certificates included
  vgpuctl install --mode vgpu --webhook --cluster-aware   # the webhook also judges against the nodes
  vgpuctl install --mode vgpu -o json                # a machine-readable report (schemas/install-report)
  vgpuctl uninstall --dry-run
  vgpuctl install --mode vgpu --dry-run --snapshot cluster.yaml   # what would it change in that cluster?
"""

AFTER_CATEGORIES = (Category.SCHEDULER_CONFIG, Category.DEVICE_CONFIG, Category.DEVICE_PLUGINS)
AFTER_FAIL_ON_HELP = "Lowest severity of the checks after applying that makes the exit code 1."
SNAPSHOT_HELP = ("With --dry-run: plan against a snapshot file (kubectl get … -o yaml, vgpuctl snapshot save) "
                 "instead of the cluster.")


_IMAGE_TAG = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$")  # the OCI distribution spec's tag grammar


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
        # An image tag: a release (v1.12.0) or a branch build (latest, master, main); the core checks it
        # against the compatibility matrix and refuses what the doctor would flag.
        if not _IMAGE_TAG.match(version):
            raise UsageError(f"--device-plugin-version {mode.value}={version}: not an image tag (e.g. v1.12.0, latest)")
    return chosen


def _variants() -> dict[bool, tuple[dict[str, Any], ...]]:
    """The webhook's manifests, plain (False) and cluster-aware (True): install writes one and takes back
    what only the other writes; uninstall takes back both."""
    from vgpuctl.core.kustomize import KustomizeError
    from vgpuctl.manifests import webhook_objects

    try:
        return {aware: tuple(webhook_objects(cluster_aware=aware)) for aware in (False, True)}
    except KustomizeError as exc:  # a broken package, never the user's input
        raise fail(f"the packaged webhook manifests do not build: {exc}", ExitStatus.INCOMPLETE) from None


def _every_object(variants: Mapping[bool, Sequence[dict[str, Any]]]) -> tuple[dict[str, Any], ...]:
    """Every object of every variant, once (the first variant's copy): what uninstall may take back."""
    seen: dict[Ref, dict[str, Any]] = {}
    for objects in variants.values():
        for obj in objects:
            seen.setdefault(ref_of(obj), obj)
    return tuple(seen.values())


# --- running a plan -------------------------------------------------------------------------------

Judge = Callable[[DoctorReport, ClusterSnapshot], DoctorReport]


def _as_is(report: DoctorReport, _snapshot: ClusterSnapshot) -> DoctorReport:
    return report


def _check_after(client: ApiClient, version: Version, categories: Sequence[Category],
                 judge: Judge = _as_is) -> DoctorReport:
    from vgpuctl.kube.reader import read_cluster

    read = read_cluster(client)
    snapshot = build_snapshot(read.data.objects, read.data.server_version, volcano_version=version)
    report = diagnose(snapshot, now=datetime.now(UTC), volcano_version=version, source="live",
                      read_problems=tuple(read.problems))
    return judge(DoctorReport(report.source, [r for r in report.results if r.check.category in categories],
                              report.versions, report.notes), snapshot)


def _progress(message: str) -> None:
    note(message)


def _run(the_plan: Plan, client: ApiClient | None, *, dry_run: bool, verb: str, rerun: str,
         replan: Callable[[Mapping[str, Any]], Any], output: OutputFormat, fail_on: FailOn,
         categories: Sequence[Category] = AFTER_CATEGORIES, wait: float = 180.0,
         judge: Judge = _as_is) -> NoReturn:
    from vgpuctl.kube.writer import apply_plan

    out = stdout()
    table = output is OutputFormat.TABLE
    console = make_console(out)
    if table:
        render_plan(the_plan, console, verb=verb, diffs=dry_run)
    if dry_run:
        if table:
            console.print()
            console.print("Dry run: nothing was written." if the_plan.writes else
                          "Dry run: nothing to change (a real run would make 0 writes).")
        else:
            out.write(dump(install_report(the_plan, verb=verb, dry_run=True), output))
        raise typer.Exit(int(ExitStatus.OK))
    assert client is not None  # only a dry run plans from a snapshot (`read_install_state`)
    with cluster_errors():
        result = apply_plan(client, the_plan, replan_scheduler=replan, wait=wait, progress=_progress)
    if table:
        for line in result.notes:
            console.print(f"  - {line}")
        render_outcome(the_plan, result.applied, result.failed, result.error, result.not_applied, console,
                       rerun=rerun)
    if result.failed is not None:
        if not table:
            out.write(dump(install_report(the_plan, verb=verb, dry_run=False, applied=result.applied,
                                          failed=result.failed, error=result.error, not_applied=result.not_applied,
                                          rerun=rerun, notes=result.notes), output))
        note(f"{verb} stopped at {result.failed.action.value} {result.failed.ref}: {result.error}; "
             f"fix the cause and rerun `{rerun}`")
        raise typer.Exit(int(ExitStatus.INCOMPLETE))
    with cluster_errors():
        report = _check_after(client, the_plan.volcano_version, categories, judge)
    if table:
        console.print()
        render_doctor(report, console)
    else:
        out.write(dump(install_report(the_plan, verb=verb, dry_run=False, applied=result.applied, notes=result.notes,
                                      doctor=report), output))
    raise typer.Exit(int(report.exit_status(Severity(fail_on.value))))


def _rerun_command(words: Sequence[str]) -> str:
    """The command line to finish the job: the one the user typed, or (when run some other way, e.g. by a
    test runner) the essential options again."""
    program = Path(sys.argv[0]).name if sys.argv else ""
    if program in ("vgpuctl", "kubectl-vgpu") and len(sys.argv) > 1:
        head = "kubectl vgpu" if program == "kubectl-vgpu" else "vgpuctl"
        return " ".join([head, *(shlex.quote(a) for a in sys.argv[1:])])
    return " ".join(["vgpuctl", *(shlex.quote(w) for w in words)])


def _options_again(command: str, **options: Any) -> list[str]:
    words = [command]
    for name, value in options.items():
        flag = "--" + name.replace("_", "-")
        if value is True:
            words.append(flag)
        elif isinstance(value, (list, tuple)):
            for item in value:
                words += [flag, str(getattr(item, "value", item))]
        elif value not in (None, False):
            words += [flag, str(value)]
    return words


@guarded
def install_command(
    mode: list[Mode] = typer.Option(..., "--mode", metavar="MODE",
                                    help=f"Device family to turn on (repeatable): {', '.join(m.value for m in Mode)}."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and a diff per object; write nothing."),
    volcano_version: str | None = volcano_version_option(
        help="Override the Volcano version read from the vc-scheduler image."),
    device_plugin_version: list[str] = typer.Option(
        [], "--device-plugin-version", metavar="[MODE=]V",
        help="Device plugin image tag (default: the one matching the Volcano version); MODE= for one plugin."),
    nodes: str | None = typer.Option(None, "--nodes", metavar="SELECTOR",
                                     help="Label selector of the device nodes the plugins run on "
                                          "(vnpu-hami: these nodes are labelled ascend=on)."),
    policy: str | None = typer.Option(None, "--policy", metavar="binpack|spread",
                                      help="The deviceshare plugin's SchedulePolicy (device order inside a node)."),
    weight: int | None = typer.Option(None, "--weight", metavar="N", min=1,
                                      help="The deviceshare plugin's ScheduleWeight (default 10 when unset or 0)."),
    no_restart: bool = typer.Option(False, "--no-restart",
                                    help="Do not restart the scheduler after changing device types or the device "
                                         "ConfigMap (then restart it yourself)."),
    webhook: bool = typer.Option(False, "--webhook",
                                 help="Also deploy the admission webhook (deploy/base), with certificates made by "
                                      "vgpuctl; its webhook configurations are applied once its pods are ready."),
    cluster_aware: bool = typer.Option(False, "--cluster-aware",
                                       help="With --webhook: deploy it from the cluster-aware overlay (it watches "
                                            "nodes, pods and DRA claims through a read-only ClusterRole). Rerun "
                                            "without it to go back."),
    webhook_image: str | None = typer.Option(None, "--webhook-image", metavar="IMAGE",
                                             help="With --webhook: the webhook's image (default: the packaged one)."),
    webhook_timeout: float = typer.Option(180.0, "--webhook-timeout", metavar="SECONDS", min=0,
                                          help="With --webhook: how long to wait for the webhook's pods to be ready."),
    output: OutputFormat = output_option(),
    fail_on: FailOn = fail_on_option(help=AFTER_FAIL_ON_HELP),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
    snapshot: str | None = snapshot_option(help=SNAPSHOT_HELP),
) -> None:
    """Turn GPU/NPU sharing on: scheduler config, device ConfigMap, device plugins — nothing else touched."""
    modes = tuple(dict.fromkeys(mode))
    problem = fatal_combination(m.family for m in modes)
    if problem:
        raise UsageError(f"refusing --mode {' --mode '.join(m.value for m in modes)}: {problem}")
    if policy is not None and policy not in ("binpack", "spread"):
        raise UsageError(f"--policy {policy}: expected binpack or spread")
    if not webhook and (webhook_image is not None):
        raise UsageError("--webhook-image needs --webhook")
    if not webhook and cluster_aware:
        raise UsageError("--cluster-aware needs --webhook")
    version = read_volcano_version(volcano_version)
    try:
        if nodes is not None:
            parse_nodes(nodes)
    except InstallError as exc:
        raise UsageError(str(exc)) from None
    options = InstallOptions(modes, version, _plugin_versions(device_plugin_version, modes), nodes, policy, weight,
                             restart=not no_restart)
    manifests: tuple[dict[str, Any], ...] = ()
    variants: dict[bool, tuple[dict[str, Any], ...]] = {}
    if webhook:
        require_cryptography()
        variants = _variants()
        manifests = variants[cluster_aware]
    now = datetime.now(UTC)
    state, client = read_install_state(snapshot, kubeconfig, context, dry_run=dry_run, verb="install", modes=modes,
                                       extra=webhook_refs(_every_object(variants)) if variants else ())
    try:
        webhook_options = None
        if manifests:
            tls = webhook_tls(state, layout(manifests), now)
            webhook_options = WebhookOptions(manifests, tls, webhook_image,
                                             retired=retired_refs(manifests, tuple(variants.values())))
        the_plan = install_plan(state, options, webhook_options, now=now)
    except InstallError as exc:
        raise fail(str(exc), ExitStatus.INCOMPLETE) from None
    categories = (*AFTER_CATEGORIES, Category.WEBHOOK) if webhook else AFTER_CATEGORIES
    rerun = _rerun_command(_options_again("install", mode=modes, nodes=nodes, webhook=webhook,
                                          cluster_aware=cluster_aware, webhook_image=webhook_image,
                                          no_restart=no_restart, kubeconfig=kubeconfig, context=context))
    _run(the_plan, client, dry_run=dry_run, verb="install", rerun=rerun,
         replan=lambda cm: replan_scheduler(cm, options, the_plan.volcano_version), output=output, fail_on=fail_on,
         categories=categories, wait=webhook_timeout)


@guarded
def uninstall_command(
    dry_run: bool = typer.Option(False, "--dry-run", help="Print the plan and a diff per object; write nothing."),
    no_restart: bool = typer.Option(False, "--no-restart", help="Do not restart the scheduler afterwards."),
    output: OutputFormat = output_option(),
    fail_on: FailOn = fail_on_option(help=AFTER_FAIL_ON_HELP),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
    snapshot: str | None = snapshot_option(help=SNAPSHOT_HELP),
) -> None:
    """Take back what install did: its scheduler edits undone, the objects it created deleted, yours kept.

    The webhook's objects go too: its configurations first, its cluster-aware ClusterRole and binding included."""
    manifests = _every_object(_variants())
    try:
        lay = layout(manifests)
    except InstallError as exc:
        raise fail(str(exc), ExitStatus.INCOMPLETE) from None
    state, client = read_install_state(snapshot, kubeconfig, context, dry_run=dry_run, verb="uninstall",
                                       extra=webhook_refs(manifests), inventory=(lay.namespace,))
    try:
        the_plan = removal_plan(state, manifests, now=datetime.now(UTC), restart=not no_restart)
    except InstallError as exc:
        raise fail(str(exc), ExitStatus.INCOMPLETE) from None
    rerun = _rerun_command(_options_again("uninstall", no_restart=no_restart, kubeconfig=kubeconfig,
                                          context=context))
    _run(the_plan, client, dry_run=dry_run, verb="uninstall", rerun=rerun,
         replan=replan_scheduler_uninstall, output=output, fail_on=fail_on, judge=after_uninstall)


def register(app: typer.Typer) -> None:
    app.command("install", epilog=EPILOG)(install_command)
    app.command("uninstall")(uninstall_command)
