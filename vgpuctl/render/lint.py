"""The `lint` table: objects in input order, one line per finding, a summary at the end."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from vgpuctl.core.findings import Severity, by_severity
from vgpuctl.core.lintreport import LintItem, LintReport
from vgpuctl.render.style import PASS_MARK, SEVERITY_MARK, SEVERITY_STYLE, plural, text


def _title(item: LintItem) -> str:
    if not item.kind:
        return item.source
    ns = f"{item.namespace}/" if item.namespace else ""
    return f"{item.kind} {ns}{item.name or '(unnamed)'}"


def render_lint(report: LintReport, console: Console, *, show_hints: bool = True, quiet: bool = False) -> None:
    for item in report.items:
        if quiet and not item.findings:
            continue
        mark, style = (PASS_MARK, "green") if item.allowed else (SEVERITY_MARK[Severity.ERROR], "bold red")
        verdict = "allowed" if item.allowed else "denied"
        title = _title(item)
        console.print(text((f"{mark} ", style), (title, "bold"),
                           (f"  {item.source}" if title != item.source else "", "dim"), (f"  {verdict}", style),
                           (f"  (+{plural(len(item.patch), 'default')})" if item.patch else "", "dim")))
        lines = dict(item.located())  # a finding's line in its file, where known (as `geometry validate` shows)
        for finding in by_severity(item.findings):
            sev_style = SEVERITY_STYLE[finding.severity]
            line = lines.get(finding)
            console.print(text("    ", (f"{SEVERITY_MARK[finding.severity]} {finding.code}", sev_style), "  ",
                               (f"line {line}  " if line is not None else "", "dim"), finding.message))
            if show_hints and finding.severity is not Severity.INFO and finding.hint:
                console.print(text((f"        hint: {finding.hint} (vgpuctl explain {finding.code})", "dim")))
    summary = report.summary()
    infos = report.report.infos
    parts = [
        plural(summary["objects"], "object") + " checked",
        f"{summary['denied']} denied",
        plural(summary["errors"], "error"),
        plural(summary["warnings"], "warning"),
        plural(infos, "info"),
    ]
    if report.skipped:
        parts.append(f"{report.skipped} skipped (other kinds)")
    style = "bold red" if summary["errors"] else ("yellow" if summary["warnings"] else "green")
    console.print()
    console.print(Text(" · ".join(parts), style=style))
