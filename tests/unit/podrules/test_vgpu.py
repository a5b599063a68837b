"""vGPU pod rules VGP001–VGP017, the mutating defaults they carry, and the workload wrappers
(docs/contracts.md#finding-families, §2.5).

Each code has at least one case where it fires (code, severity and something specific in the subject or
message) and one correct object where it stays silent. Evidence for the rules: research docs/vgpu.md#nvidia-vgpu and
docs/checks.md#check-index-vgpu-pods.
"""

from __future__ import annotations

from typing import Any

import jsonpatch
import pytest

from vgpuctl.core.deviceconfig import DeviceConfig
from vgpuctl.core.facts import ClusterFacts, GpuDevice, VgpuNode
from vgpuctl.core.findings import Severity
from vgpuctl.core.podrules import review
from vgpuctl.core.versions import parse_version

from .conftest import (
    ERROR,
    INFO,
    WARNING,
    codes,
    container,
    device_config,
    find,
    only,
    pod,
    vcjob,
)

N, M, CORES, PCT = ("volcano.sh/vgpu-number", "volcano.sh/vgpu-memory", "volcano.sh/vgpu-cores",
                    "volcano.sh/vgpu-memory-percentage")
MODE = "volcano.sh/vgpu-mode"
USE_TYPE, NOUSE_TYPE = "nvidia.com/use-gputype", "nvidia.com/nouse-gputype"
USE_UUID, NOUSE_UUID = "volcano.sh/vgpu-use-gpuuuid", "volcano.sh/vgpu-nouse-gpuuuid"
POLICY = "volcano.sh/vgpu-podgroup-policy"

A100_TYPE, T4_TYPE = "NVIDIA-NVIDIA A100-PCIE-40GB", "NVIDIA-Tesla T4"
UUID_A = "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448"
UUID_B = "GPU-1d2c3b4a-0000-1111-2222-333344445555"
UUID_T4 = "GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee"
NODES = (
    VgpuNode("gpu-a100", (GpuDevice(UUID_A, A100_TYPE, 40960), GpuDevice(UUID_B, A100_TYPE, 40960))),
    VgpuNode("gpu-t4", (GpuDevice(UUID_T4, T4_TYPE, 15360),)),
)
CLUSTER = ClusterFacts(vgpu_nodes=NODES)  # at most 2 GPUs per node; 40960 / 15360 MiB
V116 = ClusterFacts(vgpu_nodes=NODES, volcano_version=parse_version("v1.16.0"))


def gpu_pod(limits: dict[str, Any], *, name: str = "trainer", **pod_kwargs: Any) -> dict[str, Any]:
    """A Volcano pod with one vGPU container `trainer` carrying `limits`."""
    return pod(container(name, limits=limits), **pod_kwargs)


def with_config(config: DeviceConfig, **kwargs: Any) -> ClusterFacts:
    return ClusterFacts(device_config=config, **kwargs)


# ---- VGP001 vgpu-mode ----------------------------------------------------------------------------------
@pytest.mark.parametrize("value", ["MIG", "mps", "HAMi-core", "hami"])
def test_vgp001_mode_that_matches_no_node_is_rejected(value: str) -> None:
    r = review(gpu_pod({N: 1, M: 4000}, annotations={MODE: value}))
    f = only(r, "VGP001")
    assert (f.severity, f.subject) == (ERROR, f"annotation/{MODE}")
    assert f'"{value}"' in f.message and "Pending" in f.message
    assert r.allowed is False


def test_vgp001_suggests_the_lower_case_spelling() -> None:
    assert "did you mean 'hami-core'" in only(review(gpu_pod({N: 1}, annotations={MODE: "HAMi-core"})),
                                              "VGP001").message


@pytest.mark.parametrize("annotations", [None, {MODE: "mig"}, {MODE: "hami-core"}])
def test_vgp001_exact_modes_or_absent_are_fine(annotations: dict[str, str] | None) -> None:
    r = review(gpu_pod({N: 1, M: 4000}, annotations=annotations))
    assert find(r, "VGP001") == []
    assert r.allowed is True


def test_vgp001_ignored_on_a_pod_without_vgpu() -> None:
    # docs/vgpu.md#vgpu-filter step 1: a pod that is not a vGPU pod fits every node whatever its vgpu-mode says.
    r = review(pod(container("web"), annotations={MODE: "mps"}))
    assert codes(r) == [] and r.allowed is True


# ---- VGP002 vgpu-number default ------------------------------------------------------------------------
@pytest.mark.parametrize("limits", [{M: 4000}, {CORES: 30}, {PCT: 50}])
def test_vgp002_default_adds_vgpu_number(limits: dict[str, Any]) -> None:
    r = review(gpu_pod(limits))
    f = only(r, "VGP002")
    assert (f.severity, f.subject) == (INFO, "container/trainer")
    assert f'container "trainer": added {N}: 1' in f.message
    assert r.patch == ({"op": "add", "path": "/spec/containers/0/resources/limits/volcano.sh~1vgpu-number",
                        "value": "1"},)
    assert r.allowed is True


def test_vgp002_default_uses_default_gpu_num_from_the_device_config() -> None:
    r = review(gpu_pod({M: 4000}), with_config(device_config({"nvidia": {"defaultGPUNum": 2}})))
    assert f"added {N}: 2" in only(r, "VGP002").message
    assert [op["value"] for op in r.patch] == ["2"]


@pytest.mark.parametrize("kwargs", [{"apply_defaults": False}, {"existing": True}])
def test_vgp002_without_defaults_is_an_error(kwargs: dict[str, bool]) -> None:
    r = review(gpu_pod({CORES: 30}), **kwargs)
    f = only(r, "VGP002")
    assert (f.severity, f.subject) == (ERROR, "container/trainer")
    assert CORES in f.message and N in f.message
    assert r.patch == () and r.allowed is False


def test_vgp002_patch_applies_and_a_second_review_is_clean() -> None:
    obj = gpu_pod({M: 4000})
    first = review(obj)
    patched = jsonpatch.apply_patch(obj, list(first.patch))
    assert patched["spec"]["containers"][0]["resources"]["limits"] == {M: 4000, N: "1"}
    second = review(patched)
    assert second.patch == () and find(second, "VGP002") == []
    assert review(patched, apply_defaults=False).allowed is True


def test_vgp002_count_present_needs_no_default() -> None:
    r = review(gpu_pod({N: 1, M: 4000}))
    assert codes(r) == [] and r.patch == ()


# ---- VGP003 vgpu-number --------------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "why"), [
    (0, "0 is not ≥ 1"), (-1, "-1 is not ≥ 1"), (1.5, "not a whole number"), ("abc", "not a valid Kubernetes quantity"),
])
def test_vgp003_bad_count(value: Any, why: str) -> None:
    f = only(review(gpu_pod({N: value, M: 4000})), "VGP003")
    assert (f.severity, f.subject) == (ERROR, "container/trainer") and why in f.message


def test_vgp003_more_gpus_than_any_node_has() -> None:
    f = only(review(gpu_pod({N: 4, M: 4000}), CLUSTER), "VGP003")
    assert f.severity is ERROR and "4 exceeds the most GPUs on any vGPU node (2)" in f.message


@pytest.mark.parametrize("value", [1, 2, "2"])
def test_vgp003_count_within_the_largest_node(value: Any) -> None:
    assert find(review(gpu_pod({N: value, M: 4000}), CLUSTER), "VGP003") == []


def test_vgp003_without_facts_a_large_count_is_not_guessed() -> None:
    assert find(review(gpu_pod({N: 16, M: 4000})), "VGP003") == []


# ---- VGP004 vgpu-cores ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("value", "why"), [(101, "101 is outside 0..100"), (-1, "-1 is outside 0..100"),
                                            ("50m", "not a whole number")])
def test_vgp004_cores_outside_0_100(value: Any, why: str) -> None:
    f = only(review(gpu_pod({N: 1, CORES: value})), "VGP004")
    assert (f.severity, f.subject) == (ERROR, "container/trainer") and why in f.message


@pytest.mark.parametrize("value", [0, 50, 100])
def test_vgp004_cores_in_range(value: int) -> None:
    r = review(gpu_pod({N: 1, M: 4000, CORES: value}))
    assert find(r, "VGP004") == [] and r.allowed is True


# ---- VGP005 vgpu-memory --------------------------------------------------------------------------------
def test_vgp005_unit_suffix_suggests_mib() -> None:
    f = only(review(gpu_pod({N: 1, M: "3Gi"})), "VGP005")
    assert (f.severity, f.subject) == (ERROR, "container/trainer")
    assert '"3Gi" carries a unit suffix' in f.message and "can never fit; write 3072" in f.message


def test_vgp005_small_decimal_suffix_reads_as_mib_but_is_still_rejected() -> None:
    # docs/vgpu.md#vgpu-pod-request: "3k" becomes 3000, which may fit
    f = only(review(gpu_pod({N: 1, M: "3k"})), "VGP005")
    assert f.severity is ERROR and "reads as 3000; write 3000" in f.message and "never fit" not in f.message


@pytest.mark.parametrize(("value", "why"), [(0, "0 is not a positive number of MiB"), (-5, "-5 is not a positive"),
                                            ("3k", "unit suffix"), ("1.5", "not a whole number")])
def test_vgp005_not_a_positive_mib_count(value: Any, why: str) -> None:
    f = only(review(gpu_pod({N: 1, M: value})), "VGP005")
    assert f.severity is ERROR and why in f.message


def test_vgp005_more_than_every_gpu_has() -> None:
    f = only(review(gpu_pod({N: 1, M: 50000}), CLUSTER), "VGP005")
    assert f.severity is ERROR and "50000 is more than any eligible GPU has (largest: 40960)" in f.message


def test_vgp005_only_eligible_gpus_count() -> None:
    r = review(gpu_pod({N: 1, M: 20000}, annotations={USE_TYPE: "T4"}), CLUSTER)
    assert "largest: 15360" in only(r, "VGP005").message
    assert find(review(gpu_pod({N: 1, M: 20000}), CLUSTER), "VGP005") == []


def test_vgp005_uuid_filters_narrow_the_eligible_gpus() -> None:
    r = review(gpu_pod({N: 1, M: 20000}, annotations={USE_UUID: UUID_T4}), V116)
    assert "largest: 15360" in only(r, "VGP005").message
    r = review(gpu_pod({N: 1, M: 20000}, annotations={NOUSE_UUID: f"{UUID_A},{UUID_B}"}), V116)
    assert "largest: 15360" in only(r, "VGP005").message


def test_vgp005_memory_overridden_by_a_percentage_is_not_compared(upstream_vgpu_config: DeviceConfig) -> None:
    """Issue 24 (the oracle, `checkNodeGPUSharingPredicateAndScore`): with a percentage, Volcano books that share
    of each GPU and never reads the memory; 30000 + 25 % fits a 15360 MiB T4. Without the percentage resource in
    the device config the memory is what Volcano books, and it is compared."""
    facts = with_config(upstream_vgpu_config, vgpu_nodes=(NODES[1],))
    r = review(gpu_pod({N: 1, M: 30000, PCT: 25}), facts)
    assert find(r, "VGP005") == [] and r.allowed is True
    assert only(r, "VGP006").severity is WARNING
    disabled = with_config(device_config({"nvidia": {"resourceCountName": N}}), vgpu_nodes=(NODES[1],))
    r = review(gpu_pod({N: 1, M: 30000, PCT: 25}), disabled)
    assert "largest: 15360" in only(r, "VGP005").message and r.allowed is False


def test_vgp005_memory_in_gpu_memory_factor_units_names_the_unit() -> None:
    facts = with_config(device_config({"nvidia": {"gpuMemoryFactor": 1024}}))
    assert "units of 1024 MiB" in only(review(gpu_pod({N: 1, M: 0}), facts), "VGP005").message


# ---- VGP006 vgpu-memory-percentage ---------------------------------------------------------------------
def test_vgp006_percentage_not_enabled_in_device_config() -> None:
    facts = with_config(device_config({"nvidia": {"resourceCountName": N}}))
    f = only(review(gpu_pod({N: 1, PCT: 50}), facts), "VGP006")
    assert (f.severity, f.subject) == (ERROR, "container/trainer")
    assert "resourceMemoryPercentageName" in f.message


def test_vgp006_percentage_not_enabled_beside_a_memory_is_a_warning() -> None:
    """Volcano books the memory as written (the oracle places the pod): say the percentage is ignored."""
    facts = with_config(device_config({"nvidia": {"resourceCountName": N}}))
    r = review(gpu_pod({N: 1, M: 4000, PCT: 50}), facts)
    f = only(r, "VGP006")
    assert f.severity is WARNING and f"books the {M} instead" in f.message and r.allowed is True
    r = review(gpu_pod({N: 1, M: 4000, PCT: 0}), facts)  # never read, so 0 books nothing less either
    assert only(r, "VGP006").severity is WARNING and r.allowed is True
    r = review(gpu_pod({N: 1, PCT: 100}), facts)  # ignored, but the whole GPU it books is what it asks for
    assert only(r, "VGP006").severity is WARNING and r.allowed is True


@pytest.mark.parametrize("value", [0, 101])
def test_vgp006_percentage_outside_1_100(value: int) -> None:
    f = only(review(gpu_pod({N: 1, PCT: value})), "VGP006")
    assert f.severity is ERROR and f"{value} is outside 1..100" in f.message


def test_vgp006_memory_and_percentage_warns_memory_is_ignored() -> None:
    r = review(gpu_pod({N: 1, M: 4000, PCT: 50}))
    f = only(r, "VGP006")
    assert f.severity is WARNING and "ignores the memory" in f.message
    assert r.allowed is True


def test_vgp006_enabled_by_the_upstream_config(upstream_vgpu_config: DeviceConfig) -> None:
    r = review(gpu_pod({N: 1, PCT: 50}), with_config(upstream_vgpu_config))
    assert find(r, "VGP006") == [] and r.allowed is True


def test_vgp006_volcano_1_13_needs_nodes_to_advertise_it(upstream_vgpu_config: DeviceConfig) -> None:
    advertised = frozenset({N, M, CORES})
    facts = with_config(upstream_vgpu_config, volcano_version=parse_version("v1.13.0"), node_resources=advertised)
    f = only(review(gpu_pod({N: 1, PCT: 50}), facts), "VGP006")
    assert f.severity is ERROR and "no node advertises" in f.message and "1.13.0" in f.message
    older = with_config(upstream_vgpu_config, volcano_version=parse_version("v1.12.2"), node_resources=advertised)
    assert find(review(gpu_pod({N: 1, PCT: 50}), older), "VGP006") == []


def test_vgp006_unknown_version_with_known_nodes_assumes_the_newest(upstream_vgpu_config: DeviceConfig) -> None:
    """Issue 16: `why` (which assumes the newest Volcano when none is known) said a percentage pod fails on
    every node while `lint --snapshot` said nothing. The rule now assumes the newest too, as SPEC's
    "no version known: the newest release" says; without node facts there is still nothing to judge."""
    advertised = frozenset({N, M, CORES})
    facts = with_config(upstream_vgpu_config, node_resources=advertised)
    f = only(review(gpu_pod({N: 1, PCT: 50}), facts), "VGP006")
    assert f.severity is ERROR and "no node advertises" in f.message
    assert find(review(gpu_pod({N: 1, PCT: 50}), with_config(upstream_vgpu_config)), "VGP006") == []


# ---- VGP007 init / ephemeral containers ----------------------------------------------------------------
@pytest.mark.parametrize(("field", "subject"), [("initContainers", "initContainer/setup"),
                                                ("ephemeralContainers", "ephemeralContainer/setup")])
def test_vgp007_vgpu_outside_app_containers(field: str, subject: str) -> None:
    r = review(pod(container("app"), **{field: [container("setup", limits={N: 1, M: 1000})]}))
    f = only(r, "VGP007")
    assert (f.severity, f.subject) == (ERROR, subject) and M in f.message and N in f.message
    assert r.allowed is False


def test_vgp007_plain_init_container_is_fine() -> None:
    r = review(pod(container("app", limits={N: 1, M: 1000}), initContainers=[container("setup")]))
    assert find(r, "VGP007") == [] and r.allowed is True


# ---- VGP008 gpushare + vGPU ----------------------------------------------------------------------------
def test_vgp008_mixing_families_in_one_pod() -> None:
    r = review(pod(container("a", limits={N: 1, M: 1000}), container("b", limits={"volcano.sh/gpu-memory": 1000})))
    f = only(r, "VGP008")
    assert (f.severity, f.subject) == (ERROR, "spec.containers") and "volcano.sh/gpu-memory" in f.message


def test_vgp008_one_family_per_pod_is_fine() -> None:
    assert find(review(pod(container("b", limits={"volcano.sh/gpu-memory": 1000}))), "VGP008") == []
    assert find(review(gpu_pod({N: 1, M: 1000})), "VGP008") == []


# ---- VGP009 MIG ----------------------------------------------------------------------------------------
def test_vgp009_mig_without_memory_is_the_full_card_trap() -> None:
    """Without the cluster's GPUs, only a warning: the whole card fits some models (next tests)."""
    f = only(review(gpu_pod({N: 1}, annotations={MODE: "mig"})), "VGP009")
    assert (f.severity, f.subject) == (WARNING, "container/trainer") and "full-card trap" in f.message


A100_40_SXM, A100_80_PCIE = "NVIDIA-NVIDIA A100-SXM4-40GB", "NVIDIA-NVIDIA A100-PCIE-80GB"
A30_TYPE = "NVIDIA-NVIDIA A30"


def mig_facts(config: DeviceConfig, *nodes: tuple[tuple[str, int, str], ...]) -> ClusterFacts:
    """Facts of vGPU nodes, each a list of (type, registered memory, mode) GPUs."""
    return ClusterFacts(device_config=config, vgpu_nodes=tuple(
        VgpuNode(f"n{i}", tuple(GpuDevice(f"GPU-{i}-{k}", t, mem, mode) for k, (t, mem, mode) in enumerate(gpus)))
        for i, gpus in enumerate(nodes)))


@pytest.mark.parametrize(("gpu_type", "memory"), [(A100_40_SXM, 40960), (A30_TYPE, 24576)])
def test_vgp009_whole_card_fits_where_an_instance_is_that_large(upstream_vgpu_config: DeviceConfig, gpu_type: str,
                                                                 memory: int) -> None:
    """Issue 24 (the oracle, `mig.go pickFromGroup`): 100 % of an A100-40GB's 40960 MiB takes its 7g.40gb, of an
    A30's 24576 MiB its 4g.24gb. Volcano places the pod, so the rules admit it."""
    facts = mig_facts(upstream_vgpu_config, ((gpu_type, memory, "mig"),),
                      ((A100_80_PCIE, 81920, "mig"),))
    r = review(gpu_pod({N: 1}, annotations={MODE: "mig"}), facts)
    assert find(r, "VGP009") == [] and r.allowed is True


def test_vgp009_whole_card_is_the_trap_where_no_instance_is_that_large(upstream_vgpu_config: DeviceConfig) -> None:
    facts = mig_facts(upstream_vgpu_config, ((A100_80_PCIE, 81920, "mig"),), ((A100_40_SXM, 40960, "hami-core"),))
    r = review(gpu_pod({N: 1}, annotations={MODE: "mig"}), facts)
    f = only(r, "VGP009")
    assert f.severity is ERROR and r.allowed is False and "full-card trap" in f.message
    assert f"{A100_80_PCIE} registers 81920 MiB, its largest instance is 80896 MiB" in f.message


def test_vgp009_whole_card_counts_only_gpus_volcano_runs_as_mig_that_the_pod_may_use(
        upstream_vgpu_config: DeviceConfig) -> None:
    """A MIG GPU on a node whose last GPU is hami-core runs hami-core (`decodeNodeDevices`), and the type filter
    narrows the GPUs as it does for VGP005."""
    mixed = ((A100_40_SXM, 40960, "mig"), (A100_80_PCIE, 81920, "hami-core"))
    trap = ((A100_80_PCIE, 81920, "mig"),)
    assert only(review(gpu_pod({N: 1}, annotations={MODE: "mig"}), mig_facts(upstream_vgpu_config, mixed, trap)),
                "VGP009").severity is ERROR
    both = mig_facts(upstream_vgpu_config, ((A100_40_SXM, 40960, "mig"),), trap)
    assert find(review(gpu_pod({N: 1}, annotations={MODE: "mig"}), both), "VGP009") == []
    narrowed = review(gpu_pod({N: 1}, annotations={MODE: "mig", USE_TYPE: "80GB"}), both)
    assert only(narrowed, "VGP009").severity is ERROR


def test_vgp009_whole_card_without_mig_nodes_is_not_a_mig_finding(upstream_vgpu_config: DeviceConfig) -> None:
    """No GPU runs MIG: no memory would help, the pod's mode matches no node (`why`: mode-mismatch)."""
    facts = mig_facts(upstream_vgpu_config, ((A100_80_PCIE, 81920, "hami-core"),))
    assert find(review(gpu_pod({N: 1}, annotations={MODE: "mig"}), facts), "VGP009") == []


def test_vgp009_whole_card_with_a_config_without_geometries() -> None:
    facts = with_config(device_config({"nvidia": {"resourceCountName": N}}))
    f = only(review(gpu_pod({N: 1}, annotations={MODE: "mig"}), facts), "VGP009")
    assert f.severity is ERROR and "no knownMigGeometries" in f.message


def test_vgp009_memory_larger_than_every_mig_instance(upstream_vgpu_config: DeviceConfig) -> None:
    r = review(gpu_pod({N: 1, M: 90000}, annotations={MODE: "mig"}), with_config(upstream_vgpu_config))
    f = only(r, "VGP009")
    assert f.severity is ERROR and "largest: 80896 MiB" in f.message


def test_vgp009_gpu_memory_factor_scales_the_mig_request() -> None:
    config = device_config({"nvidia": {"gpuMemoryFactor": 1024, "knownMigGeometries": [
        {"models": ["A100-PCIE-40GB"],
         "allowedGeometries": [{"group": "g1", "geometries": [{"name": "1g.5gb", "memory": 5120, "count": 7}]}]},
    ]}})
    r = review(gpu_pod({N: 1, M: 9}, annotations={MODE: "mig"}), with_config(config))
    assert "(9216 MiB)" in only(r, "VGP009").message
    assert find(review(gpu_pod({N: 1, M: 5}, annotations={MODE: "mig"}), with_config(config)), "VGP009") == []


def test_vgp009_cores_with_mig_are_not_enforced() -> None:
    f = only(review(gpu_pod({N: 1, M: 8000, CORES: 30}, annotations={MODE: "mig"})), "VGP009")
    assert f.severity is WARNING and "not enforced" in f.message


def test_vgp009_mig_with_fitting_memory_resolves_to_a_slice(upstream_vgpu_config: DeviceConfig) -> None:
    r = review(gpu_pod({N: 1, M: 8000}, annotations={MODE: "mig"}), with_config(upstream_vgpu_config))
    assert codes(r) == [("VGP017", INFO)] and r.allowed is True
    assert "2g.10gb (group2) on A100-SXM4-40GB" in only(r, "VGP017").message


def test_vgp009_hami_core_without_memory_is_not_a_mig_trap() -> None:
    assert find(review(gpu_pod({N: 1}, annotations={MODE: "hami-core"})), "VGP009") == []


# ---- VGP010 gpu type filters ---------------------------------------------------------------------------
@pytest.mark.parametrize(("key", "value"), [(USE_TYPE, ""), (USE_TYPE, "A100,"), (NOUSE_TYPE, "T4, ,V100")])
def test_vgp010_empty_token(key: str, value: str) -> None:
    f = only(review(gpu_pod({N: 1, M: 1000}, annotations={key: value})), "VGP010")
    assert (f.severity, f.subject) == (ERROR, f"annotation/{key}") and "empty entry" in f.message


def test_vgp010_both_set_nouse_is_ignored() -> None:
    f = only(review(gpu_pod({N: 1, M: 1000}, annotations={USE_TYPE: "A100", NOUSE_TYPE: "T4"})), "VGP010")
    assert (f.severity, f.subject) == (WARNING, f"annotation/{NOUSE_TYPE}") and "ignores" in f.message


@pytest.mark.parametrize("annotations", [{USE_TYPE: "H100"}, {NOUSE_TYPE: "NVIDIA"}])
def test_vgp010_no_gpu_in_the_cluster_matches(annotations: dict[str, str]) -> None:
    f = only(review(gpu_pod({N: 1, M: 1000}, annotations=annotations), CLUSTER), "VGP010")
    assert f.severity is WARNING and "leaves no GPU" in f.message and T4_TYPE in f.message


@pytest.mark.parametrize("annotations", [{USE_TYPE: "a100"}, {USE_TYPE: "H100,T4"}, {NOUSE_TYPE: "T4"}])
def test_vgp010_filters_that_match_a_gpu(annotations: dict[str, str]) -> None:
    assert find(review(gpu_pod({N: 1, M: 1000}, annotations=annotations), CLUSTER), "VGP010") == []


# ---- VGP011 gpu UUID filters ---------------------------------------------------------------------------
@pytest.mark.parametrize(("annotations", "facts", "text"), [
    ({USE_UUID: "gpu-0"}, None, "not GPU UUIDs"),
    ({NOUSE_UUID: f"{UUID_A},GPU-1234"}, None, "'GPU-1234'"),
    ({USE_UUID: "GPU-00000000-0000-0000-0000-000000000000"}, V116, "no node registers"),
    ({USE_UUID: UUID_A}, ClusterFacts(volcano_version=parse_version("v1.15.1")), "needs ≥ 1.16"),
    ({USE_UUID: UUID_A, NOUSE_UUID: f"{UUID_A},{UUID_B}"}, None, "denies every GPU"),
])
def test_vgp011_uuid_filters(annotations: dict[str, str], facts: ClusterFacts | None, text: str) -> None:
    r = review(gpu_pod({N: 1, M: 1000}, annotations=annotations), facts)
    f = only(r, "VGP011")
    assert f.severity is WARNING and f.subject.startswith("annotation/volcano.sh/vgpu-") and text in f.message
    assert r.allowed is True


def test_vgp011_well_formed_known_uuids() -> None:
    r = review(gpu_pod({N: 1, M: 1000}, annotations={USE_UUID: f"{UUID_A}, {UUID_B}", NOUSE_UUID: UUID_T4}), V116)
    assert find(r, "VGP011") == []


@pytest.mark.parametrize("annotations", [{NOUSE_UUID: ""}, {USE_UUID: ""}, {USE_UUID: " , "},
                                         {NOUSE_UUID: f"{UUID_A},"}, {USE_UUID: f" {UUID_A} ,, {UUID_B}"}])
def test_vgp011_empty_values_and_entries_are_no_constraint(annotations: dict[str, str]) -> None:
    """volcano-sh/volcano ed72c7c81 `pkg/scheduler/api/devices/nvidia/vgpu/utils.go` parseGPUUUIDList trims
    each comma-separated entry and drops the empty ones; gpuUUIDFilter.enabled() is false with both lists
    empty, so `""` on either annotation is no constraint, and a trailing comma is no entry."""
    r = review(gpu_pod({N: 1, M: 1000}, annotations=annotations), V116)
    assert find(r, "VGP011") == []


def test_vgp011_empty_value_on_an_old_volcano_is_not_reported() -> None:
    old = ClusterFacts(volcano_version=parse_version("v1.15.1"))
    assert find(review(gpu_pod({N: 1, M: 1000}, annotations={NOUSE_UUID: ""}), old), "VGP011") == []


# ---- VGP012 podgroup policy ----------------------------------------------------------------------------
@pytest.mark.parametrize(("annotations", "text"), [
    ({POLICY: "pack"}, '"pack" has no effect'),
    ({POLICY: "Spread"}, "has no effect"),
    ({POLICY: "spread"}, "without a PodGroup annotation"),
])
def test_vgp012_policy_without_effect(annotations: dict[str, str], text: str) -> None:
    f = only(review(gpu_pod({N: 1, M: 1000}, annotations=annotations)), "VGP012")
    assert (f.severity, f.subject) == (WARNING, f"annotation/{POLICY}") and text in f.message


def test_vgp012_policy_needs_volcano_1_15() -> None:
    facts = ClusterFacts(volcano_version=parse_version("v1.14.3"))
    ann = {POLICY: "spread", "scheduling.k8s.io/group-name": "pg"}
    assert "needs ≥ 1.15" in only(review(gpu_pod({N: 1, M: 1000}, annotations=ann), facts), "VGP012").message


@pytest.mark.parametrize("group_key", ["scheduling.k8s.io/group-name", "scheduling.volcano.sh/group-name"])
def test_vgp012_spread_with_a_group(group_key: str) -> None:
    r = review(gpu_pod({N: 1, M: 1000}, annotations={POLICY: "spread", group_key: "pg-1"}))
    assert find(r, "VGP012") == []


def test_vgp012_spread_inside_a_volcano_job_task() -> None:
    task = gpu_pod({N: 1, M: 1000}, annotations={POLICY: "spread"}, scheduler=None)
    assert find(review(vcjob(("worker", task))), "VGP012") == []


# ---- VGP013 vGPU blocks paired with the wrong container ------------------------------------------------
# Evidence: Volcano writes one block per container with vgpu-number/vgpu-memory in its limits, skipping
# the others (volcano-sh/volcano `pkg/scheduler/api/devices/util.go` ExtractResourceRequest, v1.16.0-alpha.1);
# the device plugin serves one container per Allocate and pairs block i with spec.containers[i]
# (Project-HAMi/volcano-vgpu-device-plugin v1.12.0 `pkg/util/util.go` GetNextDeviceRequest,
# `pkg/plugin/server.go` Allocate: the cache directory `<uid>_<container name>`, CUDA_DISABLE_CONTROL).
def test_vgp013_two_vgpu_containers_listed_first_are_served() -> None:
    """Blocks 0 and 1 pair with spec.containers[0] and [1], which are the containers they were booked for;
    a sidecar after them has no block and is never asked about."""
    r = review(pod(container("a", limits={N: 1, M: 1000}), container("b", limits={N: 2, M: 1000}),
                   container("sidecar")))
    assert find(r, "VGP013") == []


def test_vgp013_a_container_without_vgpu_before_one_with_vgpu() -> None:
    """Block 1 (for "b") is paired with spec.containers[1], the sidecar: the cache directory and the
    CUDA_DISABLE_CONTROL opt-out follow the wrong container."""
    r = review(pod(container("a", limits={N: 1, M: 1000}), container("sidecar"), container("b", limits={N: 1})))
    f = only(r, "VGP013")
    assert (f.severity, f.subject) == (WARNING, "spec.containers")
    assert '"sidecar" has no vGPU' in f.message and '"b"' in f.message and "spec.containers[i]" in f.message


def test_vgp013_sidecar_first() -> None:
    r = review(pod(container("istio-proxy"), container("trainer", limits={N: 1, M: 1000})))
    assert '"istio-proxy" has no vGPU but is listed before vGPU container "trainer"' in only(r, "VGP013").message


def test_vgp013_vgpu_in_an_init_container() -> None:
    """Kubelet allocates init containers first: the plugin hands the init container the block booked for
    the first app container (VGP007 is the error; VGP013 says which container loses its block)."""
    r = review(pod(container("a", limits={N: 1, M: 1000}), initContainers=[container("warm", limits={N: 1})]))
    f = only(r, "VGP013")
    assert f.subject == "spec.initContainers[0]" and '"warm"' in f.message and 'container "a"' in f.message
    assert find(r, "VGP007")


def test_vgp013_one_vgpu_container_and_a_sidecar() -> None:
    assert find(review(pod(container("a", limits={N: 1, M: 1000}), container("sidecar"))), "VGP013") == []


# ---- VGP016 privileged ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("facts", "severity", "allowed"), [
    (None, ERROR, False), (ClusterFacts(privileged_severity=Severity.WARNING), WARNING, True),
])
def test_vgp016_privileged_vgpu_container(facts: ClusterFacts | None, severity: Severity, allowed: bool) -> None:
    r = review(pod(container("trainer", limits={N: 1, M: 1000}, privileged=True)), facts)
    f = only(r, "VGP016")
    assert (f.severity, f.subject) == (severity, "container/trainer") and "isolation is void" in f.message
    assert r.allowed is allowed


def test_vgp016_privileged_without_vgpu_is_fine() -> None:
    r = review(pod(container("trainer", limits={N: 1, M: 1000}), container("debug", privileged=True)))
    assert find(r, "VGP016") == []


# ---- VGP017 informational ------------------------------------------------------------------------------
def test_vgp017_cores_100_is_exclusive() -> None:
    r = review(gpu_pod({N: 1, M: 1000, CORES: 100}))
    f = only(r, "VGP017")
    assert (f.severity, f.subject) == (INFO, "container/trainer") and "exclusive" in f.message
    assert r.allowed is True


def test_vgp017_no_memory_books_whole_gpus() -> None:
    assert "2 GPUs" in only(review(gpu_pod({N: 2})), "VGP017").message


def test_vgp017_silent_on_an_ordinary_slice() -> None:
    assert find(review(gpu_pod({N: 1, M: 1000, CORES: 30})), "VGP017") == []
