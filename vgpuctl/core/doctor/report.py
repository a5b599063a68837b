"""The DoctorReport: check results, findings grouped across nodes, versions and the exit status.

The same problem on 400 nodes is one finding listing the nodes (`--all` expands it): findings are grouped
by code, severity, category and message, which is why node checks keep the node name out of the message
and in the subject.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core.doctor.framework import CheckResult, Status, node_of
from vgpuctl.core.findings import ExitStatus, Finding, Report, Severity

API_VERSION = "vgpuctl.io/v1alpha1"
GROUP_PREVIEW = 5


@dataclass(frozen=True, slots=True)
class DoctorFinding:
    finding: Finding
    category: str
    subjects: tuple[str, ...]  # more than one when grouped

    @property
    def subject(self) -> str:
        if len(self.subjects) == 1:
            return self.subjects[0]
        shown = ", ".join(self.subjects[:GROUP_PREVIEW])
        more = len(self.subjects) - GROUP_PREVIEW
        return f"{shown} and {more} more ({len(self.subjects)} in all)" if more > 0 else shown

    def to_dict(self) -> dict[str, Any]:
        f = self.finding
        data: dict[str, Any] = {"code": f.code, "severity": f.severity.value, "category": self.category,
                                "subject": self.subject, "message": f.message, "hint": f.hint}
        if len(self.subjects) > 1:
            data["subjects"] = list(self.subjects)
        return data


def group_findings(items: Iterable[tuple[str, Finding]], *, group: bool = True) -> list[DoctorFinding]:
    """Merge findings that differ only in subject (same code, severity, category and message)."""
    out: list[DoctorFinding] = []
    index: dict[tuple[str, str, str, str], int] = {}
    for category, f in items:
        key = (f.code, f.severity.value, category, f.message)
        if group and key in index:
            prev = out[index[key]]
            out[index[key]] = DoctorFinding(prev.finding, category, (*prev.subjects, f.subject))
            continue
        index[key] = len(out)
        out.append(DoctorFinding(f, category, (f.subject,)))
    return out


def findings_by_node(results: Iterable[CheckResult]) -> dict[str, list[Finding]]:
    """Each finding that names a node (`node/<name>`), filed under that node, in check order.

    Findings are one per subject before grouping, so this is per-node attribution whatever grouping the
    report later applies; the same finding twice on one node is kept once.
    """
    out: dict[str, dict[Finding, None]] = {}
    for result in results:
        for f in result.findings:
            name = node_of(f.subject)
            if name is not None:
                out.setdefault(name, {})[f] = None
    return {name: list(found) for name, found in out.items()}


@dataclass
class DoctorReport:
    source: str
    results: list[CheckResult]
    versions: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # said on stderr (e.g. "Volcano version unknown: …")

    def findings(self, *, group: bool = True) -> list[DoctorFinding]:
        return group_findings(((r.check.category.value, f) for r in self.results for f in r.findings), group=group)

    @property
    def report(self) -> Report:
        return Report([f for r in self.results for f in r.findings])

    def exit_status(self, fail_on: Severity = Severity.ERROR) -> ExitStatus:
        status = self.report.exit_status(fail_on)
        if status is ExitStatus.OK and any(r.status is Status.FAIL for r in self.results):
            return ExitStatus.FINDINGS  # a check that failed without a finding (internal error) still fails
        return status

    def summary(self) -> dict[str, int]:
        report = self.report
        return {"errors": report.errors, "warnings": report.warnings, "infos": report.infos,
                "skipped": sum(1 for r in self.results if r.status is Status.SKIP)}

    def to_dict(self, *, group: bool = True) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": "DoctorReport",
            "source": self.source,
            "versions": self.versions,
            "checks": [r.to_dict() for r in self.results],
            "findings": [f.to_dict() for f in self.findings(group=group)],
            "summary": self.summary(),
        }
