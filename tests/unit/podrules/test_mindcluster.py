"""Ascend 310P dynamic vNPU in MindCluster mode (`VGA001`–`VGA008`, docs/contracts.md#finding-families, research
docs/ascend.md#mindcluster and docs/checks.md#check-index-mindcluster-pods)."""

from __future__ import annotations

from typing import Any

import jsonpatch
import pytest

from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.podrules import review

from .conftest import ERROR, INFO, WARNING, codes, container, find, only, pod
from .families import NPU_CORE, RING_310P

EXPLICIT = {"vnpu-level": "low", "vnpu-dvpp": "null"}  # the defaults, spelled out: nothing to add


def mc_pod(cores: Any, labels: dict[str, Any] | None = None, *, ring: bool = True, **kw: Any) -> dict[str, Any]:
    """A 310P vNPU pod; `labels` are added to the ring-controller label (left out with `ring=False`)."""
    all_labels = {**(RING_310P if ring else {}), **(labels or {})}
    return pod(container("npu", limits={NPU_CORE: cores}), labels=all_labels or None, **kw)


# ---- VGA001 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("ring", [None, "Ascend-310P", "ascend-310p", "ascend-910"])
def test_vga001_ring_controller_label_missing_or_wrong(ring: str | None) -> None:
    labels = EXPLICIT if ring is None else {**EXPLICIT, "ring-controller.atlas": ring}
    r = review(mc_pod(1, labels, ring=False))
    f = only(r, "VGA001")
    assert f.severity is ERROR
    assert f.subject == "label/ring-controller.atlas"
    assert ("absent" if ring is None else f'"{ring}"') in f.message and "deviceshare ignores" in f.message
    assert r.allowed is False
    assert find(r, "VGA007") == []  # the request resolves to nothing: Volcano never sees it


def test_vga001_no_defaults_without_the_ring_label() -> None:
    assert review(mc_pod(2, ring=False)).patch == ()


def test_vga001_silent_with_the_exact_label() -> None:
    r = review(mc_pod(1, EXPLICIT))
    assert codes(r) == [("VGA007", INFO)] and r.allowed is True


def test_vga001_silent_without_npu_core() -> None:
    assert review(pod(container("plain"), labels={"vnpu-level": "weird"})).findings == ()


# ---- VGA002 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("cores", [3, 0, 5, 6, 7, 9, 12])
def test_vga002_core_count_without_a_template(cores: int) -> None:
    r = review(mc_pod(cores, EXPLICIT))
    f = only(r, "VGA002")
    assert f.severity is ERROR
    assert f.subject == "container/npu"
    assert f"{NPU_CORE}: {cores} has no vNPU template" in f.message and "multiple of 8" in f.message
    assert r.allowed is False


@pytest.mark.parametrize(("cores", "why"), [("1.5", "not a whole number"), ("abc", "not a valid Kubernetes quantity")])
def test_vga002_not_a_number(cores: str, why: str) -> None:
    assert why in only(review(mc_pod(cores, EXPLICIT)), "VGA002").message


@pytest.mark.parametrize("cores", [1, 2, 4, 8, 16, "4"])
def test_vga002_valid_core_counts(cores: Any) -> None:
    r = review(mc_pod(cores, {} if cores in (8, 16) else EXPLICIT))
    assert find(r, "VGA002") == [] and r.allowed is True


def test_vga002_cores_per_chip_from_cluster_facts() -> None:
    ten = ClusterFacts(cores_per_310p_chip=10)
    assert find(review(mc_pod(10), ten), "VGA002") == []
    assert find(review(mc_pod(20), ten), "VGA002") == []
    f = only(review(mc_pod(8), ten), "VGA002")
    assert "multiple of 10" in f.message


# ---- VGA003 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("dvpp", ["maybe", "Yes", "NULL", "", True])
def test_vga003_dvpp_value(dvpp: Any) -> None:
    # `True` is what YAML makes of an unquoted `vnpu-dvpp: yes`.
    f = only(review(mc_pod(4, {"vnpu-level": "low", "vnpu-dvpp": dvpp})), "VGA003")
    assert f.severity is ERROR
    assert f.subject == "label/vnpu-dvpp"
    assert "not one of yes, no, null" in f.message and str(dvpp) in f.message


@pytest.mark.parametrize("dvpp", ["yes", "no", "null"])
def test_vga003_silent_for_valid_values(dvpp: str) -> None:
    assert find(review(mc_pod(4, {"vnpu-level": "low", "vnpu-dvpp": dvpp})), "VGA003") == []


# ---- VGA004 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("level", ["medium", "HIGH", ""])
def test_vga004_level_value(level: str) -> None:
    f = only(review(mc_pod(2, {"vnpu-level": level, "vnpu-dvpp": "null"})), "VGA004")
    assert f.severity is ERROR and f.subject == "label/vnpu-level" and f'"{level}"' in f.message


def test_vga004_absent_level_is_defaulted_to_low() -> None:
    p = mc_pod(2, {"vnpu-dvpp": "null"})
    r = review(p)
    f = only(r, "VGA004")
    assert f.severity is INFO and "added label vnpu-level: low" in f.message
    assert r.patch == ({"op": "add", "path": "/metadata/labels/vnpu-level", "value": "low"},)
    assert jsonpatch.apply_patch(p, r.patch)["metadata"]["labels"]["vnpu-level"] == "low"


def test_vga004_no_default_when_defaults_are_off_or_for_existing_pods() -> None:
    p = mc_pod(2, {"vnpu-dvpp": "null"})
    for r in (review(p, apply_defaults=False), review(p, existing=True)):
        assert find(r, "VGA004") == [] and r.patch == () and r.allowed is True


@pytest.mark.parametrize("level", ["low", "high"])
def test_vga004_silent_for_valid_levels(level: str) -> None:
    assert find(review(mc_pod(2, {"vnpu-level": level, "vnpu-dvpp": "null"})), "VGA004") == []


# ---- VGA005 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("cores", "dvpp"), [(2, "yes"), (2, "no"), (1, "yes"), (1, "no")])
def test_vga005_dvpp_on_a_small_request(cores: int, dvpp: str) -> None:
    r = review(mc_pod(cores, {"vnpu-level": "low", "vnpu-dvpp": dvpp}))
    f = only(r, "VGA005")
    assert f.severity is ERROR and f.subject == "label/vnpu-dvpp"
    assert f"{dvpp} on a {cores}-core request" in f.message
    assert find(r, "VGA007") == []


def test_vga005_absent_dvpp_is_defaulted_to_null() -> None:
    r = review(mc_pod(2, {"vnpu-level": "low"}))
    f = only(r, "VGA005")
    assert f.severity is INFO and 'added label vnpu-dvpp: "null"' in f.message
    assert r.patch == ({"op": "add", "path": "/metadata/labels/vnpu-dvpp", "value": "null"},)


def test_vga005_both_defaults_in_one_patch() -> None:
    p = mc_pod(4)
    r = review(p)
    assert [f.code for f in r.findings if f.severity is INFO] == ["VGA004", "VGA005", "VGA007"]
    patched = jsonpatch.apply_patch(p, r.patch)
    assert patched["metadata"]["labels"] == {**RING_310P, "vnpu-level": "low", "vnpu-dvpp": "null"}
    assert review(patched).patch == ()


def test_vga005_null_on_a_small_request_is_fine() -> None:
    assert find(review(mc_pod(2, EXPLICIT)), "VGA005") == []


def test_vga005_dvpp_on_a_four_core_request_is_fine() -> None:
    assert find(review(mc_pod(4, {"vnpu-level": "low", "vnpu-dvpp": "yes"})), "VGA005") == []


# ---- VGA006 ----------------------------------------------------------------------------------------


def test_vga006_labels_on_a_whole_card_request() -> None:
    r = review(mc_pod(8, {"vnpu-level": "high", "vnpu-dvpp": "yes"}))
    found = find(r, "VGA006")
    assert {f.subject for f in found} == {"label/vnpu-level", "label/vnpu-dvpp"}
    assert all(f.severity is WARNING and "whole-card request (8 cores)" in f.message for f in found)
    assert r.allowed is True


def test_vga006_invalid_dvpp_on_a_whole_card_is_only_a_warning() -> None:
    # Volcano ignores dvpp for whole cards, so "maybe" fails nothing there (docs/ascend.md#mindcluster-pod).
    r = review(mc_pod(16, {"vnpu-dvpp": "maybe"}))
    assert codes(r) == [("VGA006", WARNING), ("VGA007", INFO)]


def test_vga006_silent_without_labels_and_never_defaulted_for_whole_cards() -> None:
    r = review(mc_pod(8))
    assert codes(r) == [("VGA007", INFO)] and r.patch == ()


# ---- VGA007 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cores", "dvpp", "level", "template"),
    [
        (1, "null", "high", "vir01"),
        (2, "null", "low", "vir02_1c"),
        (2, "null", "high", "vir02"),
        (4, "yes", "low", "vir04_4c_dvpp"),
        (4, "yes", "high", "vir04_4c_dvpp"),
        (4, "no", "high", "vir04_3c_ndvpp"),
        (4, "null", "low", "vir04_3c"),
        (4, "null", "high", "vir04"),
    ],
)
def test_vga007_template_table(cores: int, dvpp: str, level: str, template: str) -> None:
    f = only(review(mc_pod(cores, {"vnpu-level": level, "vnpu-dvpp": dvpp})), "VGA007")
    assert f.severity is INFO and f.subject == "container/npu"
    assert f"resolves to template {template}" in f.message
    assert f"resolves to template {template}_" not in f.message  # vir04 must not match vir04_3c


def test_vga007_high_level_mentions_the_downgrade() -> None:
    f = only(review(mc_pod(4, {"vnpu-level": "high", "vnpu-dvpp": "null"})), "VGA007")
    assert "downgraded to vir04_3c" in f.message


def test_vga007_whole_chips() -> None:
    assert "2 whole 310P chip(s)" in only(review(mc_pod(16)), "VGA007").message


def test_vga007_silent_for_an_invalid_request() -> None:
    assert find(review(mc_pod(3, EXPLICIT)), "VGA007") == []


# ---- VGA008 ----------------------------------------------------------------------------------------


def test_vga008_request_above_every_node_capacity() -> None:
    r = review(mc_pod(16), ClusterFacts(npu_core_capacities=(8,)))
    f = only(r, "VGA008")
    assert f.severity is ERROR and f.subject == "container/npu"
    assert "16 exceeds the largest node capacity (8)" in f.message
    assert r.allowed is False


def test_vga008_silent_within_capacity_or_without_facts() -> None:
    assert find(review(mc_pod(16), ClusterFacts(npu_core_capacities=(8, 16))), "VGA008") == []
    assert find(review(mc_pod(64)), "VGA008") == []
