"""The Volcano version matrix (V§9)."""

from __future__ import annotations

import pytest

from vgpuctl.core import versions as v


@pytest.mark.parametrize(
    ("text", "expected"),
    [("v1.14.3", (1, 14, 3)), ("1.16.0-alpha.1", (1, 16, 0)), ("v1.15", (1, 15, 0)), (" v1.9.0 ", (1, 9, 0))],
)
def test_parse(text: str, expected: tuple[int, int, int]) -> None:
    assert v.parse_version(text).core == expected


@pytest.mark.parametrize("text", ["", "latest", "1", "v1.x", "banana"])
def test_parse_rejects(text: str) -> None:
    with pytest.raises(v.VersionError):
        v.parse_version(text)


def test_pre_release_keeps_its_label_and_orders_by_core() -> None:
    alpha = v.parse_version("v1.16.0-alpha.1")
    assert alpha.pre == "alpha.1" and str(alpha) == "1.16.0-alpha.1"
    assert v.parse_version("1.15.1") < v.parse_version("1.16.0")


# (version, handshake, allocatable, wrapper, podgroup, hami-core vnpu, uuid filter)
MATRIX = [
    ("1.8.2", True, False, False, False, False, False),
    ("1.12.0", True, False, False, False, False, False),
    ("1.14.2", True, False, False, False, False, False),
    ("1.14.3", False, True, False, False, False, False),
    ("1.14.4", False, True, True, False, False, False),
    ("1.15.0", True, False, False, True, False, False),
    ("1.15.1", False, True, True, True, False, False),
    ("1.16.0-alpha.1", False, True, True, True, True, True),
]


@pytest.mark.parametrize("row", MATRIX, ids=[r[0] for r in MATRIX])
def test_feature_matrix(row: tuple[str, bool, bool, bool, bool, bool, bool]) -> None:
    version = v.parse_version(row[0])
    got = (
        v.requires_handshake(version),
        v.requires_vgpu_allocatable(version),
        v.accepts_vnpus_wrapper(version),
        v.has_podgroup_policy(version),
        v.has_vnpu_hami_core(version),
        v.has_gpu_uuid_filter(version),
    )
    assert got == row[1:]


def test_early_features() -> None:
    assert not v.has_deviceshare(v.parse_version("1.8.2")) and v.has_deviceshare(v.parse_version("1.9.0"))
    assert not v.has_device_config(v.parse_version("1.11.0")) and v.requires_six_field_register(v.Version(1, 12))
    assert v.checks_vgpu_resources_generically(v.Version(1, 13)) and not v.has_ascend(v.Version(1, 13))
