"""`geometry explain`: the same answers the pod rules give, with the steps that lead there."""

from __future__ import annotations

import pytest

from tests.unit.geometry.helpers import VGPU_CM, VNPU_CM, payload
from vgpuctl.core.deviceconfig import (
    default_device_config,
    mig_fit_in_geometry,
    mig_request_mib,
    parse_device_config,
    trim_vnpu_memory,
)
from vgpuctl.core.geometry.explain import explain_mig, explain_vnpu, find_chip

VGPU = parse_device_config(payload(VGPU_CM)).config
VNPU = parse_device_config(payload(VNPU_CM)).config
A100_40 = "NVIDIA A100-SXM4-40GB"


@pytest.mark.parametrize(("memory", "answer", "group"), [
    (3000, "1g.5gb", "group1"),
    (5120, "1g.5gb", "group1"),
    (8000, "2g.10gb", "group2"),  # the design doc's example
    (20000, "3g.20gb", "group3"),
    (40960, "7g.40gb", "group4"),
])
def test_mig_answers_match_the_best_fit_the_pod_rules_use(memory: int, answer: str, group: str) -> None:
    assert VGPU is not None
    e = explain_mig(VGPU, A100_40, memory)
    geometry = VGPU.nvidia.geometry_for(A100_40)
    assert geometry is not None
    fit = mig_fit_in_geometry(geometry, mig_request_mib(VGPU.nvidia, memory))
    assert fit is not None and e.fits
    assert (e.result["instance"], e.result["group"]) == (fit.instance.name, fit.group.name) == (answer, group)
    assert e.result["entry"] == 1 and "knownMigGeometries[1]" in e.steps[1]


def test_mig_never_fits_too_large_unknown_model_or_no_geometries() -> None:
    assert VGPU is not None
    big = explain_mig(VGPU, A100_40, 40961)
    assert not big.fits and "largest 40960" in big.answer
    unknown = explain_mig(VGPU, "NVIDIA H100 80GB HBM3", 1000)
    assert not unknown.fits and "hami-core" in unknown.answer and "A30" in unknown.steps[-1]
    none = explain_mig(default_device_config(), A100_40, 1000)
    assert not none.fits and "no knownMigGeometries" in none.answer


def test_mig_applies_gpu_memory_factor() -> None:
    raw = payload(VGPU_CM)
    raw["nvidia"]["gpuMemoryFactor"] = 4
    config = parse_device_config(raw).config
    assert config is not None
    e = explain_mig(config, A100_40, 2000)  # 8000 MiB after the factor
    assert e.request == {"memory": 2000, "requestMiB": 8000} and e.result["instance"] == "2g.10gb"
    assert "2560 in vgpu-memory units" in e.steps[-1]


@pytest.mark.parametrize(("memory", "template", "booked"), [
    (1, "vir01", 3072), (3000, "vir01", 3072), (3073, "vir02", 6144), (12288, "vir04", 12288),
    (12289, None, 21527), (24576, None, 21527),
])
def test_vnpu_answers_match_trim_memory(memory: int, template: str | None, booked: int) -> None:
    config = default_device_config()
    e = explain_vnpu(config, "Ascend310P", memory)
    trim = trim_vnpu_memory(config.vnpus[0], memory)
    assert e.fits and e.result["template"] == template and e.result["memory"] == booked == trim.memory


def test_vnpu_never_fits_oversized_partial_multi_or_unknown_chip() -> None:
    config = default_device_config()
    over = explain_vnpu(config, "Ascend310P", 24577)
    assert not over.fits and "smallest template (vir01)" in over.answer and "VGH003" in over.answer
    multi = explain_vnpu(config, "Ascend310P", 3000, count=2)
    assert not multi.fits and "VGH004" in multi.answer
    whole = explain_vnpu(config, "Ascend310P", 20000, count=2)
    assert whole.fits and whole.answer == "2 × a whole card (21527 MiB)"
    unknown = explain_vnpu(config, "Ascend910B3", 1000)
    assert not unknown.fits and "known: Ascend310P" in unknown.answer


def test_chips_are_found_by_common_word_resource_name_or_chip_name() -> None:
    assert VNPU is not None
    for name in ("Ascend910C", "huawei.com/Ascend910C", "Ascend910"):
        chip = find_chip(VNPU, name)
        assert chip is not None and chip.common_word == "Ascend910C"
    e = explain_vnpu(VNPU, "Ascend910B3", 20000)
    assert e.fits and e.answer == "vir10_3c_32g (32768 MiB)"
    assert e.to_dict()["result"] == {"commonWord": "Ascend910B3", "memory": 32768, "template": "vir10_3c_32g"}
