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
#: Columns that may wrap (folding a long name over lines) when the table is too wide, like `kubectl get`, in
#: the order they start to: the pods first, the mode (short, and read at a glance) last.
NAMES = ("PODS", "TYPE", "DEVICE", "MODE")
NAME_ROOM = 8  # the least width a wrapping column is given
GAP = 2  # the space between two columns (padding (0, 1))


def _style(used: int, total: int) -> str:
    ratio = min(max(used / total, 0.0), 1.0)
    return "red" if ratio >= 0.9 else ("yellow" if ratio >= 0.6 else "green")


def bar(used: int, total: int, unit: str = "") -> Text:
    if total <= 0:
        return Text("–", style="dim")
    filled = round(min(max(used / total, 0.0), 1.0) * BAR)
    text = Text("█" * filled, style=_style(used, total))
    text.append("░" * (BAR - filled), style="dim")
    text.append(f" {used}/{total}{unit}")
    return text


def figure(used: int, total: int) -> Text:
    """`used/total` without the bar, coloured as the bar would be."""
    if total <= 0:
        return Text("–", style="dim")
    return Text(f"{used}/{total}", style=_style(used, total))


def _short(device_id: str) -> str:
    return device_id if len(device_id) <= 16 else f"{device_id[:8]}…{device_id[-4:]}"


def _type(device: DeviceState) -> str:
    return device.type.removeprefix("NVIDIA-").removeprefix("NVIDIA ")


def _counts(findings: Sequence[Finding]) -> str:
    """`2 errors, 1 warning` (infos named only when there is nothing worse)."""
    by = {s: sum(1 for f in findings if f.severity is s) for s in Severity}
    shown = [plural(by[s], s.value) for s in (Severity.ERROR, Severity.WARNING) if by[s]]
    return ", ".join(shown) or plural(by[Severity.INFO], "note")


def _cells(d: DeviceState, bars: bool, pods_per_line: bool = False) -> dict[str, Text]:
    health = Text("ok", "green") if d.health else Text("unhealthy", "bold red")
    pods = Text((",\n" if pods_per_line else ", ").join(d.pods) if d.pods else "–")
    if d.slices:
        pods.append(f"{chr(10) if pods_per_line else '  '}[{', '.join(d.slices)}]", "magenta")
    show = bar if bars else figure
    return {"#": Text(str(d.index)), "DEVICE": Text(_short(d.id)), "TYPE": Text(_type(d)), "MODE": Text(d.mode),
            "HEALTH": health, "MEMORY (MiB)": show(d.memory_used, d.memory_total),
            "CORES": show(d.cores_used, d.cores_total), "SLOTS": show(d.slots_used, d.slots_total), "PODS": pods}


def _natural(rows: list[dict[str, Text]]) -> dict[str, int]:
    return {column: max(len(column), *(row[column].cell_len for row in rows)) for column in rows[0]}


def _wrapping(rows: list[dict[str, Text]], width: int) -> tuple[str, ...]:
    """The fewest name columns (in NAMES order) that must wrap for the rest to be whole within `width`."""
    natural = _natural(rows)
    room = width - GAP * (len(natural) - 1) - sum(w for column, w in natural.items() if column not in NAMES)
    for count in range(len(NAMES)):
        wrap = NAMES[:count]
        whole = sum(natural[column] for column in NAMES[count:])
        if room - whole >= sum(min(natural[column], NAME_ROOM) for column in wrap):
            return wrap
    return NAMES


def _device_table(devices: Sequence[DeviceState], width: int) -> Table:
    """A row per device. Too wide for `width`: the bars go (the figures stay whole, coloured as the bars
    were), then names wrap; a figure, the index or the health is never cut."""
    rows = [_cells(d, bars=True) for d in devices]
    if sum(_natural(rows).values()) + GAP * (len(rows[0]) - 1) > width:
        rows = [_cells(d, bars=False) for d in devices]
    wrap = _wrapping(rows, width)
    if "PODS" in wrap:  # a pod per line: a name is folded only when it alone is wider than the column
        rows = [_cells(d, bars=False, pods_per_line=True) for d in devices]
    table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1))
    for column in rows[0]:
        table.add_column(column, no_wrap=column not in wrap, overflow="fold" if column in wrap else "ellipsis")
    for row in rows:
        table.add_row(*row.values())
    return table


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
            console.print(_device_table(node.devices, console.width))
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
