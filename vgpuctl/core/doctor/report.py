"""The DoctorReport: check results, findings grouped across nodes, versions and the exit status.

The same problem on 400 nodes is one finding listing the nodes (`--all` expands it): findings are grouped
by code, severity, category and hint. Node checks keep the node name out of the message and in the subject,
so most groups share one message; where each subject's message has its own details (which GPU, which
count), the group keeps every message, in the order of its subjects.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core.catalogue import UnknownCodeError, lookup
from vgpuctl.core.doctor.framework import CheckResult, Status, node_of
from vgpuctl.core.findings import ExitStatus, Finding, Report, Severity

API_VERSION = "vgpuctl.io/v1alpha1"
GROUP_PREVIEW = 5


@dataclass(frozen=True, slots=True)
class DoctorFinding:
    finding: Finding
    category: str
    subjects: tuple[str, ...]  # more than one when grouped
    messages: tuple[str, ...] = ()  # each subject's own message, when they differ (the numbers, the GPU, …)

    @property
    def distinct_subjects(self) -> list[str]:
        """The subjects once each (one node can have the problem on several of its resources)."""
        return list(dict.fromkeys(self.subjects))

    @property
    def subject(self) -> str:
        distinct = self.distinct_subjects
        if len(distinct) == 1:
            return distinct[0]
        shown = ", ".join(distinct[:GROUP_PREVIEW])
        more = len(distinct) - GROUP_PREVIEW
        return f"{shown} and {more} more ({len(distinct)} in all)" if more > 0 else shown

    @property
    def message(self) -> str:
        """The message they share; for subjects whose details differ, what the code means and the first one's
        details (`--all` or the JSON `messages` give every one)."""
        if not self.messages:
            return self.finding.message
        title = _title(self.finding.code)
        first = f"{self.subjects[0]}: {self.messages[0]}"
        return f"{title}; e.g. {first}" if title else f"e.g. {first}"

    def to_dict(self) -> dict[str, Any]:
        f = self.finding
        data: dict[str, Any] = {"code": f.code, "severity": f.severity.value, "category": self.category,
                                "subject": self.subject, "message": self.message, "hint": f.hint}
        if len(self.subjects) > 1:
            data["subjects"] = list(self.subjects)
        if self.messages:
            data["messages"] = list(self.messages)
        return data


def _title(code: str) -> str:
    try:
        return lookup(code).title
    except UnknownCodeError:
        return ""


def group_findings(items: Iterable[tuple[str, Finding]], *, group: bool = True) -> list[DoctorFinding]:
    """Merge findings of one code, severity, category and hint into one listing their subjects: the same problem
    on 400 nodes is one finding, whether or not each message carries that subject's details (a GPU id, a
    count). Where the messages differ, each is kept (`messages`, in the order of `subjects`)."""
    if not group:
        return [DoctorFinding(f, category, (f.subject,)) for category, f in items]
    groups: dict[tuple[str, str, str, str], list[Finding]] = {}
    categories: dict[tuple[str, str, str, str], str] = {}
    for category, f in items:
        key = (f.code, f.severity.value, category, f.hint)
        groups.setdefault(key, []).append(f)
        categories[key] = category
    out: list[DoctorFinding] = []
    for key, found in groups.items():
        messages = tuple(f.message for f in found)
        differ = len(found) > 1 and any(m != messages[0] for m in messages)
        out.append(DoctorFinding(found[0], categories[key], tuple(f.subject for f in found),
                                 messages if differ else ()))
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
