"""`geometry merge`: every entry survives, conflicts are reported, the form follows the Volcano version."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.geometry import strategies
from tests.unit.geometry.helpers import VGPU_CM, VNPU_CM, VNPU_PAYLOAD, codes, payload
from vgpuctl.core.deviceconfig import VnpusForm, parse_device_config
from vgpuctl.core.geometry.export import dump_yaml
from vgpuctl.core.geometry.merge import Prefer, merge_payloads
from vgpuctl.core.versions import parse_version

VGPU, VNPU = payload(VGPU_CM), payload(VNPU_CM)
ALL_MODELS = ["A30", "A100-SXM4-40GB", "A100-40GB-PCIe", "A100-PCIE-40GB", "A100-SXM4-80GB", "A100-80GB-PCIe",
              "A100-PCIE-80GB"]
ALL_CHIPS = ["Ascend910A", "Ascend910B2", "Ascend910B3", "Ascend910B4-1", "Ascend910B4", "Ascend310P", "Ascend910C"]


@pytest.mark.parametrize(("version", "form"), [
    ("v1.14.0", VnpusForm.LIST), ("v1.14.3", VnpusForm.LIST), ("v1.15.0", VnpusForm.LIST),
    ("v1.14.4", VnpusForm.WRAPPER), ("v1.15.1", VnpusForm.WRAPPER), (None, VnpusForm.WRAPPER),
])
def test_upstream_merge_keeps_every_model_and_chip_in_the_right_form(version: str | None, form: VnpusForm) -> None:
    result = merge_payloads(VGPU, VNPU, version=parse_version(version) if version else None)
    assert result.form is form and result.errors == 0
    config = parse_device_config(result.payload).config
    assert config is not None and config.vnpus_form is form
    models = [m for g in config.nvidia.known_mig_geometries for m in g.models]
    assert sorted(set(models)) == sorted(ALL_MODELS) and models.count("A100-SXM4-40GB") == 2  # kept as found
    assert [v.common_word for v in config.vnpus] == ALL_CHIPS
    assert result.payload["nvidia"] == VGPU["nvidia"]  # byte for byte, upstream key order
    assert {c for c, _, _ in codes(list(result.findings))} == {"VGM007", "VGM010"}  # what the inputs already had
    assert result.deviceshare_arguments("cm", "ns") == {
        "deviceshare.KnownGeometriesCMName": "cm", "deviceshare.KnownGeometriesCMNamespace": "ns",
        "deviceshare.VGPUEnable": True, "deviceshare.AscendHAMiVNPUEnable": True}


def test_list_form_says_the_ascend_plugin_needs_its_own_configmap() -> None:
    result = merge_payloads(VGPU, VNPU, version=parse_version("v1.15.0"))
    assert isinstance(result.payload["vnpus"], list)
    assert any("wrapper form" in note and "hami-scheduler-device" in note for note in result.notes)
    cored = copy.deepcopy(VNPU)
    cored["vnpus"]["hamiVnpuCore"] = True
    assert any("hamiVnpuCore: true" in n for n in merge_payloads(VGPU, cored, version=parse_version("v1.15.0")).notes)


def test_unknown_keys_are_kept_and_reported() -> None:
    vgpu = copy.deepcopy(VGPU)
    vgpu["nvidia"]["migstrategy"] = "mixed"
    vnpu = copy.deepcopy(VNPU)
    vnpu["vnpus"]["configs"][0]["vendorNote"] = "x"
    vnpu["cambricon"] = {"resourceCountName": "cambricon.com/mlu"}
    result = merge_payloads(vgpu, vnpu)
    assert result.payload["nvidia"]["migstrategy"] == "mixed"
    assert result.payload["vnpus"]["configs"][0]["vendorNote"] == "x"
    assert list(result.payload) == ["nvidia", "vnpus", "cambricon"]
    assert {s for c, _, s in codes(list(result.findings)) if c == "VGM009"} == {
        "nvidia.migstrategy", "vnpus.configs[0].vendorNote", "cambricon"}
    assert result.errors == 0


def test_conflicting_nvidia_key_is_an_error_unless_preferred() -> None:
    other = {"nvidia": {**VGPU["nvidia"], "gpuMemoryFactor": 2}, **VNPU}
    result = merge_payloads(VGPU, other)
    (conflict,) = [f for f in result.findings if f.finding.code == "VGM014"]
    assert conflict.finding.severity.value == "error" and conflict.finding.subject == "nvidia.gpuMemoryFactor"
    assert result.errors == 1
    for prefer, value in ((Prefer.VGPU, 1), (Prefer.VNPU, 2)):
        resolved = merge_payloads(VGPU, other, prefer=prefer)
        assert resolved.errors == 0 and resolved.payload["nvidia"]["gpuMemoryFactor"] == value
        assert [f.finding.severity.value for f in resolved.findings if f.finding.code == "VGM014"] == ["warning"]


def test_same_model_defined_differently_names_the_differing_keys() -> None:
    other = copy.deepcopy(VGPU)
    other["nvidia"]["knownMigGeometries"][0]["allowedGeometries"][0]["geometries"][0]["memory"] = 6000
    other["nvidia"]["knownMigGeometries"].append({"models": ["H100"], "allowedGeometries": []})
    result = merge_payloads(VGPU, {**other, **VNPU})
    (conflict,) = [f.finding for f in result.findings if f.finding.code == "VGM014"]
    assert conflict.subject == 'nvidia.knownMigGeometries[models="A30"]'
    assert "allowedGeometries[0].geometries[0].memory" in conflict.message
    resolved = merge_payloads(VGPU, {**other, **VNPU}, prefer=Prefer.VNPU)
    entries = resolved.payload["nvidia"]["knownMigGeometries"]
    assert [e["models"] for e in entries] == [m["models"] for m in VGPU["nvidia"]["knownMigGeometries"][1:]] + [
        ["A30"], ["H100"]]
    assert entries[2]["allowedGeometries"][0]["geometries"][0]["memory"] == 6000


def test_same_common_word_defined_differently() -> None:
    other = copy.deepcopy(VNPU)
    other["vnpus"]["configs"][5]["memoryAllocatable"] = 20000
    vgpu = {**VGPU, "vnpus": VNPU["vnpus"]["configs"]}  # the vGPU input also carries (list-form) vnpus
    result = merge_payloads(vgpu, other)
    (conflict,) = [f.finding for f in result.findings if f.finding.code == "VGM014"]
    assert conflict.subject == 'vnpus[commonWord="Ascend310P"]' and "memoryAllocatable" in conflict.message
    resolved = merge_payloads(vgpu, other, prefer=Prefer.VGPU)
    chips = {c["commonWord"]: c for c in resolved.payload["vnpus"]["configs"]}
    assert len(resolved.payload["vnpus"]["configs"]) == 7 and chips["Ascend310P"]["memoryAllocatable"] == 21527


def test_hami_vnpu_core_conflict_and_missing_sections() -> None:
    other = copy.deepcopy(VNPU)
    other["vnpus"]["hamiVnpuCore"] = True
    result = merge_payloads({**VGPU, "vnpus": VNPU["vnpus"]}, other)
    assert [f.finding.subject for f in result.findings if f.finding.code == "VGM014"] == ["vnpus.hamiVnpuCore"]
    empty = merge_payloads({}, {})
    assert {(c, s) for c, _, s in codes(list(empty.findings))} == {("VGM004", "$"), ("VGM006", "$")}
    assert codes(list(merge_payloads("text", VNPU).findings))[0] == ("VGM002", "error", "--vgpu")


def test_merging_the_merged_result_again_changes_nothing_and_dumps_identically() -> None:
    once = merge_payloads(VGPU, VNPU)
    assert merge_payloads(VGPU, once.payload).payload == once.payload
    assert dump_yaml(merge_payloads(VGPU, payload(VNPU_PAYLOAD)).payload) == dump_yaml(once.payload)


# --- properties -----------------------------------------------------------------------------------

PREFER = st.sampled_from([None, Prefer.VGPU, Prefer.VNPU])
VERSION = st.sampled_from([None, parse_version("v1.15.0"), parse_version("v1.15.1")])


def _entries(raw: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    mig = (raw.get("nvidia") or {}).get("knownMigGeometries") or []
    vnpus = raw.get("vnpus")
    return mig, (vnpus.get("configs") if isinstance(vnpus, dict) else vnpus) or []


@given(strategies.payload(), strategies.payload(), PREFER, VERSION)
def test_merge_never_loses_an_entry(a: dict, b: dict, prefer: Prefer | None, version) -> None:  # type: ignore[no-untyped-def,type-arg]
    result = merge_payloads(a, b, version=version, prefer=prefer)
    mig, chips = _entries(result.payload)
    conflicts = " ".join(f.finding.subject for f in result.findings if f.finding.code == "VGM014")
    for side in (a, b):
        side_mig, side_chips = _entries(side)
        for entry in side_mig:
            assert entry in mig or any(f'"{m}"' in conflicts for m in entry["models"])
            for model in entry["models"]:
                assert any(model in e["models"] for e in mig)  # the model itself always survives
        for chip in side_chips:
            assert chip in chips or f'"{chip["commonWord"]}"' in conflicts
            assert any(c["commonWord"] == chip["commonWord"] for c in chips)
        for key in side.get("nvidia") or {}:
            assert key in result.payload["nvidia"]
        for key in side:
            assert key in result.payload
    if prefer is None and not conflicts:
        assert all(e in mig for side in (a, b) for e in _entries(side)[0])


@given(strategies.payload(), strategies.payload(), PREFER, VERSION)
def test_merge_is_deterministic_and_idempotent(a: dict, b: dict, prefer: Prefer | None, version) -> None:  # type: ignore[no-untyped-def,type-arg]
    first = merge_payloads(a, b, version=version, prefer=prefer)
    again = merge_payloads(copy.deepcopy(a), copy.deepcopy(b), version=version, prefer=prefer)
    assert dump_yaml(first.payload) == dump_yaml(again.payload) and first.findings == again.findings
    assert merge_payloads(a, first.payload, version=version, prefer=prefer).payload == first.payload


@given(strategies.payload(with_nvidia=1.0, with_vnpus=0.0), strategies.payload(with_nvidia=0.0, with_vnpus=1.0),
       VERSION, st.sampled_from([Prefer.VGPU, Prefer.VNPU]))
def test_merging_a_vgpu_and_a_vnpu_config_validates_without_errors(a: dict, b: dict, version, prefer) -> None:  # type: ignore[no-untyped-def,type-arg]
    _, chips = _entries(b)
    result = merge_payloads(a, b, version=version, prefer=prefer)  # a winner for the unknown keys both may carry
    if chips:
        assert result.errors == 0, codes(list(result.findings))
        assert parse_device_config(result.payload).config is not None
    else:
        assert {c for c, s, _ in codes(list(result.findings)) if s == "error"} == {"VGM006"}
