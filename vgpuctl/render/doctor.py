"""The doctor's table: categories in order, `√ ‼ ×` per check, findings and hints under failures,
skipped checks with their reason, and a summary line (linkerd check / istioctl analyze style).

`problems_only` (`doctor -q`, as `lint -q`) prints only the checks that warn or fail, and their findings;
the summary still counts every check."""

from __future__ import annotations

from collections import Counter

from rich.console import Console
from rich.text import Text

from vgpuctl.core.doctor.framework import Status
from vgpuctl.core.doctor.report import DoctorFinding, DoctorReport, group_findings
from vgpuctl.core.findings import Severity
from vgpuctl.render.style import PASS_MARK, SEVERITY_MARK, SEVERITY_STYLE, plural, text

_MARK = {Status.PASS: (PASS_MARK, "green"), Status.WARN: ("‼", "yellow"), Status.FAIL: ("×", "bold red"),
         Status.SKIP: ("–", "dim")}
_SHOWN_WHEN_QUIET = (Status.WARN, Status.FAIL)


def render_doctor(report: DoctorReport, console: Console, *, expand: bool = False, hints: bool = True,
                  problems_only: bool = False) -> None:
    category = ""
    for result in report.results:
        if problems_only and result.status not in _SHOWN_WHEN_QUIET:
            continue
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
        for item in group_findings(((category, f) for f in result.findings), group=not expand):
            f = item.finding
            console.print(text("    ", (f"{SEVERITY_MARK[f.severity]} {f.code}", SEVERITY_STYLE[f.severity]),
                               (f"  {item.subject}", "bold"), ": ", item.message))
            if hints and f.severity is not Severity.INFO and f.hint:
                console.print(text((f"        hint: {f.hint} (vgpuctl explain {f.code})", "dim")))
    if problems_only and not category:
        console.print(text((f"{PASS_MARK} ", "green"), "no check warns or fails"))
    console.print()
    console.print(summary_line(report, grouped=report.findings(group=not expand)))


def summary_line(report: DoctorReport, grouped: list[DoctorFinding]) -> Text:
    """Checks and findings counted apart: `61 checks: 56 passed, 2 warned, 2 failed, 1 skipped · 8 findings
    (167 subjects): 3 errors, 5 warnings`. A finding is one problem, however many subjects it names."""
    statuses = Counter(r.status for r in report.results)
    severities = Counter(f.finding.severity for f in grouped)
    subjects = sum(len(f.distinct_subjects) for f in grouped)
    checks = ", ".join(f"{statuses[status]} {word}" for status, word in (
        (Status.PASS, "passed"), (Status.WARN, "warned"), (Status.FAIL, "failed"), (Status.SKIP, "skipped"))
        if statuses[status] or status is Status.PASS)
    found = ", ".join(plural(severities[severity], word) for severity, word in (
        (Severity.ERROR, "error"), (Severity.WARNING, "warning"), (Severity.INFO, "info")) if severities[severity])
    where = f" ({plural(subjects, 'subject')})" if subjects > len(grouped) else ""
    findings = f"{plural(len(grouped), 'finding')}{where}: {found}" if grouped else "no findings"
    worst = "error" if severities[Severity.ERROR] or statuses[Status.FAIL] else (
        "warning" if severities[Severity.WARNING] or statuses[Status.WARN] else "")
    verdict, style = {"error": ("×", "bold red"), "warning": ("‼", "yellow")}.get(worst, (PASS_MARK, "green"))
    return Text(f"{verdict} {plural(len(report.results), 'check')}: {checks} · {findings}", style=style)
