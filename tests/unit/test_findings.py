"""Findings and the Report that owns the exit code."""

from __future__ import annotations

from vgpuctl.core.findings import ExitStatus, Finding, Report, Severity


def f(severity: Severity) -> Finding:
    return Finding("VGP001", severity, "pod", "message", "hint")


def test_exit_status_follows_fail_on() -> None:
    assert Report().exit_status() is ExitStatus.OK
    assert Report([f(Severity.INFO)]).exit_status(Severity.WARNING) is ExitStatus.OK
    warn = Report([f(Severity.INFO), f(Severity.WARNING)])
    assert warn.exit_status() is ExitStatus.OK
    assert warn.exit_status(Severity.WARNING) is ExitStatus.FINDINGS
    assert Report([f(Severity.ERROR)]).exit_status() is ExitStatus.FINDINGS


def test_counts_and_dict() -> None:
    report = Report()
    report.add(f(Severity.ERROR))
    report.extend([f(Severity.WARNING), f(Severity.INFO), f(Severity.INFO)])
    assert (report.errors, report.warnings, report.infos, len(report)) == (1, 1, 2, 4)
    assert f(Severity.WARNING).to_dict() == {"code": "VGP001", "severity": "warning", "subject": "pod",
                                             "message": "message", "hint": "hint"}


def test_severity_order() -> None:
    assert Severity.ERROR.at_least(Severity.WARNING) and not Severity.INFO.at_least(Severity.WARNING)
