"""Label selectors (`-l`) as kubectl understands the equality-based subset: `a=b,c!=d,e,!f`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any


class SelectorError(ValueError):
    pass


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "exists", "!exists"
    value: str = ""

    def matches(self, labels: Mapping[str, Any]) -> bool:
        if self.op == "exists":
            return self.key in labels
        if self.op == "!exists":
            return self.key not in labels
        if self.op == "=":
            return labels.get(self.key) == self.value
        return labels.get(self.key) != self.value


def parse_selector(text: str) -> tuple[Requirement, ...]:
    requirements = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            raise SelectorError(f"empty requirement in selector {text!r}")
        if "!=" in part:
            key, value = part.split("!=", 1)
            requirements.append(Requirement(key.strip(), "!=", value.strip()))
        elif "==" in part or "=" in part:
            key, value = part.split("==", 1) if "==" in part else part.split("=", 1)
            requirements.append(Requirement(key.strip(), "=", value.strip()))
        elif part.startswith("!"):
            requirements.append(Requirement(part[1:].strip(), "!exists"))
        else:
            requirements.append(Requirement(part, "exists"))
        if not requirements[-1].key or any(c in requirements[-1].key for c in " ()"):
            raise SelectorError(f"bad key in selector requirement {part!r} (set-based selectors are not supported)")
    return tuple(requirements)


def matches(requirements: tuple[Requirement, ...], labels: Mapping[str, Any]) -> bool:
    return all(r.matches(labels) for r in requirements)
