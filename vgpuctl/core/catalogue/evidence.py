"""The evidence behind a code's page, as references a reader can open.

A catalogue page cites the project's behaviour reference (`docs/vgpu.md#vgpu-filter`) and upstream source
(volcano-sh/volcano `pkg/scheduler/api/devices/nvidia/vgpu/utils.go`). `evidence(doc)` lists them once
each, in order: a docs page with its anchor, and an upstream file as a GitHub address on the repository's
default branch (the page names the tag where it matters). Where the docs live on disk is the caller's
business (the CLI resolves them in the installed package), so this stays pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_DOCS = re.compile(r"(?<!`)\bdocs/([\w-]+\.md)(#[\w-]+)?")
# `owner/repo` followed by a back-quoted path inside the repository (a file or a folder ending in `/`).
_UPSTREAM = re.compile(r"\b(volcano-sh/volcano|Project-HAMi/[\w.-]+|kubernetes/kubernetes|kubernetes-sigs/[\w.-]+"
                       r"|NVIDIA/[\w.-]+)\s+`([\w./-]+)`")


@dataclass(frozen=True, slots=True)
class Evidence:
    kind: str  # "docs" | "upstream"
    ref: str  # "vgpu.md#vgpu-filter" | "https://github.com/volcano-sh/volcano/blob/HEAD/pkg/…"


def evidence(doc: str) -> tuple[Evidence, ...]:
    """Every docs page and upstream path `doc` cites, first mention first, each once."""
    found: list[tuple[int, Evidence]] = []
    for m in _DOCS.finditer(doc):
        found.append((m.start(), Evidence("docs", m.group(1) + (m.group(2) or ""))))
    for m in _UPSTREAM.finditer(doc):
        repo, path = m.group(1), m.group(2)
        kind = "tree" if path.endswith("/") else "blob"
        found.append((m.start(), Evidence("upstream", f"https://github.com/{repo}/{kind}/HEAD/{path.rstrip('/')}")))
    seen: dict[Evidence, None] = {}
    for _, item in sorted(found, key=lambda pair: pair[0]):
        seen.setdefault(item, None)
    return tuple(seen)


def link_docs(text: str) -> str:
    """`docs/X.md#a` as a Markdown link relative to docs/ itself (for the generated docs/codes.md)."""
    return _DOCS.sub(lambda m: f"[{m.group(1)}{m.group(2) or ''}]({m.group(1)}{m.group(2) or ''})", text)
