"""gpushare / gpu-number pod rules (`VGS001`–`VGS004`, docs/contracts.md#finding-families, research
docs/vgpu.md#gpushare and docs/checks.md#check-index-gpushare-pods)."""

from __future__ import annotations

from typing import Any

import pytest

from vgpuctl.core.facts import ClusterFacts, GpushareNode
from vgpuctl.core.podrules import review

from .conftest import ERROR, WARNING, codes, container, find, only, pod

MEM, NUM = "volcano.sh/gpu-memory", "volcano.sh/gpu-number"

# Two gpushare nodes: the largest card has 16000 MiB, the most healthy cards on one node is 4.
NODES = ClusterFacts(gpushare_nodes=(GpushareNode("small", 8000, 2), GpushareNode("big", 16000, 4)))


def mem_pod(*values: Any, init: tuple[Any, ...] = (), **kw: Any) -> dict[str, Any]:
    """A pod with one app container per `values` entry and one init container per `init` entry."""
    app = [container(f"c{i}", limits={MEM: v}) for i, v in enumerate(values)]
    extra: dict[str, Any] = {}
    if init:
        extra["initContainers"] = [container(f"i{i}", limits={MEM: v}) for i, v in enumerate(init)]
    return pod(containers=app, **extra, **kw)


# ---- VGS001 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "why"),
    [
        (0, "0 is not a positive integer"),
        (-1, "-1 is not a positive integer"),
        ("1.5", "is not a whole number"),
        (1.5, "is not a whole number"),
        ("abc", "is not a valid Kubernetes quantity"),
        ("", "is not a valid Kubernetes quantity"),
    ],
)
@pytest.mark.parametrize("resource", [MEM, NUM])
def test_vgs001_value_is_not_a_positive_integer(resource: str, value: Any, why: str) -> None:
    r = review(pod(container("gpu", limits={resource: value})))
    f = only(r, "VGS001")
    assert f.severity is ERROR
    assert f.subject == "container/gpu"
    assert resource in f.message and why in f.message
    assert r.allowed is False


def test_vgs001_checks_init_containers_too() -> None:
    p = pod(container("app", limits={MEM: 1000}), initContainers=[container("warmup", limits={MEM: "-5"})])
    f = only(review(p), "VGS001")
    assert f.subject == "initContainer/warmup"
    assert 'initContainer "warmup"' in f.message and "-5" in f.message


def test_vgs001_reads_requests_when_limits_are_missing() -> None:
    # The request is copied to limits (VGP014 default) and then validated like a limit.
    r = review(pod(container("gpu", requests={NUM: 0})))
    assert ("VGS001", ERROR) in codes(r)


@pytest.mark.parametrize("value", [1, "1", 1024, "4096", 7])
@pytest.mark.parametrize("resource", [MEM, NUM])
def test_vgs001_silent_for_positive_integers(resource: str, value: Any) -> None:
    r = review(pod(container("gpu", limits={resource: value})))
    assert r.findings == ()
    assert r.allowed is True and r.patch == ()


def test_vgs001_one_finding_per_bad_container() -> None:
    r = review(mem_pod(0, 100, "x", init=(0,)))
    assert sorted(f.subject for f in find(r, "VGS001")) == ["container/c0", "container/c2", "initContainer/i0"]


# ---- VGS002 ----------------------------------------------------------------------------------------


def test_vgs002_memory_and_number_in_one_pod() -> None:
    p = pod(container("a", limits={MEM: 1000}), container("b", limits={NUM: 1}))
    f = only(review(p), "VGS002")
    assert f.severity is ERROR
    assert f.subject == "spec.containers"
    assert MEM in f.message and NUM in f.message and "cannot be enabled together" in f.message


def test_vgs002_also_across_init_and_app_containers() -> None:
    p = pod(container("a", limits={MEM: 1000}), initContainers=[container("i", limits={NUM: 1})])
    assert ("VGS002", ERROR) in codes(review(p))


@pytest.mark.parametrize("limits", [{MEM: 1000}, {NUM: 2}])
def test_vgs002_silent_for_one_family(limits: dict[str, Any]) -> None:
    p = pod(container("a", limits=limits), container("b", limits=limits))
    assert find(review(p), "VGS002") == []


# ---- VGS003 ----------------------------------------------------------------------------------------


def test_vgs003_sum_of_app_containers_exceeds_the_largest_card() -> None:
    # 9000 + 8000 = 17000 > 16000: each container alone fits, the pod does not (whole pod on one card).
    f = only(review(mem_pod(9000, 8000), NODES), "VGS003")
    assert f.severity is ERROR
    assert f.subject == "spec.containers"
    assert "17000" in f.message and "(16000)" in f.message and "one card" in f.message


def test_vgs003_largest_init_container_counts() -> None:
    f = only(review(mem_pod(1000, init=(17000, 500)), NODES), "VGS003")
    assert "17000" in f.message


def test_vgs003_init_containers_are_not_added_to_the_app_sum() -> None:
    # max(16000, 16000) = 16000, not 32000: fits the largest card exactly.
    r = review(mem_pod(16000, init=(16000,)), NODES)
    assert r.findings == () and r.allowed is True


def test_vgs003_memory_that_fits_only_the_big_node_is_fine() -> None:
    assert review(mem_pod(12000, 4000), NODES).findings == ()


def test_vgs003_number_above_the_largest_healthy_card_count() -> None:
    f = only(review(pod(container("a", limits={NUM: 3}), container("b", limits={NUM: 2})), NODES), "VGS003")
    assert f.severity is ERROR
    assert NUM in f.message and " 5," in f.message and "healthy card count" in f.message and "(4)" in f.message


def test_vgs003_number_at_the_largest_count_is_fine() -> None:
    assert review(pod(container("a", limits={NUM: 4})), NODES).findings == ()


def test_vgs003_skipped_without_node_facts() -> None:
    # The rule needs cluster facts; unknown capacities are never guessed.
    assert review(mem_pod(10**6)).findings == ()
    assert review(pod(container("a", limits={NUM: 64}))).findings == ()


def test_vgs003_ignores_invalid_values_in_the_sum() -> None:
    r = review(mem_pod(15000, 0), NODES)
    assert [c for c, _ in codes(r)] == ["VGS001"]


# ---- VGS004 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["volcano.sh/gpu-index", "volcano.sh/predicate-time"])
def test_vgs004_user_set_scheduler_annotation_warns(key: str) -> None:
    r = review(mem_pod(1000, annotations={key: "0"}))
    f = only(r, "VGS004")
    assert f.severity is WARNING
    assert f.subject == f"annotation/{key}"
    assert key in f.message and "scheduler writes itself" in f.message
    assert r.allowed is True


def test_vgs004_with_node_name_is_an_error() -> None:
    r = review(mem_pod(1000, annotations={"volcano.sh/gpu-index": "0,1"}, nodeName="gpu-node-1"))
    f = only(r, "VGS004")
    assert f.severity is ERROR
    assert "spec.nodeName" in f.message and "over-booking" in f.message
    assert r.allowed is False


def test_vgs004_silent_for_existing_pods() -> None:
    # The doctor sees scheduled pods, where the scheduler itself wrote these annotations.
    p = mem_pod(1000, annotations={"volcano.sh/gpu-index": "0", "volcano.sh/predicate-time": "1"},
                nodeName="gpu-node-1")
    assert find(review(p, existing=True), "VGS004") == []


def test_vgs004_silent_without_the_annotations() -> None:
    r = review(mem_pod(1000, annotations={"volcano.sh/vgpu-node": "x", "gpu-index": "0"}, nodeName="n"))
    assert r.findings == ()


@pytest.mark.parametrize("value", ["1Gi", "2k", "1e3"])
def test_vgs001_unit_suffix_on_gpu_memory_is_an_error(value: str) -> None:
    result = review(pod(container("c", limits={"volcano.sh/gpu-memory": value})))
    finding = only(result, "VGS001")
    assert finding.severity is ERROR and "unit suffix" in finding.message
