from __future__ import annotations

import pytest

from tests.unit.codecs.samples import UUID_A, UUID_B, UUID_C, VGPU_IDS
from vgpuctl.core.codecs.pod_alloc import (
    DeviceAllocation,
    MigSlot,
    decode_gpu_index,
    decode_gpu_unhealthy_ids,
    decode_mig_id,
    decode_vgpu_ids,
    encode_gpu_index,
    encode_vgpu_ids,
)


def test_vgpu_ids_new_per_container() -> None:
    alloc = decode_vgpu_ids(VGPU_IDS)
    assert alloc.problems == ()
    assert alloc.containers == (
        (DeviceAllocation(UUID_A, None, 3000, 30), DeviceAllocation(UUID_B, None, 3000, 30)),
        (DeviceAllocation(UUID_C, MigSlot("group2", 3), 10240, 0),),
    )
    assert len(alloc.devices) == 3
    assert alloc.devices[2].device_id == f"{UUID_C}[group2-3]"
    assert encode_vgpu_ids(alloc.containers) == VGPU_IDS


@pytest.mark.parametrize(("value", "containers"), [(None, ()), ("", ())])
def test_empty(value: object, containers: tuple[object, ...]) -> None:
    alloc = decode_vgpu_ids(value)
    assert (alloc.containers, alloc.problems) == (containers, ())


def test_too_few_fields_panics_volcano() -> None:
    alloc = decode_vgpu_ids(f"{UUID_A},NVIDIA,3000:")
    assert alloc.devices == ()
    assert "panics" in alloc.problems[0].message
    assert alloc.problems[0].code == "VGX002"


def test_bad_numbers_read_as_zero() -> None:
    alloc = decode_vgpu_ids(f"{UUID_A},NVIDIA,3Gi,99999999999:")
    assert alloc.devices == (DeviceAllocation(UUID_A, None, 0, 0),)
    assert [p.code for p in alloc.problems] == ["VGX002", "VGX002"]
    assert "int32" in alloc.problems[1].message


def test_empty_id_matches_every_gpu() -> None:
    alloc = decode_vgpu_ids(",NVIDIA,1,0:")
    assert "every GPU" in alloc.problems[0].message


@pytest.mark.parametrize(
    ("device_id", "uuid", "mig"),
    [
        (UUID_A, UUID_A, None),
        (f"{UUID_A}[group2-3]", UUID_A, MigSlot("group2", 3)),
        (f"{UUID_A}[1g.10gb-0]", UUID_A, MigSlot("1g.10gb", 0)),
        (f"{UUID_A}[g-+7]", UUID_A, MigSlot("g", 7)),  # Go's Atoi takes a sign
        (f"{UUID_A}[g-007]", UUID_A, MigSlot("g", 7)),
    ],
)
def test_mig_ids(device_id: str, uuid: str, mig: MigSlot | None) -> None:
    parsed = decode_mig_id(device_id)
    assert (parsed.uuid, parsed.mig, parsed.problems) == (uuid, mig, ())


def test_group_name_with_dash_is_reported_not_misparsed() -> None:
    parsed = decode_mig_id(f"{UUID_A}[my-group-3]")
    assert parsed.uuid == UUID_A
    assert parsed.mig is None
    assert [p.code for p in parsed.problems] == ["VGM007"]
    assert "3 parts" in parsed.problems[0].message
    # and inside vgpu-ids-new the allocation still names its GPU
    alloc = decode_vgpu_ids(f"{UUID_A}[my-group-3],NVIDIA,10240,0:")
    assert alloc.devices == (DeviceAllocation(UUID_A, None, 10240, 0),)
    assert [p.code for p in alloc.problems] == ["VGM007"]


@pytest.mark.parametrize(
    ("device_id", "needle"),
    [
        (f"{UUID_A}[group2]", "no '-'"),
        (f"{UUID_A}[group2,3]", "no '-'"),  # the upstream comment's form is not the real one
        (f"{UUID_A}[group2-x]", 'position "x"'),
        (f"{UUID_A}[-3]", "empty group"),
        (f"{UUID_A}[group2-3", "no ']'"),
        (f"{UUID_A}]group2-3[", "no ']' after '['"),
        (f"{UUID_A}[group2-3]x", 'text "x" after'),
        (f"{UUID_A}]", "']' without '['"),
    ],
)
def test_malformed_mig_ids(device_id: str, needle: str) -> None:
    parsed = decode_mig_id(device_id)
    assert parsed.problems
    assert needle in " ".join(p.message for p in parsed.problems)
    assert parsed.uuid.startswith("GPU-")


@pytest.mark.parametrize(("value", "indexes"), [("0", (0,)), ("0,2", (0, 2)), ("+1", (1,))])
def test_gpu_index(value: str, indexes: tuple[int, ...]) -> None:
    decoded = decode_gpu_index(value)
    assert (decoded.indexes, decoded.problems) == (indexes, ())
    assert decode_gpu_index(encode_gpu_index(indexes)).indexes == indexes


@pytest.mark.parametrize("value", ["", "0,", "0, 2", "a", "0;2", 0])
def test_bad_gpu_index_is_ignored_whole(value: object) -> None:
    decoded = decode_gpu_index(value)
    assert decoded.indexes == ()
    assert [p.code for p in decoded.problems] == ["VGS004"]


def test_gpu_index_oddities_are_kept_but_reported() -> None:
    assert decode_gpu_index("-1").indexes == (-1,)
    assert decode_gpu_index("-1").problems
    assert decode_gpu_index("1,1").problems
    assert decode_gpu_index(None).problems == ()


def test_unhealthy_ids_skip_bad_tokens_one_by_one() -> None:
    decoded = decode_gpu_unhealthy_ids("1,x,3")
    assert decoded.indexes == (1, 3)
    assert [p.code for p in decoded.problems] == ["VGN014"]
    assert "skips it" in decoded.problems[0].message
    assert decode_gpu_unhealthy_ids(None).indexes == ()
    assert decode_gpu_unhealthy_ids("0,2").problems == ()
    assert decode_gpu_unhealthy_ids(5).problems[0].code == "VGN014"
