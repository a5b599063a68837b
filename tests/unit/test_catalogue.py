"""The finding-code catalogue holds exactly the docs/contracts.md#findings codes, each with a usable title, hint and
page."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vgpuctl.core.catalogue import (
    CATALOGUE,
    FAMILIES,
    CodeInfo,
    UnknownCodeError,
    codes,
    hint_for,
    lookup,
)
from vgpuctl.core.findings import Severity

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

# docs/contracts.md#findings: prefix -> (highest number, family).
RANGES: dict[str, tuple[int, str]] = {
    "VGP": (20, "pods-vgpu"),
    "VGS": (4, "pods-gpushare"),
    "VGH": (10, "pods-ascend-hami"),
    "VGA": (8, "pods-mindcluster"),
    "VGW": (2, "workloads"),
    "VGC": (14, "scheduler-config"),
    "VGM": (14, "device-config"),
    "VGN": (22, "nodes"),
    "VGK": (8, "cluster"),
    "VGX": (4, "cluster"),  # VGX004: beyond SPEC, the cluster-aware webhook's "no room right now"
    "VGL": (1, "input"),
}
EXPECTED_CODES = {f"{prefix}{n:03d}" for prefix, (last, _) in RANGES.items() for n in range(1, last + 1)}

# docs/contracts.md#findings severities that are not a plain `error`: code -> every severity it can be raised at.
# "Mutating default" rules also report at info when the default repaired the object.
NON_PLAIN_ERROR: dict[str, set[Severity]] = {
    "VGP002": {ERROR, INFO},
    "VGP006": {ERROR, WARNING},
    "VGP009": {ERROR, WARNING},
    "VGP010": {ERROR, WARNING},
    "VGP011": {WARNING},
    "VGP012": {WARNING},
    "VGP013": {WARNING},
    "VGP014": {ERROR, INFO},
    "VGP015": {ERROR, INFO},
    "VGP016": {ERROR, WARNING},
    "VGP017": {INFO},
    "VGP018": {WARNING},
    "VGS004": {ERROR, WARNING},
    "VGH002": {ERROR, INFO},
    "VGH009": {INFO},
    "VGH010": {WARNING, INFO},
    "VGA004": {ERROR, INFO},
    "VGA005": {ERROR, INFO},
    "VGA006": {WARNING},
    "VGA007": {INFO},
    "VGW001": {WARNING},
    "VGW002": {ERROR, WARNING},
    "VGC006": {WARNING},
    "VGC007": {WARNING},
    "VGC008": {WARNING},
    "VGC009": {WARNING},
    "VGC011": {WARNING},
    "VGM001": {WARNING},
    "VGM005": {WARNING},
    "VGM007": {ERROR, WARNING},
    "VGM014": {ERROR, WARNING},
    "VGM009": {WARNING},
    "VGM010": {INFO},
    "VGM012": {WARNING},
    "VGM013": {WARNING},
    "VGN007": {WARNING},
    "VGN009": {WARNING},
    "VGN010": {WARNING},
    "VGN011": {WARNING},
    "VGN012": {ERROR, WARNING},
    "VGN020": {ERROR, WARNING},
    "VGC014": {ERROR, INFO},
    "VGN013": {WARNING},
    "VGN015": {ERROR, WARNING},
    "VGN017": {ERROR, INFO},
    "VGN019": {ERROR, WARNING, INFO},
    "VGK006": {ERROR, WARNING},
    "VGX001": {WARNING},
    "VGX002": {WARNING},
    "VGX003": {ERROR, WARNING},
    "VGX004": {WARNING},
}

ALL = sorted(CATALOGUE.values(), key=lambda info: info.code)


def test_catalogue_holds_exactly_the_spec_codes() -> None:
    assert set(CATALOGUE) == EXPECTED_CODES
    # docs/contracts.md#findings (98) + VGL001 + VGM014 + VGX004 (cluster-aware webhook) + the GPU stacks and DRA
    # (issue 25): VGP019, VGP020, VGC014, VGN020, VGN021, VGN022
    assert len(CATALOGUE) == 107


def test_catalogue_is_ordered_by_code_and_keyed_by_its_own_code() -> None:
    assert list(CATALOGUE) == sorted(CATALOGUE)
    assert all(key == info.code for key, info in CATALOGUE.items())


def test_catalogue_is_read_only() -> None:
    with pytest.raises(TypeError):
        CATALOGUE["VGP999"] = CATALOGUE["VGP001"]  # type: ignore[index]


@pytest.mark.parametrize("info", ALL, ids=lambda info: info.code)
def test_family_follows_the_prefix(info: CodeInfo) -> None:
    assert info.family == RANGES[info.code[:3]][1]
    assert info.family in FAMILIES


@pytest.mark.parametrize("info", ALL, ids=lambda info: info.code)
def test_severities_match_the_spec(info: CodeInfo) -> None:
    expected = NON_PLAIN_ERROR.get(info.code, {ERROR})
    assert set(info.severities) == expected
    assert info.severity is max(expected, key=lambda s: s.rank)


@pytest.mark.parametrize("info", ALL, ids=lambda info: info.code)
def test_severity_is_the_most_severe_of_severities(info: CodeInfo) -> None:
    assert info.severity is max(info.severities, key=lambda s: s.rank)
    ranks = [s.rank for s in info.severities]
    assert ranks == sorted(ranks, reverse=True)
    assert len(set(info.severities)) == len(info.severities)


@pytest.mark.parametrize("info", ALL, ids=lambda info: info.code)
def test_texts_are_present_and_shaped(info: CodeInfo) -> None:
    assert info.title.strip() == info.title
    assert 0 < len(info.title) <= 90
    assert "\n" not in info.title
    assert info.hint.strip() and "\n" not in info.hint
    assert info.hint.rstrip().endswith((".", ")"))
    lines = info.doc.splitlines()
    assert 5 <= len(lines) <= 20, f"{info.code}: doc has {len(lines)} lines"
    assert not lines[0].startswith(" "), "doc must be dedented"
    assert "Evidence:" in info.doc
    # Evidence is a docs/ page or an upstream path a reader can open.
    assert any(mark in info.doc for mark in ("docs/", "volcano-sh/", "Project-HAMi/")) or info.family == "input"


@pytest.mark.parametrize("code", ["VGW002", "VGX003"])
def test_aggregating_codes_explain_they_reuse_the_pod_rule_code(code: str) -> None:
    assert "own code" in CATALOGUE[code].doc


def test_facts_that_are_easy_to_get_wrong() -> None:
    assert "1 t T TRUE true True 0 f F FALSE false False" in lookup("VGC005").doc
    assert "gpuMemoryFactor" in lookup("VGP005").hint
    assert "1.12" in lookup("VGN002").title


@given(st.sampled_from(sorted(EXPECTED_CODES)), st.data())
def test_lookup_is_case_insensitive(code: str, data: st.DataObject) -> None:
    flips = data.draw(st.lists(st.booleans(), min_size=len(code), max_size=len(code)))
    mixed = "".join(ch.lower() if flip else ch for ch, flip in zip(code, flips, strict=True))
    assert lookup(mixed) is CATALOGUE[code]
    assert lookup(f"  {mixed}\n") is CATALOGUE[code]


@pytest.mark.parametrize("bad", ["VGP000", "VGP099", "VGZ001", "", "nonsense"])
def test_lookup_rejects_unknown_codes(bad: str) -> None:
    with pytest.raises(KeyError) as caught:
        lookup(bad)
    assert isinstance(caught.value, UnknownCodeError)
    assert repr(bad) in str(caught.value)


def test_unknown_code_message_suggests_close_codes() -> None:
    with pytest.raises(KeyError, match=r"did you mean .*VGP005"):
        lookup("VGP05")


def test_hint_for_returns_the_entry_hint() -> None:
    assert hint_for("vgp005") == CATALOGUE["VGP005"].hint
    with pytest.raises(KeyError):
        hint_for("VGP999")


def test_codes_filters_by_prefix_in_order() -> None:
    assert codes() == list(CATALOGUE)
    assert codes("vgp") == [f"VGP{n:03d}" for n in range(1, 21)]
    assert codes("VGN01") == [f"VGN{n:03d}" for n in range(10, 20)]
    assert codes("XYZ") == []


def test_code_info_validates_its_invariants() -> None:
    base = CATALOGUE["VGP006"]
    with pytest.raises(ValueError, match="most severe"):
        dataclasses.replace(base, severity=WARNING)
    with pytest.raises(ValueError, match="family"):
        dataclasses.replace(base, family="pods")
    defaulted = CodeInfo("VGX999", WARNING, "cluster", "t", "h.", "  a\n  b\n")
    assert defaulted.severities == (WARNING,)
    assert defaulted.doc == "a\nb"
    with pytest.raises(dataclasses.FrozenInstanceError):
        base.title = "changed"  # type: ignore[misc]
