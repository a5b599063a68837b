"""The DRA sink of the cluster-aware webhook (`vgpuctl.webhook.dra_state`): what it keeps of each object (bounded),
and a facts value that stays the same through claim churn, so the cluster facts built on it keep their caches."""

from __future__ import annotations

import sys
from typing import Any

from tests.webhook.test_dra_watch import claim, device_class, template
from vgpuctl.webhook.dra_state import MAX_CLASSES, MAX_NAME, DraState


def listed(state: DraState, **kinds: list[dict[str, Any]]) -> DraState:
    for kind in ("deviceclasses", "resourceclaims", "resourceclaimtemplates"):
        items = [kept for obj in kinds.get(kind, []) if (kept := state.keep(kind, obj)) is not None]
        state.replace(kind, items)
    return state


def test_nothing_known_until_a_kind_is_listed() -> None:
    state = DraState()
    assert state.facts() is None
    state.replace("resourceclaims", [])
    facts = state.facts()
    assert facts is not None and facts.classes_of("claim", "team-a", "x") is None


def test_claim_churn_keeps_the_facts_value_and_shows_through_it() -> None:
    state = listed(DraState(), deviceclasses=[device_class("fast", "gpu.nvidia.com")])
    before = state.facts()
    assert before is not None
    state.apply("resourceclaims", "ADDED", claim("c1", "fast"))
    state.apply("resourceclaimtemplates", "ADDED", template("t1", "gpu.nvidia.com"))
    assert state.facts() is before  # same value: the derived caches of the facts built on it stay
    assert before.classes_of("claim", "team-a", "c1") == ("fast",)
    assert before.classes_of("template", "team-a", "t1") == ("gpu.nvidia.com",)
    state.apply("resourceclaims", "DELETED", claim("c1", "fast"))
    assert before.classes_of("claim", "team-a", "c1") is None
    assert before.is_gpu_class("fast") is True


def test_a_class_change_or_a_re_list_makes_a_new_value() -> None:
    state = listed(DraState(), deviceclasses=[device_class("fast", "gpu.nvidia.com")])
    first = state.facts()
    state.apply("deviceclasses", "MODIFIED", device_class("fast", "dra.net"))
    second = state.facts()
    assert second is not first and second is not None and second.is_gpu_class("fast") is False
    state.replace("resourceclaims", [state.keep("resourceclaims", claim("c", "fast"))])  # type: ignore[list-item]
    third = state.facts()
    assert third is not second and third is not None and third.classes_of("claim", "team-a", "c") == ("fast",)


def test_what_is_kept_is_bounded_whatever_the_object_holds() -> None:
    state = DraState()
    huge = claim("big", "x")
    huge["spec"]["devices"]["requests"] = [{"name": f"r{i}", "exactly": {"deviceClassName": f"class-{i}"}}
                                           for i in range(5000)]
    huge["metadata"]["annotations"] = {"junk": "x" * 1_000_000}
    huge["status"] = {"allocation": {"devices": {"results": [{"device": "d" * 1000}] * 100}}}
    kept = state.keep("resourceclaims", huge)
    assert kept is not None and kept["key"] == ("team-a", "big")
    assert len(kept["value"]) == MAX_CLASSES and set(kept) == {"key", "value"}
    size = sys.getsizeof(kept["value"]) + sum(sys.getsizeof(c) for c in kept["value"])
    assert size < 20 * 1024

    too_long = claim("n" * (MAX_NAME + 1), "gpu.nvidia.com")
    assert state.keep("resourceclaims", too_long) is None
    long_class = claim("ok", "c" * (MAX_NAME + 1))
    assert state.keep("resourceclaims", long_class) == {"key": ("team-a", "ok"), "value": ()}
    assert state.keep("deviceclasses", {"kind": "DeviceClass", "metadata": {}}) is None
    assert state.keep("resourceclaimtemplates", {"kind": "ResourceClaimTemplate", "metadata": "junk"}) is None


def test_a_namespace_left_out_is_default_as_kubectl_applies_it() -> None:
    state = DraState()
    obj = claim("c", "gpu.nvidia.com")
    del obj["metadata"]["namespace"]
    assert state.keep("resourceclaims", obj) == {"key": ("default", "c"), "value": ("gpu.nvidia.com",)}
