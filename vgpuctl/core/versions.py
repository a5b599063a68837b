"""Volcano versions and which device-sharing features each one has (V§9).

Many rules only hold on some Volcano releases (the register annotation's field count, the handshake,
the `vnpus` wrapper form, vnpu-mode hami-core, …). Everything version-dependent asks this module, so the
matrix lives in one place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_VERSION_RE = re.compile(r"^v?(\d+)\.(\d+)(?:\.(\d+))?(?:[-+.]?(.*))?$")


@dataclass(frozen=True, slots=True, order=True)
class Version:
    major: int
    minor: int
    patch: int = 0
    pre: str = ""  # e.g. "alpha.1"; ignored for feature checks: a 1.16 pre-release has the 1.16 features

    def __str__(self) -> str:
        text = f"{self.major}.{self.minor}.{self.patch}"
        return f"{text}-{self.pre}" if self.pre else text

    @property
    def core(self) -> tuple[int, int, int]:
        return (self.major, self.minor, self.patch)


class VersionError(ValueError):
    pass


def parse_version(text: str) -> Version:
    """Parse `v1.14.3`, `1.16.0-alpha.1`, `v1.15` (image tags and `--volcano-version`)."""
    match = _VERSION_RE.match(text.strip())
    if not match:
        raise VersionError(f"not a version: {text!r} (expected e.g. v1.15.1)")
    major, minor, patch, pre = match.groups()
    return Version(int(major), int(minor), int(patch or 0), (pre or "").lstrip("-+."))


# The newest release whose behaviour the research notes describe (HEAD / v1.16.0-alpha).
NEWEST_VOLCANO = Version(1, 16, 0)


def _at_least(v: Version, major: int, minor: int, patch: int = 0) -> bool:
    return v.core >= (major, minor, patch)


def has_deviceshare(v: Version) -> bool:
    """`deviceshare.*` arguments exist (v1.8 used `predicate.*Enable`)."""
    return _at_least(v, 1, 9)


def has_device_config(v: Version) -> bool:
    """Device ConfigMap, `KnownGeometriesCM*`, `volcano.sh/vgpu-mode`, dynamic MIG, 6-field register."""
    return _at_least(v, 1, 12)


def requires_six_field_register(v: Version) -> bool:
    return _at_least(v, 1, 12)


def checks_vgpu_resources_generically(v: Version) -> bool:
    """From 1.13 the generic resource check also compares vgpu-memory/cores/percentage with allocatable."""
    return _at_least(v, 1, 13)


def has_ascend(v: Version) -> bool:
    """Ascend HAMi and MindCluster vNPU."""
    return _at_least(v, 1, 14)


def _fixed_in(v: Version, v114_patch: int, v115_patch: int) -> bool:
    """True from 1.14.<v114_patch> on the 1.14 line, 1.15.<v115_patch> on the 1.15 line, and ≥ 1.16."""
    if _at_least(v, 1, 16):
        return True
    if (v.major, v.minor) == (1, 15):
        return v.patch >= v115_patch
    if (v.major, v.minor) == (1, 14):
        return v.patch >= v114_patch
    return False


def requires_handshake(v: Version) -> bool:
    """The vGPU node handshake annotation is required (≤ 1.14.2 and 1.15.0)."""
    return not requires_vgpu_allocatable(v)


def requires_vgpu_allocatable(v: Version) -> bool:
    """Allocatable vgpu-number/cores/memory must all be non-zero (1.14.3+, 1.15.1+, ≥ 1.16)."""
    return _fixed_in(v, 3, 1)


def accepts_vnpus_wrapper(v: Version) -> bool:
    """The `vnpus: {hamiVnpuCore, configs}` form (1.14.4+, 1.15.1+, ≥ 1.16); older ones need the list."""
    return _fixed_in(v, 4, 1)


def has_podgroup_policy(v: Version) -> bool:
    """`volcano.sh/vgpu-podgroup-policy` and `deviceshare.GPUExclusiveRules`."""
    return _at_least(v, 1, 15)


def has_vnpu_hami_core(v: Version) -> bool:
    """`huawei.com/vnpu-mode: hami-core`, node `hami-vnpu-core`, `<resourceName>-core`."""
    return _at_least(v, 1, 16)


def has_gpu_uuid_filter(v: Version) -> bool:
    """`volcano.sh/vgpu-use-gpuuuid` / `vgpu-nouse-gpuuuid`."""
    return _at_least(v, 1, 16)
