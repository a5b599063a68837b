"""Rich output of the `geometry` commands: findings by file and line, the config as tables, explanations."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from vgpuctl.core.deviceconfig import DeviceConfig, VnpusForm
from vgpuctl.core.findings import Severity
from vgpuctl.core.geometry.explain import Explanation
from vgpuctl.core.geometry.report import GeometryReport, LocatedFinding
from vgpuctl.render import to_yaml
from vgpuctl.render.style import PASS_MARK, SEVERITY_MARK, SEVERITY_STYLE, plural, text


def render_findings(findings: Iterable[LocatedFinding], console: Console, *, hints: bool = True) -> None:
    for located in findings:
        f = located.finding
        where = f"line {located.line}  " if located.line else ""
        console.print(text("  ", (f"{SEVERITY_MARK[f.severity]} {f.code}", SEVERITY_STYLE[f.severity]), "  ",
                           (where, "dim"), (f.subject, "bold"), "  ", f.message))
        if hints and f.severity is not Severity.INFO and f.hint:
            console.print(text((f"      hint: {f.hint} (vgpuctl explain {f.code})", "dim")))


def _lines(values: Iterable[str]) -> Text:
    """A table cell of one value per line, each value `safe`."""
    return Text("\n").join(text(value) for value in values)


def _summary_line(errors: int, warnings: int, infos: int, prefix: str) -> Text:
    style = "bold red" if errors else ("yellow" if warnings else "green")
    parts = [prefix, plural(errors, "error"), plural(warnings, "warning"), plural(infos, "info")]
    return Text(" · ".join(parts), style=style)


def render_geometry_report(report: GeometryReport, console: Console) -> None:
    for source in report.sources:
        mine = [f for f in report.findings if f.source == source]
        worst = max((f.finding.severity.rank for f in mine), default=-1)
        mark, style = (PASS_MARK, "green") if worst < Severity.WARNING.rank else (
            (SEVERITY_MARK[Severity.ERROR], "bold red") if worst == Severity.ERROR.rank
            else (SEVERITY_MARK[Severity.WARNING], "yellow"))
        console.print(text((f"{mark} ", style), (source, "bold")))
        render_findings(mine, console)
    s = report.summary()
    assumed = " (assumed: newest)" if report.version_assumed else ""
    console.print()
    console.print(_summary_line(s["errors"], s["warnings"], s["infos"],
                                f"{plural(s['configs'], 'device config')} checked for Volcano {report.version}"
                                f"{assumed}"))


def _table(title: str, columns: Iterable[str], right: Iterable[str]) -> Table:
    """Borderless, as every other table of vgpuctl (`nodes`, `explain --list`) and kubectl's: a title line, a
    header, a row per instance or template."""
    table = Table(title=title, title_justify="left", title_style="bold", box=None, pad_edge=False,
                  show_edge=False, padding=(0, 1), header_style="bold")
    aligned = set(right)
    for column in columns:
        table.add_column(column, justify="right" if column in aligned else "left")
    return table


def _side_by_side(*columns: Sequence[str | Text] | Sequence[tuple[str | Text, ...]]) -> list[list[Any]]:
    """Rows of an entry whose columns have lines of their own (an entry's models next to its instances): line
    k of each column on row k, blank where a column has fewer lines. A column of tuples spreads over cells."""
    rows = []
    for k in range(max(len(column) for column in columns)):
        row: list[Any] = []
        for column in columns:
            value = column[k] if k < len(column) else None
            if column and isinstance(column[0], tuple):
                row.extend(value if isinstance(value, tuple) else ("",) * len(column[0]))
            else:
                row.append(text(value) if isinstance(value, str) else (value if value is not None else ""))
        rows.append(row)
    return rows


def render_device_config(config: DeviceConfig, console: Console, title: str) -> None:
    console.print(text((title, "bold")))
    if config.has_nvidia:
        nv = config.nvidia
        console.print(text("nvidia: count ", (nv.resource_count_name or "-", "bold"), " · memory ",
                           (nv.resource_memory_name or "-", "bold"), " · cores ",
                           (nv.resource_core_name or "-", "bold"),
                           f" · gpuMemoryFactor {nv.gpu_memory_factor} · deviceSplitCount {nv.device_split_count}"))
        table = _table("knownMigGeometries (models → groups → instances)",
                       ("#", "MODELS", "GROUP", "INSTANCE", "MEMORY (MiB)", "COUNT"), ("#", "MEMORY (MiB)", "COUNT"))
        for index, geometry in enumerate(nv.known_mig_geometries):
            instances = [(text(group.name) if i == 0 else "", text(instance.name), str(instance.memory),
                          str(instance.count))
                         for group in geometry.groups for i, instance in enumerate(group.instances)]
            for row in _side_by_side([str(index)], geometry.models, instances or [("-", "-", "", "")]):
                table.add_row(*row)
        if nv.known_mig_geometries:
            console.print(table)
        else:
            console.print(Text("no knownMigGeometries: MIG never fits", style="dim"))
    else:
        console.print(Text("no nvidia: section", style="dim"))
    if config.vnpus_form is VnpusForm.ABSENT:
        console.print(Text("no vnpus: section", style="dim"))
        return
    core = f", hamiVnpuCore {str(config.hami_vnpu_core).lower()}" if config.vnpus_form is VnpusForm.WRAPPER else ""
    table = _table(f"vnpus ({config.vnpus_form.value} form{core}; chips → templates)",
                   ("CHIP", "RESOURCES", "ALLOCATABLE / CAPACITY (MiB)", "TEMPLATE", "MEMORY (MiB)", "AICORE",
                    "AICPU"), ("MEMORY (MiB)", "AICORE", "AICPU"))
    for vnpu in config.vnpus:
        templates = [(text(t.name), str(t.memory), str(t.ai_core), str(t.ai_cpu)) for t in vnpu.templates]
        chip = [text(vnpu.common_word), text((f"chip {vnpu.chip_name}", "dim"))]
        for row in _side_by_side(chip, (vnpu.resource_name, vnpu.resource_memory_name),
                                 [f"{vnpu.memory_allocatable} / {vnpu.memory_capacity}"],
                                 templates or [("-", "", "", "")]):
            table.add_row(*row)
    console.print(table)


def render_explanation(explanation: Explanation, console: Console, config_label: str) -> None:
    mark, style = (PASS_MARK, "green") if explanation.fits else (SEVERITY_MARK[Severity.ERROR], "bold red")
    console.print(text((f"{mark} ", style), (explanation.subject, "bold"), "  ", (explanation.answer, style)))
    for step in explanation.steps:
        console.print(text(f"    {step}"))
    console.print(text((f"    config: {config_label}", "dim")))


def render_merge_summary(findings: Iterable[LocatedFinding], notes: Iterable[str], console: Console,
                         deviceshare: Mapping[str, Any] | None) -> None:
    """The stderr side of `merge`: findings, notes, then last the scheduler arguments to set."""
    listed = list(findings)
    render_findings(listed, console, hints=False)
    errors = sum(1 for f in listed if f.finding.severity is Severity.ERROR)
    warnings = sum(1 for f in listed if f.finding.severity is Severity.WARNING)
    console.print(_summary_line(errors, warnings, len(listed) - errors - warnings, "merge"))
    for note in notes:
        console.print(text(f"note: {note}"))
    if deviceshare is None:
        console.print(Text("no ConfigMap written: fix the errors above (or choose with --prefer) and rerun",
                           style="bold red"))
        return
    console.print(Text("deviceshare arguments to set in volcano-scheduler.conf (then restart the scheduler):",
                       style="bold"))
    snippet = to_yaml([{"name": "deviceshare", "arguments": dict(deviceshare)}])
    console.print(Text("\n").join(text(f"  {line}") for line in snippet.splitlines()))
