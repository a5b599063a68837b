"""What the checks after an uninstall mean: the state the uninstall was asked to produce is not a failure.

`uninstall` runs the same doctor checks as `install` on a fresh read, so a problem it leaves behind (a
scheduler ConfigMap that no longer parses, a fatal family combination, a family still enabled whose
device plugin is not ready) still fails the run. But when the uninstall leaves no device family enabled
in `deviceshare`, some findings only restate what the user asked for: the nodes still register their
devices (a device plugin's annotations outlive it), so VGC002 says "deviceshare is in no tier" and
VGM001 says the device ConfigMap install created (and uninstall deleted) is missing. Volcano schedules no
devices then and reads no device config: those findings are shown as `info`, marked as the expected result,
and do not make the exit code 1.
"""

from __future__ import annotations

from dataclasses import replace

from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.doctor.framework import CheckResult, status_of
from vgpuctl.core.doctor.report import DoctorReport
from vgpuctl.core.findings import Finding, Severity

#: Findings that describe device sharing being off, and why that is the uninstall's result.
EXPECTED_WITH_SHARING_OFF = {
    "VGC002": "expected after uninstall: device sharing is off, so Volcano no longer schedules these devices",
    "VGM001": "expected after uninstall: with no device family enabled, Volcano reads no device config",
}


def _settled(finding: Finding) -> Finding:
    why = EXPECTED_WITH_SHARING_OFF.get(finding.code)
    if why is None or finding.severity is Severity.INFO:
        return finding
    return finding._replace(severity=Severity.INFO, message=f"{finding.message} ({why})", hint="")


def _result(result: CheckResult) -> CheckResult:
    findings = [_settled(f) for f in result.findings]
    if findings == result.findings:
        return result  # a skipped check, or one that failed without findings (internal error), stays so
    return replace(result, status=status_of(findings), findings=findings)


def after_uninstall(report: DoctorReport, snapshot: ClusterSnapshot) -> DoctorReport:
    """`report` (the checks run on `snapshot`, read after the uninstall) with the findings an uninstall
    produces on purpose turned into `info` (see the module); unchanged while some family is still on."""
    if snapshot.deviceshare.families:
        return report
    return DoctorReport(report.source, [_result(r) for r in report.results], report.versions, report.notes)
