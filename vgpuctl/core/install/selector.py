"""`--nodes SELECTOR`: a Kubernetes label selector, matched here and turned into node affinity.

The same selector decides which nodes install labels (`ascend=on`) and where the device-plugin DaemonSets
may run, so both must read it the same way: equality (`k=v`, `k==v`, `k!=v`), existence (`k`, `!k`) and
sets (`k in (a,b)`, `k notin (a,b)`), comma-separated, as `kubectl -l` takes them.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vgpuctl.core.install.modes import InstallError

_SET = re.compile(r"^\s*([A-Za-z0-9./_-]+)\s+(in|notin)\s+\(([^)]*)\)\s*$")
_EQ = re.compile(r"^\s*([A-Za-z0-9./_-]+)\s*(==|=|!=)\s*([A-Za-z0-9._-]*)\s*$")
_EXISTS = re.compile(r"^\s*(!?)\s*([A-Za-z0-9./_-]+)\s*$")


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    operator: str  # In | NotIn | Exists | DoesNotExist (the NodeSelectorRequirement operators)
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        if self.operator == "Exists":
            return self.key in labels
        if self.operator == "DoesNotExist":
            return self.key not in labels
        if self.operator == "In":
            return labels.get(self.key) in self.values
        return labels.get(self.key) not in self.values


@dataclass(frozen=True, slots=True)
class Selector:
    text: str
    requirements: tuple[Requirement, ...]

    def matches(self, labels: Mapping[str, str]) -> bool:
        return all(r.matches(labels) for r in self.requirements)

    def node_affinity(self) -> dict[str, Any]:
        expressions = [{"key": r.key, "operator": r.operator, **({"values": list(r.values)} if r.values else {})}
                       for r in self.requirements]
        return {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": expressions}]}}}


def _split(text: str) -> list[str]:
    """Split at commas outside parentheses."""
    parts, depth, current = [], 0, ""
    for char in text:
        depth += char == "("
        depth -= char == ")"
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    parts.append(current)
    return parts


def parse_selector(text: str) -> Selector:
    requirements: list[Requirement] = []
    for part in _split(text):
        if not part.strip():
            raise InstallError(f"--nodes {text!r}: empty requirement")
        if match := _SET.match(part):
            values = tuple(v.strip() for v in match.group(3).split(",") if v.strip())
            if not values:
                raise InstallError(f"--nodes {text!r}: {match.group(2)} needs at least one value")
            requirements.append(Requirement(match.group(1), "In" if match.group(2) == "in" else "NotIn", values))
        elif match := _EQ.match(part):
            requirements.append(Requirement(match.group(1), "NotIn" if match.group(2) == "!=" else "In",
                                            (match.group(3),)))
        elif match := _EXISTS.match(part):
            requirements.append(Requirement(match.group(2), "DoesNotExist" if match.group(1) else "Exists"))
        else:
            raise InstallError(f"--nodes {text!r}: cannot read {part.strip()!r} (expected e.g. gpu=true, "
                               "'zone in (a,b)', '!cpu-only')")
    return Selector(text, tuple(requirements))


def node_labels(node: Mapping[str, Any]) -> dict[str, str]:
    labels = (node.get("metadata") or {}).get("labels") or {}
    return {str(k): str(v) for k, v in labels.items()} if isinstance(labels, Mapping) else {}
