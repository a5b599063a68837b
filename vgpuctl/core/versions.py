"""Volcano versions, which device-sharing features each one has (V§9), and which device-plugin builds work
with it (H§2.12, H§4.2).

Many rules only hold on some Volcano releases (the register annotation's field count, the handshake,
the `vnpus` wrapper form, vnpu-mode hami-core, …) or some plugin builds. Everything version-dependent
asks this module, so the matrix lives in one place: `vgpuctl install` picks a plugin tag with
`recommended_plugin` and checks an override with `plugin_problem`; the doctor (VGK005) judges running
plugins with `plugin_problem` too.

Device-plugin facts beyond the research notes, read from upstream:

- volcano-sh/devices (gpushare / gpu-number): its only release, v1.0.0 (2020, `release-1.0`), uses Go's
  `flag` package and has no `--gpu-strategy` (added by PR #15 in 2022 with `--gpu-memory-factor`, in
  `main.go`/`doc/config.md`); it registers only `volcano.sh/gpu-memory` and patches `volcano.sh/gpu-number`
  into the node status (`pkg/plugin/nvidia/kube_interactor.go`), so a gpu-number pod is admitted without
  an assignment (issue #11). CI (`.github/workflows/main.yml`) pushes master builds as `:latest`/`:master`,
  which `volcano-device-plugin.yml` deploys. (Tag `v1.1.0` of that repository is an NVIDIA-plugin fork
  published under another image, `k8s-device-plugin`.)
- Ascend/mind-cluster (310P dynamic vNPU): images `ascendhub/ascend-k8sdeviceplugin:v<release>`
  (`docker/ascend-device-plugin/OVERVIEW.md`); Volcano's guide (`docs/user-guide/how_to_use_vnpu.md`)
  installs MindCluster 7.2.RC1. No Volcano-version constraint on the plugin is known beyond Volcano ≥
  1.14; the plugin must be from the same MindCluster release as NodeD and ClusterD.
"""

from __future__ import annotations

import enum
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


# ---- device plugins -------------------------------------------------------------------------------

class PluginRole(str, enum.Enum):
    """What a device-plugin DaemonSet serves: one deviceshare family (the values are install's modes)."""

    VGPU = "vgpu"  # Project-HAMi/volcano-vgpu-device-plugin
    GPUSHARE = "gpushare"  # volcano-sh/devices, default strategy (share)
    GPUNUMBER = "gpunumber"  # volcano-sh/devices with --gpu-strategy=number
    ASCEND_HAMI = "vnpu-hami"  # Project-HAMi/ascend-device-plugin
    ASCEND_MINDCLUSTER = "vnpu-mindcluster"  # Ascend/mind-cluster ascend-device-plugin, 310P dynamic vNPU


#: Image tags of unversioned builds from a default branch (taken to be the newest code).
BRANCH_TAGS = frozenset({"latest", "main", "master"})
#: The first vGPU plugin writing 6-field register entries, and the last release writing the handshake (H§2.12).
VGPU_PLUGIN_SIX_FIELDS_SINCE = Version(1, 10, 0)
VGPU_PLUGIN_HANDSHAKE_UNTIL = Version(1, 12, 0)
#: The first ascend-device-plugin that reads the `vnpus` wrapper form, and only it (older ones: only the list).
ASCEND_PLUGIN_WRAPPER_SINCE = Version(1, 3, 0)
#: volcano-sh/devices' only release; everything after it (`--gpu-strategy`, the node-lock release) is on master.
GPUSHARE_PLUGIN_RELEASE = Version(1, 0, 0)
#: The MindCluster release Volcano's vNPU guide installs (Ascend/mind-cluster tag v7.2.RC1).
MINDCLUSTER_DOCUMENTED_RELEASE = "v7.2.RC1"

_LABELS = {
    PluginRole.VGPU: "vGPU device plugin",
    PluginRole.GPUSHARE: "GPU sharing device plugin",
    PluginRole.GPUNUMBER: "GPU sharing device plugin",
    PluginRole.ASCEND_HAMI: "ascend-device-plugin",
    PluginRole.ASCEND_MINDCLUSTER: "MindCluster Ascend device plugin",
}


@dataclass(frozen=True, slots=True)
class PluginRelease:
    tag: str  # the image tag, e.g. v1.12.0
    reason: str


def _tag_version(tag: str) -> Version | None:
    try:
        return parse_version(tag)
    except VersionError:
        return None


class VgpuPluginGeneration(str, enum.Enum):
    FIVE_FIELDS = "5-field"  # v1.9.x
    HANDSHAKE = "handshake"  # v1.10.0–v1.12.0: 6 fields and the handshake
    MAIN = "main"  # later builds: 6 fields, no handshake


def vgpu_plugin_generation(tag: str) -> VgpuPluginGeneration | None:
    """Which register/handshake behaviour a vGPU plugin image tag has; None when the tag says nothing."""
    version = _tag_version(tag)
    if version is None:
        return VgpuPluginGeneration.MAIN if tag in BRANCH_TAGS else None
    if version.core < VGPU_PLUGIN_SIX_FIELDS_SINCE.core:
        return VgpuPluginGeneration.FIVE_FIELDS
    if version.core <= VGPU_PLUGIN_HANDSHAKE_UNTIL.core:
        return VgpuPluginGeneration.HANDSHAKE
    return VgpuPluginGeneration.MAIN


def ascend_plugin_reads_wrapper(tag: str) -> bool | None:
    """Whether an ascend-device-plugin tag reads only the wrapper form (True) or only the list (False)."""
    version = _tag_version(tag)
    if version is None:
        return True if tag in BRANCH_TAGS else None
    return version.core >= ASCEND_PLUGIN_WRAPPER_SINCE.core


def gpushare_plugin_has_strategy(tag: str) -> bool | None:
    """Whether a volcano-device-plugin tag has `--gpu-strategy` (gpu-number support); None when unknown."""
    version = _tag_version(tag)
    if version is None:
        return True if tag in BRANCH_TAGS else None
    return False if version.core[:2] <= GPUSHARE_PLUGIN_RELEASE.core[:2] else None


def recommended_plugin(role: PluginRole, volcano: Version) -> PluginRelease:
    """The plugin image tag install deploys for `volcano`, and why."""
    if role is PluginRole.VGPU:
        # v1.10-v1.12 write the 6-field register and the handshake: they work with every Volcano >= 1.12
        # (newer schedulers ignore the handshake); the untagged main works only with 1.14.3+/1.15.1+.
        if requires_six_field_register(volcano):
            return PluginRelease("v1.12.0", f"the newest release that works with Volcano {volcano}")
        return PluginRelease("v1.9.0", f"Volcano {volcano} needs the 5-field register annotation")
    if role is PluginRole.ASCEND_HAMI:
        if accepts_vnpus_wrapper(volcano):
            return PluginRelease("v1.4.0", f"reads the vnpus wrapper form, as Volcano {volcano} does")
        return PluginRelease("v1.2.0", f"the newest release reading the vnpus list form Volcano {volcano} needs")
    if role in (PluginRole.GPUSHARE, PluginRole.GPUNUMBER):
        return PluginRelease("latest", f"the volcano-sh/devices build from master, as its manifest deploys it (its "
                                       f"only release, v{GPUSHARE_PLUGIN_RELEASE}, predates --gpu-strategy)")
    return PluginRelease(MINDCLUSTER_DOCUMENTED_RELEASE,
                         "the MindCluster release Volcano's vNPU guide installs; use your NodeD/ClusterD release "
                         "if it differs (--device-plugin-version vnpu-mindcluster=V)")


def plugin_problem(role: PluginRole, tag: str, volcano: Version, volcano_text: str | None = None) -> str | None:
    """Why plugin build `tag` does not work with `volcano` in `role`, or None when it does (or is unknown).

    The sentence names the plugin and tag; `volcano_text` is how the Volcano version reads in it (default
    "Volcano <version>"). For the Ascend HAMi plugin the verdict assumes Volcano and the plugin read one
    device ConfigMap in the form Volcano prefers (what install writes); the doctor checks forms per
    ConfigMap instead (VGM003).
    """
    label, shown = _LABELS[role], volcano_text or f"Volcano {volcano}"
    if role is PluginRole.VGPU:
        generation = vgpu_plugin_generation(tag)
        if generation is VgpuPluginGeneration.FIVE_FIELDS and requires_six_field_register(volcano):
            return (f"{label} {tag} writes 5-field register entries; {shown} needs 6 and drops every node it "
                    "registers (VGN002): use plugin v1.10.0 or later")
        if generation is VgpuPluginGeneration.MAIN and requires_handshake(volcano):
            built = " (taken to be a build from main)" if tag in BRANCH_TAGS else ""
            return (f"{label} {tag}{built} no longer writes volcano.sh/node-vgpu-handshake; {shown} requires it "
                    "and ignores every vGPU node: use plugin v1.10.0–v1.12.0, or Volcano 1.14.3+ / 1.15.1+")
        return None
    if role is PluginRole.ASCEND_HAMI:
        wrapper = ascend_plugin_reads_wrapper(tag)
        if wrapper is True and not accepts_vnpus_wrapper(volcano):
            return (f"{label} {tag} reads only the vnpus wrapper form, which {shown} cannot read (it needs the list "
                    "form): use v1.2.0 or upgrade Volcano to v1.14.4+ / v1.15.1+")
        if wrapper is False and accepts_vnpus_wrapper(volcano):
            return (f"{label} {tag} reads only the vnpus list form; vgpuctl writes the wrapper form for {shown}: "
                    f"use v{ASCEND_PLUGIN_WRAPPER_SINCE} or newer")
        return None
    if role is PluginRole.GPUNUMBER and gpushare_plugin_has_strategy(tag) is False:
        return (f"{label} {tag} predates --gpu-strategy (volcano-sh/devices#15): it registers only "
                "volcano.sh/gpu-memory and just patches volcano.sh/gpu-number into the node status, so a pod "
                "asking for gpu-number gets no GPU assigned and sees every GPU of its node: use the build from "
                "master (volcanosh/volcano-device-plugin:latest) with --gpu-strategy=number")
    return None
