"""The finding-code catalogue: what every code means, how bad it can get and how to fix it.

Every finding vgpuctl reports carries a stable code (docs/contracts.md#findings), and a code never changes meaning once
released. Keeping the catalogue as data in one place means the rules take their hints from it,
`vgpuctl explain` prints its pages offline, the renderers and the webhook agree on titles, and a test
pins the exact set of codes so none is silently dropped or renumbered.

The entries live in three data modules, one per area (`pods`, `config`, `cluster`); this module defines
the entry type, assembles the ordered `CATALOGUE` and offers case-insensitive lookups.
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Final

from vgpuctl.core.findings import Severity

__all__ = [
    "CATALOGUE",
    "FAMILIES",
    "HINTS",
    "CodeInfo",
    "UnknownCodeError",
    "codes",
    "hint_for",
    "lookup",
]

#: The areas a code belongs to, in the order the SPEC lists them.
FAMILIES: Final = (
    "pods-vgpu",
    "pods-gpushare",
    "pods-ascend-hami",
    "pods-mindcluster",
    "workloads",
    "input",
    "scheduler-config",
    "device-config",
    "nodes",
    "cluster",
)


@dataclass(frozen=True, slots=True)
class CodeInfo:
    """One entry of the catalogue.

    `severity` is the most severe level the rule can raise; `severities` lists every level it can be
    raised at, most severe first (it defaults to just `severity`). `doc` is a short Markdown page; its
    common indentation is removed on construction, so entries can be written indented in the source.
    """

    code: str
    severity: Severity
    family: str
    title: str
    hint: str
    doc: str
    severities: tuple[Severity, ...] = ()

    def __post_init__(self) -> None:
        levels = set(self.severities) | {self.severity}
        ordered = tuple(sorted(levels, key=lambda s: s.rank, reverse=True))
        object.__setattr__(self, "severities", ordered)
        object.__setattr__(self, "doc", inspect.cleandoc(self.doc))
        if ordered[0] is not self.severity:
            raise ValueError(
                f"{self.code}: severity {self.severity.value} is not the most severe of "
                f"{[s.value for s in ordered]}"
            )
        if self.family not in FAMILIES:
            raise ValueError(f"{self.code}: unknown family {self.family!r}")


class UnknownCodeError(KeyError):
    """Raised by `lookup` for a code that is not in the catalogue; prints its message unquoted."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown finding code"


# The data modules import `CodeInfo` from this package, so they are imported only once it is defined.
from vgpuctl.core.catalogue import cluster, config, pods  # noqa: E402


def _index(*groups: tuple[CodeInfo, ...]) -> Mapping[str, CodeInfo]:
    table: dict[str, CodeInfo] = {}
    for group in groups:
        for info in group:
            if info.code in table:
                raise ValueError(f"finding code {info.code} is defined twice")
            table[info.code] = info
    return MappingProxyType(dict(sorted(table.items())))


#: Every finding code, ordered by code.
CATALOGUE: Final[Mapping[str, CodeInfo]] = _index(pods.ENTRIES, config.ENTRIES, cluster.ENTRIES)

_PREFIXES: Final = tuple(dict.fromkeys(code[:3] for code in CATALOGUE))


def _normalise(code: str) -> str:
    return code.strip().upper()


def lookup(code: str) -> CodeInfo:
    """Return the entry for `code` (any case, surrounding blanks ignored).

    Raises `UnknownCodeError` (a `KeyError`) naming the closest known codes when there is no such code.
    """
    key = _normalise(code)
    info = CATALOGUE.get(key)
    if info is not None:
        return info
    message = f"unknown finding code {code!r}"
    close = difflib.get_close_matches(key, CATALOGUE.keys(), n=3, cutoff=0.6)
    if close:
        message += f"; did you mean {', '.join(close)}?"
    message += f" (codes are {', '.join(_PREFIXES)} followed by three digits, e.g. VGP005)"
    raise UnknownCodeError(message)


class _Hints(dict[str, str]):
    """Every code's hint by exact code; any other spelling goes through `lookup` (which raises
    `UnknownCodeError` for an unknown code)."""

    def __missing__(self, code: str) -> str:
        return lookup(code).hint


#: `HINTS[code]` is `hint_for(code)` without the call: the pod rules look up a hint per finding they make.
HINTS: Final[Mapping[str, str]] = _Hints({code: info.hint for code, info in CATALOGUE.items()})


def hint_for(code: str) -> str:
    """The fix-it hint of `code`; raises `UnknownCodeError` for an unknown code."""
    return HINTS[code]


def codes(prefix: str = "") -> list[str]:
    """All codes starting with `prefix` (any case), in catalogue order; all codes when it is empty."""
    wanted = _normalise(prefix)
    return [code for code in CATALOGUE if code.startswith(wanted)]
