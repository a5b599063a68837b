"""Findings, severities and the report that owns the exit code.

Every problem vgpuctl reports — from `lint`, `doctor`, `geometry validate` or the webhook — is a
`Finding` with a stable code from the catalogue. A `Report` accumulates findings and is the only place
that turns them into an exit status, so the exit code can never depend on the output format.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import NamedTuple


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def at_least(self, other: Severity) -> bool:
        return self.rank >= other.rank


_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


class ExitStatus(enum.IntEnum):
    """Exit codes of every command, in every output format (docs/contracts.md#interfaces)."""

    OK = 0
    FINDINGS = 1
    USAGE = 2
    INCOMPLETE = 3


class Finding(NamedTuple):
    """One problem: immutable, equal and hashed by value.

    A named tuple rather than a frozen dataclass: the admission webhook makes one per problem in every
    review, and a frozen dataclass costs twice as much to build (each field goes through
    `object.__setattr__`). Like any tuple it also equals a plain tuple of the same values, iterates and
    orders; `orjson` does not serialise it (use `to_dict`), and `json` would write it as an array.
    """

    code: str
    severity: Severity
    subject: str
    message: str
    hint: str = ""

    def to_dict(self) -> dict[str, str]:
        return {
            "code": self.code,
            "severity": self.severity.value,
            "subject": self.subject,
            "message": self.message,
            "hint": self.hint,
        }


def by_severity(findings: Iterable[Finding]) -> list[Finding]:
    """`findings` most severe first (errors, warnings, then info), in their own order within a severity: the order
    `lint` and `why` show them in."""
    return sorted(findings, key=lambda f: -f.severity.rank)


@dataclass
class Report:
    """An ordered collection of findings that knows its summary and its exit status."""

    findings: list[Finding] = field(default_factory=list)

    def add(self, finding: Finding) -> None:
        self.findings.append(finding)

    def extend(self, findings: Iterable[Finding]) -> None:
        self.findings.extend(findings)

    def __iter__(self) -> Iterator[Finding]:
        return iter(self.findings)

    def __len__(self) -> int:
        return len(self.findings)

    def count(self, severity: Severity) -> int:
        return sum(1 for f in self.findings if f.severity is severity)

    @property
    def errors(self) -> int:
        return self.count(Severity.ERROR)

    @property
    def warnings(self) -> int:
        return self.count(Severity.WARNING)

    @property
    def infos(self) -> int:
        return self.count(Severity.INFO)

    def exit_status(self, fail_on: Severity = Severity.ERROR) -> ExitStatus:
        if any(f.severity.at_least(fail_on) for f in self.findings):
            return ExitStatus.FINDINGS
        return ExitStatus.OK
