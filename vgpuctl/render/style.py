"""Shared marks and colours, so every command speaks the same visual language; and `text`, the one way a
renderer turns values into a line, so no value speaks to the terminal (`vgpuctl/render/terminal.py`)."""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console, ConsoleOptions, ConsoleRenderable, RenderHook
from rich.segment import Segment
from rich.text import Text

from vgpuctl.core.findings import Severity
from vgpuctl.render.terminal import safe, safe_lines

SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
SEVERITY_MARK = {Severity.ERROR: "×", Severity.WARNING: "‼", Severity.INFO: "i"}
PASS_MARK = "√"

#: A part of a line: a string, or a string and its style.
Part = str | tuple[str, str]


def text(*parts: Part, style: str = "") -> Text:
    """`Text.assemble` of `parts` with every string made `safe`: names, annotation values, messages, hints
    and file names print as the characters they are, never as terminal controls, and never as rich markup
    (a Text is never parsed for `[bold]`). Static strings pass the same way at the cost of one test."""
    return Text.assemble(*((safe(p), "") if isinstance(p, str) else (safe(p[0]), p[1]) for p in parts),
                         style=style)


class ControlsEscaped(RenderHook):
    """A console's last guard (`cli/env.py` `make_console` pushes it): whatever is printed — a line a command
    builds itself, a renderer that forgot `text` — reaches the stream with its control characters escaped
    (`safe_lines`: the layout's line breaks kept). Text that went through `text` passes it untouched."""

    def process_renderables(self, renderables: list[ConsoleRenderable]) -> list[ConsoleRenderable]:
        # A Text with nothing to escape (every block of `nodes` on a terminal) is passed as it is: wrapped, it
        # cost a tenth of `nodes` drawn in colour (the fleet of benchmarks/snapshot_gen.py, 500 nodes).
        return [renderable if isinstance(renderable, Text) and renderable.plain.replace("\n", "").isprintable()
                else _Escaped(renderable) for renderable in renderables]


class _Escaped:
    def __init__(self, renderable: ConsoleRenderable) -> None:
        self.renderable = renderable

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        for segment in console.render(self.renderable, options):
            if segment.control is None and not segment.text.isprintable():
                yield Segment(safe_lines(segment.text), segment.style)
            else:
                yield segment


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
