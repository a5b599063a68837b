"""The `why` answer for people: verdict, grouped reasons with the numbers, closest nodes, what would help."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from vgpuctl.core.why.model import DeviceChoice, WhyReport
from vgpuctl.render.style import PASS_MARK, plural

MAX_FITS = 10


def _device(d: DeviceChoice) -> str:
    parts = [d.id]
    if d.slice:
        parts.append(d.slice)
    if d.template:
        parts.append(d.template)
    if d.memory is not None:
        parts.append(f"{d.memory} MiB")
    if d.cores is not None:
        parts.append(f"{d.cores} cores")
    return " ".join(parts)


def render_why(report: WhyReport, console: Console) -> None:
    families = ", ".join(f.value for f in report.families) or "no device family"
    console.print(Text.assemble((report.pod, "bold"), f"  {report.phase}", (f" · {families}", "cyan")))
    if report.bound_node is not None:
        console.print(Text(f"{PASS_MARK} bound to {report.bound_node}", style="green"))
    elif report.fits:
        console.print(Text(f"{PASS_MARK} fits {plural(len(report.fits), 'node')}", style="green"))
    elif report.unfit:
        checked = sum(g.count for g in report.unfit)
        console.print(Text(f"× fits no node ({plural(checked, 'node')} checked)", style="bold red"))
    if report.fits:
        table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1))
        table.add_column("NODE", no_wrap=True)
        table.add_column("DEVICES")
        for placement in report.fits[:MAX_FITS]:
            table.add_row(placement.node, "; ".join(_device(d) for d in placement.devices) or "–")
        console.print(table)
        if len(report.fits) > MAX_FITS:
            console.print(Text(f"… and {len(report.fits) - MAX_FITS} more (-o json lists all)", style="dim"))
    if report.unfit:
        console.print(Text("Why not" if not report.fits else "Nodes that do not fit", style="bold underline"))
        table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1))
        for column in ("NODES", "REASON", "EXAMPLE"):
            table.add_column(column, no_wrap=column != "EXAMPLE")
        for group in report.unfit:
            table.add_row(str(group.count), Text(group.reason.value, style="yellow"), group.message)
        console.print(table)
    if report.closest and not report.fits:
        console.print(Text("Closest nodes", style="bold underline"))
        for verdict in report.closest:
            reason = verdict.reason.value if verdict.reason else ""
            console.print(Text.assemble(f"  {verdict.node}  ", (reason, "yellow"), f"  {verdict.message}"))
    if report.hints:
        console.print(Text("What would make it fit" if not report.fits and report.unfit else "Notes",
                           style="bold underline"))
        for hint in report.hints:
            console.print(Text(f"  • {hint}"))
