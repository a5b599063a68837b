"""The `nodes` table: one block per node, a row per device with bars for memory, cores and slots."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from rich.cells import cell_len
from rich.console import Console
from rich.control import STRIP_CONTROL_CODES
from rich.table import Table
from rich.text import Span, Text

from vgpuctl.core.cluster.model import DeviceState
from vgpuctl.core.cluster.report import NodeReport
from vgpuctl.core.cluster.stacks import NodeStacks
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.render.style import SEVERITY_MARK, SEVERITY_STYLE, plural, text
from vgpuctl.render.terminal import safe

BAR = 10
#: Columns that may wrap (folding a long name over lines) when the table is too wide, like `kubectl get`, in
#: the order they start to: the pods first, the mode (short, and read at a glance) last.
NAMES = ("PODS", "STACKS", "TYPE", "DEVICE", "MODE")
NAME_ROOM = 8  # the least width a wrapping column is given
GAP = 2  # the space between two columns (padding (0, 1))


class _Cell(NamedTuple):
    """One table cell: its text, its own style (its padding's too) and the styled stretches inside it."""

    plain: str
    style: str = ""
    spans: tuple[Span, ...] = ()

    def text(self) -> Text:
        return Text(self.plain, style=self.style, spans=list(self.spans))


def _style(used: int, total: int) -> str:
    ratio = min(max(used / total, 0.0), 1.0)
    return "red" if ratio >= 0.9 else ("yellow" if ratio >= 0.6 else "green")


_NONE = _Cell("–", "dim")


def bar(used: int, total: int, unit: str = "") -> _Cell:
    if total <= 0:
        return _NONE
    filled = round(min(max(used / total, 0.0), 1.0) * BAR)
    empty = (Span(filled, BAR, "dim"),) if filled < BAR else ()
    return _Cell(f"{'█' * filled}{'░' * (BAR - filled)} {used}/{total}{unit}", _style(used, total), empty)


def figure(used: int, total: int) -> _Cell:
    """`used/total` without the bar, coloured as the bar would be."""
    if total <= 0:
        return _NONE
    return _Cell(f"{used}/{total}", _style(used, total))


def _short(device_id: str) -> str:
    return device_id if len(device_id) <= 16 else f"{device_id[:8]}…{device_id[-4:]}"


def _type(device: DeviceState) -> str:
    return device.type.removeprefix("NVIDIA-").removeprefix("NVIDIA ")


def _counts(findings: Sequence[Finding]) -> str:
    """`2 errors, 1 warning` (infos named only when there is nothing worse)."""
    by = {s: sum(1 for f in findings if f.severity is s) for s in Severity}
    shown = [plural(by[s], s.value) for s in (Severity.ERROR, Severity.WARNING) if by[s]]
    return ", ".join(shown) or plural(by[Severity.INFO], "note")


_OK, _UNHEALTHY = _Cell("ok", "green"), _Cell("unhealthy", "bold red")


def _cells(d: DeviceState, bars: bool, pods_per_line: bool = False,
           stacks: tuple[str, ...] | None = None) -> dict[str, _Cell]:
    """The row of one device. Names come from annotations: each is made `safe` first (its control characters
    escaped, as rich would otherwise strip some and pass ESC), so the cell's text and styled stretches are what
    rich draws, and the only line breaks in a cell are the layout's (a pod per line)."""
    pods = (",\n" if pods_per_line else ", ").join(map(safe, d.pods)) if d.pods else "–"
    if d.slices:
        shown = f"{pods}{chr(10) if pods_per_line else '  '}[{', '.join(map(safe, d.slices))}]"
        pods_cell = _Cell(shown, "", (Span(len(pods), len(shown), "magenta"),))
    else:
        pods_cell = _Cell(pods)
    show = bar if bars else figure
    cells = {"#": _Cell(str(d.index)), "DEVICE": _Cell(_short(safe(d.id))),
             "TYPE": _Cell(safe(_type(d))), "MODE": _Cell(safe(d.mode)),
             "HEALTH": _OK if d.health else _UNHEALTHY, "MEMORY (MiB)": show(d.memory_used, d.memory_total),
             "CORES": show(d.cores_used, d.cores_total), "SLOTS": show(d.slots_used, d.slots_total), "PODS": pods_cell}
    if stacks is not None:  # a node where several stacks offer GPUs: who offers each (docs/stacks.md)
        cells["STACKS"] = _Cell(", ".join(map(safe, stacks)), "bold yellow") if len(stacks) > 1 else _NONE
    return cells


def _natural(rows: list[dict[str, _Cell]]) -> dict[str, int]:
    return {column: max(len(column), *(cell_len(row[column].plain) for row in rows)) for column in rows[0]}


def _wrapping(natural: dict[str, int], width: int) -> tuple[str, ...]:
    """The fewest name columns (in NAMES order) that must wrap for the rest to be whole within `width`, the
    columns' `_natural` widths given."""
    names = tuple(column for column in NAMES if column in natural)
    room = width - GAP * (len(natural) - 1) - sum(w for column, w in natural.items() if column not in names)
    for count in range(len(names)):
        wrap = names[:count]
        whole = sum(natural[column] for column in names[count:])
        if room - whole >= sum(min(natural[column], NAME_ROOM) for column in wrap):
            return wrap
    return names


def _device_table(devices: Sequence[DeviceState], width: int, styled: bool = True,
                  stacks: NodeStacks | None = None) -> Table | Text:
    """A row per device. Too wide for `width`: the bars go (the figures stay whole, coloured as the bars
    were), then names wrap; a figure, the index or the health is never cut. `stacks`: the node's, where several
    stacks offer GPUs (a STACKS column says which offer each device)."""
    offering = [stacks.offering(d.id) if stacks is not None else None for d in devices]
    rows = [_cells(d, bars=True, stacks=s) for d, s in zip(devices, offering, strict=True)]
    natural = _natural(rows)
    if sum(natural.values()) + GAP * (len(rows[0]) - 1) > width:
        rows = [_cells(d, bars=False, stacks=s) for d, s in zip(devices, offering, strict=True)]
        natural = _natural(rows)
    wrap = _wrapping(natural, width)
    if "PODS" in wrap:  # a pod per line: a name is folded only when it alone is wider than the column
        rows = [_cells(d, bars=False, pods_per_line=True, stacks=s) for d, s in zip(devices, offering, strict=True)]
    aligned = _aligned(rows, styled, natural) if not wrap else None
    return aligned if aligned is not None else _table(rows, wrap)


def _table(rows: list[dict[str, _Cell]], wrap: tuple[str, ...]) -> Table:
    table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1))
    for column in rows[0]:
        table.add_column(column, no_wrap=column not in wrap, overflow="fold" if column in wrap else "ellipsis")
    for row in rows:
        table.add_row(*(cell.text() for cell in row.values()))
    return table


def _aligned(rows: list[dict[str, _Cell]], styled: bool = True, widths: dict[str, int] | None = None
             ) -> Text | None:
    """What `_table` draws when every column fits whole: each column as wide as its widest cell, a cell padded
    in its own style, two plain spaces between columns, the header in `table.header`. One Text, not a rich
    Table: the Table's layout took 4 ms a node, 20 s for `nodes` on 5,000 nodes (benchmarks/nodes_table.py).
    None when a cell holds a line break or a tab, which the Table lays out its own way. Not `styled`: the
    same characters without styles (for an output that shows none). `widths`: the rows' `_natural` widths."""
    if any("\n" in cell.plain or "\t" in cell.plain for row in rows for cell in row.values()):
        return None
    widths = widths or _natural(rows)
    gap = " " * GAP
    parts = [gap.join(f"{column}{' ' * (width - len(column))}" for column, width in widths.items())]
    spans = [Span(0, len(parts[0]), "table.header")]
    at = len(parts[0])
    for row in rows:
        parts.append("\n")
        at += 1
        for i, (column, cell) in enumerate(row.items()):
            if i:
                parts.append(gap)
                at += GAP
            padded = f"{cell.plain}{' ' * (widths[column] - cell_len(cell.plain))}"
            if styled:
                if cell.style:
                    spans.append(Span(at, at + len(padded), cell.style))
                spans.extend(Span(at + s.start, at + s.end, s.style) for s in cell.spans)
            parts.append(padded)
            at += len(padded)
    return Text("".join(parts), spans=spans if styled else None)


# What rich's Text rewrites before printing: the control codes it strips, and tabs, which it expands.
_REWRITTEN = re.compile("[\t" + "".join(map(chr, STRIP_CONTROL_CODES)) + "]")


def _print_plain(console: Console, text: str) -> None:
    """`console.print(Text(text))` where no style shows: written as it is unless rich would rewrite it (its
    control-code strip, `str.translate` over every character, was a third of `nodes` on 5,000 nodes:
    benchmarks/nodes_table.py)."""
    if _REWRITTEN.search(text):
        console.print(Text(text))
    else:
        console.file.write(f"{text}\n")


def _stacks_line(stacks: NodeStacks) -> str:
    """`volcano-vgpu (4 GPUs), nvidia-device-plugin (4 GPUs)`."""
    return ", ".join(f"{s.name} ({plural(s.count, 'GPU')})" if s.count is not None else s.name
                     for s in stacks.stacks)


def render_nodes(report: NodeReport, console: Console) -> None:
    # Printed a node at a time, as one Text, without styles where none show (a pipe, a file): rich's print
    # and render per line were most of `nodes` on 5,000 nodes (benchmarks/nodes_table.py).
    styled = console.color_system is not None
    for node in report.nodes:
        findings = report.findings_of(node)
        worst = report.worst(node)
        families = ", ".join(f.value for f in node.families) or "no device family"
        # a flagged node is marked where the eye lands first
        mark = (f"{SEVERITY_MARK[worst]} ", SEVERITY_STYLE[worst]) if worst is not None else ""
        counts = (f" · {_counts(findings)}", SEVERITY_STYLE[worst]) if worst is not None else ""
        stacks = report.stacks.get(node.name)
        head = text(mark, (node.name, "bold"), (f"  {families}", "cyan"), f" · mode {node.mode}" if node.mode else "",
                    (f" · {plural(len(node.devices), 'device')}", "dim"),
                    (" Volcano sees", "dim") if stacks is not None and not node.devices else "", counts)
        block: list[Text | Table] = [head]
        if stacks is not None:
            block.append(text("  GPU stacks: ", (_stacks_line(stacks), "yellow")))
        if node.devices:
            block.append(_device_table(node.devices, console.width, styled, stacks))
        block.extend(text("  ", (f"{SEVERITY_MARK[finding.severity]} {finding.code}", SEVERITY_STYLE[finding.severity]),
                          "  ", finding.message)
                     for finding in findings)
        block.append(Text())
        texts = [part for part in block if isinstance(part, Text)]
        if len(texts) < len(block):  # a table that wraps names: rich lays it out
            for part in block:
                console.print(part)
        elif styled:
            console.print(Text("\n").join(texts))
        else:
            _print_plain(console, "\n".join(part.plain for part in texts))
    for finding in report.problems:
        console.print(text((f"{SEVERITY_MARK[finding.severity]} {finding.code}", SEVERITY_STYLE[finding.severity]),
                           f"  {finding.subject}: ", finding.message))
    devices = sum(len(n.devices) for n in report.nodes)
    summary = report.report
    console.print(Text(f"{plural(len(report.nodes), 'node')} · {plural(devices, 'device')} · "
                       f"{plural(summary.errors, 'error')} · {plural(summary.warnings, 'warning')}",
                       style="bold red" if summary.errors else ("yellow" if summary.warnings else "green")))
