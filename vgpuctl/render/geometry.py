"""Rich output of the `geometry` commands: findings by file and line, the config as tables, explanations."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
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


def render_device_config(config: DeviceConfig, console: Console, title: str) -> None:
    console.print(text((title, "bold")))
    if config.has_nvidia:
        nv = config.nvidia
        console.print(text("nvidia: count ", (nv.resource_count_name or "-", "bold"), " · memory ",
                           (nv.resource_memory_name or "-", "bold"), " · cores ",
                           (nv.resource_core_name or "-", "bold"),
                           f" · gpuMemoryFactor {nv.gpu_memory_factor} · deviceSplitCount {nv.device_split_count}"))
        table = Table(title="knownMigGeometries (models → groups → instances)", title_justify="left",
                      show_lines=True)
        for column in ("#", "MODELS", "GROUP", "INSTANCE", "MEMORY (MiB)", "COUNT"):
            table.add_column(column, justify="right" if column in ("#", "MEMORY (MiB)", "COUNT") else "left")
        for index, geometry in enumerate(nv.known_mig_geometries):
            models = _lines(geometry.models)
            for g_index, group in enumerate(geometry.groups):
                table.add_row(str(index) if g_index == 0 else "", models if g_index == 0 else "", text(group.name),
                              _lines(i.name for i in group.instances), _lines(str(i.memory) for i in group.instances),
                              _lines(str(i.count) for i in group.instances))
            if not geometry.groups:
                table.add_row(str(index), models, "-", "-", "", "")
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
    table = Table(title=f"vnpus ({config.vnpus_form.value} form{core}; chips → templates)", title_justify="left",
                  show_lines=True)
    for column in ("CHIP", "RESOURCES", "ALLOCATABLE / CAPACITY (MiB)", "TEMPLATE", "MEMORY (MiB)", "AICORE",
                   "AICPU"):
        table.add_column(column, justify="right" if column in ("MEMORY (MiB)", "AICORE", "AICPU") else "left")
    for vnpu in config.vnpus:
        table.add_row(
            Text("\n").join([text(vnpu.common_word), text((f"chip {vnpu.chip_name}", "dim"))]),
            _lines((vnpu.resource_name, vnpu.resource_memory_name)),
            f"{vnpu.memory_allocatable} / {vnpu.memory_capacity}",
            _lines(t.name for t in vnpu.templates) if vnpu.templates else "-",
            _lines(str(t.memory) for t in vnpu.templates),
            _lines(str(t.ai_core) for t in vnpu.templates),
            _lines(str(t.ai_cpu) for t in vnpu.templates),
        )
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
