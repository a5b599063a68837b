"""The doctor's table: categories in order, `√ ‼ ×` per check, findings and hints under failures,
skipped checks with their reason, and a summary line (linkerd check / istioctl analyze style)."""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from vgpuctl.core.doctor.framework import Status
from vgpuctl.core.doctor.report import DoctorReport, group_findings
from vgpuctl.core.findings import Severity
from vgpuctl.render.style import PASS_MARK, SEVERITY_MARK, SEVERITY_STYLE, plural, text

_MARK = {Status.PASS: (PASS_MARK, "green"), Status.WARN: ("‼", "yellow"), Status.FAIL: ("×", "bold red"),
         Status.SKIP: ("–", "dim")}


def render_doctor(report: DoctorReport, console: Console, *, expand: bool = False, hints: bool = True) -> None:
    category = ""
    for result in report.results:
        if result.check.category.value != category:
            if category:
                console.print()
            category = result.check.category.value
            console.print(Text(category, style="bold underline"))
        mark, style = _MARK[result.status]
        if result.status is Status.SKIP:
            reason = (f"  (skipped: {result.reason})", "dim")
        else:
            reason = (f"  ({result.reason})" if result.reason else "", style)
        console.print(text((f"{mark} ", style), result.check.description, reason))
        grouped = group_findings(((category, f) for f in result.findings), group=not expand)
        for item in grouped:
            f = item.finding
            console.print(text("    ", (f"{SEVERITY_MARK[f.severity]} {f.code}", SEVERITY_STYLE[f.severity]),
                               (f"  {item.subject}", "bold"), ": ", f.message))
            if hints and f.severity is not Severity.INFO and f.hint:
                console.print(text((f"        hint: {f.hint} (vgpuctl explain {f.code})", "dim")))
    summary = report.summary()
    console.print()
    verdict = "×" if summary["errors"] else ("‼" if summary["warnings"] else PASS_MARK)
    style = "bold red" if summary["errors"] else ("yellow" if summary["warnings"] else "green")
    checks = len(report.results)
    console.print(Text(f"{verdict} {plural(checks, 'check')}: {plural(summary['errors'], 'error')}, "
                       f"{plural(summary['warnings'], 'warning')}, {plural(summary['infos'], 'info')}, "
                       f"{summary['skipped']} skipped", style=style))
