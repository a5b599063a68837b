"""The one label-selector reading behind `nodes -l`, `install --nodes` and the plugins' node affinity."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vgpuctl.core.selector import Requirement, SelectorError, node_labels, parse_selector


@pytest.mark.parametrize(("text", "labels", "expected"), [
    ("a=b", {"a": "b"}, True),
    ("a==b", {"a": "c"}, False),
    ("a=b", {}, False),
    ("a!=b", {}, True),  # apimachinery: != also matches objects without the label
    ("a!=b", {"a": "b"}, False),
    ("a", {"a": ""}, True),
    ("!a", {"a": "x"}, False),
    ("!a", {}, True),
    ("a=b,c", {"a": "b"}, False),
    ("a=b,c", {"a": "b", "c": "1"}, True),
    ("zone in (a, b)", {"zone": "b"}, True),
    ("zone in (a,b)", {}, False),
    ("zone notin (a,b)", {}, True),
    ("zone notin (a,b)", {"zone": "a"}, False),
    ("nvidia.com/gpu.present=true,zone in (x,y)", {"nvidia.com/gpu.present": "true", "zone": "y"}, True),
    ("a=", {"a": ""}, True),
])
def test_matches_like_kubectl(text: str, labels: dict[str, str], expected: bool) -> None:
    assert parse_selector(text).matches(labels) is expected


@pytest.mark.parametrize("text", ["", "a,,b", "a in ()", "a in (x y)", "a b", "=b", "a=(b)", "a in (x", "-a"])
def test_bad_selectors_say_which_part(text: str) -> None:
    with pytest.raises(SelectorError, match="selector"):
        parse_selector(text)


def test_operators_are_node_selector_operators() -> None:
    selector = parse_selector("a=1,b!=2,c in (x,y),d notin (z),e,!f")
    assert selector.requirements == (
        Requirement("a", "In", ("1",)), Requirement("b", "NotIn", ("2",)), Requirement("c", "In", ("x", "y")),
        Requirement("d", "NotIn", ("z",)), Requirement("e", "Exists"), Requirement("f", "DoesNotExist"))
    terms = selector.node_affinity()["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchExpressions"][4] == {"key": "e", "operator": "Exists"}


def test_node_labels_tolerate_garbage() -> None:
    assert node_labels({"metadata": {"labels": {"a": 1}}}) == {"a": "1"}
    assert node_labels({"metadata": "x"}) == {} and node_labels({}) == {}


_keys = st.sampled_from(["a", "b", "zone", "nvidia.com/gpu.present"])
_values = st.sampled_from(["x", "y", "true"])


@given(key=_keys, value=_values, labels=st.dictionaries(_keys, _values, max_size=4))
def test_equality_set_and_negated_forms_agree(key: str, value: str, labels: dict[str, str]) -> None:
    equal = parse_selector(f"{key}={value}").matches(labels)
    assert parse_selector(f"{key} in ({value})").matches(labels) is equal
    assert parse_selector(f"{key}!={value}").matches(labels) is (not equal)
    assert parse_selector(f"{key} notin ({value})").matches(labels) is (not equal)
