"""The Volcano version matrix (docs/volcano.md#compatibility-matrix)."""

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
    ("1.13.3", True, False, False, False, False, False),
    ("1.13.4", False, True, False, False, False, False),  # release-1.13 6a514a208, not tagged yet
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


# ---- release-branch fixes not tagged yet (docs/releases.md) ----------------------------------------

@pytest.mark.parametrize(("version", "handshake"), [
    ("1.13.3", True), ("1.13.4", False), ("1.13.5", False), ("1.14.2", True), ("1.14.3", False),
    ("1.15.0", True), ("1.15.1", False), ("1.16.0-alpha.0", False),
])
def test_handshake_removal_reaches_1_13_4(version: str, handshake: bool) -> None:
    """volcano-sh/volcano release-1.13, 6a514a208 "Remove the handshake between scheduler and hami-dp" (PR #5431),
    merged after v1.13.3: `NewGPUDevices` in `pkg/scheduler/api/devices/nvidia/vgpu/device_info.go` reads
    allocatable instead of `volcano.sh/node-vgpu-handshake`. v1.13.3 still has the handshake."""
    assert v.requires_handshake(v.parse_version(version)) is handshake


@pytest.mark.parametrize(("version", "preempts"), [
    ("1.14.4", False), ("1.14.9", False), ("1.15.1", False), ("1.15.2", True), ("1.16.0-alpha.1", False),
    ("1.16.0", True), ("1.17.0", True),
])
def test_ascend_hami_preemption_from_1_15_2_and_1_16_0(version: str, preempts: bool) -> None:
    """volcano-sh/volcano PR #5843 "fix(deviceshare): support HAMi Ascend normal preemption"
    (`preemptorFitsOnNode`, `pkg/scheduler/actions/preempt/preempt.go`): master 5a15213d8, after v1.16.0-alpha.1,
    and release-1.15 eedb4492e, after v1.15.1; the release-1.14 backport (PR #5867) is not merged."""
    assert v.ASCEND_HAMI_PREEMPTION.in_version(v.parse_version(version)) is preempts


def test_untagged_fixes_say_so_until_the_tag_is_added() -> None:
    """The verdict follows the running version; only the wording waits for the tag in `VOLCANO_TAGS`."""
    assert v.HANDSHAKE_REMOVED.untagged() == (v.Version(1, 13, 4),)
    assert v.HANDSHAKE_REMOVED.describe() == "1.13.4+ (not tagged yet), 1.14.3+, 1.15.1+ or >= 1.16"
    tagged = (*v.VOLCANO_TAGS, v.parse_version("v1.13.4"))
    assert v.HANDSHAKE_REMOVED.untagged(tagged) == ()
    assert v.HANDSHAKE_REMOVED.describe(tagged) == "1.13.4+, 1.14.3+, 1.15.1+ or >= 1.16"
    assert v.ASCEND_HAMI_PREEMPTION.describe() == "1.15.2+ (not tagged yet) or 1.16.0+ (not tagged yet)"
    assert v.VNPUS_WRAPPER.untagged() == ()


def test_untagged_patch_in_plugin_advice() -> None:
    """The vGPU plugin's handshake advice names the 1.13 line too, marked as not tagged yet."""
    problem = v.plugin_problem(v.PluginRole.VGPU, "latest", v.parse_version("1.13.3"))
    assert problem is not None and "Volcano 1.13.4+ (not tagged yet), 1.14.3+, 1.15.1+ or >= 1.16" in problem
    assert v.plugin_problem(v.PluginRole.VGPU, "latest", v.parse_version("1.13.4")) is None


def test_every_line_fix_start_is_a_known_tag_or_the_next_patch() -> None:
    """A fix's first build is tagged, or the patch right after a line's newest tag (the next one to come)."""
    newest = {}
    for tag in v.VOLCANO_TAGS:
        newest[(tag.major, tag.minor)] = max(newest.get((tag.major, tag.minor), tag.patch), tag.patch)
    for fix in (v.HANDSHAKE_REMOVED, v.VNPUS_WRAPPER, v.ASCEND_HAMI_PREEMPTION):
        for start in fix.untagged():
            assert start.patch == newest.get((start.major, start.minor), -1) + 1 or \
                (start.patch == 0 and (start.major, start.minor) in newest), (fix.what, start)


# ---- newer than the matrix knows ---------------------------------------------------------------------

def test_newest_is_the_newest_tag() -> None:
    assert v.NEWEST_VOLCANO.core == max(t.core for t in v.VOLCANO_TAGS)


@pytest.mark.parametrize(("version", "beyond"), [("1.16.0", False), ("1.16.0-alpha.1", False), ("1.15.1", False),
                                                 ("1.16.1", True), ("1.17.0", True), ("2.0.0", True)])
def test_beyond_newest(version: str, beyond: bool) -> None:
    note = v.beyond_newest(v.parse_version(version))
    assert (note is not None) is beyond
    if note:
        assert f"Volcano {v.parse_version(version)} is newer than the newest release vgpuctl knows (1.16.0)" in note
