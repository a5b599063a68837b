"""The `nodes` table: one block per node, a row per device with bars for memory, cores and slots."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from rich.cells import cell_len, set_cell_size
from rich.console import Console
from rich.control import STRIP_CONTROL_CODES
from rich.text import Span, Text

from vgpuctl.core.cluster.model import DeviceState
from vgpuctl.core.cluster.report import NodeReport
from vgpuctl.core.cluster.stacks import NodeStacks
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.render.style import SEVERITY_MARK, SEVERITY_STYLE, plural, text
from vgpuctl.render.terminal import safe

BAR = 10
#: Columns that move out of a table too wide for the terminal, each to a line of its own under its device's
#: row (`   pods: ml/a, ml/b`), where names are kept whole: a pod name cut in two is no name.
SECOND_LINE = ("PODS", "STACKS")
#: Then columns cut with an ellipsis, in this order, down to the width given.
SHRINK = (("TYPE", 8), ("MODE", 6))
#: Then whole columns dropped, in this order (the device's index and memory stay), and a line says which.
DROP = ("TYPE", "DEVICE", "MODE", "SLOTS", "CORES", "HEALTH")
GAP = 2  # the space between two columns
SECOND_INDENT = "   "  # under the index column


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


def _cells(d: DeviceState, bars: bool, stacks: tuple[str, ...] | None = None) -> dict[str, _Cell]:
    """The row of one device. Names come from annotations: each is made `safe` first (its control characters
    escaped, as rich would otherwise strip some and pass ESC), so the cell's text and styled stretches are what
    rich draws, and a cell holds no line break."""
    pods = ", ".join(map(safe, d.pods)) if d.pods else "–"
    if d.slices:
        shown = f"{pods}  [{', '.join(map(safe, d.slices))}]"
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


def _width(widths: dict[str, int]) -> int:
    return sum(widths.values()) + GAP * (len(widths) - 1)


def _layout(rows: list[dict[str, _Cell]], width: int) -> tuple[dict[str, int], tuple[str, ...], tuple[str, ...]]:
    """(the width of each column shown, the columns moved under their rows, the columns dropped) for `rows` within
    `width`: first the names move to their own lines, then TYPE and MODE are cut with an ellipsis, then columns
    go, in `DROP` order."""
    widths = _natural(rows)
    moved: tuple[str, ...] = ()
    if _width(widths) > width:
        moved = tuple(column for column in SECOND_LINE if column in widths)
        widths = {column: w for column, w in widths.items() if column not in moved}
    for column, least in SHRINK:
        if _width(widths) > width and column in widths:
            widths[column] = max(least, len(column), widths[column] - (_width(widths) - width))
    dropped: list[str] = []
    for column in DROP:
        if _width(widths) <= width:
            break
        if column in widths:
            del widths[column]
            dropped.append(column)
    return widths, moved, tuple(dropped)


def _fit(cell: _Cell, width: int) -> _Cell:
    """The cell within `width` cells: whole, or cut with an ellipsis (its style kept, its inner spans dropped)."""
    if cell_len(cell.plain) <= width:
        return cell
    return _Cell(set_cell_size(cell.plain, width - 1) + "…", cell.style)


def _second_lines(label: str, names: Sequence[str], width: int, tail: str = "") -> list[str]:
    """`   pods: a, b, c` folded at the commas within `width`, continuation lines indented under the first name; a
    name is never cut (one longer than the line overflows it, as kubectl prints a long name whole)."""
    head = f"{SECOND_INDENT}{label}: "
    lines = [head]
    items = [f"{name}," for name in names[:-1]] + [names[-1] + (f"  {tail}" if tail else "")] if names else [tail]
    for item in items:
        line = lines[-1]
        if line.strip().endswith(":") or cell_len(line) + 1 + cell_len(item) <= width:
            lines[-1] = f"{line}{'' if line.endswith(' ') else ' '}{item}"
        else:
            lines.append(" " * len(head) + item)
    return lines


def _device_table(devices: Sequence[DeviceState], width: int, styled: bool = True,
                  stacks: NodeStacks | None = None) -> Text:
    """A row per device. Too wide for `width`: the bars go (the figures stay whole, coloured as the bars were),
    then the pods (and stacks) move under their device's row, then TYPE and MODE are cut with an ellipsis, then
    columns are dropped, and a line says which. A figure is never cut."""
    offering = [stacks.offering(d.id) if stacks is not None else None for d in devices]
    rows = [_cells(d, bars=True, stacks=s) for d, s in zip(devices, offering, strict=True)]
    if _width(_natural(rows)) > width:
        rows = [_cells(d, bars=False, stacks=s) for d, s in zip(devices, offering, strict=True)]
    widths, moved, dropped = _layout(rows, width)
    shown = [{column: _fit(row[column], widths[column]) for column in widths} for row in rows]
    under: list[list[str]] = [[] for _ in devices]
    if "PODS" in moved:
        for lines, device in zip(under, devices, strict=True):
            tail = f"[{', '.join(map(safe, device.slices))}]" if device.slices else ""
            lines += _second_lines("pods", [safe(p) for p in device.pods], width, tail) if device.pods or tail \
                else []
    if "STACKS" in moved:
        for lines, names in zip(under, offering, strict=True):
            lines += _second_lines("stacks", [safe(n) for n in names], width) if names and len(names) > 1 else []
    table = _aligned(shown, styled, widths, under)
    if dropped:
        note = f"({', '.join(dropped)} not shown at {width} columns: widen the terminal, or -o json for every field)"
        for i, line in enumerate(fold(note, max(width - len(SECOND_INDENT) - 1, 20))):
            table.append_text(Text(f"\n{SECOND_INDENT}{' ' if i else ''}{line}", style="dim" if styled else ""))
    return table


def _aligned(rows: list[dict[str, _Cell]], styled: bool = True, widths: dict[str, int] | None = None,
             under: Sequence[Sequence[str]] = ()) -> Text:
    """The table: each column as wide as `widths` says (by default its widest cell), a cell padded in its own
    style, two plain spaces between columns, the header in `table.header`, and under each row its `under`
    lines. One Text, not a rich Table: the Table's layout took 4 ms a node, 20 s for `nodes` on 5,000 nodes
    (benchmarks/nodes_table.py). A cell holds no line break (names are `safe`). Not `styled`: the same
    characters without styles (for an output that shows none)."""
    widths = widths or _natural(rows)
    gap = " " * GAP
    parts = [gap.join(f"{column}{' ' * (width - len(column))}" for column, width in widths.items())]
    spans = [Span(0, len(parts[0]), "table.header")]
    at = len(parts[0])
    for index, row in enumerate(rows):
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
        for line in under[index] if index < len(under) else ():
            parts.append(f"\n{line}")
            at += 1 + len(line)
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


FINDING_INDENT = 2


def _finding_line(finding: Finding, console: Console) -> Text:
    """`  × VGN004  message`; on a terminal folded at its width with every continuation line indented under the
    message (rich would start them at column 0). Piped (soft wrap), one line per finding, for grep."""
    mark = f"{SEVERITY_MARK[finding.severity]} {finding.code}"
    hang = FINDING_INDENT + cell_len(mark) + 2
    message = safe(finding.message)
    chunks = [message] if console.soft_wrap else fold(message, max(console.width - hang, 20))
    lines = [text(" " * FINDING_INDENT, (mark, SEVERITY_STYLE[finding.severity]), "  ", chunks[0])]
    lines += [Text(" " * hang + chunk) for chunk in chunks[1:]]
    return Text("\n").join(lines)


def fold(words: str, width: int) -> list[str]:
    """`words` in lines of at most `width` cells, broken at spaces; a word longer than a line is kept whole."""
    lines: list[str] = []
    current = ""
    for word in words.split(" "):
        if current and cell_len(current) + 1 + cell_len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    lines.append(current)
    return lines


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
        block: list[Text] = [head]
        if stacks is not None:
            block.append(text("  GPU stacks: ", (_stacks_line(stacks), "yellow")))
        if node.devices:
            block.append(_device_table(node.devices, console.width, styled, stacks))
        block.extend(_finding_line(finding, console) for finding in findings)
        block.append(Text())
        if styled:
            console.print(Text("\n").join(block))
        else:
            _print_plain(console, "\n".join(part.plain for part in block))
    for finding in report.problems:
        console.print(text((f"{SEVERITY_MARK[finding.severity]} {finding.code}", SEVERITY_STYLE[finding.severity]),
                           f"  {finding.subject}: ", finding.message))
    devices = sum(len(n.devices) for n in report.nodes)
    summary = report.report
    console.print(Text(f"{plural(len(report.nodes), 'node')} · {plural(devices, 'device')} · "
                       f"{plural(summary.errors, 'error')} · {plural(summary.warnings, 'warning')}",
                       style="bold red" if summary.errors else ("yellow" if summary.warnings else "green")))
