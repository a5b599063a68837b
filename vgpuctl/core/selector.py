"""Kubernetes label selectors, one reading for every command that takes one.

`vgpuctl nodes -l`, `install --nodes` and the device-plugin node affinity all read a selector the way
`kubectl -l` does: equality (`k=v`, `k==v`, `k!=v`), existence (`k`, `!k`) and sets (`k in (a,b)`,
`k notin (a,b)`), comma-separated outside parentheses. Each requirement is kept as the operator the API
server's `NodeSelectorRequirement` uses, so a selector that matched nodes here becomes node affinity
that matches the same nodes there.

As in apimachinery, `k!=v` and `k notin (…)` also match objects without the label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

Operator = Literal["In", "NotIn", "Exists", "DoesNotExist"]

_KEY = r"[A-Za-z0-9](?:[A-Za-z0-9./_-]*[A-Za-z0-9])?"
_SET = re.compile(rf"^\s*({_KEY})\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EQ = re.compile(rf"^\s*({_KEY})\s*(==|=|!=)\s*([A-Za-z0-9._-]*)\s*$")
_EXISTS = re.compile(rf"^\s*(!?)\s*({_KEY})\s*$")
_VALUE = re.compile(r"^[A-Za-z0-9._-]*$")


class SelectorError(ValueError):
    """The text is not a label selector."""


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: Operator
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, Any]) -> bool:
        if self.operator == "Exists":
            return self.key in labels
        if self.operator == "DoesNotExist":
            return self.key not in labels
        if self.operator == "In":
            return self.key in labels and str(labels[self.key]) in self.values
        return self.key not in labels or str(labels[self.key]) not in self.values


@dataclass(frozen=True, slots=True)
class Selector:
    text: str
    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, Any]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    def node_affinity(self) -> dict[str, Any]:
        """The same selection as required node affinity (one term: every requirement must hold)."""
        expressions = [{"key": r.key, "operator": r.operator, **({"values": list(r.values)} if r.values else {})}
                       for r in self.requirements]
        return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": expressions}]}}}


def _split(text: str) -> list[str]:
    """Split at commas outside parentheses."""
    parts: list[str] = []
    depth, start = 0, 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    return parts


def parse_selector(text: str) -> Selector:
    """Parse `text`; raises `SelectorError` saying which requirement could not be read."""
    requirements: list[Requirement] = []
    for part in _split(text):
        if not part.strip():
            raise SelectorError(f"selector {text!r}: empty requirement")
        if match := _SET.match(part):
            values = tuple(v.strip() for v in match.group(3).split(",") if v.strip())
            if not values:
                raise SelectorError(f"selector {text!r}: {match.group(2)} needs at least one value")
            bad = [v for v in values if not _VALUE.match(v)]
            if bad:
                raise SelectorError(f"selector {text!r}: {bad[0]!r} is not a label value")
            requirements.append(Requirement(match.group(1), "In" if match.group(2) == "in" else "NotIn", values))
        elif match := _EQ.match(part):
            operator: Operator = "NotIn" if match.group(2) == "!=" else "In"
            requirements.append(Requirement(match.group(1), operator, (match.group(3),)))
        elif match := _EXISTS.match(part):
            requirements.append(Requirement(match.group(2), "DoesNotExist" if match.group(1) else "Exists"))
        else:
            raise SelectorError(f"selector {text!r}: cannot read {part.strip()!r} (expected e.g. gpu=true, "
                                "'zone in (a,b)', '!cpu-only')")
    return Selector(text, tuple(requirements))


def node_labels(node: Mapping[str, Any]) -> dict[str, str]:
    """A node object's labels as strings (empty when missing or not a mapping)."""
    meta = node.get("metadata")
    labels = meta.get("labels") if isinstance(meta, Mapping) else None
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}


__all__ = ["Operator", "Requirement", "Selector", "SelectorError", "node_labels", "parse_selector"]
