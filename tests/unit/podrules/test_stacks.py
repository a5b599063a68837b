"""Pods asking two GPU stacks (docs/stacks.md#pods-mixing-stacks): VGP019, VGP020; and VGC014 for pods linted against
a cluster whose Volcano cannot allocate DRA claims. The DRA facts come from objects shaped as the drivers' charts
install them (tests/fixtures/stacks/), resolved as `lint` resolves them from its input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.podrules.conftest import ERROR, codes, container, device_config, find, only, pod, vcjob
from vgpuctl.core.cluster.dra import dra_facts_from_objects, dra_objects
from vgpuctl.core.facts import ClusterFacts, DraFacts
from vgpuctl.core.podrules import review

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "stacks"
VGPU = {"volcano.sh/vgpu-number": 1, "volcano.sh/vgpu-memory": 10240}


# ---- VGP019 ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("other", ["nvidia.com/gpu", "nvidia.com/gpu.shared", "nvidia.com/mig-1g.10gb",
                                   "nvidia.com/gpumem", "nvidia.com/gpucores"])
def test_vgp019_fails_for_another_stacks_gpus_in_a_vgpu_container(other: str) -> None:
    f = only(review(pod(container("trainer", limits={**VGPU, other: 1}))), "VGP019")
    assert (f.severity, f.subject) == (ERROR, "container/trainer")
    assert f'container "trainer": asks for {other} together with volcano.sh/vgpu-number, volcano.sh/vgpu-memory' \
        in f.message


def test_vgp019_reads_requests_too_and_every_container_kind() -> None:
    r = review(pod(container("a", limits=VGPU, requests={"nvidia.com/gpu": 1})), apply_defaults=False)
    assert only(r, "VGP019").subject == "container/a"


@pytest.mark.parametrize("obj", [
    pod(container("plain", limits={"nvidia.com/gpu": 1}), scheduler="default-scheduler"),  # only the other stack
    pod(container("vgpu", limits=VGPU)),  # only vGPU
    pod(container("vgpu", limits=VGPU), container("plain", limits={"nvidia.com/gpu": 1})),  # one stack per container
])
def test_vgp019_passes_for_one_stack_per_container(obj: dict[str, Any]) -> None:
    assert find(review(obj), "VGP019") == []


def test_vgp019_passes_where_the_device_config_names_nvidia_com_gpu_as_the_vgpu_count() -> None:
    config = device_config({"nvidia": {"resourceCountName": "nvidia.com/gpu", "resourceMemoryName":
                                       "volcano.sh/vgpu-memory", "resourceCoreName": "volcano.sh/vgpu-cores"}})
    r = review(pod(container("c", limits={"nvidia.com/gpu": 1, "volcano.sh/vgpu-memory": 1024})),
               ClusterFacts(device_config=config))
    assert find(r, "VGP019") == []


# ---- VGP020 ------------------------------------------------------------------------------------------------


def fixture_objects(name: str) -> list[dict[str, Any]]:
    """The DRA objects of a fixture List, as `lint` picks them out of its input."""
    return [dict(o) for o in dra_objects([yaml.safe_load((FIXTURES / name).read_text())])]


def template(name: str, cls: str, *, namespace: str = "ml", version: str = "v1") -> dict[str, Any]:
    request = {"name": "r", "exactly": {"deviceClassName": cls}} if version == "v1" else \
        {"name": "r", "deviceClassName": cls}  # v1beta1
    return {"apiVersion": f"resource.k8s.io/{version}", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [request]}}}}


NIC_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "dranet"},
             "spec": {"selectors": [{"cel": {"expression": "device.driver == \"dra.net\""}}]}}
CUSTOM_GPU_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "big-gpus"},
                    "spec": {"selectors": [{"cel": {"expression": "'gpu.nvidia.com' == device.driver && "
                                                                  "device.capacity['gpu.nvidia.com'].memory >= "
                                                                  "quantity('80Gi')"}}]}}


def facts_of(*objects: dict[str, Any]) -> ClusterFacts:
    dra = dra_facts_from_objects([*fixture_objects("nvidia-dra-resourceslice.yaml"),
                                  *fixture_objects("hami-dra-resourceslice.yaml"), NIC_CLASS, CUSTOM_GPU_CLASS,
                                  *objects])
    return ClusterFacts(dra=dra)


def claiming(limits: dict[str, Any], *claims: dict[str, Any], namespace: str = "ml") -> dict[str, Any]:
    resources = {"limits": dict(limits), "claims": [{"name": c["name"]} for c in claims]}
    return pod(container("c", resources=resources), namespace=namespace, resourceClaims=list(claims))


@pytest.mark.parametrize("cls", ["gpu.nvidia.com", "mig.nvidia.com", "hami-core-gpu.project-hami.io", "big-gpus"])
def test_vgp020_fails_for_a_gpu_claim_beside_device_sharing(cls: str) -> None:
    r = review(claiming(VGPU, {"name": "gpu", "resourceClaimTemplateName": "t"}), facts_of(template("t", cls)))
    f = only(r, "VGP020")
    assert (f.severity, f.subject) == (ERROR, "spec.resourceClaims[0]")
    assert f"claim 'gpu' (ResourceClaimTemplate t) asks DeviceClass {cls} for a GPU" in f.message
    assert not r.allowed


def test_vgp020_resolves_claims_v1beta1_first_available_and_gpushare_pods() -> None:
    claim = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim",
             "metadata": {"name": "shared-gpu", "namespace": "ml"},
             "spec": {"devices": {"requests": [{"name": "r", "firstAvailable": [
                 {"name": "a", "deviceClassName": "dranet"}, {"name": "b", "deviceClassName": "mig.nvidia.com"}]}]}}}
    facts = facts_of(claim, template("old", "gpu.nvidia.com", version="v1beta1"))
    by_claim = review(claiming(VGPU, {"name": "g", "resourceClaimName": "shared-gpu"}), facts)
    assert "(ResourceClaim shared-gpu) asks DeviceClass mig.nvidia.com" in only(by_claim, "VGP020").message
    gpushare = review(claiming({"volcano.sh/gpu-memory": 4096}, {"name": "g", "resourceClaimTemplateName": "old"}),
                      facts)
    assert only(gpushare, "VGP020").severity is ERROR
    # Kubernetes 1.26–1.30 kept the reference under `source`
    legacy = review(claiming(VGPU, {"name": "g", "source": {"resourceClaimTemplateName": "old"}}), facts)
    assert only(legacy, "VGP020").severity is ERROR


def test_vgp020_reviews_every_task_of_a_volcano_job() -> None:
    job = vcjob(("worker", claiming(VGPU, {"name": "g", "resourceClaimTemplateName": "t"})))
    job["metadata"]["namespace"] = "ml"
    f = only(review(job, facts_of(template("t", "gpu.nvidia.com"))), "VGP020")
    assert f.subject == "task/worker/spec.resourceClaims[0]"


@pytest.mark.parametrize(("obj", "facts"), [
    # a NIC claim is fine
    (claiming(VGPU, {"name": "nic", "resourceClaimTemplateName": "nic"}), facts_of(template("nic", "dranet"))),
    # the template is not known: not guessed
    (claiming(VGPU, {"name": "g", "resourceClaimTemplateName": "elsewhere"}), facts_of()),
    # in another namespace than the template
    (claiming(VGPU, {"name": "g", "resourceClaimTemplateName": "t"}, namespace="other"),
     facts_of(template("t", "gpu.nvidia.com"))),
    # a class nobody describes (not collected, not a driver's chart name)
    (claiming(VGPU, {"name": "g", "resourceClaimTemplateName": "t"}), ClusterFacts(dra=DraFacts(
        templates={("ml", "t"): ("acme-accelerators",)}))),
    # no device sharing: a GPU claim alone is DRA's business
    (claiming({"cpu": 1}, {"name": "g", "resourceClaimTemplateName": "t"}), facts_of(template("t", "gpu.nvidia.com"))),
    # Ascend NPUs and a GPU claim are two different devices
    (claiming({"huawei.com/Ascend310P": 1}, {"name": "g", "resourceClaimTemplateName": "t"}),
     facts_of(template("t", "gpu.nvidia.com"))),
    # the cluster-aware webhook's facts: no DRA objects watched, so nothing can be told from the pod alone
    (claiming(VGPU, {"name": "g", "resourceClaimTemplateName": "single-gpu"}), ClusterFacts()),
])
def test_vgp020_passes_where_no_gpu_claim_is_known(obj: dict[str, Any], facts: ClusterFacts) -> None:
    assert find(review(obj, facts), "VGP020") == []


def test_the_classes_a_driver_chart_installs_count_as_gpu_classes_unseen() -> None:
    """`gpu.nvidia.com` is a GPU class even where the DeviceClass was not collected; a class seen selecting
    another driver is not, whatever its name."""
    dra = DraFacts(templates={("ml", "t"): ("gpu.nvidia.com",)})
    assert dra.is_gpu_class("gpu.nvidia.com") is True and dra.is_gpu_class("dranet") is None
    seen = dra_facts_from_objects([NIC_CLASS])
    assert seen is not None and seen.is_gpu_class("dranet") is False
    assert only(review(claiming(VGPU, {"name": "g", "resourceClaimTemplateName": "t"}), ClusterFacts(dra=dra)),
                "VGP020")


# ---- VGC014 on linted pods --------------------------------------------------------------------------------


BLOCKED = "predicate.DynamicResourceAllocationEnable is not true on the predicates plugin"


def test_vgc014_fails_a_linted_pod_with_claims_on_a_cluster_that_cannot_allocate_them() -> None:
    r = review(claiming({"cpu": 1}, {"name": "n", "resourceClaimTemplateName": "nic"}),
               ClusterFacts(dra_blocked=BLOCKED))
    f = only(r, "VGC014")
    assert (f.severity, f.subject) == (ERROR, "spec.resourceClaims")
    assert BLOCKED in f.message and not r.allowed


@pytest.mark.parametrize(("obj", "facts", "existing"), [
    # the cluster allocates claims (or nobody knows)
    (claiming({"cpu": 1}, {"name": "n", "resourceClaimTemplateName": "nic"}), ClusterFacts(), False),
    # another scheduler's pod
    (pod(container("c"), scheduler="default-scheduler", resourceClaims=[{"name": "n", "resourceClaimName": "x"}]),
     ClusterFacts(dra_blocked=BLOCKED), False),
    # an existing pod: the doctor's own VGC014 check says it, once
    (claiming({"cpu": 1}, {"name": "n", "resourceClaimTemplateName": "nic"}), ClusterFacts(dra_blocked=BLOCKED), True),
    # no claims
    (pod(container("c", limits=VGPU)), ClusterFacts(dra_blocked=BLOCKED), False),
])
def test_vgc014_passes_otherwise(obj: dict[str, Any], facts: ClusterFacts, existing: bool) -> None:
    assert find(review(obj, facts, existing=existing), "VGC014") == []


def test_a_pod_with_both_problems_gets_both_codes_in_order() -> None:
    facts = facts_of(template("t", "gpu.nvidia.com"))
    facts = ClusterFacts(dra=facts.dra, dra_blocked=BLOCKED)
    r = review(claiming({**VGPU, "nvidia.com/gpu": 1}, {"name": "g", "resourceClaimTemplateName": "t"}), facts)
    assert [c for c in codes(r) if c[0] in ("VGP019", "VGP020", "VGC014")] == [
        ("VGP019", ERROR), ("VGC014", ERROR), ("VGP020", ERROR)]
