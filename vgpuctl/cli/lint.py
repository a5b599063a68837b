"""`vgpuctl lint`: check manifests offline with the same rules the admission webhook applies."""

from __future__ import annotations

from dataclasses import replace

import typer

from vgpuctl.cli.env import guarded, make_console, stderr, stdout
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
from vgpuctl.core.facts import BUILTIN_DEVICE_CONFIG_SUMMARY, ClusterFacts
from vgpuctl.core.findings import Severity
from vgpuctl.core.lintreport import lint
from vgpuctl.core.versions import Version
from vgpuctl.errors import UsageError
from vgpuctl.render import OutputFormat, dump
from vgpuctl.render.lint import render_lint
from vgpuctl.sources import INPUT_LIMIT, load_device_config, read_manifests

EPILOG = """[bold]Examples[/bold]

  vgpuctl lint examples/
  vgpuctl lint job.yaml --device-config volcano-vgpu-device-config.yaml -o json
  kubectl get pods -A -o yaml | vgpuctl lint - --fail-on warning
  vgpuctl lint deploy/ --snapshot cluster.yaml    # cluster-aware: GPU counts, memories, types
"""


@guarded
def lint_command(
    paths: list[str] = typer.Argument(
        ..., metavar="PATH...", help=f"Files, directories (recursive) or - for stdin; each {INPUT_LIMIT.help()}."),
    output: OutputFormat = output_option(),
    snapshot: str | None = snapshot_option(
        help="A cluster snapshot (kubectl get nodes,pods,configmaps,… -A -o yaml; see doctor --help): "
        "enables the cluster-aware rules (GPU counts, memories, types, UUIDs, NPU capacities)."),
    device_config: str | None = typer.Option(
        None, "--device-config", metavar="FILE",
        help="Device ConfigMap or device-config.yaml payload (default: the snapshot's, else Volcano's built-in "
        f"config, said on stderr); {INPUT_LIMIT.help()}."),
    volcano_version: str | None = volcano_version_option(),
    scheduler_name: list[str] = typer.Option(
        [], "--scheduler-name", metavar="NAME",
        help="A Volcano scheduler name (repeatable; default: volcano)."),
    fail_on: FailOn = fail_on_option(),
    privileged: PrivilegedPolicy = typer.Option(
        PrivilegedPolicy.ERROR, "--privileged", help="Severity of VGP016 (privileged container with a device)."),
    no_defaults: bool = typer.Option(
        False, "--no-defaults", help="Judge as the validating webhook alone would: no mutating defaults."),
    quiet: bool = typer.Option(False, "-q", "--quiet", help="Table output: hide objects without findings."),
) -> None:
    """Check Pods, Volcano Jobs and workload pod templates for GPU/NPU sharing mistakes."""
    version = read_volcano_version(volcano_version)
    names = tuple(scheduler_name) or spec.DEFAULT_SCHEDULER_NAMES
    config = load_device_config(device_config) if device_config else None
    if snapshot:
        facts = _snapshot_facts(snapshot, version, names, Severity(privileged.value))
        if config is not None:
            facts = replace(facts, device_config=config)
    else:
        facts = ClusterFacts(device_config=config, volcano_version=version, scheduler_names=names,
                             privileged_severity=Severity(privileged.value))
    documents = read_manifests(paths)
    facts = _with_input_dra(facts, [d.obj for d in documents])
    report = lint(documents, facts, apply_defaults=not no_defaults)
    empty = report.nothing_to_check
    if empty is not None:
        named = ", ".join("<stdin>" if path == "-" else path for path in paths)
        raise UsageError(f"no Kubernetes object to check in {named}: {empty}")
    if not facts.device_config_given:
        stderr().write(f"note: no --device-config: judging against Volcano's built-in device config "
                       f"({BUILTIN_DEVICE_CONFIG_SUMMARY}); pass --device-config or --snapshot for your own\n")
    out = stdout()
    if output is OutputFormat.TABLE:
        render_lint(report, make_console(out), quiet=quiet)
    else:
        out.write(dump(report.to_dict(), output))
    raise typer.Exit(int(report.exit_status(Severity(fail_on.value))))


def _snapshot_facts(path: str, version: Version | None, names: tuple[str, ...], privileged: Severity) -> ClusterFacts:
    from vgpuctl.core.cluster.build import build_snapshot
    from vgpuctl.core.cluster.rule_facts import facts_from_snapshot
    from vgpuctl.snapshotfile import load_snapshot

    data = load_snapshot(path)
    snapshot = build_snapshot(data.objects, data.server_version, volcano_version=version)
    return facts_from_snapshot(snapshot, scheduler_names=names, volcano_version=version,
                               privileged_severity=privileged)


def _with_input_dra(facts: ClusterFacts, objects: list[object]) -> ClusterFacts:
    """The facts with the DeviceClasses, ResourceClaims and ResourceClaimTemplates of the input itself (VGP020)."""
    from vgpuctl.core.cluster.dra import dra_facts_from_objects, dra_objects

    found = dra_facts_from_objects(dra_objects(objects))
    if found is None:
        return facts
    return replace(facts, dra=facts.dra.merged(found) if facts.dra is not None else found)


def register(app: typer.Typer) -> None:
    app.command("lint", epilog=EPILOG)(lint_command)
