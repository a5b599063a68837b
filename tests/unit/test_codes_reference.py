"""docs/codes.md is generated from the catalogue and must not go stale."""

from __future__ import annotations

from pathlib import Path

from vgpuctl.core.catalogue import CATALOGUE
from vgpuctl.render.codes_reference import render

DOC = Path(__file__).resolve().parents[2] / "docs" / "codes.md"


def test_reference_is_up_to_date() -> None:
    assert DOC.read_text() == render(), "regenerate: python -m vgpuctl.render.codes_reference > docs/codes.md"


def test_every_code_has_a_section() -> None:
    text = render()
    assert all(f"### {code} — " in text for code in CATALOGUE)
