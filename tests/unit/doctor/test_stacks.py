"""One GPU, one owner (docs/stacks.md): VGN020, VGN021, VGN022 and VGN012 made exact, each with a failing and a
passing cluster, from the upstream-shaped objects of tests/fixtures/stacks/."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.doctor.conftest import (
    GPU_A,
    GPU_B,
    NOW,
    cluster,
    device_cm,
    doctor,
    found,
    node,
    register,
    result,
    vgpu_node,
)
from tests.unit.doctor.nodes_builders import DRIVER_OK
from vgpuctl.core.cluster.report import shared_stacks
from vgpuctl.core.cluster.stacks import STACK_NVIDIA, STACK_VGPU, stacks_of
from vgpuctl.core.doctor import judge_nodes
from vgpuctl.core.doctor.framework import Status
from vgpuctl.core.findings import Finding

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "stacks"
DRA_LISTED = frozenset({"ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate"})


def load(name: str) -> Any:
    return yaml.safe_load((FIXTURES / name).read_text())


def ts_node(**changes: Any) -> dict[str, Any]:
    """gpu-operator's time-slicing node (4 GPUs, 4 replicas each) with the vGPU register of the same 4 GPUs."""
    obj = copy.deepcopy(load("gpu-operator-time-slicing-node.yaml"))
    for key, value in changes.items():
        part, _, name = key.partition(":")
        target = obj["metadata"]["labels"] if part == "label" else obj["status"]["allocatable"]
        if value is None:
            target.pop(name, None)
        else:
            target[name] = value
    return obj


def nvidia_slices() -> list[dict[str, Any]]:
    """The NVIDIA DRA driver's slice of gpu-dra-1 and its two DeviceClasses."""
    items: list[dict[str, Any]] = load("nvidia-dra-resourceslice.yaml")["items"]
    return items


def hami_slices() -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = load("hami-dra-resourceslice.yaml")["items"]
    return items


def slice_gpus(items: list[dict[str, Any]]) -> list[str]:
    """The GPUs a fixture's slices offer: uuid of a whole GPU, parentUUID of a MIG device."""
    out: list[str] = []
    for obj in items:
        if obj["kind"] != "ResourceSlice":
            continue
        for d in obj["spec"]["devices"]:
            attrs = d["attributes"]
            gpu = (attrs.get("parentUUID") or attrs["uuid"])["string"]
            if gpu not in out:
                out.append(gpu)
    return out


def only(findings: list[Finding]) -> Finding:
    (one,) = findings
    return one


# ---- VGN020: NVIDIA's device plugin + the vGPU register ------------------------------------------------------


def test_vgn020_fails_where_the_counts_prove_gpus_offered_twice() -> None:
    report = doctor(cluster(ts_node()), version="1.15.1")
    f = only(found(report, "VGN020"))
    assert (f.severity.value, f.subject) == ("error", "node/gpu-ts-1")
    assert "nvidia.com/gpu: 16 (time-slicing, 4 replicas per GPU: 4 GPU(s))" in f.message
    assert "deployed by gpu-operator: nvidia.com/gpu.deploy.device-plugin=true" in f.message
    assert "at least 4 GPU(s) are offered by both" in f.message
    assert "gpu-ts-1" not in f.message  # grouped across a fleet


def test_vgn020_passes_where_gpu_operator_keeps_its_plugin_off() -> None:
    """The documented fix: `nvidia.com/gpu.deploy.device-plugin=false` — the operator's DaemonSet no longer runs
    there, so the node advertises no nvidia.com/gpu."""
    fixed = ts_node(**{"label:nvidia.com/gpu.deploy.device-plugin": "false", "alloc:nvidia.com/gpu": None})
    report = doctor(cluster(fixed), version="1.15.1")
    assert found(report, "VGN020") == []
    assert result(report, "VGN020").status is Status.PASS


@pytest.mark.parametrize(("labels", "allocatable", "severity", "said"), [
    # GPU feature discovery's count missing: the overlap cannot be told
    ({"nvidia.com/gpu.count": None}, {}, "warning", "without nvidia.com/gpu.count"),
    # 4 vGPU GPUs + ceil(4 / 4) = 5 > 4: still proven
    ({}, {"nvidia.com/gpu": "4"}, "error", "at least 1 GPU(s)"),
    # a split of an 8-GPU node: 4 + 4 = 8 fits, a filterdevices split is possible
    ({"nvidia.com/gpu.count": "8"}, {}, "warning", "a disjoint split (filterdevices) is possible"),
])
def test_vgn020_severity_follows_what_the_labels_prove(labels: dict[str, str | None], allocatable: dict[str, str],
                                                       severity: str, said: str) -> None:
    changes = {f"label:{k}": v for k, v in labels.items()} | {f"alloc:{k}": v for k, v in allocatable.items()}
    f = only(found(doctor(cluster(ts_node(**changes)), version="1.15.1"), "VGN020"))
    assert f.severity.value == severity and said in f.message


def test_vgn020_reads_the_renamed_shared_resource_and_mps() -> None:
    renamed = ts_node(**{"alloc:nvidia.com/gpu": None, "alloc:nvidia.com/gpu.shared": "16",
                         "label:nvidia.com/gpu.product": "NVIDIA-A100-SXM4-80GB",
                         "label:nvidia.com/gpu.sharing-strategy": "mps"})
    f = only(found(doctor(cluster(renamed)), "VGN020"))
    assert "nvidia.com/gpu.shared: 16 (mps, 4 replicas per GPU: 4 GPU(s))" in f.message


def test_vgn020_is_not_about_hamis_or_the_vgpu_plugins_own_nvidia_com_gpu() -> None:
    hami = '[{"id":"GPU-1","count":10,"devmem":40960,"devcore":100,"type":"NVIDIA A100","health":true}]'
    with_hami = ts_node()
    with_hami["metadata"]["annotations"]["hami.io/node-nvidia-register"] = hami
    assert found(doctor(cluster(with_hami)), "VGN020") == []  # nvidia.com/gpu is HAMi's: VGN012
    # a device config naming nvidia.com/gpu as the vGPU count resource: the vGPU plugin advertises it itself
    config = device_cm("nvidia:\n  resourceCountName: nvidia.com/gpu\n  resourceMemoryName: volcano.sh/vgpu-memory\n"
                       "  resourceCoreName: volcano.sh/vgpu-cores\n  deviceSplitCount: 10\n  deviceCoreScaling: 1\n"
                       "  gpuMemoryFactor: 1\n")
    assert found(doctor(cluster(ts_node(), config)), "VGN020") == []


# ---- VGN021: DRA slices + a device plugin -----------------------------------------------------------------------


def test_vgn021_fails_where_nvidias_dra_driver_offers_the_vgpu_plugins_gpus() -> None:
    slices = nvidia_slices()
    gpus = slice_gpus(slices)  # GPU 0 whole, GPU 1 as MIG devices (its parentUUID)
    vgpu = vgpu_node("gpu-dra-1", *gpus, devmem=81920, labels=DRIVER_OK)
    f = only(found(doctor(cluster(vgpu, *slices, kinds=DRA_LISTED)), "VGN021"))
    assert (f.severity.value, f.subject) == ("error", "node/gpu-dra-1")
    assert f"offer {gpus[0]}, {gpus[1]} (the GPU or MIG devices cut from it)" in f.message
    assert "DRA driver gpu.nvidia.com" in f.message and "volcano.sh/node-vgpu-register" in f.message


def test_vgn021_fails_where_hamis_dra_driver_offers_the_gpus_of_hamis_plugin() -> None:
    slices = hami_slices()
    (gpu,) = slice_gpus(slices)
    hami = f'[{{"id":"{gpu}","count":10,"devmem":40960,"devcore":100,"type":"NVIDIA A100","health":true}}]'
    hami_node = node("gpu-hdra-1", annotations={"hami.io/node-nvidia-register": hami}, labels=DRIVER_OK,
                     allocatable={"nvidia.com/gpu": "10"})
    f = only(found(doctor(cluster(hami_node, *slices, kinds=DRA_LISTED)), "VGN021"))
    assert "hami-core-gpu.project-hami.io" in f.message and gpu in f.message
    assert "HAMi's NVIDIA device plugin, HAMi ≥ v2.8" in f.message


def test_vgn021_fails_beside_nvidias_device_plugin_without_uuids_to_name() -> None:
    slices = [o for o in nvidia_slices() if o["kind"] == "ResourceSlice"]
    slices[0]["spec"]["nodeName"] = "gpu-ts-1"
    f = only(found(doctor(cluster(ts_node(), *slices, kinds=DRA_LISTED)), "VGN021"))
    assert "offer 2 GPU(s) on a node where NVIDIA's device plugin advertises nvidia.com/gpu: 16" in f.message


def test_vgn021_passes_where_the_dra_driver_offers_other_gpus_or_other_devices() -> None:
    slices = nvidia_slices()
    other = vgpu_node("gpu-dra-1", GPU_A, GPU_B, labels=DRIVER_OK)  # a filterdevices split: different GPUs
    nic = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "n1-dra.net-abcde"},
           "spec": {"driver": "dra.net", "nodeName": "n1", "pool": {"name": "n1"},
                    "devices": [{"name": "eth1", "attributes": {"ifName": {"string": "eth1"}}}]}}
    report = doctor(cluster(other, vgpu_node("n1", labels=DRIVER_OK), *slices, nic, kinds=DRA_LISTED))
    assert found(report, "VGN021") == []
    assert result(report, "VGN021").status is Status.PASS


def test_vgn021_reads_v1beta1_slices_and_qualified_attributes() -> None:
    """v1beta1 keeps attributes under `basic`; an attribute may be qualified by its driver's domain."""
    legacy = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice", "metadata": {"name": "s"},
              "spec": {"driver": "gpu.nvidia.com", "nodeName": "n1", "pool": {"name": "n1"}, "devices": [
                  {"name": "gpu-0", "basic": {"attributes": {"type": {"string": "gpu"},
                                                             "gpu.nvidia.com/uuid": {"string": GPU_A}}}}]}}
    f = only(found(doctor(cluster(vgpu_node("n1", GPU_A, labels=DRIVER_OK), legacy)), "VGN021"))
    assert GPU_A in f.message


def test_vgn021_is_skipped_with_the_reason_when_slices_were_not_collected() -> None:
    report = doctor(cluster(vgpu_node("n1", labels=DRIVER_OK)))  # a kubectl file without resourceslices
    row = result(report, "VGN021")
    assert row.status is Status.SKIP and "ResourceSlices were not collected" in row.reason
    listed_none = doctor(cluster(vgpu_node("n1", labels=DRIVER_OK), kinds=DRA_LISTED))
    assert result(listed_none, "VGN021").status is Status.PASS  # listed, and there are none
    unreadable = doctor(cluster(vgpu_node("n1", labels=DRIVER_OK), kinds=DRA_LISTED),
                        unreadable=frozenset({"resourceslices"}))
    assert result(unreadable, "VGN021").reason == "could not list resourceslices (VGK001)"


# ---- VGN022: gpushare + vGPU ---------------------------------------------------------------------------------


def test_vgn022_fails_where_gpushare_capacity_and_the_vgpu_register_share_a_node() -> None:
    both = vgpu_node("s1", GPU_A, labels=DRIVER_OK, capacity={"volcano.sh/gpu-memory": "40960",
                                                              "volcano.sh/gpu-number": "1"})
    f = only(found(doctor(cluster(both)), "VGN022"))
    assert (f.severity.value, f.subject) == ("error", "node/s1")
    assert "capacity volcano.sh/gpu-number: 1" in f.message and "kube-system/volcano-device-plugin" in f.message


def test_vgn022_passes_for_either_family_alone() -> None:
    share = node("s1", labels=DRIVER_OK, capacity={"volcano.sh/gpu-memory": "40960", "volcano.sh/gpu-number": "1"})
    report = doctor(cluster(share, vgpu_node("v1", labels=DRIVER_OK)))
    assert found(report, "VGN022") == []
    assert result(report, "VGN022").status is Status.PASS


# ---- VGN012 made exact: every HAMi form ---------------------------------------------------------------------


@pytest.mark.parametrize(("form", "hami"), [
    ("HAMi ≤ v2.4", f"{GPU_A},10,40960,100,NVIDIA-NVIDIA A100-PCIE-40GB,0,true:"),
    ("HAMi v2.5–v2.7", f"{GPU_A},10,40960,100,NVIDIA-NVIDIA A100-PCIE-40GB,0,true,0,hami-core:"),
    ("HAMi ≥ v2.8", f'[{{"id":"{GPU_A}","count":10,"devmem":40960,"devcore":100,"type":"NVIDIA A100",'
                    '"health":true}]'),
])
def test_vgn012_names_the_gpus_both_plugins_register_in_every_hami_form(form: str, hami: str) -> None:
    both = vgpu_node("n1", GPU_A, GPU_B, labels=DRIVER_OK, annotations={"hami.io/node-nvidia-register": hami})
    f = only(found(doctor(cluster(both)), "VGN012"))
    assert f.severity.value == "error" and form in f.message
    assert f"both register {GPU_A}:" in f.message and GPU_B not in f.message


# ---- nodes: the same verdict, and every stack per GPU --------------------------------------------------------


def test_nodes_carry_the_doctors_stack_findings_and_the_stacks_per_gpu() -> None:
    slices = nvidia_slices()
    gpus = slice_gpus(slices)
    snap = cluster(ts_node(), vgpu_node("gpu-dra-1", *gpus, devmem=81920, labels=DRIVER_OK), *slices,
                   vgpu_node("plain", labels=DRIVER_OK), kinds=DRA_LISTED)
    report = doctor(snap, version="1.15.1")
    verdicts = judge_nodes(snap, now=NOW, volcano_version=None)
    codes = {"VGN020", "VGN021"}
    assert {(f.code, f.subject) for f in verdicts.of("gpu-ts-1") + verdicts.of("gpu-dra-1") if f.code in codes} \
        == {(f.code, f.subject) for f in found(report, "VGN020") + found(report, "VGN021")}
    stacks = shared_stacks(snap, snap.nodes)
    assert set(stacks) == {"gpu-ts-1", "gpu-dra-1"}  # the plain vGPU node has one stack
    dra = stacks["gpu-dra-1"]
    assert dra.offering(gpus[1]) == (STACK_VGPU, "dra:gpu.nvidia.com")  # GPU 1 offered as MIG devices
    gpu_ts, plain = snap.node("gpu-ts-1"), snap.node("plain")
    assert gpu_ts is not None and plain is not None
    ts = stacks_of(snap, gpu_ts)
    # the device plugin offers 4 GPUs of a 4-GPU node: every GPU, though it names none
    assert all(ts.offering(d.id) == (STACK_VGPU, STACK_NVIDIA) for d in gpu_ts.devices)
    doc = gpu_ts.to_dict(stacks=ts)
    assert doc["stacks"][1] == {"name": "nvidia-device-plugin", "source": "allocatable nvidia.com/gpu", "gpus": 4}
    assert doc["devices"][0]["stacks"] == ["volcano-vgpu", "nvidia-device-plugin"]
    assert "stacks" not in plain.to_dict()


def test_a_node_with_one_stack_has_no_stacks_in_its_report() -> None:
    snap = cluster(vgpu_node("v1", GPU_A, labels=DRIVER_OK), node("cpu"), kinds=DRA_LISTED)
    assert snap.nodes[0].annotations["volcano.sh/node-vgpu-register"] == register(GPU_A)
    assert shared_stacks(snap, snap.nodes) == {}
