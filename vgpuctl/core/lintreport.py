"""The `lint` verdict over many documents: one `review` per object, gathered into a LintReport.

Pure: the CLI reads files into `Document`s, this module reviews them and shapes the report the JSON
contract describes (SPEC §3), and the renderers only print it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.findings import ExitStatus, Finding, Report, Severity
from vgpuctl.core.patch import PatchOp
from vgpuctl.core.podrules import review
from vgpuctl.core.podrules.targets import as_mapping

API_VERSION = "vgpuctl.io/v1alpha1"


@dataclass(frozen=True, slots=True)
class Document:
    source: str  # "<file>:<doc index>"
    obj: Any  # the decoded YAML/JSON document, or None when it could not be read
    error: str = ""  # why it could not be read (reported as VGL001)


@dataclass(frozen=True, slots=True)
class LintItem:
    source: str
    kind: str
    namespace: str
    name: str
    allowed: bool
    findings: tuple[Finding, ...]
    patch: tuple[PatchOp, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "allowed": self.allowed,
            "findings": [f.to_dict() for f in self.findings],
            "patch": list(self.patch),
        }


@dataclass
class LintReport:
    items: list[LintItem] = field(default_factory=list)
    skipped: int = 0  # documents of kinds lint does not check

    @property
    def report(self) -> Report:
        return Report([f for item in self.items for f in item.findings])

    @property
    def denied(self) -> int:
        return sum(1 for item in self.items if not item.allowed)

    def exit_status(self, fail_on: Severity) -> ExitStatus:
        return self.report.exit_status(fail_on)

    def summary(self) -> dict[str, int]:
        report = self.report
        return {"objects": len(self.items), "denied": self.denied, "errors": report.errors,
                "warnings": report.warnings}

    def to_dict(self) -> dict[str, Any]:
        return {
            "apiVersion": API_VERSION,
            "kind": "LintReport",
            "items": [item.to_dict() for item in self.items],
            "summary": self.summary(),
        }


def expand(doc: Document) -> list[Document]:
    """A `kind: List` (what `kubectl get -o yaml` prints) becomes one document per item."""
    obj = doc.obj
    if isinstance(obj, Mapping) and obj.get("kind") == "List" and isinstance(obj.get("items"), list):
        return [Document(f"{doc.source}/items[{i}]", item) for i, item in enumerate(obj["items"])]
    return [doc]


def lint(documents: Iterable[Document], facts: ClusterFacts, *, apply_defaults: bool = True) -> LintReport:
    result = LintReport()
    from vgpuctl.core.catalogue import hint_for

    for outer in documents:
        if outer.error:
            finding = Finding("VGL001", Severity.ERROR, outer.source, outer.error, hint_for("VGL001"))
            result.items.append(LintItem(outer.source, "", "", "", False, (finding,), ()))
            continue
        for doc in expand(outer):
            verdict = review(doc.obj, facts, apply_defaults=apply_defaults)
            if not verdict.checked:
                result.skipped += 1
                continue
            metadata = as_mapping(as_mapping(doc.obj).get("metadata"))
            result.items.append(LintItem(
                source=doc.source,
                kind=str(as_mapping(doc.obj).get("kind", "")),
                namespace=_text(metadata.get("namespace")),
                name=_text(metadata.get("name") or metadata.get("generateName")),
                allowed=verdict.allowed,
                findings=verdict.findings,
                patch=verdict.patch,
            ))
    return result


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
