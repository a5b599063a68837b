from __future__ import annotations

import pytest

from tests.unit.codecs.samples import T4, UUID_A, UUID_B
from vgpuctl.core.codecs.hami_nvidia import HamiGpu, decode_hami_nvidia_register, encode_hami_nvidia_register

SEVEN = f"{UUID_A},10,15360,100,{T4},0,true:{UUID_B},10,15360,100,{T4},1,false:"
NINE = f"{UUID_A},10,15360,100,{T4},0,true,0,hami-core:{UUID_B},10,15360,100,{T4},1,true,1,mig:"
JSON = (
    f'[{{"id":"{UUID_A}","count":10,"devmem":15360,"devcore":100,"type":"{T4}","mode":"hami-core","health":true}},'
    f'{{"id":"{UUID_B}","index":1,"count":10,"devmem":15360,"devcore":100,"type":"{T4}","numa":1,"mode":"hami-core"}}]'
)


def test_seven_fields() -> None:
    reg = decode_hami_nvidia_register(SEVEN)
    assert (reg.form, reg.problems) == ("7-field", ())
    assert reg.devices[0] == HamiGpu(UUID_A, 10, 15360, 100, T4, 0, True, None, "hami-core")
    assert reg.devices[1].numa == 1
    assert reg.devices[1].health is False
    assert encode_hami_nvidia_register(reg.devices, "7-field") == SEVEN


def test_nine_fields() -> None:
    reg = decode_hami_nvidia_register(NINE)
    assert (reg.form, reg.problems) == ("9-field", ())
    assert [(d.index, d.mode) for d in reg.devices] == [(0, "hami-core"), (1, "mig")]
    assert encode_hami_nvidia_register(reg.devices, "9-field") == NINE


def test_json() -> None:
    reg = decode_hami_nvidia_register(JSON)
    assert (reg.form, reg.problems) == ("json", ())
    assert reg.devices[0].health is True
    assert reg.devices[1].health is False  # omitempty
    assert reg.devices[1].index == 1
    assert encode_hami_nvidia_register(reg.devices, "json") == JSON


def test_json_mig_profiles() -> None:
    value = f'[{{"id":"{UUID_A}","count":7,"mode":"mig","migProfiles":[{{"name":"1g.10gb","memoryMB":9856}}]}}]'
    reg = decode_hami_nvidia_register(value)
    assert reg.devices[0].mig_profiles == ("1g.10gb",)


@pytest.mark.parametrize(
    ("value", "needle"),
    [
        (f"{UUID_A},10,15360,100,{T4},0:", "6 fields"),
        (f"{UUID_A},10,15360,{T4},true,hami-core:", "6 fields"),  # Volcano's form is not HAMi's
        (f"{UUID_A},x,15360,100,{T4},0,true:", "bad number"),
        (f"{UUID_A},10,15360,100,{T4},0,true", "neither JSON"),
        ("[{", "invalid JSON"),
        ('[{"id":1}]', "wrong JSON type"),
        ("[1]", "not an object"),
        (f"{UUID_A},10,15360,100,{T4},0,true:{UUID_B},10,15360,100,{T4},1,true,1,mig:", "mixes"),
    ],
)
def test_malformed(value: str, needle: str) -> None:
    reg = decode_hami_nvidia_register(value)
    assert {p.code for p in reg.problems} == {"VGN012"}
    assert needle in " ".join(p.message for p in reg.problems)


def test_absent_and_non_strings() -> None:
    assert decode_hami_nvidia_register(None).problems == ()
    assert decode_hami_nvidia_register(7).form == "unknown"
    assert decode_hami_nvidia_register("null").devices == ()
