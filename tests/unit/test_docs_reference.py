"""The behaviour reference in docs/ holds together: every relative link in docs/*.md and README.md names a
file that exists and, with a `#fragment`, a heading of that file (GitHub's heading anchors). Code comments
link to these anchors (issue 19), so renaming a heading must fail here, not silently in a reader's browser."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} (.+?)\s*$")


def anchors(page: Path) -> set[str]:
    """GitHub's anchors for a page's headings: lower case, punctuation but `-` and `_` dropped, spaces to `-`,
    a repeated anchor numbered `-1`, `-2`, … (headings inside fenced code blocks do not count)."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    fenced = False
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
            continue
        match = None if fenced else _HEADING.match(line)
        if match is None:
            continue
        slug = re.sub(r"[^\w\- ]", "", match.group(1).replace("`", "").lower()).replace(" ", "-")
        if slug in seen:
            seen[slug] += 1
            slug = f"{slug}-{seen[slug]}"
        else:
            seen[slug] = 0
        found.add(slug)
    return found


def test_anchor_rules_match_github() -> None:
    page = ROOT / "docs" / "volcano.md"
    assert {"deviceshare-arguments", "device-config-schema", "compatibility-matrix"} <= anchors(page)


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_relative_links_resolve(page: Path) -> None:
    broken = []
    for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
        for target in _LINK.findall(line):
            if re.match(r"^[a-z]+:", target):  # https:, mailto:
                continue
            path, _, fragment = target.partition("#")
            linked = (page.parent / path).resolve() if path else page
            if not linked.exists():
                broken.append(f"{page.name}:{number}: {target} (no such file)")
            elif fragment and linked.suffix == ".md" and fragment not in anchors(linked):
                broken.append(f"{page.name}:{number}: {target} (no such heading)")
    assert not broken, "\n".join(broken)


_CODE_REF = re.compile(r"(?<!`)\bdocs/([\w-]+\.md)(?:#([\w-]+))?")
SOURCES = [p for d in ("vgpuctl", "schemas", "tests", "benchmarks") for p in sorted((ROOT / d).rglob("*"))
           if p.suffix in (".py", ".json") and "docs" not in p.relative_to(ROOT).parts[1:2]]


def test_every_docs_reference_in_code_resolves() -> None:
    """Comments, docstrings, catalogue pages and schemas cite `docs/<page>.md#<anchor>` in place of the
    research sections they used to cite; each must name a page and a heading that exist."""
    broken, cited = [], 0
    for source in SOURCES:
        for number, line in enumerate(source.read_text(encoding="utf-8").splitlines(), 1):
            for page, anchor in _CODE_REF.findall(line):
                cited += 1
                target = ROOT / "docs" / page
                if not target.is_file():
                    broken.append(f"{source.relative_to(ROOT)}:{number}: docs/{page} (no such file)")
                elif anchor and anchor not in anchors(target):
                    broken.append(f"{source.relative_to(ROOT)}:{number}: docs/{page}#{anchor} (no such heading)")
    assert cited > 100  # the citations are there to check
    assert not broken, "\n".join(broken)


def test_no_citation_of_documents_outside_the_repository() -> None:
    """Issue 19: the product spec's and research notes' section marks named documents a reader of this
    repository cannot open."""
    mark = "\u00a7"  # spelled out, so this file does not match itself
    stale = re.compile(f"SPEC ?{mark}|V{mark}|H{mark}|SPEC\\.md")
    hits = [f"{p.relative_to(ROOT)}:{n}" for p in [*SOURCES, *PAGES]
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if stale.search(line)]
    assert not hits, "\n".join(hits)
