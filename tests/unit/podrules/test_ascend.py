"""Ascend vNPU in HAMi mode (`VGH001`–`VGH009`, docs/contracts.md#finding-families, research docs/ascend.md#ascend-hami
and docs/checks.md#check-index-ascend-hami-pods).

The device config is the real `hami-scheduler-device` ConfigMap from Project-HAMi/ascend-device-plugin.
"""

from __future__ import annotations

from typing import Any

import pytest

from vgpuctl.core.facts import AscendDevice, AscendNode, ClusterFacts
from vgpuctl.core.podrules import review
from vgpuctl.core.versions import parse_version

from .conftest import ERROR, INFO, WARNING, codes, container, find, only, pod
from .families import B3, B3_CORE, B3_MEM, HAMI_CORE, P310, P310_MEM, ascend_config

CONFIG = ClusterFacts(device_config=ascend_config())


def hami_node(hami_vnpu_core: bool = True, memory: int = 65536) -> AscendNode:
    return AscendNode("npu-1", (AscendDevice("Ascend910B3", memory, 20),), hami_vnpu_core)


def facts(**kw: Any) -> ClusterFacts:
    return ClusterFacts(device_config=ascend_config(), **kw)


def npu_pod(limits: dict[str, Any], annotations: dict[str, str] | None = None, **kw: Any) -> dict[str, Any]:
    """An Ascend pod with `runtimeClassName: ascend`, as ascend-device-plugin's docs/volcano.md writes them
    (VGH010 has its own tests below); `runtimeClassName=None` leaves it out."""
    kw.setdefault("runtimeClassName", "ascend")
    if kw["runtimeClassName"] is None:
        del kw["runtimeClassName"]
    return pod(container("npu", limits=limits), annotations=annotations, **kw)


def test_the_shipped_config_is_what_these_tests_assume() -> None:
    by_cw = {v.common_word: v for v in ascend_config().vnpus}
    assert by_cw["Ascend910B3"].memory_capacity == 65536
    assert [t.name for t in by_cw["Ascend310P"].templates] == ["vir01", "vir02", "vir04"]
    assert by_cw["Ascend310P"].memory_allocatable == 21527
    assert ascend_config().hami_vnpu_core is False


# ---- VGH001 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["HAMi-core", "hami_core", "template", ""])
def test_vgh001_mode_is_not_exactly_hami_core(mode: str) -> None:
    r = review(npu_pod({B3: 1}, {"huawei.com/vnpu-mode": mode}), CONFIG)
    f = only(r, "VGH001")
    assert f.severity is ERROR
    assert f.subject == "annotation/huawei.com/vnpu-mode"
    assert f'"{mode}"' in f.message and "template mode" in f.message


def test_vgh001_hami_core_on_volcano_1_15() -> None:
    r = review(npu_pod({B3: 1}, HAMI_CORE), facts(volcano_version=parse_version("v1.15.1")))
    f = only(r, "VGH001")
    assert f.severity is ERROR and "1.16" in f.message and "1.15.1" in f.message


def test_vgh001_hami_core_without_a_hami_core_node() -> None:
    r = review(npu_pod({B3: 1}, HAMI_CORE), facts(ascend_nodes=(hami_node(False),)))
    f = only(r, "VGH001")
    assert f.severity is ERROR and 'hami-vnpu-core: "true"' in f.message


def test_vgh001_hami_core_on_1_16_with_a_hami_core_node() -> None:
    f = facts(volcano_version=parse_version("1.16.0"), ascend_nodes=(hami_node(False), hami_node(True)))
    r = review(npu_pod({B3: 1, B3_MEM: 8192, B3_CORE: 50}, HAMI_CORE), f)
    assert r.findings == () and r.allowed is True


def test_vgh001_hami_core_with_unknown_cluster_facts_is_not_guessed() -> None:
    assert find(review(npu_pod({B3: 1}, HAMI_CORE), CONFIG), "VGH001") == []


# ---- VGH002 ----------------------------------------------------------------------------------------


def test_vgh002_memory_without_count_is_defaulted() -> None:
    r = review(npu_pod({B3_MEM: 16384}), CONFIG)
    f = only(r, "VGH002")
    assert f.severity is INFO and f"added {B3}: 1" in f.message
    assert r.allowed is True
    assert r.patch == ({"op": "add", "path": "/spec/containers/0/resources/limits/huawei.com~1Ascend910B3",
                        "value": "1"},)


def test_vgh002_core_only_is_an_error() -> None:
    r = review(npu_pod({B3_CORE: 50}, HAMI_CORE), CONFIG)
    f = only(r, "VGH002")
    assert f.severity is ERROR and B3_CORE in f.message and f"not {B3}" in f.message
    assert r.patch == () and r.allowed is False


def test_vgh002_core_only_in_template_mode_resolves_to_nothing() -> None:
    r = review(npu_pod({B3_CORE: 5}), CONFIG)
    assert codes(r) == [("VGH002", ERROR), ("VGH006", ERROR)]  # no VGH009: Volcano never sees the request


def test_vgh002_memory_only_is_an_error_when_defaults_are_off() -> None:
    r = review(npu_pod({B3_MEM: 16384}), CONFIG, apply_defaults=False)
    f = only(r, "VGH002")
    assert f.severity is ERROR and B3_MEM in f.message
    assert r.patch == () and r.allowed is False


def test_vgh002_silent_with_the_count() -> None:
    assert find(review(npu_pod({B3: 1, B3_MEM: 16384}), CONFIG), "VGH002") == []


# ---- VGH003 ----------------------------------------------------------------------------------------


def test_vgh003_template_memory_above_memory_capacity() -> None:
    f = only(review(npu_pod({B3: 1, B3_MEM: 70000}), CONFIG), "VGH003")
    assert f.severity is ERROR
    assert f.subject == "container/npu"
    assert "70000" in f.message and "65536" in f.message and "smallest template" in f.message


def test_vgh003_memory_equal_to_the_capacity_is_a_whole_card() -> None:
    r = review(npu_pod({B3: 1, B3_MEM: 65536}), CONFIG)
    assert codes(r) == [("VGH009", INFO)]


def test_vgh003_does_not_apply_in_hami_core_mode() -> None:
    # hami-core does not trim memory; VGH005 (with node facts) judges it instead.
    assert find(review(npu_pod({B3: 1, B3_MEM: 70000}, HAMI_CORE), CONFIG), "VGH003") == []


# ---- VGH004 ----------------------------------------------------------------------------------------


def test_vgh004_several_devices_with_a_partial_card() -> None:
    f = only(review(npu_pod({B3: 2, B3_MEM: 16000}), CONFIG), "VGH004")
    assert f.severity is ERROR
    assert "2 × Ascend910B3" in f.message and "vir05_1c_16g" in f.message


@pytest.mark.parametrize("limits", [{B3: 2}, {B3: 2, B3_MEM: 40000}, {B3: 2, B3_MEM: 65536}, {B3: 1, B3_MEM: 16000}])
def test_vgh004_silent_for_whole_cards_or_one_device(limits: dict[str, Any]) -> None:
    # Memory above the largest template (32768) but within the capacity books a whole card.
    r = review(npu_pod(limits), CONFIG)
    assert find(r, "VGH004") == [] and r.allowed is True


# ---- VGH005 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("cores", [150, -1, 101, "abc"])
def test_vgh005_hami_core_cores_outside_0_to_100(cores: Any) -> None:
    f = only(review(npu_pod({B3: 1, B3_CORE: cores}, HAMI_CORE), CONFIG), "VGH005")
    assert f.severity is ERROR and B3_CORE in f.message


def test_vgh005_hami_core_memory_larger_than_any_device() -> None:
    f = only(review(npu_pod({B3: 1, B3_MEM: 70000}, HAMI_CORE), facts(ascend_nodes=(hami_node(),))), "VGH005")
    assert f.severity is ERROR and "70000" in f.message and "(65536 MiB)" in f.message


@pytest.mark.parametrize("cores", [0, 1, 100])
def test_vgh005_silent_in_range(cores: int) -> None:
    r = review(npu_pod({B3: 1, B3_CORE: cores, B3_MEM: 65536}, HAMI_CORE), facts(ascend_nodes=(hami_node(),)))
    assert r.findings == ()


# ---- VGH006 ----------------------------------------------------------------------------------------


def test_vgh006_cores_in_template_mode() -> None:
    f = only(review(npu_pod({B3: 1, B3_CORE: 5}), CONFIG), "VGH006")
    assert f.severity is ERROR and B3_CORE in f.message and "hami-core" in f.message


def test_vgh006_silent_in_hami_core_mode() -> None:
    assert find(review(npu_pod({B3: 1, B3_CORE: 5}, HAMI_CORE), CONFIG), "VGH006") == []


# ---- VGH007 ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("limits", "expected"),
    [
        ({B3: 0}, "is not ≥ 1"),
        ({B3: -2}, "is not ≥ 1"),
        ({B3: "1.5"}, "not a whole number"),
        ({B3: 1, B3_MEM: "4Gi"}, "carries a unit suffix"),
        ({B3: 1, B3_MEM: "16k"}, "carries a unit suffix"),
        ({B3: 1, B3_MEM: 0}, "is not a positive number of MiB"),
        ({B3: 1, B3_MEM: "abc"}, "is not a valid Kubernetes quantity"),
    ],
)
def test_vgh007_bad_count_or_memory(limits: dict[str, Any], expected: str) -> None:
    r = review(npu_pod(limits), CONFIG)
    f = only(r, "VGH007")
    assert f.severity is ERROR and expected in f.message
    # VGH009 would describe a request Volcano reads differently ("4Gi" is 4Gi MiB to it): none.
    assert find(r, "VGH009") == []


def test_vgh007_silent_for_plain_integers() -> None:
    assert find(review(npu_pod({B3: "1", B3_MEM: "16384"}), CONFIG), "VGH007") == []


# ---- VGH008 ----------------------------------------------------------------------------------------


def test_vgh008_resource_no_vnpus_entry_declares() -> None:
    f = only(review(npu_pod({"huawei.com/Ascend999": 1}), CONFIG), "VGH008")
    assert f.severity is ERROR and "huawei.com/Ascend999" in f.message and "vnpus" in f.message


def test_vgh008_declared_core_resource_is_derived_from_the_resource_name() -> None:
    # 910B2 has no resourceCoreName key in the file; `<resourceName>-core` is still declared
    # (docs/ascend.md#ascend-hami-keys).
    r = review(npu_pod({"huawei.com/Ascend910B2": 1, "huawei.com/Ascend910B2-core": 10}, HAMI_CORE), CONFIG)
    assert find(r, "VGH008") == []


def test_vgh008_not_reported_without_a_device_config() -> None:
    r = review(npu_pod({"huawei.com/Ascend999": 1}))
    assert find(r, "VGH008") == [] and r.allowed is True


# ---- VGH009 ----------------------------------------------------------------------------------------


def test_vgh009_memory_rounds_up_to_a_template() -> None:
    f = only(review(npu_pod({P310: 1, P310_MEM: 3000}), CONFIG), "VGH009")
    assert f.severity is INFO
    assert f.subject == "container/npu"
    assert "3000 MiB → template vir01 (3072 MiB)" in f.message and "Ascend310P" in f.message


@pytest.mark.parametrize(("memory", "template"), [(3072, "vir01"), (3073, "vir02"), (12288, "vir04")])
def test_vgh009_template_boundaries(memory: int, template: str) -> None:
    assert f"template {template} " in only(review(npu_pod({P310: 1, P310_MEM: memory}), CONFIG), "VGH009").message


@pytest.mark.parametrize("limits", [{P310: 1}, {P310: 1, P310_MEM: 12289}])
def test_vgh009_no_memory_or_above_every_template_is_a_whole_card(limits: dict[str, Any]) -> None:
    f = only(review(npu_pod(limits), CONFIG), "VGH009")
    assert "1 whole Ascend310P card (21527 MiB each)" in f.message


def test_vgh009_without_a_device_config_judges_the_builtin_310p_entry() -> None:
    """Issue 15 §1: with no device config given, the rules judge against Volcano's built-in config
    (volcano-sh/volcano `pkg/scheduler/api/devices/config/config.go` GetDefaultDevicesConfig), whose one
    vnpus entry is Ascend310P with vir01/vir02/vir04. This test asserted the old behaviour (no finding)."""
    f = only(review(npu_pod({P310: 1, P310_MEM: 3000})), "VGH009")
    assert "3000 MiB → template vir01 (3072 MiB)" in f.message


def test_vgh009_not_reported_for_a_chip_the_builtin_config_does_not_declare() -> None:
    assert review(npu_pod({B3: 1, B3_MEM: 3000})).findings == ()


def test_vgh002_default_never_adds_an_undeclared_resource() -> None:
    facts = ClusterFacts(device_config=ascend_config())
    result = review(pod(container("c", limits={"huawei.com/Ascend999-memory": 100})), facts)
    assert not any(op["path"].endswith("Ascend999") for op in result.patch)
    assert [f.code for f in result.findings if f.code.startswith("VGH")] == ["VGH008"]


# ---- VGH010 ----------------------------------------------------------------------------------------
# Evidence (Project-HAMi/ascend-device-plugin): `ascend-runtimeclass.yaml` (RuntimeClass `ascend`, handler
# `ascend`) first appears at tag v1.3.0 (absent at v1.2.0); `docs/volcano.md` at v1.4.0 says
# "`runtimeClassName: ascend` ... is required for all Ascend Pods regardless of slicing mode"; the plugin's
# Allocate (`internal/server/allocate.go`, v1.4.0) answers only ASCEND_VISIBLE_DEVICES (and hami-core
# mounts), no device nodes, so the NPU reaches the container through the Ascend runtime alone.


def plugin_facts(*tags: str) -> ClusterFacts:
    return facts(ascend_plugin_tags=tags)


def test_vgh010_warns_when_a_plugin_that_requires_the_runtime_class_runs() -> None:
    f = only(review(npu_pod({P310: 1, P310_MEM: 4096}, runtimeClassName=None), plugin_facts("v1.4.0")), "VGH010")
    assert f.severity is WARNING and f.subject == "spec.runtimeClassName"
    assert "v1.4.0" in f.message and "runtimeClassName: ascend" in f.message


@pytest.mark.parametrize("tag", ["v1.3.0", "latest"])
def test_vgh010_warns_from_v1_3_0_and_for_branch_builds(tag: str) -> None:
    assert only(review(npu_pod({B3: 1}, runtimeClassName=None), plugin_facts(tag)), "VGH010").severity is WARNING


def test_vgh010_is_info_without_plugin_facts() -> None:
    """Plain `lint` and the webhook without cluster facts cannot know the plugin release: say it, at info."""
    for judged in (CONFIG, ClusterFacts(), plugin_facts(), plugin_facts("custom-build")):
        f = only(review(npu_pod({B3: 1}, runtimeClassName=None), judged), "VGH010")
        assert f.severity is INFO and "v1.3.0" in f.message


def test_vgh010_silent_when_only_plugins_older_than_the_runtime_class_run() -> None:
    """v1.2.0 ships no RuntimeClass: its users run the Ascend runtime as the node's default runtime."""
    assert find(review(npu_pod({B3: 1}, runtimeClassName=None), plugin_facts("v1.2.0")), "VGH010") == []
    mixed = plugin_facts("v1.2.0", "v1.4.0")
    assert only(review(npu_pod({B3: 1}, runtimeClassName=None), mixed), "VGH010").severity is WARNING


@pytest.mark.parametrize("name", ["ascend", "ascend-runtime"])
def test_vgh010_any_runtime_class_name_counts(name: str) -> None:
    """Another name than `ascend` is not reported: the RuntimeClass name is the operator's choice —
    ascend-device-plugin v1.4.0 `charts/ascend-device-plugin/values.yaml` has `runtimeClass.name` (default
    `ascend`, handler `ascend`), and its v1.3.0 README has HAMi's `devices.ascend.runtimeClassName` "matching
    the name of the RuntimeClass resource". The pod names a RuntimeClass; its handler is not visible here."""
    assert find(review(npu_pod({B3: 1}, runtimeClassName=name), plugin_facts("v1.4.0")), "VGH010") == []


def test_vgh010_only_for_pods_asking_for_a_declared_ascend_resource() -> None:
    undeclared = review(npu_pod({"huawei.com/Ascend999": 1}, runtimeClassName=None), CONFIG)
    assert find(undeclared, "VGH010") == [] and find(undeclared, "VGH008")  # VGH008 says what is wrong
    mindcluster = pod(container("npu", limits={"huawei.com/npu-core": 1}),
                      labels={"ring-controller.atlas": "ascend-310P"})
    assert find(review(mindcluster, plugin_facts("v1.4.0")), "VGH010") == []


def test_vgh010_on_a_workload_template_names_the_template() -> None:
    from .conftest import deployment

    r = review(deployment(npu_pod({B3: 1}, runtimeClassName=None)), plugin_facts("v1.4.0"))
    f = only(r, "VGH010")
    assert f.subject == "template/spec.runtimeClassName" and r.allowed is True
