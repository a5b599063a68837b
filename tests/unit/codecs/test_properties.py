"""Properties over every codec: garbage in never raises (problems out), and encode → decode round-trips."""

from __future__ import annotations

import json
import re
import string
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from vgpuctl.core.catalogue import CATALOGUE
from vgpuctl.core.codecs._common import CodecProblem
from vgpuctl.core.codecs.ascend import decode_ascend_register, decode_hami_vnpu_core, encode_ascend_register
from vgpuctl.core.codecs.ascend_pod import (
    AscendDeviceAllocation,
    AscendRuntimeEntry,
    decode_ascend_allocations,
    decode_ascend_runtime_info,
    decode_npu_core,
    encode_ascend_allocations,
    encode_ascend_runtime_info,
)
from vgpuctl.core.codecs.hami_nvidia import HamiGpu, decode_hami_nvidia_register, encode_hami_nvidia_register
from vgpuctl.core.codecs.handshake import decode_handshake
from vgpuctl.core.codecs.locks import decode_node_lock, encode_node_lock, find_node_locks
from vgpuctl.core.codecs.pod_alloc import (
    DeviceAllocation,
    MigSlot,
    decode_gpu_index,
    decode_gpu_unhealthy_ids,
    decode_mig_id,
    decode_vgpu_ids,
    encode_vgpu_ids,
)
from vgpuctl.core.codecs.vgpu_register import decode_vgpu_register, encode_vgpu_register, sharing_mode
from vgpuctl.core.facts import AscendDevice, GpuDevice

NOW = datetime(2026, 5, 9, 10, 0, tzinfo=UTC)
KNOWN_CODES = frozenset(CATALOGUE)

DECODERS: dict[str, Callable[[Any], Any]] = {
    "vgpu_register": decode_vgpu_register,
    "vgpu_register_old": lambda v: decode_vgpu_register(v, volcano_six_fields=False),
    "handshake": decode_handshake,
    "hami_nvidia": decode_hami_nvidia_register,
    "ascend_register": lambda v: decode_ascend_register(v, "Ascend910B3"),
    "hami_vnpu_core": decode_hami_vnpu_core,
    "npu_core": decode_npu_core,
    "ascend_allocations": decode_ascend_allocations,
    "ascend_runtime_info": decode_ascend_runtime_info,
    "node_lock": lambda v: decode_node_lock("hamivgpu", v, now=NOW),
    "node_locks": lambda v: find_node_locks({"hamivgpu": v, "gpu": v, "x": v}, now=NOW),
    "node_locks_any": lambda v: find_node_locks(v, now=NOW),
    "vgpu_ids": decode_vgpu_ids,
    "gpu_index": decode_gpu_index,
    "gpu_unhealthy_ids": decode_gpu_unhealthy_ids,
    "mig_id": lambda v: decode_mig_id(v) if isinstance(v, str) else None,
}

# text made of the annotation formats' own punctuation, so the decoders' inner branches are reached
FORMAT_TEXT = st.text(alphabet=",:;[]-_ .{}\"'0123456789GPUNVIDAtrufalsemigRpoedqTZ+\n\x00é", max_size=80)
JSONISH = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(st.sampled_from(["id", "count", "devmem", "UUID", "x"]), inner, max_size=4)
    ),
    max_leaves=12,
)
GARBAGE = st.one_of(
    st.none(),
    st.text(),
    FORMAT_TEXT,
    st.binary().map(lambda b: b.decode("latin-1")),
    JSONISH.map(json.dumps),
    st.integers(),
    st.floats(),
    st.booleans(),
    st.lists(st.text(max_size=5), max_size=3),
    st.dictionaries(st.text(max_size=5), st.text(max_size=5), max_size=3),
    st.from_type(object),
)


def problems_of(result: object) -> list[CodecProblem]:
    if result is None:
        return []
    if isinstance(result, tuple):
        return [p for item in result for p in problems_of(item)]
    return list(getattr(result, "problems", ()))


@given(value=GARBAGE)
def test_decoders_never_raise_and_report_catalogued_one_line_problems(value: object) -> None:
    for decode in DECODERS.values():
        for problem in problems_of(decode(value)):
            assert isinstance(problem, CodecProblem)
            assert problem.code in KNOWN_CODES
            assert problem.message
            assert "\n" not in problem.message


@given(value=FORMAT_TEXT)
def test_register_usable_only_with_six_field_devices(value: str) -> None:
    reg = decode_vgpu_register(value)
    if reg.node_usable:
        assert reg.devices
        assert all(count >= 6 for count in reg.field_counts)
        assert not any(p.code == "VGN002" for p in reg.problems)


# ---- round-trips --------------------------------------------------------------------------------------

TOKEN = st.text(alphabet=string.ascii_letters + string.digits + ".-_ ", min_size=1, max_size=20)
SAFE_ID = TOKEN.filter(lambda s: s.strip() == s).map(lambda s: "GPU-" + s)
GPU_TYPE = TOKEN.map(lambda s: "NVIDIA-" + s)
RAW_MODE = st.sampled_from(["hami-core", "mig", "mps", "MIG", ""]) | TOKEN
COUNT = st.integers(min_value=1, max_value=2**31)


@st.composite
def gpu_devices(draw: st.DrawFn) -> GpuDevice:
    raw_mode = draw(RAW_MODE)
    return GpuDevice(
        uuid=draw(SAFE_ID),
        type=draw(GPU_TYPE),
        memory=draw(COUNT),
        mode=sharing_mode(raw_mode),
        split=draw(COUNT),
        health=draw(st.booleans()),
        registered_mode=raw_mode,
    )


@given(devices=st.lists(gpu_devices(), min_size=1, max_size=8, unique_by=lambda d: d.uuid))
def test_register_round_trip(devices: list[GpuDevice]) -> None:
    reg = decode_vgpu_register(encode_vgpu_register(devices))
    assert reg.devices == tuple(devices)
    assert reg.problems == ()
    assert reg.node_usable
    assert reg.node_mode == devices[-1].mode


GROUP = st.text(alphabet=string.ascii_letters + string.digits + "._", min_size=1, max_size=12)
INT32 = st.integers(min_value=0, max_value=2**31 - 1)


@st.composite
def device_allocations(draw: st.DrawFn) -> DeviceAllocation:
    mig = draw(st.none() | st.builds(MigSlot, GROUP, st.integers(min_value=0, max_value=64)))
    return DeviceAllocation(draw(SAFE_ID), mig, draw(INT32), draw(INT32))


@given(containers=st.lists(st.lists(device_allocations(), min_size=1, max_size=4).map(tuple), max_size=5))
def test_vgpu_ids_round_trip(containers: list[tuple[DeviceAllocation, ...]]) -> None:
    encoded = encode_vgpu_ids(containers)
    assert not encoded.endswith(";")
    decoded = decode_vgpu_ids(encoded)
    assert decoded.containers == tuple(containers)
    assert decoded.problems == ()


@given(group=GROUP, extra=GROUP, position=st.integers(min_value=0, max_value=99))
def test_dashed_group_never_misparses(group: str, extra: str, position: int) -> None:
    parsed = decode_mig_id(f"GPU-x[{group}-{extra}-{position}]")
    assert parsed.mig is None
    assert parsed.uuid == "GPU-x"
    assert [p.code for p in parsed.problems] == ["VGM007"]


@given(
    containers=st.lists(
        st.lists(st.builds(AscendDeviceAllocation, SAFE_ID, GROUP, INT32, INT32), max_size=3).map(tuple), max_size=4
    )
)
def test_ascend_allocations_round_trip(containers: list[tuple[AscendDeviceAllocation, ...]]) -> None:
    encoded = encode_ascend_allocations(containers)
    assert encoded.count(";") == len(containers)
    decoded = decode_ascend_allocations(encoded)
    assert decoded.containers == tuple(containers)
    assert (decoded.problems, decoded.usable) == ((), True)


@given(
    devices=st.lists(
        st.builds(
            AscendDevice,
            common_word=st.just("Ascend910B3"),
            memory=st.integers(min_value=1, max_value=2**31 - 1),
            cores=INT32,
            uuid=SAFE_ID,
            index=st.integers(min_value=0, max_value=2**32),
            count=st.integers(min_value=1, max_value=2**31 - 1),
            numa=st.integers(min_value=0, max_value=8),
            health=st.booleans(),
            network_id=st.none() | st.integers(min_value=0, max_value=1),
        ),
        min_size=1,
        max_size=6,
        unique_by=lambda d: d.uuid,
    )
)
def test_ascend_register_round_trip(devices: list[AscendDevice]) -> None:
    reg = decode_ascend_register(encode_ascend_register(devices), "Ascend910B3")
    assert reg.devices == tuple(devices)
    assert (reg.problems, reg.usable) == ((), True)


@given(
    entries=st.lists(
        st.builds(AscendRuntimeEntry, SAFE_ID, st.just("") | GROUP, INT32, INT32),
        min_size=1,
        max_size=4,
    )
)
def test_ascend_runtime_info_round_trip(entries: list[AscendRuntimeEntry]) -> None:
    decoded = decode_ascend_runtime_info(encode_ascend_runtime_info(entries))
    assert decoded.entries == tuple(entries)
    assert decoded.problems == ()


@st.composite
def hami_gpus(draw: st.DrawFn, nine: bool) -> HamiGpu:
    return HamiGpu(
        uuid=draw(SAFE_ID),
        count=draw(st.integers(min_value=0, max_value=2**31 - 1)),
        devmem=draw(st.integers(min_value=0, max_value=2**31 - 1)),
        devcore=draw(st.integers(min_value=0, max_value=2**31 - 1)),
        type=draw(GPU_TYPE),
        numa=draw(st.integers(min_value=0, max_value=8)),
        health=draw(st.booleans()),
        index=draw(st.integers(min_value=0, max_value=16)) if nine else None,
        mode=draw(st.sampled_from(["hami-core", "mig"])) if nine else "hami-core",
    )


@given(data=st.data(), form=st.sampled_from(["7-field", "9-field", "json"]))
def test_hami_nvidia_round_trip(data: st.DataObject, form: str) -> None:
    devices = tuple(data.draw(st.lists(hami_gpus(nine=form != "7-field"), min_size=1, max_size=4)))
    reg = decode_hami_nvidia_register(encode_hami_nvidia_register(devices, form))  # type: ignore[arg-type]
    assert reg.form == form
    assert reg.devices == devices
    assert reg.problems == ()


@given(
    moment=st.datetimes(min_value=datetime(1970, 1, 1), max_value=datetime(2200, 1, 1), timezones=st.just(UTC))
)
def test_lock_round_trip(moment: datetime) -> None:
    lock = decode_node_lock("hamivgpu", encode_node_lock(moment), now=NOW)
    assert lock.time == moment.replace(microsecond=0)
    assert lock.problems == ()
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z", lock.raw)
