"""Issue 15 §1: with no device config given, the pod rules judge against Volcano's built-in one.

Volcano's scheduler falls back to `GetDefaultDevicesConfig()` when its device ConfigMap is missing or does
not parse (volcano-sh/volcano `pkg/scheduler/api/devices/config/config.go`, `InitDevicesConfig`, master
ed72c7c81): vGPU resource names `volcano.sh/vgpu-{number,memory,cores}`, no `resourceMemoryPercentageName`,
no `knownMigGeometries`, and one vnpus entry — Ascend310P, memoryCapacity 24576, memoryAllocatable 21527,
templates vir01 3072 / vir02 6144 / vir04 12288. `ClusterFacts` carries that config whenever none is given
(`volcano_device_config`, `device_config_given`), so lint, the webhook, the doctor and why judge alike.
"""

from __future__ import annotations

from typing import Any

from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.rule_facts import facts_from_snapshot
from vgpuctl.core.deviceconfig import default_device_config
from vgpuctl.core.facts import NO_FACTS, ClusterFacts
from vgpuctl.core.podrules import review

from .conftest import ERROR, WARNING, container, device_config, find, only, pod
from .families import B3, B3_MEM, P310, P310_MEM

VGPU = {"volcano.sh/vgpu-number": 1}
MIG = {"volcano.sh/vgpu-mode": "mig"}


def npu_pod(limits: dict[str, Any]) -> dict[str, Any]:
    return pod(container("npu", limits=limits), runtimeClassName="ascend")


# ---- the facts -------------------------------------------------------------------------------------


def test_facts_without_a_config_carry_the_builtin_one_and_say_it_was_not_given() -> None:
    assert NO_FACTS.volcano_device_config == default_device_config()
    assert NO_FACTS.device_config_given is False
    given = ClusterFacts(device_config=device_config({"vnpus": []}))
    assert given.device_config_given is True and given.volcano_device_config.vnpus == ()


def test_a_cluster_without_the_configmap_gives_the_builtin_config_as_a_fact() -> None:
    """The doctor's review of existing pods, `lint --snapshot` and `why` read their facts from the cluster:
    there the built-in config is what the scheduler really runs on, not a stand-in, so it counts as given
    and a chip it does not declare is unknown to Volcano (VGH008), as `why` (which builds its facts from the
    same resolved config, `vgpuctl/core/why/request.py`) sees it too."""
    facts = facts_from_snapshot(build_snapshot([], None))
    assert facts.device_config == default_device_config() and facts.device_config_given is True
    assert only(review(npu_pod({B3: 1}), facts), "VGH008").severity is ERROR
    assert find(review(npu_pod({B3: 1}), NO_FACTS), "VGH008") == []


# ---- what the built-in config declares is judged ---------------------------------------------------


def test_more_memory_than_the_builtin_310p_has_is_vgh003() -> None:
    r = review(npu_pod({P310: 1, P310_MEM: 30000}))
    f = only(r, "VGH003")
    assert f.severity is ERROR and "24576" in f.message and r.allowed is False


def test_several_310p_with_a_partial_card_is_vgh004() -> None:
    r = review(npu_pod({P310: 2, P310_MEM: 4096}))
    assert only(r, "VGH004").severity is ERROR and r.allowed is False


def test_a_310p_request_the_builtin_config_places_is_allowed() -> None:
    r = review(npu_pod({P310: 1, P310_MEM: 4096}))
    assert r.allowed is True and "vir02" in only(r, "VGH009").message


# ---- what it does not declare is not held against the pod ------------------------------------------


def test_a_chip_the_builtin_config_does_not_declare_is_not_unknown() -> None:
    r = review(npu_pod({B3: 1, B3_MEM: 99999}))
    assert r.allowed is True and [f.code for f in r.findings] == []


def test_memory_only_on_an_undeclared_chip_still_gets_its_count() -> None:
    r = review(pod(container("npu", limits={B3_MEM: 4096}), runtimeClassName="ascend"))
    assert [op["path"] for op in r.patch] == ["/spec/containers/0/resources/limits/huawei.com~1Ascend910B3"]


def test_vgp006_percentage_is_not_called_disabled_when_no_config_was_given() -> None:
    """Decision (VGP006). The built-in config sets no `resourceMemoryPercentageName`, so a Volcano that
    really runs on it ignores the percentage. But with no config given we do not know that the cluster runs
    the built-in one: a real ConfigMap may set the name (the upstream volcano-vgpu-device-plugin ConfigMap
    does). The percentage is a resource the built-in config does not declare, and like an undeclared Ascend
    chip (VGH008) it is judged only against a config that was given. What holds whatever the config — the
    value range and memory-and-percentage together — is still checked; and where the facts come from a
    cluster (doctor, `lint --snapshot`), the built-in config is a fact and "not enabled" is reported."""
    plain = {**VGPU, "volcano.sh/vgpu-memory-percentage": 50}
    assert find(review(pod(container(limits=plain))), "VGP006") == []
    out_of_range = only(review(pod(container(limits={**VGPU, "volcano.sh/vgpu-memory-percentage": 150}))), "VGP006")
    assert out_of_range.severity is ERROR and "1..100" in out_of_range.message
    both = only(review(pod(container(limits={**plain, "volcano.sh/vgpu-memory": 1024}))), "VGP006")
    assert both.severity is WARNING
    cluster = facts_from_snapshot(build_snapshot([], None))
    disabled = only(review(pod(container(limits=plain)), cluster), "VGP006")
    assert disabled.severity is ERROR and "resourceMemoryPercentageName" in disabled.message


def test_vgp009_mig_is_not_an_error_just_because_no_config_was_given() -> None:
    """Decision (VGP009). The built-in config has no `knownMigGeometries`, so a Volcano on it schedules every
    GPU as hami-core and a `vgpu-mode: mig` pod fits nowhere. Nobody runs MIG without a ConfigMap, though:
    with no config given, flagging every MIG pod would be a false positive on every working MIG cluster. So
    the geometry half of VGP009 needs a config that was given (or a cluster's, where the built-in config is
    a fact); cores-with-MIG holds under any config. The full-card trap (mig without vgpu-memory) is an error
    only where the cluster's MIG GPUs are known (issue 24: an A100-40GB takes the whole card), else a warning."""
    assert find(review(pod(container(limits={**VGPU, "volcano.sh/vgpu-memory": 3000}), annotations=MIG)),
                "VGP009") == []
    trap = only(review(pod(container(limits=VGPU), annotations=MIG)), "VGP009")
    assert trap.severity is WARNING and "full-card" in trap.message
    cluster = facts_from_snapshot(build_snapshot([], None))
    no_geometry = only(review(pod(container(limits={**VGPU, "volcano.sh/vgpu-memory": 3000}), annotations=MIG),
                              cluster), "VGP009")
    assert no_geometry.severity is ERROR and "knownMigGeometries" in no_geometry.message
