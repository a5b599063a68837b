"""The DRA objects as the cluster model reads them (docs/stacks.md#dra): collected or not, decoded in every
`resource.k8s.io` version, and the pods with claims found once by the pod index."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.doctor.conftest import cluster, doctor, found, node, pod
from vgpuctl.core.cluster.dra import dra_facts_from_objects, dra_objects, feature_gates
from vgpuctl.core.codecs.dra import (
    decode_device_class,
    decode_slice,
    pod_claims,
    requested_classes,
    template_classes,
)

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "stacks"
KINDS = ("ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate")


def items(name: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = yaml.safe_load((FIXTURES / name).read_text())["items"]
    return found


@pytest.mark.parametrize(("kinds", "objects", "collected"), [
    (None, [], False),  # a plain kubectl file without them: not collected
    (frozenset(KINDS), [], True),  # `vgpuctl.io/kinds` names them and there are none
    (None, items("hami-dra-resourceslice.yaml"), True),  # present: collected
])
def test_dra_kinds_are_none_until_collected(kinds: frozenset[str] | None, objects: list[dict[str, Any]],
                                            collected: bool) -> None:
    snap = cluster(node("n1"), *objects, kinds=kinds)
    lists = (snap.resource_slices, snap.device_classes, snap.resource_claims, snap.resource_claim_templates)
    if not collected:
        assert lists == (None, None, None, None) and snap.slices_by_node is None
    else:
        assert snap.resource_slices is not None and snap.slices_by_node is not None
        assert snap.resource_claims == [] if kinds else snap.resource_claims is None


def test_the_nvidia_slice_decodes_to_its_gpus_whole_and_as_mig_devices() -> None:
    (obj,) = [o for o in items("nvidia-dra-resourceslice.yaml") if o["kind"] == "ResourceSlice"]
    decoded = decode_slice(obj)
    assert decoded is not None and (decoded.driver, decoded.node) == ("gpu.nvidia.com", "gpu-dra-1")
    assert [(d.name, d.type) for d in decoded.devices] == [
        ("gpu-0", "gpu"), ("gpu-1-mig-1g10gb-19-0", "mig"), ("gpu-1-mig-3g40gb-9-4", "mig")]
    assert decoded.gpus == ("GPU-9b2e7c41-0000-4a55-8f3e-2c1d0b9a8e70", "GPU-9b2e7c41-0001-4a55-8f3e-2c1d0b9a8e71")
    assert decoded.devices[1].uuid.startswith("MIG-")  # type: ignore[union-attr]
    assert decoded.offers_gpus


def test_device_classes_name_their_drivers_and_extended_resource() -> None:
    classes = [decode_device_class(o) for o in items("nvidia-dra-resourceslice.yaml") + items(
        "hami-dra-resourceslice.yaml") if o["kind"] == "DeviceClass"]
    assert [(c.name, sorted(c.drivers), c.extended_resource, c.selects_gpus) for c in classes if c] == [
        ("gpu.nvidia.com", ["gpu.nvidia.com"], "nvidia.com/gpu", True),
        ("mig.nvidia.com", ["gpu.nvidia.com"], None, True),
        ("hami-core-gpu.project-hami.io", ["hami-core-gpu.project-hami.io"], "nvidia.com/gpu", True)]
    nic = decode_device_class({"metadata": {"name": "dranet"}, "spec": {"selectors": [
        {"cel": {"expression": 'device.driver == "dra.net"'}}]}})
    assert nic is not None and not nic.selects_gpus


def test_requests_in_every_version_and_pod_claims_in_both_forms() -> None:
    v1 = {"requests": [{"name": "a", "exactly": {"deviceClassName": "gpu.nvidia.com"}},
                       {"name": "b", "firstAvailable": [{"deviceClassName": "mig.nvidia.com"},
                                                        {"deviceClassName": "gpu.nvidia.com"}]}]}
    assert requested_classes(v1) == ("gpu.nvidia.com", "mig.nvidia.com")
    assert requested_classes({"requests": [{"name": "a", "deviceClassName": "x"}]}) == ("x",)  # v1beta1
    assert template_classes({"spec": {"spec": {"devices": v1}}}) == ("gpu.nvidia.com", "mig.nvidia.com")
    refs = list(pod_claims({"resourceClaims": [{"name": "a", "resourceClaimName": "c"},
                                               {"name": "b", "source": {"resourceClaimTemplateName": "t"}},
                                               {"name": "c"}, 5]}))
    assert [(r.index, r.name, r.kind, r.ref) for r in refs] == [(0, "a", "claim", "c"), (1, "b", "template", "t")]


def test_lint_input_lists_are_searched_for_dra_objects() -> None:
    docs = [yaml.safe_load((FIXTURES / "nvidia-dra-resourceslice.yaml").read_text()),
            {"kind": "ResourceClaimTemplate", "metadata": {"name": "t"}, "spec": {"spec": {"devices": {
                "requests": [{"name": "r", "exactly": {"deviceClassName": "gpu.nvidia.com"}}]}}}}, "junk", None]
    facts = dra_facts_from_objects(dra_objects(docs))
    assert facts is not None and facts.gpu_classes == {"gpu.nvidia.com", "mig.nvidia.com"}
    assert facts.classes_of("template", "default", "t") == ("gpu.nvidia.com",)  # no namespace: default
    assert dra_facts_from_objects(dra_objects([{"kind": "Pod"}])) is None


def test_the_pod_index_finds_the_pods_with_claims_in_one_pass() -> None:
    claims = [{"name": "g", "resourceClaimTemplateName": "t"}]
    snap = cluster(node("n1"), pod("ml", "a", resourceClaims=claims), pod("ml", "b"),
                   pod("ml", "c", resourceClaims=claims))
    assert [p["metadata"]["name"] for p in snap.pod_index.claiming()] == ["a", "c"]


def test_the_scheduler_flags_are_read_from_args_and_command() -> None:
    deployment = {"kind": "Deployment", "metadata": {"name": "volcano-scheduler", "namespace": "volcano-system"},
                  "spec": {"template": {"spec": {"containers": [
                      {"name": "s", "image": "volcanosh/vc-scheduler:v1.13.0",
                       "command": ["sh", "-c", "vc-scheduler --feature-gates=A=true,DynamicResourceAllocation=1"]},
                      {"name": "sidecar", "image": "busybox", "args": ["--feature-gates=DynamicResourceAllocation=0"]},
                  ]}}}}
    assert feature_gates(cluster(node("n1"), deployment)) == {"A": True, "DynamicResourceAllocation": True}
    assert feature_gates(cluster(node("n1"))) is None  # no vc-scheduler: unknown, not "none set"


def test_existing_pods_differing_only_in_their_claims_are_reviewed_apart() -> None:
    """VGX003 reviews a pod shape once: the claims, and the namespace they resolve in, are part of the shape."""
    def template(ns: str, name: str, cls: str) -> dict[str, Any]:
        return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": name, "namespace": ns},
                "spec": {"spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": cls}}]}}}}

    def vgpu_pod(ns: str, name: str, ref: str) -> dict[str, Any]:
        return pod(ns, name, containers=[{"name": "c", "resources": {"limits": {"volcano.sh/vgpu-number": "1"}}}],
                   resourceClaims=[{"name": "x", "resourceClaimTemplateName": ref}])

    snap = cluster(node("n1"), template("ml", "gpu", "gpu.nvidia.com"), template("ml", "nic", "dranet"),
                   vgpu_pod("ml", "a", "gpu"), vgpu_pod("ml", "b", "nic"), vgpu_pod("other", "c", "gpu"),
                   vgpu_pod("ml", "d", "gpu"))
    report = doctor(snap)
    assert sorted(f.subject for f in found(report, "VGP020")) == ["pod/ml/a/spec.resourceClaims[0]",
                                                                 "pod/ml/d/spec.resourceClaims[0]"]
