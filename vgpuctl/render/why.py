"""The `why` answer for people: verdict, grouped reasons with the numbers, closest nodes, what would help."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from vgpuctl.core.findings import Finding
from vgpuctl.core.why.gangmodel import GangReport, GangStop
from vgpuctl.core.why.model import ClusterCause, DeviceChoice, Placement, UnfitGroup, WhyReport
from vgpuctl.render.style import PASS_MARK, SEVERITY_MARK, SEVERITY_STYLE, plural, text

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
    console.print(text((report.pod, "bold"), f"  {report.phase}", (f" · {families}", "cyan")))
    if report.bound_node is not None:
        console.print(text(f"{PASS_MARK} bound to {report.bound_node}", style="green"))
    elif report.rejected:
        console.print(Text("× rejected by the pod rules: Volcano never places this request as written",
                           style="bold red"))
    elif report.cause is not None:
        _cause(report.cause, console)
    elif report.gang is not None:
        pass  # the gang section says it
    elif report.fits:
        console.print(Text(f"{PASS_MARK} fits {plural(len(report.fits), 'node')}", style="green"))
    elif report.unfit:
        checked = sum(g.count for g in report.unfit)
        console.print(Text(f"× fits no node ({plural(checked, 'node')} checked)", style="bold red"))
    if report.findings:
        _findings(report.findings, console)
    if report.gang is not None:
        _gang(report.gang, console)
        _notes(report.notes, console)
        return
    if report.fits:
        table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1))
        table.add_column("NODE", no_wrap=True)
        table.add_column("DEVICES")
        for placement in report.fits[:MAX_FITS]:
            table.add_row(_node(placement), text("; ".join(_device(d) for d in placement.devices) or "–"))
        console.print(table)
        if len(report.fits) > MAX_FITS:
            console.print(Text(f"… and {len(report.fits) - MAX_FITS} more (-o json lists all)", style="dim"))
        _shared(report.fits[:MAX_FITS], console)
    if report.unfit:
        console.print(Text("Why not" if not report.fits else "Nodes that do not fit", style="bold underline"))
        table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1))
        for column in ("NODES", "REASON", "EXAMPLE"):
            table.add_column(column, no_wrap=column != "EXAMPLE")
        for group in report.unfit:
            table.add_row(str(group.count), Text(group.reason.value, style="yellow"), text(group.message))
        console.print(table)
    if report.closest and not report.fits:
        console.print(Text("Closest nodes", style="bold underline"))
        for verdict in report.closest:
            reason = verdict.reason.value if verdict.reason else ""
            console.print(text(f"  {verdict.node}  ", (reason, "yellow"), f"  {verdict.message}"))
    heading = ""
    if report.hints:
        heading = "What would make it fit" if not report.fits and report.unfit else "Notes"
        console.print(Text(heading, style="bold underline"))
        for hint in report.hints:
            console.print(text(f"  • {hint}"))
    _notes(report.notes, console, continued=heading == "Notes")


def _node(placement: Placement) -> Text:
    """The node of a placement, with the codes of its stack findings beside it (`Placement.stacks`)."""
    if not placement.stacks:
        return text(placement.node)
    worst = placement.stacks[0].severity  # most severe first
    codes = ",".join(dict.fromkeys(f.code for f in placement.stacks))
    return text(placement.node, (f" {SEVERITY_MARK[worst]} {codes}", SEVERITY_STYLE[worst]))


def _shared(placements: list[Placement], console: Console) -> None:
    """Each placement's node whose GPUs another stack also hands out, once, with the doctor's findings."""
    seen: dict[str, Placement] = {}
    for p in placements:
        if p.stacks and p.node not in seen:
            seen[p.node] = p
    if not seen:
        return
    console.print(text("GPUs another stack also hands out (Volcano places the pod there; the device plugin or "
                       "kubelet may then give the same GPU to a second pod)", style="bold underline"))
    for node, p in seen.items():
        for f in p.stacks:
            console.print(text(f"  {node}  ", (f"{SEVERITY_MARK[f.severity]} {f.code}", SEVERITY_STYLE[f.severity]),
                               f"  {f.message} (vgpuctl explain {f.code})"))


def _cause(cause: ClusterCause, console: Console) -> None:
    """A cause no node gets past: once, at the top, with its fix (no node was simulated)."""
    code = f"[{cause.code}] " if cause.code else ""
    console.print(text("× fits no node: ", code, cause.message, style="bold red"))
    explain = f" (vgpuctl explain {cause.code})" if cause.code else ""
    console.print(text(f"  fix: {cause.hint}{explain}"))


def _notes(notes: list[str], console: Console, *, continued: bool = False) -> None:
    """What the replay assumed or did not replay (`WhyReport.notes`), under "Notes" (continuing one if it is open)."""
    if not notes:
        return
    if not continued:
        console.print(Text("Notes", style="bold underline"))
    for note in notes:
        console.print(text(f"  • {note}", style="dim"))


def _findings(findings: list[Finding], console: Console) -> None:
    console.print(Text("Pod rules (as lint and the webhook judge it)", style="bold underline"))
    for f in findings:
        console.print(text("  ", (f"{SEVERITY_MARK[f.severity]} {f.code}", SEVERITY_STYLE[f.severity]),
                           f"  {f.message}"))
        if f.hint:
            console.print(text(f"      hint: {f.hint} (vgpuctl explain {f.code})", style="dim"))


def _gang(gang: GangReport, console: Console) -> None:
    """A workload's what-if: how many replicas fit at once, where each went, the first that did not — and for a
    Volcano Job of several tasks, each task against its minimum and what stops the Job."""
    what = f"{gang.kind} {gang.name}"
    need = f"minAvailable {gang.min_available}: {gang.min_source}"
    line = f"{gang.fit} of {plural(gang.replicas, 'replica')} fit at once; {need}"
    if gang.starts:
        console.print(text(f"{PASS_MARK} {what}: {line}", style="green"))
    else:
        console.print(text(f"× {what}: {line} — the gang never starts", style="bold red"))
    several = len(gang.tasks) > 1
    if several:
        _tasks(gang, console)
    if gang.placed:
        table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1))
        for column in ("REPLICA", "NODE", "DEVICES"):
            table.add_column(column, no_wrap=column != "DEVICES")
        for replica, placement in gang.placed:
            table.add_row(text(replica.name), _node(placement),
                          text("; ".join(_device(d) for d in placement.devices) or "–"))
        console.print(table)
        _shared([p for _, p in gang.placed], console)
    if several and gang.stop is not None:
        _stopped(gang.stop, console)
        return
    if gang.first_failure is None:
        return
    rest = len(gang.failed) - 1
    more = f" ({rest} more replica{'s' if rest != 1 else ''} did not fit either)" if rest > 0 else ""
    console.print(text(f"First replica that does not fit: {gang.first_failure.name}{more}", style="bold underline"))
    _unfit(gang.first_failure_unfit, console)
    for hint in gang.first_failure_hints:
        console.print(text(f"  • {hint}"))


def _unfit(groups: list[UnfitGroup] | tuple[UnfitGroup, ...], console: Console) -> None:
    table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1))
    for column in ("NODES", "REASON", "EXAMPLE"):
        table.add_column(column, no_wrap=column != "EXAMPLE")
    for group in groups:
        table.add_row(str(group.count), Text(group.reason.value, style="yellow"), text(group.message))
    console.print(table)


def _tasks(gang: GangReport, console: Console) -> None:
    """Each task of the Job: its replicas, its minimum, how many fit, its priority and devices."""
    counted = ("each task's minAvailable counts" if gang.task_minimums else
               "only the Job's minAvailable counts (it is below the sum of the tasks')")
    console.print(text(f"Tasks ({counted})", style="bold underline"))
    table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1))
    for column in ("TASK", "REPLICAS", "MIN", "FIT", "PRIORITY", "DEVICES"):
        table.add_column(column, no_wrap=column != "DEVICES")
    for task in gang.tasks:
        fit = gang.fit_of(task.name)
        short = fit < task.min_available if gang.task_minimums else fit < task.replicas
        devices = ", ".join(f.value for f in task.families) or "–"
        if task.best_effort:
            devices += " (requests nothing: placed by backfill)"
        table.add_row(text(task.name), str(task.replicas), str(task.min_available),
                      Text(str(fit), style="red" if short else "green"), str(task.priority), text(devices))
    console.print(table)


def _stopped(stop: GangStop, console: Console) -> None:
    """What keeps the Job from starting: the task, the rule, and where and why its replica fits no node."""
    console.print(text(f"What stops the Job ({stop.rule})", style="bold underline"))
    console.print(text(f"  {stop.message}"))
    if stop.unfit:
        _unfit(stop.unfit, console)
    for hint in stop.hints:
        console.print(text(f"  • {hint}"))
