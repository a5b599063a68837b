"""The `nodes` table: one block per node, a row per device with bars for memory, cores and slots."""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.table import Table
from rich.text import Text

from vgpuctl.core.cluster.model import DeviceState
from vgpuctl.core.cluster.report import NodeReport
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.render.style import SEVERITY_MARK, SEVERITY_STYLE, plural

BAR = 10


def bar(used: int, total: int, unit: str = "") -> Text:
    if total <= 0:
        return Text("–", style="dim")
    ratio = min(max(used / total, 0.0), 1.0)
    filled = round(ratio * BAR)
    style = "red" if ratio >= 0.9 else ("yellow" if ratio >= 0.6 else "green")
    text = Text("█" * filled, style=style)
    text.append("░" * (BAR - filled), style="dim")
    text.append(f" {used}/{total}{unit}")
    return text


def _short(device_id: str) -> str:
    return device_id if len(device_id) <= 16 else f"{device_id[:8]}…{device_id[-4:]}"


def _type(device: DeviceState) -> str:
    return device.type.removeprefix("NVIDIA-").removeprefix("NVIDIA ")


def _counts(findings: Sequence[Finding]) -> str:
    """`2 errors, 1 warning` (infos named only when there is nothing worse)."""
    by = {s: sum(1 for f in findings if f.severity is s) for s in Severity}
    shown = [plural(by[s], s.value) for s in (Severity.ERROR, Severity.WARNING) if by[s]]
    return ", ".join(shown) or plural(by[Severity.INFO], "note")


def render_nodes(report: NodeReport, console: Console) -> None:
    for node in report.nodes:
        findings = report.findings_of(node)
        worst = report.worst(node)
        families = ", ".join(f.value for f in node.families) or "no device family"
        head = Text()
        if worst is not None:  # a flagged node is marked where the eye lands first
            head.append(f"{SEVERITY_MARK[worst]} ", SEVERITY_STYLE[worst])
        head.append_text(Text.assemble((node.name, "bold"), (f"  {families}", "cyan")))
        if node.mode:
            head.append(f" · mode {node.mode}")
        head.append(f" · {plural(len(node.devices), 'device')}", "dim")
        if worst is not None:
            head.append(f" · {_counts(findings)}", SEVERITY_STYLE[worst])
        console.print(head)
        if node.devices:
            table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1))
            for column in ("#", "DEVICE", "TYPE", "MODE", "HEALTH", "MEMORY (MiB)", "CORES", "SLOTS", "PODS"):
                table.add_column(column, no_wrap=column != "PODS")
            for d in node.devices:
                health = Text("ok", "green") if d.health else Text("unhealthy", "bold red")
                pods = Text(", ".join(d.pods) if d.pods else "–")
                if d.slices:
                    pods.append(f"  [{', '.join(d.slices)}]", "magenta")
                table.add_row(str(d.index), Text(_short(d.id)), Text(_type(d)), Text(d.mode), health,
                              bar(d.memory_used, d.memory_total), bar(d.cores_used, d.cores_total),
                              bar(d.slots_used, d.slots_total), pods)
            console.print(table)
        for finding in findings:
            console.print(Text.assemble(("  "), (f"{SEVERITY_MARK[finding.severity]} {finding.code}",
                                                  SEVERITY_STYLE[finding.severity]), ("  "), (finding.message)))
        console.print()
    for finding in report.problems:
        console.print(Text.assemble((f"{SEVERITY_MARK[finding.severity]} {finding.code}",
                                     SEVERITY_STYLE[finding.severity]), (f"  {finding.subject}: "),
                                    (finding.message)))
    devices = sum(len(n.devices) for n in report.nodes)
    summary = report.report
    console.print(Text(f"{plural(len(report.nodes), 'node')} · {plural(devices, 'device')} · "
                       f"{plural(summary.errors, 'error')} · {plural(summary.warnings, 'warning')}",
                       style="bold red" if summary.errors else ("yellow" if summary.warnings else "green")))
