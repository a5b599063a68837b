from __future__ import annotations

import json

import pytest

from tests.unit.codecs.samples import ASCEND_ALLOCATED, ASCEND_CW, ASCEND_REGISTER
from vgpuctl.core.codecs.ascend import decode_ascend_register, decode_hami_vnpu_core, encode_ascend_register
from vgpuctl.core.codecs.ascend_pod import (
    AscendDeviceAllocation,
    AscendRuntimeEntry,
    decode_ascend_allocations,
    decode_ascend_runtime_info,
    decode_npu_core,
    encode_ascend_allocations,
    encode_ascend_runtime_info,
    encode_npu_core,
)
from vgpuctl.core.facts import AscendDevice


def test_register_decodes_every_field() -> None:
    reg = decode_ascend_register(ASCEND_REGISTER, ASCEND_CW)
    assert reg.problems == ()
    assert reg.usable
    assert reg.devices == (
        AscendDevice(ASCEND_CW, 65536, 20, "Ascend910B3-4f0e-0", 0, 7, 0, True, 0),
        AscendDevice(ASCEND_CW, 65536, 20, "Ascend910B3-4f0e-1", 1, 7, 0, True, 0),
    )
    assert encode_ascend_register(reg.devices) == ASCEND_REGISTER


def test_omitempty_means_missing_health_is_false() -> None:
    reg = decode_ascend_register(
        '[{"id":"npu-0","count":4,"devmem":21527,"devcore":8,"type":"Ascend310P"}]', "Ascend310P"
    )
    assert reg.devices[0].health is False
    assert reg.devices[0].index == 0
    assert reg.devices[0].network_id is None


def test_go_json_matches_field_names_case_insensitively() -> None:
    reg = decode_ascend_register('[{"ID":"npu-0","Count":4,"DevMem":1024}]', "Ascend310P")
    assert (reg.devices[0].uuid, reg.devices[0].count, reg.devices[0].memory) == ("npu-0", 4, 1024)


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        ("", "not valid JSON"),
        ("[{", "not valid JSON"),
        ('[{"id":"a","count":NaN}]', "not valid JSON"),
        ("[]", "lists no device"),
        ("null", "lists no device"),
        ('{"id":"a"}', "not a list"),
        ('["a"]', "not an object"),
        ("[null]", "panics"),
        ('[{"id":"a","count":"7","devmem":1}]', 'count "7" is not a Go integer'),
        ('[{"id":"a","count":7.0,"devmem":1}]', "count 7.0 is not a Go integer"),
        ('[{"id":"a","count":7,"devmem":4294967296}]', "devmem 4294967296"),
        ('[{"id":"a","count":7,"devmem":1,"index":-1}]', "index -1 is not a Go uint"),
        ('[{"id":"a","count":7,"devmem":1,"health":"true"}]', "health"),
        ('[{"id":7,"count":7,"devmem":1}]', "id 7 is not a string"),
        ('[{"id":"a","count":7,"devmem":1,"custominfo":[]}]', "custominfo"),
    ],
)
def test_invalid_registers_drop_the_chip_type(value: str, needle: str) -> None:
    reg = decode_ascend_register(value, ASCEND_CW)
    assert not reg.usable
    assert reg.problems
    assert {p.code for p in reg.problems} == {"VGN015"}
    assert needle in " ".join(p.message for p in reg.problems)


@pytest.mark.parametrize(
    ("device", "needle"),
    [
        ('{"id":"a","count":0,"devmem":1}', "count 0"),
        ('{"id":"a","count":1,"devmem":0}', "devmem 0"),
        ('{"count":1,"devmem":1}', "empty id"),
        ('{"id":"a","count":1,"devmem":1,"type":"Ascend310P"}', "differs"),
    ],
)
def test_register_warnings_keep_the_node(device: str, needle: str) -> None:
    reg = decode_ascend_register(f"[{device}]", ASCEND_CW)
    assert reg.usable
    assert needle in reg.problems[0].message


def test_duplicate_ids() -> None:
    reg = decode_ascend_register('[{"id":"a","count":1,"devmem":1},{"id":"a","count":1,"devmem":1}]', ASCEND_CW)
    assert reg.usable
    assert "keeps only the last" in reg.problems[0].message


def test_absent_and_non_string_registers() -> None:
    assert decode_ascend_register(None, ASCEND_CW).problems == ()
    assert decode_ascend_register(["a"], ASCEND_CW).problems[0].code == "VGN015"


@pytest.mark.parametrize(("value", "flag", "problems"), [("true", True, 0), ("false", False, 0), (None, None, 0)])
def test_hami_vnpu_core(value: object, flag: bool | None, problems: int) -> None:
    decoded = decode_hami_vnpu_core(value)
    assert (decoded.value, len(decoded.problems)) == (flag, problems)


@pytest.mark.parametrize("value", ["True", "TRUE", "1", "yes", "", True, 1])
def test_hami_vnpu_core_other_values_are_false_with_a_problem(value: object) -> None:
    decoded = decode_hami_vnpu_core(value)
    assert decoded.value is False
    assert [p.code for p in decoded.problems] == ["VGN015"]


@pytest.mark.parametrize(
    ("value", "chips", "template"),
    [
        ("0", (0,), None),
        ("0,1", (0, 1), None),
        ("3-vir02_1c", (3,), "vir02_1c"),
        ("1-vir04_3c_ndvpp", (1,), "vir04_3c_ndvpp"),
    ],
)
def test_npu_core(value: str, chips: tuple[int, ...], template: str | None) -> None:
    decoded = decode_npu_core(value)
    assert (decoded.chips, decoded.template, decoded.problems) == (chips, template, ())
    assert encode_npu_core(chips, template) == value


@pytest.mark.parametrize("value", ["0-vir02-1c", "x", "0,x", "-vir01", "0-", "", 3])
def test_npu_core_malformed(value: object) -> None:
    assert [p.code for p in decode_npu_core(value).problems][:1] == ["VGX002"]


def test_npu_core_with_two_dashes_is_read_as_whole_card() -> None:
    decoded = decode_npu_core("0-vir02-1c")
    assert (decoded.chips, decoded.template) == ((0,), None)


def test_devices_allocated_blocks() -> None:
    alloc = decode_ascend_allocations(ASCEND_ALLOCATED)
    assert alloc.problems == ()
    assert alloc.usable
    assert alloc.containers == (
        (AscendDeviceAllocation("Ascend910B3-4f0e-0", ASCEND_CW, 16384, 0),),
        (AscendDeviceAllocation("Ascend910B3-4f0e-1", ASCEND_CW, 65536, 0),),
    )
    assert encode_ascend_allocations(alloc.containers) == ASCEND_ALLOCATED


def test_devices_allocated_keeps_empty_blocks() -> None:
    alloc = decode_ascend_allocations(";npu-0,Ascend310P,4096,0:;")
    assert alloc.containers == ((), (AscendDeviceAllocation("npu-0", "Ascend310P", 4096, 0),))
    assert encode_ascend_allocations(alloc.containers) == ";npu-0,Ascend310P,4096,0:;"


def test_devices_allocated_short_piece_rejects_the_whole_value() -> None:
    alloc = decode_ascend_allocations("npu-0,Ascend310P,4096:;")
    assert not alloc.usable
    assert alloc.problems[0].code == "VGX002"


def test_runtime_info_both_modes() -> None:
    template = '[{"UUID":"npu-0","temp":"vir05_1c_16g"},{"UUID":"npu-1"}]'
    decoded = decode_ascend_runtime_info(template)
    assert decoded.entries == (AscendRuntimeEntry("npu-0", "vir05_1c_16g"), AscendRuntimeEntry("npu-1"))
    assert not decoded.entries[0].hami_core
    assert encode_ascend_runtime_info(decoded.entries) == template
    core = '[{"UUID":"npu-0","memory":4096,"core":20}]'
    decoded = decode_ascend_runtime_info(core)
    assert decoded.entries == (AscendRuntimeEntry("npu-0", "", 4096, 20),)
    assert decoded.entries[0].hami_core
    assert encode_ascend_runtime_info(decoded.entries) == core
    assert decode_ascend_runtime_info("null").entries == ()
    assert encode_ascend_runtime_info([]) == "null"


@pytest.mark.parametrize(
    "value", ["{", '{"UUID":"a"}', '[{"UUID":1}]', '[{"UUID":"a","memory":"4096"}]', "[3]", '[{"temp":"x"}]']
)
def test_runtime_info_malformed(value: str) -> None:
    assert decode_ascend_runtime_info(value).problems


def test_encoded_register_is_compact_json() -> None:
    device = AscendDevice("Ascend310P", 21527, 8, "npu-0", 0, 4, 0, False)
    text = encode_ascend_register([device])
    assert text == '[{"id":"npu-0","count":4,"devmem":21527,"devcore":8,"type":"Ascend310P"}]'
    assert json.loads(text)[0]["type"] == "Ascend310P"


def test_json_encoders_escape_like_go() -> None:
    entries = [AscendRuntimeEntry("npu-<0>&", "vir01")]
    text = encode_ascend_runtime_info(entries)
    assert text == '[{"UUID":"npu-\\u003c0\\u003e\\u0026","temp":"vir01"}]'
    assert decode_ascend_runtime_info(text).entries == tuple(entries)
