"""The `lint` verdict over many documents: one `review` per object, gathered into a LintReport.

Pure: the CLI reads files into `Document`s, this module reviews them and shapes the report the JSON
contract describes (docs/contracts.md#interfaces), and the renderers only print it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.findings import ExitStatus, Finding, Report, Severity
from vgpuctl.core.inputdoc import Document as Document  # its home is inputdoc: `why -f` reads one too
from vgpuctl.core.kubelist import is_list, item_defaults, with_defaults
from vgpuctl.core.lintlines import FieldLines, lines_of
from vgpuctl.core.patch import PatchOp
from vgpuctl.core.podrules import review
from vgpuctl.core.podrules.targets import as_mapping

API_VERSION = "vgpuctl.io/v1alpha1"


@dataclass(frozen=True, slots=True)
class LintItem:
    source: str
    kind: str
    namespace: str
    name: str
    allowed: bool
    findings: tuple[Finding, ...]
    patch: tuple[PatchOp, ...]
    document: int | None = None
    lines: tuple[int | None, ...] = ()  # each finding's line in the file, when known

    def located(self) -> list[tuple[Finding, int | None]]:
        """Each finding with its line (None when unknown)."""
        return [(f, self.lines[i] if i < len(self.lines) else None) for i, f in enumerate(self.findings)]

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "document": self.document,
            "kind": self.kind,
            "namespace": self.namespace,
            "name": self.name,
            "allowed": self.allowed,
            "findings": [{**f.to_dict(), "line": line} if line is not None else f.to_dict()
                         for f, line in self.located()],
            "patch": list(self.patch),
        }


@dataclass
class LintReport:
    items: list[LintItem] = field(default_factory=list)
    skipped: int = 0  # documents of kinds lint does not check
    objects_read: int = 0  # Kubernetes objects among the documents read (Lists and kinds lint skips included)
    unreadable: int = 0  # documents that are not valid YAML/JSON (each a VGL001 item)
    not_objects: list[str] = field(default_factory=list)  # "<source> is a string", … (for nothing_to_check)

    @property
    def nothing_to_check(self) -> str | None:
        """Why the input holds no object at all (it is empty, or only scalars, lists and mappings without a
        kind), else None. The CLI makes it a usage error, so `kubectl get … | vgpuctl lint -` fails when
        kubectl printed nothing (or `2>&1` sent it its error)."""
        if self.objects_read or self.unreadable:
            return None
        if not self.not_objects:
            return "the input is empty"
        shown = ", ".join(self.not_objects[:3]) + (", …" if len(self.not_objects) > 3 else "")
        return f"{shown}, not a Kubernetes object" if len(self.not_objects) == 1 else f"{shown}: none is an object"

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


def describe(value: Any) -> str:
    """What a YAML/JSON value is, for messages about a document that is not a Kubernetes object."""
    if isinstance(value, Mapping):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    return "a string" if isinstance(value, str) else f"a {type(value).__name__}"


def _not_an_object(source: str, what: str, advice: str = "", document: int | None = None) -> LintItem:
    finding = Finding("VGL001", Severity.ERROR, source, f"{what}, not a Kubernetes object (apiVersion, kind, "
                      f"metadata); kubectl would refuse it{advice}", hint_for("VGL001"))
    return LintItem(source, "", "", "", False, (finding,), (), document)


def _objects(doc: Document, result: LintReport) -> list[Document | LintItem]:
    """The objects a document holds, in order: itself, or the items of a List — `kind: List` (what `kubectl
    get -o yaml` prints) or a typed one (`PodList`, its items' kind from the List's); what is not an object
    becomes a VGL001 item in its place, as the doctor's snapshot reader refuses it. A mapping without a kind
    (a Helm values file next to the manifests) is skipped as before, but it is no object: an input of nothing
    else has nothing to check."""
    obj = doc.obj
    if not isinstance(obj, Mapping):
        what = describe(obj)
        result.not_objects.append(f"{doc.source} is {what}")
        return [_not_an_object(doc.source, f"the document is {what}",
                               "; put the objects under the items of a kind: List" if what == "a list" else "",
                               doc.document)]
    kind = obj.get("kind")
    if not isinstance(kind, str) or not kind:
        result.not_objects.append(f"{doc.source} is a mapping without kind")
        return [doc]
    result.objects_read += 1
    items = obj.get("items")
    if not is_list(obj) or items is None:
        return [doc]
    if not isinstance(items, list):
        return [_not_an_object(f"{doc.source}/items", f"the {kind}'s items is {describe(items)}",
                               document=doc.document)]
    item_kind, api_version = item_defaults(obj)
    # Each item at its own line when the List was YAML in block style; else (JSON, a flow-style List with
    # items sharing a line) the List's line and the item's index.
    placed = bool(doc.path) and len(set(doc.item_lines)) == len(items)
    sources = [f"{doc.path}:{doc.item_lines[i]}" if placed else f"{doc.source}/items[{i}]" for i in range(len(items))]
    ends = [*doc.item_lines[1:], doc.span[1]] if placed and doc.span else []
    return [Document(sources[i], with_defaults(item, item_kind, api_version), document=doc.document,
                     text=doc.text if ends else "", span=(doc.item_lines[i], ends[i]) if ends else None, item=True)
            if isinstance(item, Mapping)
            else _not_an_object(sources[i], f"items[{i}] of the {kind} is {describe(item)}", document=doc.document)
            for i, item in enumerate(items)]


def lint(documents: Iterable[Document], facts: ClusterFacts, *, apply_defaults: bool = True) -> LintReport:
    result = LintReport()
    field_lines = FieldLines()
    for outer in documents:
        if outer.error:
            result.unreadable += 1
            finding = Finding("VGL001", Severity.ERROR, outer.source, outer.error, hint_for("VGL001"))
            result.items.append(LintItem(outer.source, "", "", "", False, (finding,), (), outer.document))
            continue
        for doc in _objects(outer, result):
            if isinstance(doc, LintItem):
                result.items.append(doc)
                continue
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
                document=doc.document,
                lines=lines_of(field_lines, doc.text, doc.span, doc.item, doc.obj,
                               [f.subject for f in verdict.findings]) if verdict.findings else (),
            ))
    return result


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""
