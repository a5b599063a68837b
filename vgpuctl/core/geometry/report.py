"""Geometry findings with their place in the input, and the `GeometryReport` JSON contract
(docs/contracts.md#interfaces).

A device-config finding's subject is a JSON path into the payload; the line it came from is kept next
to it (not inside the subject) so scripts can match subjects exactly and editors can jump to lines.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.findings import ExitStatus, Finding, Report, Severity
from vgpuctl.core.geometry.documents import line_for
from vgpuctl.core.versions import Version

API_VERSION = "vgpuctl.io/v1alpha1"


@dataclass(frozen=True, slots=True)
class LocatedFinding:
    finding: Finding
    source: str = ""
    line: int | None = None

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = dict(self.finding.to_dict())
        data["source"] = self.source
        data["line"] = self.line
        return data


class Emitter:
    """Collects findings for one payload, placing each at the line of its path."""

    def __init__(self, source: str, lines: Mapping[str, int]) -> None:
        self.source = source
        self.lines = lines
        self.findings: list[LocatedFinding] = []

    def emit(self, code: str, severity: Severity, path: str, message: str, line: int | None = None) -> None:
        where = line if line is not None else line_for(self.lines, path)
        self.findings.append(LocatedFinding(Finding(code, severity, path, message, hint_for(code)),
                                            self.source, where))


def sort_findings(findings: Iterable[LocatedFinding]) -> list[LocatedFinding]:
    """By source, then line (unplaced last), then code: the order a reader walks the file in."""
    return sorted(findings, key=lambda f: (f.source, f.line is None, f.line or 0, f.finding.code))


@dataclass
class GeometryReport:
    """What `geometry validate` found in its inputs, under the Volcano version it judged them for."""

    version: Version
    version_assumed: bool
    sources: Sequence[str] = ()
    findings: list[LocatedFinding] = field(default_factory=list)

    @property
    def report(self) -> Report:
        return Report([f.finding for f in self.findings])

    def exit_status(self, fail_on: Severity = Severity.ERROR) -> ExitStatus:
        return self.report.exit_status(fail_on)

    def summary(self) -> dict[str, int]:
        report = self.report
        return {
            "configs": len(self.sources),
            "errors": report.errors,
            "warnings": report.warnings,
            "infos": report.infos,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": "GeometryReport",
            "volcanoVersion": str(self.version),
            "volcanoVersionAssumed": self.version_assumed,
            "sources": list(self.sources),
            "findings": [f.to_dict() for f in self.findings],
            "summary": self.summary(),
        }
