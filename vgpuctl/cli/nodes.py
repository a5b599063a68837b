"""`vgpuctl nodes`: per-device state — memory, cores, slots, pods, health and mode — per node."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import typer

from vgpuctl.cli.clustersource import load_cluster
from vgpuctl.cli.env import fail, guarded, make_console, note, stdout
from vgpuctl.cli.kubeopts import context_option, kubeconfig_option
from vgpuctl.cli.options import (
    FailOn,
    fail_on_option,
    output_option,
    read_volcano_version,
    snapshot_option,
    volcano_version_option,
)
from vgpuctl.core.cluster.report import NodeReport, select_nodes, shared_stacks
from vgpuctl.core.doctor import judge_nodes
from vgpuctl.core.findings import ExitStatus, Severity
from vgpuctl.core.selector import SelectorError, parse_selector
from vgpuctl.core.spec import Family
from vgpuctl.errors import UsageError
from vgpuctl.render import OutputFormat, dump
from vgpuctl.snapshotfile import gc_paused

EPILOG = """[bold]Examples[/bold]

  vgpuctl nodes                               # every device node of the current kubeconfig context
  vgpuctl nodes gpu-node-1 gpu-node-2 -o json
  vgpuctl nodes --snapshot cluster.yaml --family vgpu -l topology.kubernetes.io/zone=zone-a
"""


@guarded
def nodes_command(
    names: list[str] = typer.Argument(None, metavar="[NAME]...", help="Only these nodes."),
    snapshot: str | None = snapshot_option(help="Read a snapshot file (kubectl get … -o yaml) instead of the cluster."),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
    family: list[Family] = typer.Option([], "--family", help="Only nodes with this device family (repeatable)."),
    selector: str | None = typer.Option(None, "-l", "--selector", metavar="SELECTOR",
                                        help="Label selector, e.g. gpu=on,zone!=b or 'zone in (a,b)'."),
    volcano_version: str | None = volcano_version_option(help="Volcano version (decides the register format rules)."),
    output: OutputFormat = output_option(),
    fail_on: FailOn = fail_on_option(),
) -> None:
    """Show every GPU/NPU device per node: memory, cores, slots, pods, health and mode."""
    try:
        requirements = parse_selector(selector) if selector else None
    except SelectorError as exc:
        raise UsageError(str(exc)) from None
    version = read_volcano_version(volcano_version)
    # The collector stays off for the whole command, not only the load: the model, the verdicts and the
    # report are hundreds of thousands of new objects, and with it on, collections walking them were a
    # fifth of the time (benchmarks/nodes_scale.py).
    with gc_paused():
        # The node checks never ask which pods ask for devices: that part of the index is left out
        # (benchmarks/nodes_scale.py).
        loaded = load_cluster(snapshot, kubeconfig, context, volcano_version=version, index_pods=True,
                              index_device_asks=False)
        wanted = frozenset(names or ())
        # The doctor's node checks, once: each node shows the doctor's verdict on it. A node check judges each
        # node on its own (with the cluster-wide objects), so named nodes are judged alone, without decoding the
        # rest; otherwise every node is, and a flagged node without devices is listed too.
        scope = replace(loaded.snapshot, nodes=[n for n in loaded.snapshot.nodes if n.name in wanted]) \
            if wanted else loaded.snapshot
        verdicts = judge_nodes(scope, now=datetime.now(UTC), volcano_version=version, source=loaded.source,
                               unreadable=loaded.unreadable,
                               read_problems=tuple(loaded.problems))
        chosen, missing = select_nodes(loaded.snapshot, names=tuple(names or ()), families=tuple(family),
                                       selector=requirements, flagged=verdicts.findings.keys())
        if missing and "nodes" in loaded.unreadable:  # not "no such node": the list itself failed
            raise fail("cannot look up " + ", ".join(missing) + ": " + "; ".join(
                p.message for p in loaded.problems if p.subject == "list/nodes"), ExitStatus.INCOMPLETE)
        if missing:
            raise UsageError(f"no such node: {', '.join(missing)}")
        for line in verdicts.notes:  # what the verdicts assume, said as `doctor` says it
            note(line)
        for broken in verdicts.broken_checks:
            note(f"doctor check {broken.check.id} ({broken.check.code}): {broken.reason}")
        report = NodeReport(chosen, loaded.source, [*loaded.problems, *loaded.snapshot.findings], verdicts.findings,
                            shared_stacks(scope, chosen))
        out = stdout()
        if output is OutputFormat.TABLE:
            from vgpuctl.render.nodes import render_nodes  # rich: not for -o json (benchmarks/nodes_scale.py)

            render_nodes(report, make_console(out))
        else:
            out.write(dump(report.to_dict(), output))
        status = report.report.exit_status(Severity(fail_on.value))
        raise typer.Exit(int(max(status, ExitStatus.FINDINGS) if verdicts.broken_checks else status))


def register(app: typer.Typer) -> None:
    app.command("nodes", epilog=EPILOG)(nodes_command)
