from __future__ import annotations

import pytest

from tests.unit.codecs.samples import A100_40, A100_80, REGISTER_5, REGISTER_6, REGISTER_MIG, T4, UUID_A, UUID_B
from vgpuctl.core.codecs.vgpu_register import decode_vgpu_register, encode_vgpu_register, sharing_mode
from vgpuctl.core.facts import GpuDevice


def codes(register: object) -> list[str]:
    return [p.code for p in decode_vgpu_register(register).problems]


def test_six_field_register_decodes_every_gpu() -> None:
    reg = decode_vgpu_register(REGISTER_6)
    assert reg.problems == ()
    assert reg.node_usable
    assert reg.field_counts == (6, 6)
    assert reg.devices == (
        GpuDevice(UUID_A, A100_40, 40960, "hami-core", 10, True, "hami-core"),
        GpuDevice(UUID_B, A100_40, 40960, "hami-core", 10, True, "hami-core"),
    )
    assert reg.node_mode == "hami-core"


def test_mig_register() -> None:
    reg = decode_vgpu_register(REGISTER_MIG)
    assert reg.devices[0].mode == "mig"
    assert reg.devices[0].type == A100_80
    assert reg.node_mode == "mig"


def test_five_field_form_drops_the_node_on_volcano_1_12() -> None:
    reg = decode_vgpu_register(REGISTER_5)
    assert not reg.node_usable
    assert [p.code for p in reg.problems] == ["VGN002", "VGN002"]
    assert "has 5 fields; Volcano ≥ 1.12 needs 6 and ignores the whole node" in reg.problems[0].message
    assert "v1.9.x" in reg.problems[0].message
    # what could be read is still returned
    assert [d.uuid for d in reg.devices] == [UUID_A, UUID_B]
    assert reg.devices[0].registered_mode is None
    assert reg.field_counts == (5, 5)


def test_five_field_form_is_fine_before_volcano_1_12() -> None:
    reg = decode_vgpu_register(REGISTER_5, volcano_six_fields=False)
    assert reg.node_usable
    assert reg.problems == ()
    assert len(reg.devices) == 2


def test_one_short_entry_drops_the_whole_node() -> None:
    reg = decode_vgpu_register(f"{UUID_A},10,40960,{A100_40},true,hami-core:{UUID_B},10,40960,{A100_40},true:")
    assert not reg.node_usable
    assert [p.code for p in reg.problems] == ["VGN002"]
    assert "entry 2" in reg.problems[0].message


def test_entry_too_short_even_for_old_volcano_panics_it() -> None:
    reg = decode_vgpu_register(f"{UUID_A},10,40960:", volcano_six_fields=False)
    assert not reg.node_usable
    assert [p.code for p in reg.problems] == ["VGN003"]
    assert "panics" in reg.problems[0].message


@pytest.mark.parametrize(
    ("entry", "needle"),
    [
        (f"{UUID_A},ten,40960,{A100_40},true,hami-core:", 'count "ten" is not an integer'),
        (f"{UUID_A},10,40 GiB,{A100_40},true,hami-core:", 'devmem "40 GiB" is not an integer'),
        (f"{UUID_A}, 10,40960,{A100_40},true,hami-core:", 'count " 10"'),  # Go's Atoi takes no blanks
        (f"{UUID_A},1_0,40960,{A100_40},true,hami-core:", 'count "1_0"'),  # nor underscores
        (f"{UUID_A},10,-1,{A100_40},true,hami-core:", "devmem -1 wraps"),
        (f"{UUID_A},10,{'9' * 5000},{A100_40},true,hami-core:", "devmem"),  # beyond int64 (and Python's int limit)
        (f"{UUID_A},10,9223372036854775808,{A100_40},true,hami-core:", "devmem"),
        (f"{UUID_A},0,40960,{A100_40},true,hami-core:", "count 0"),
        (f",10,40960,{A100_40},true,hami-core:", "empty UUID"),
        (f"{UUID_A},10,40960,Tesla T4,true,hami-core:", "lacks 'NVIDIA'"),
        (f"{UUID_A},10,40960,nvidia-tesla-t4,true,hami-core:", "lacks 'NVIDIA'"),  # case-sensitive upstream
        (f"{UUID_A},10,40960,{A100_40},yes,hami-core:", 'health "yes" is not a Go bool'),
    ],
)
def test_malformed_entry_is_vgn003(entry: str, needle: str) -> None:
    reg = decode_vgpu_register(entry)
    assert [p.code for p in reg.problems] == ["VGN003"]
    assert needle in reg.problems[0].message
    assert reg.node_usable  # Volcano still takes the node, with a useless device
    assert len(reg.devices) == 1


def test_go_bool_spellings_are_accepted() -> None:
    for spelling, expected in (("1", True), ("T", True), ("True", True), ("0", False), ("FALSE", False)):
        reg = decode_vgpu_register(f"{UUID_A},10,40960,{A100_40},{spelling},hami-core:")
        assert reg.problems == ()
        assert reg.devices[0].health is expected


@pytest.mark.parametrize("mode", ["mps", "MIG", "HAMi-core", "", "mig "])
def test_only_exact_mig_is_mig(mode: str) -> None:
    reg = decode_vgpu_register(f"{UUID_A},10,40960,{A100_40},true,{mode}:")
    assert reg.devices[0].mode == "hami-core"
    assert reg.devices[0].registered_mode == mode
    assert sharing_mode(mode) == "hami-core"
    assert sharing_mode("mig") == "mig"


def test_node_mode_is_the_last_devices() -> None:
    reg = decode_vgpu_register(f"{UUID_A},7,81920,{A100_80},true,mig:{UUID_B},10,15360,{T4},true,hami-core:")
    assert reg.node_mode == "hami-core"
    assert reg.modes == frozenset({"mig", "hami-core"})


def test_missing_trailing_colon_on_one_entry_has_no_separator() -> None:
    reg = decode_vgpu_register(f"{UUID_A},10,40960,{A100_40},true,hami-core")
    assert not reg.node_usable
    assert reg.devices == ()
    assert "no ':' separator" in reg.problems[0].message


def test_last_entry_without_colon_is_still_read() -> None:
    reg = decode_vgpu_register(f"{UUID_A},10,40960,{A100_40},true,hami-core:{UUID_B},10,40960,{A100_40},true,mig")
    assert [d.uuid for d in reg.devices] == [UUID_A, UUID_B]
    assert reg.problems == ()


def test_extra_fields_are_reported_but_the_node_stays() -> None:
    reg = decode_vgpu_register(f"{UUID_A},10,40960,NVIDIA-Weird,Name,true,hami-core:")
    assert reg.node_usable
    assert reg.field_counts == (7,)
    assert "7 fields" in reg.problems[0].message
    assert reg.devices[0].health is False  # "Name" is read as health


def test_duplicate_uuid() -> None:
    reg = decode_vgpu_register(f"{UUID_A},10,40960,{A100_40},true,hami-core:" * 2)
    assert [p.code for p in reg.problems] == ["VGN003"]
    assert "also entry 1" in reg.problems[0].message


@pytest.mark.parametrize("value", ["", ":", "::", "  "])
def test_empty_registers_give_no_devices(value: str) -> None:
    reg = decode_vgpu_register(value)
    assert reg.devices == ()
    assert not reg.node_usable
    assert [p.code for p in reg.problems] == ["VGN003"]


def test_absent_annotation_is_not_a_problem() -> None:
    reg = decode_vgpu_register(None)
    assert (reg.devices, reg.problems, reg.node_usable) == ((), (), False)


@pytest.mark.parametrize("value", [42, b"GPU-x,10,1,NVIDIA,true,mig:", ["a"], {"a": 1}, 3.5])
def test_non_strings(value: object) -> None:
    assert codes(value) == ["VGN003"]


def test_encoder_matches_upstream_format() -> None:
    devices = decode_vgpu_register(REGISTER_6).devices
    assert encode_vgpu_register(devices) == REGISTER_6
    assert encode_vgpu_register([GpuDevice(UUID_A, A100_40, 40960)]) == f"{UUID_A},10,40960,{A100_40},true,hami-core:"
    assert encode_vgpu_register([]) == ""


def test_messages_are_one_line() -> None:
    reg = decode_vgpu_register("GPU-\n1,x\ny,1,NVIDIA,true,mig:")
    assert reg.problems
    assert all("\n" not in p.message for p in reg.problems)
