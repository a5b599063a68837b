"""The cluster model's faster constructions make exactly what the plain constructors make.

`model.vgpu_devices` fills each GPU's `DeviceState` in place and `rule_facts.node_facts` sets the slots of its
frozen `GpuDevice`s directly (both: benchmarks/why_scale.py --phases); `fast_register` checks what follows a
UUID once per register. These tests hold each to the plain way on real inputs.
"""

from __future__ import annotations

from dataclasses import fields

import pytest
from hypothesis import given
from hypothesis import strategies as st

from benchmarks.snapshot_gen import generate
from vgpuctl.core import spec
from vgpuctl.core.cluster.build import build_snapshot, fast_register
from vgpuctl.core.cluster.model import DeviceState, vgpu_devices
from vgpuctl.core.cluster.rule_facts import node_facts
from vgpuctl.core.codecs.vgpu_register import decode_vgpu_register
from vgpuctl.core.facts import GpuDevice

A100 = "NVIDIA-NVIDIA A100-PCIE-40GB"


def _plain_devices(entries: list[tuple[str, int, int, str, bool, str]], factor: int) -> list[DeviceState]:
    return [DeviceState(uuid, index, spec.Family.VGPU, type_, mode, health, memory * factor, 100, split)
            for index, (uuid, split, memory, type_, health, mode) in enumerate(entries)]


@pytest.mark.parametrize("factor", [1, 3])
def test_vgpu_devices_are_the_dataclass_constructor(factor: int) -> None:
    entries = [("GPU-a", 10, 40960, A100, True, "hami-core"), ("GPU-b", 7, 81920, "NVIDIA-H100", False, "mig")]
    made = vgpu_devices(entries, factor)
    assert made == _plain_devices(entries, factor)
    for device in made:  # every slot set (an unset one raises), the lists fresh per GPU
        assert [getattr(device, f.name) for f in fields(DeviceState)]
    made[0].pods.append("ns/p")
    made[0].slots_used += 1
    assert made[1].pods == [] and made[1].slots_used == 0
    assert vgpu_devices([], factor) == []


def test_a_fleet_node_facts_gpus_are_the_frozen_constructor() -> None:
    snapshot = build_snapshot(generate(6)["items"], "v1.31.4")
    factor = snapshot.device_config.nvidia.memory_factor
    for node in snapshot.nodes:
        facts = node_facts(node, factor)
        assert facts.vgpu is not None
        plain = tuple(GpuDevice(d.id, d.type, d.memory_total // factor, d.mode, d.slots_total, d.health)
                      for d in node.devices if d.family is spec.Family.VGPU)
        assert facts.vgpu.devices == plain
        assert [hash(g) for g in facts.vgpu.devices] == [hash(g) for g in plain]
        assert [repr(g) for g in facts.vgpu.devices] == [repr(g) for g in plain]
        with pytest.raises(AttributeError):  # still frozen
            facts.vgpu.devices[0].memory = 1  # type: ignore[misc]


def _codec(value: str) -> list[tuple[str, int, int, str, bool, str]] | None:
    decoded = decode_vgpu_register(value)
    if decoded.problems or not decoded.node_usable:
        return None
    return [(d.uuid, d.split, d.memory, d.type, d.health, d.mode) for d in decoded.devices]


def test_the_register_shortcut_checks_every_gpu_though_it_reads_a_shared_tail_once() -> None:
    tail = f"10,40960,{A100},true,hami-core"
    good = f"GPU-0,{tail}:GPU-1,{tail}:"
    assert fast_register(good) == _codec(good) == [("GPU-0", 10, 40960, A100, True, "hami-core"),
                                                   ("GPU-1", 10, 40960, A100, True, "hami-core")]
    for value in (f"GPU-0,{tail}:GPU-0,{tail}:",  # the same UUID twice, the same tail
                  f"GPU-0,{tail}:,{tail}:",  # the second UUID empty
                  f"GPU-0,{tail}:GPU-1,0,40960,{A100},true,hami-core:",  # a bad tail after a good one
                  f"GPU-0,{tail}:GPU-1,{tail},x:",  # seven fields
                  f"GPU-0,{tail}:GPU-1:"):  # one
        assert fast_register(value) is None, value
        assert _codec(value) is None, value  # the codec reports a problem with each
    assert fast_register(f"GPU-0,{tail}::") is None  # an empty entry: left to the codec, as before


TAILS = [f"10,40960,{A100},true,hami-core", f"7,81920,{A100},false,mig", "10,40960,Tesla,true,hami-core",
         f"0,40960,{A100},true,mig", f"10,40960,{A100},yes,mig", f"10,40960,{A100},true", f"1,2,{A100},1,x,y"]


@given(st.lists(st.tuples(st.sampled_from(["GPU-0", "GPU-1", "GPU-2", ""]), st.sampled_from(TAILS)), max_size=5))
def test_the_register_shortcut_takes_only_what_the_codec_reads_the_same(pieces: list[tuple[str, str]]) -> None:
    value = "".join(f"{uuid},{tail}:" for uuid, tail in pieces)
    fast = fast_register(value)
    if fast is not None:
        assert fast == _codec(value)
    elif pieces and len({u for u, _ in pieces}) == len(pieces) and all(u for u, _ in pieces) \
            and all(t in TAILS[:2] for _, t in pieces):
        pytest.fail(f"a well-formed register left to the codec: {value!r}")
