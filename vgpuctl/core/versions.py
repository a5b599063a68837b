"""Volcano versions, which device-sharing features each one has (docs/volcano.md#compatibility-matrix), and which
device-plugin builds work
with it (docs/device-plugins.md#vgpu-plugin-compatibility, docs/device-plugins.md#vnpus-forms).

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
- Project-HAMi/ascend-device-plugin and Volcano's node lock: from v1.16.0-alpha.0 (volcano-sh/volcano
  3347c2025, `pkg/scheduler/api/devices/ascend/hami/device_info.go`) Volcano locks an Ascend HAMi node under
  `hami.io/mutex.lock` with a bare RFC3339 time and leaves the release to the plugin. The plugin releases
  through its vendored HAMi `pkg/util/nodelock` (the `replace` in its `go.mod`): v1.0.x (HAMi dd1a97603c68)
  deletes any lock; v1.1.0–v1.2.0 (HAMi 61c6cbe7d480) skip HAMi's owner check only after a successful
  Allocate; v1.3.0 (same HAMi, through `PodAllocationTrySuccess`/`PodAllocationFailed`) always checks that
  the lock contains the pod's name, which a bare time never does; v1.4.0 (HAMi 5f0adaa7a5ba, "skip owner
  check for legacy lock format", HAMi #2054) deletes a lock without a `,` whoever wrote it.

Fixes Volcano made on several release lines are `LineFix` rows: the first build of each line that has
the fix, whether or not that patch is tagged yet (`VOLCANO_TAGS` says which are); docs/releases.md says
how to add a release.
"""

from __future__ import annotations

import enum
import re
from dataclasses import dataclass
from typing import Final

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


def _release_order(v: Version) -> tuple[int, int, int, int, str]:
    """Semver order: a pre-release comes before its release (`Version`'s own order puts it after)."""
    return (v.major, v.minor, v.patch, 0 if v.pre else 1, v.pre)


#: Every volcano-sh/volcano tag from 1.12 on that the matrix knows, oldest first. Add a tag here when it
#: is released (docs/releases.md); a `LineFix` naming a patch not listed here reads "(not tagged yet)".
VOLCANO_TAGS: Final = tuple(parse_version(t) for t in (
    "v1.12.0", "v1.12.1", "v1.12.2", "v1.12.3", "v1.12.4", "v1.13.0", "v1.13.1", "v1.13.2", "v1.13.3",
    "v1.14.0", "v1.14.1", "v1.14.2", "v1.14.3", "v1.14.4", "v1.15.0", "v1.15.1", "v1.16.0-alpha.0",
    "v1.16.0-alpha.1",
))
#: The newest release the matrix knows (its pre-release label dropped: a 1.16 pre-release has 1.16's features).
NEWEST_VOLCANO = Version(*VOLCANO_TAGS[-1].core)


def beyond_newest(v: Version) -> str | None:
    """What to say when `v` is newer than every release the matrix knows (None when it is not)."""
    if v.core <= NEWEST_VOLCANO.core:
        return None
    return (f"Volcano {v} is newer than the newest release vgpuctl knows ({NEWEST_VOLCANO}): version-dependent "
            f"checks judge it as {NEWEST_VOLCANO}; a newer vgpuctl may know more")


def _at_least(v: Version, major: int, minor: int, patch: int = 0) -> bool:
    return v.core >= (major, minor, patch)


@dataclass(frozen=True, slots=True)
class LineFix:
    """A change Volcano made (or backported) on several release lines.

    `first` holds the first build of each release line that has it, oldest line first, pre-release label
    included (`1.16.0-alpha.0`: every 1.16 build; `1.16.0`: not its pre-releases). A line after the last
    one listed has it from its start; a line before or between those listed does not. A patch that is not
    tagged yet (merged on the release branch after the last tag) is written like any other: the verdict
    flips by itself when a cluster runs that patch, and `describe` says "(not tagged yet)" until the tag
    is added to `VOLCANO_TAGS`.
    """

    what: str
    first: tuple[Version, ...]

    def in_version(self, v: Version) -> bool:
        line = (v.major, v.minor)
        for start in self.first:
            if (start.major, start.minor) == line:
                return _release_order(v) >= _release_order(start)
        return line > (self.first[-1].major, self.first[-1].minor)

    def untagged(self, tags: tuple[Version, ...] = VOLCANO_TAGS) -> tuple[Version, ...]:
        return tuple(start for start in self.first if start not in tags)

    def describe(self, tags: tuple[Version, ...] = VOLCANO_TAGS) -> str:
        """`1.13.4+ (not tagged yet), 1.14.3+, 1.15.1+ or >= 1.16`: the Volcano builds that have it."""
        parts = []
        for start in self.first:
            if start is self.first[-1] and start.patch == 0 and start.pre:
                text = f">= {start.major}.{start.minor}"
            else:
                text = f"{start}+"
            parts.append(text + (" (not tagged yet)" if start not in tags else ""))
        return ", ".join(parts[:-1]) + f" or {parts[-1]}" if len(parts) > 1 else parts[0]


#: volcano-sh/volcano: the vGPU handshake removed and non-zero allocatable vgpu-number/cores/memory required
#: (`NewGPUDevices`, `pkg/scheduler/api/devices/nvidia/vgpu/device_info.go`): v1.14.3, v1.15.1, master
#: before v1.16.0-alpha.0, and release-1.13 after v1.13.3 (6a514a208, PR #5431).
HANDSHAKE_REMOVED: Final = LineFix(
    "no vGPU handshake; non-zero allocatable vGPU resources required",
    (Version(1, 13, 4), Version(1, 14, 3), Version(1, 15, 1), Version(1, 16, 0, "alpha.0")))
#: The `vnpus: {hamiVnpuCore, configs}` device-config form (`pkg/scheduler/api/devices/config/vnpu.go`).
VNPUS_WRAPPER: Final = LineFix(
    "the vnpus wrapper form of the device config",
    (Version(1, 14, 4), Version(1, 15, 1), Version(1, 16, 0, "alpha.0")))
#: Normal preemption rechecks the device predicate, so an Ascend HAMi preemptor whose vNPUs are fragmented
#: evicts until it fits (`preemptorFitsOnNode`, `pkg/scheduler/actions/preempt/preempt.go`, PR #5843):
#: master 5a15213d8 (after v1.16.0-alpha.1) and release-1.15 eedb4492e (after v1.15.1); not on release-1.14.
ASCEND_HAMI_PREEMPTION: Final = LineFix(
    "normal preemption for Ascend HAMi vNPUs",
    (Version(1, 15, 2), Version(1, 16, 0)))


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


def judges_readiness_by_taints(v: Version) -> bool:
    """A node whose `Ready` condition is not True stays in the session (≥ 1.11): only its
    `node.kubernetes.io/not-ready`/`unreachable` taints keep pods off, through the predicates plugin's
    TaintToleration. Before, `api/node_info.go setNodeState` marked it NotReady and the cache's `Snapshot` left it
    out. Evidence: the `cond.Type == v1.NodeReady` test is in v1.9.0 … v1.10.2 and gone from v1.11.0 on (commit
    e697acac5, "Don't depend on ready condition of nodes instead of taints in session")."""
    return _at_least(v, 1, 11)


def has_ascend(v: Version) -> bool:
    """Ascend HAMi and MindCluster vNPU."""
    return _at_least(v, 1, 14)


def requires_handshake(v: Version) -> bool:
    """The vGPU node handshake annotation is required (≤ 1.13.3, ≤ 1.14.2 and 1.15.0)."""
    return not requires_vgpu_allocatable(v)


def requires_vgpu_allocatable(v: Version) -> bool:
    """Allocatable vgpu-number/cores/memory must all be non-zero (1.13.4+, 1.14.3+, 1.15.1+, ≥ 1.16)."""
    return HANDSHAKE_REMOVED.in_version(v)


def accepts_vnpus_wrapper(v: Version) -> bool:
    """The `vnpus: {hamiVnpuCore, configs}` form (1.14.4+, 1.15.1+, ≥ 1.16); older ones need the list."""
    return VNPUS_WRAPPER.in_version(v)


def leaves_ascend_lock_to_plugin(v: Version) -> bool:
    """Volcano takes `hami.io/mutex.lock` on an Ascend HAMi node and never releases it (≥ 1.16, 3347c2025)."""
    return _at_least(v, 1, 16)


def has_podgroup_policy(v: Version) -> bool:
    """`volcano.sh/vgpu-podgroup-policy` and `deviceshare.GPUExclusiveRules`."""
    return _at_least(v, 1, 15)


def has_vnpu_hami_core(v: Version) -> bool:
    """`huawei.com/vnpu-mode: hami-core`, node `hami-vnpu-core`, `<resourceName>-core`."""
    return _at_least(v, 1, 16)


def has_gpu_uuid_filter(v: Version) -> bool:
    """`volcano.sh/vgpu-use-gpuuuid` / `vgpu-nouse-gpuuuid`."""
    return _at_least(v, 1, 16)


def skips_malformed_vgpu_ids(v: Version) -> bool:
    """A malformed `vgpu-ids-new` device is logged and skipped, not a panic (≥ 1.16, 8b6d2c482)."""
    return _at_least(v, 1, 16)


def releasing_pods_book_no_device(v: Version) -> bool:
    """A bound pod being deleted (task status Releasing) books no device: `api/node_info.go AddTask` no longer
    calls `addResource` for it (≥ 1.15, d7ad76892); before, its devices stayed booked until it was gone."""
    return _at_least(v, 1, 15)


def books_a_pod_once_per_gpu(v: Version) -> bool:
    """HAMi-core's `AddPod` books a pod once per GPU, from its first entry naming it (1.12.x, and ≥ 1.15:
    d7ad76892); 1.13 and 1.14 book every entry (6970f1984). MIG's `AddPod` always books a pod once."""
    return not _at_least(v, 1, 13) or _at_least(v, 1, 15)


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
#: The first vGPU plugin writing 6-field register entries, and the last release writing the handshake
# (docs/device-plugins.md#vgpu-plugin-compatibility).
VGPU_PLUGIN_SIX_FIELDS_SINCE = Version(1, 10, 0)
VGPU_PLUGIN_HANDSHAKE_UNTIL = Version(1, 12, 0)
#: The first ascend-device-plugin that reads the `vnpus` wrapper form, and only it (older ones: only the list).
ASCEND_PLUGIN_WRAPPER_SINCE = Version(1, 3, 0)
#: The first ascend-device-plugin shipping the `ascend` RuntimeClass (`ascend-runtimeclass.yaml`, commit 880b827)
#: that its Ascend pods need: its Allocate only sets ASCEND_VISIBLE_DEVICES (`internal/server/allocate.go`) and
#: its `docs/volcano.md` (v1.4.0) asks for `runtimeClassName: ascend` on every Ascend pod.
ASCEND_PLUGIN_RUNTIMECLASS_SINCE = Version(1, 3, 0)
#: ascend-device-plugin releases where its node-lock release changed (module docstring).
ASCEND_PLUGIN_OWNER_CHECK_SINCE = Version(1, 1, 0)
ASCEND_PLUGIN_ALWAYS_OWNER_CHECK_SINCE = Version(1, 3, 0)
ASCEND_PLUGIN_RELEASES_BARE_LOCK_SINCE = Version(1, 4, 0)
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


def ascend_plugin_ships_runtimeclass(tag: str) -> bool | None:
    """Whether an ascend-device-plugin tag ships (and its pods need) the `ascend` RuntimeClass; None: unknown."""
    version = _tag_version(tag)
    if version is None:
        return True if tag in BRANCH_TAGS else None
    return version.core >= ASCEND_PLUGIN_RUNTIMECLASS_SINCE.core


class LockRelease(str, enum.Enum):
    """When an ascend-device-plugin build deletes a node lock holding only a time (Volcano's)."""

    ALWAYS = "always"  # when the allocation ends, either way
    ON_SUCCESS = "on success"  # after a successful allocation; a failed one leaves it for 5 minutes
    NEVER = "never"  # only a lock naming the pod, which Volcano's never does


def ascend_plugin_lock_release(tag: str) -> LockRelease | None:
    """How an ascend-device-plugin image tag releases Volcano's node lock; None when the tag says nothing."""
    version = _tag_version(tag)
    if version is None:
        return LockRelease.ALWAYS if tag in BRANCH_TAGS else None
    if version.core >= ASCEND_PLUGIN_RELEASES_BARE_LOCK_SINCE.core or \
            version.core < ASCEND_PLUGIN_OWNER_CHECK_SINCE.core:
        return LockRelease.ALWAYS
    if version.core >= ASCEND_PLUGIN_ALWAYS_OWNER_CHECK_SINCE.core:
        return LockRelease.NEVER
    return LockRelease.ON_SUCCESS


def ascend_lock_problem(tag: str, volcano: Version, volcano_text: str | None = None, *,
                        failures: bool = False) -> str | None:
    """Why Volcano's Ascend HAMi node lock stays behind with plugin build `tag` (with NodeLockEnable), or None.

    Only a build that never releases it is a problem (VGK005); `failures` also explains a build that keeps
    it after a failed allocation (VGN011 naming a held lock's cause). The sentence starts with the plugin
    and tag; `volcano_text` is how the Volcano version reads in it.
    """
    release = ascend_plugin_lock_release(tag)
    if not leaves_ascend_lock_to_plugin(volcano) or release in (None, LockRelease.ALWAYS) or \
            (release is LockRelease.ON_SUCCESS and not failures):
        return None
    shown = volcano_text or f"Volcano {volcano}"
    label = _LABELS[PluginRole.ASCEND_HAMI]
    head = (f"{label} {tag} never releases the node lock hami.io/mutex.lock that {shown} takes and leaves to "
            "the plugin (its vendored HAMi deletes only a lock naming the pod; Volcano's holds only a time)")
    if release is LockRelease.ON_SUCCESS:
        head = (f"{label} {tag} releases the node lock hami.io/mutex.lock that {shown} takes only after a "
                "successful allocation (its vendored HAMi deletes a lock without the pod's name only then)")
        return (f"{head}: with deviceshare.NodeLockEnable a failed allocation keeps the node locked for 5 minutes; "
                f"use v{ASCEND_PLUGIN_RELEASES_BARE_LOCK_SINCE} or newer")
    return (f"{head}: with deviceshare.NodeLockEnable each Ascend node takes about one allocation per 5 minutes; "
            f"use v{ASCEND_PLUGIN_RELEASES_BARE_LOCK_SINCE} or newer")


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


def plugin_problem(role: PluginRole, tag: str, volcano: Version, volcano_text: str | None = None, *,
                   node_lock: bool = True) -> str | None:
    """Why plugin build `tag` does not work with `volcano` in `role`, or None when it does (or is unknown).

    The sentence names the plugin and tag; `volcano_text` is how the Volcano version reads in it (default
    "Volcano <version>"). For the Ascend HAMi plugin the verdict assumes Volcano and the plugin read one
    device ConfigMap in the form Volcano prefers (what install writes); the doctor checks forms per
    ConfigMap instead (VGM003). `node_lock` False says `deviceshare.NodeLockEnable` is known to be off,
    which makes a plugin that never releases Volcano's node lock harmless; unknown counts as on.
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
                    "and ignores every vGPU node: use plugin v1.10.0–v1.12.0, or Volcano "
                    f"{HANDSHAKE_REMOVED.describe()}")
        return None
    if role is PluginRole.ASCEND_HAMI:
        wrapper = ascend_plugin_reads_wrapper(tag)
        if wrapper is True and not accepts_vnpus_wrapper(volcano):
            return (f"{label} {tag} reads only the vnpus wrapper form, which {shown} cannot read (it needs the list "
                    f"form): use v1.2.0 or upgrade Volcano to {VNPUS_WRAPPER.describe()}")
        if wrapper is False and accepts_vnpus_wrapper(volcano):
            return (f"{label} {tag} reads only the vnpus list form; vgpuctl writes the wrapper form for {shown}: "
                    f"use {recommended_plugin(role, volcano).tag} or newer")
        return ascend_lock_problem(tag, volcano, volcano_text) if node_lock else None
    if role is PluginRole.GPUNUMBER and gpushare_plugin_has_strategy(tag) is False:
        return (f"{label} {tag} predates --gpu-strategy (volcano-sh/devices#15): it registers only "
                "volcano.sh/gpu-memory and just patches volcano.sh/gpu-number into the node status, so a pod "
                "asking for gpu-number gets no GPU assigned and sees every GPU of its node: use the build from "
                "master (volcanosh/volcano-device-plugin:latest) with --gpu-strategy=number")
    return None


# ---- DRA (docs/stacks.md#dra-in-volcano) ------------------------------------------------------------
#
# Read at each tag of volcano-sh/volcano (`git show <tag>:pkg/scheduler/plugins/predicates/predicates.go`, `go.mod`):
# - ≤ v1.11.2: no `dynamicresources` in the predicates plugin: DRA claims are never allocated.
# - v1.12.0 – v1.14.4: `predicate.DynamicResourceAllocationEnable`, default false, read with `GetBool` (a real bool
#   only: `framework/arguments.go` takes a string from v1.15.0 on); when true, `dynamicresources.New(…, features)`
#   with `EnableDynamicResourceAllocation` from the scheduler's feature gate — off, the plugin is created disabled
#   and skips every pod (kubernetes/kubernetes `pkg/scheduler/framework/plugins/dynamicresources`).
# - v1.15.0 on: the argument is no longer read; it defaults to the gate (commit 88c3b4769, "Enable dra option").
# The gate's default: the vendored Kubernetes' (go.mod k8s.io/kubernetes v1.32.2 at v1.12.x, v1.33.2 at v1.13.x:
# DynamicResourceAllocation beta, default off); from v1.14.0 the scheduler sets its feature-gate defaults to the
# connected API server's version (`cmd/scheduler/app/server.go` setupComponentGlobals, `pkg/util/util.go`
# SetupComponentGlobals from v1.15.0), where the gate is on from Kubernetes 1.34 (GA).

#: Volcano's vendored k8s.io/kubernetes (major, minor) per release line, from go.mod at each line's tags.
VENDORED_KUBERNETES: Final = {(1, 11): (1, 31), (1, 12): (1, 32), (1, 13): (1, 33), (1, 14): (1, 34),
                              (1, 15): (1, 35), (1, 16): (1, 36)}
#: Kubernetes' DynamicResourceAllocation gate is on by default from this release (GA).
KUBE_DRA_GATE_ON_BY_DEFAULT: Final = (1, 34)


def has_dra(v: Version) -> bool:
    """The predicates plugin runs the upstream `dynamicresources` plugin (≥ 1.12, volcano-sh/volcano PR #3799)."""
    return _at_least(v, 1, 12)


def reads_dra_argument(v: Version) -> bool:
    """`predicate.DynamicResourceAllocationEnable` is read (1.12 – 1.14), as a real bool only."""
    return has_dra(v) and not _at_least(v, 1, 15)


def aligns_gates_with_cluster(v: Version) -> bool:
    """The scheduler's feature-gate defaults follow the API server's version (≥ 1.14), not the vendored one."""
    return _at_least(v, 1, 14)


def vendored_kubernetes(v: Version) -> tuple[int, int] | None:
    line = (v.major, v.minor)
    if line in VENDORED_KUBERNETES:
        return VENDORED_KUBERNETES[line]
    newest = max(VENDORED_KUBERNETES)
    return VENDORED_KUBERNETES[newest] if line > newest else None


def dra_gate_default(v: Version, cluster: tuple[int, int] | None) -> bool | None:
    """Whether the scheduler's DynamicResourceAllocation gate is on without `--feature-gates`; None when it
    depends on a cluster version nobody knows. `cluster`: the API server's (major, minor)."""
    if aligns_gates_with_cluster(v):
        return None if cluster is None else cluster >= KUBE_DRA_GATE_ON_BY_DEFAULT
    vendored = vendored_kubernetes(v)
    return None if vendored is None else vendored >= KUBE_DRA_GATE_ON_BY_DEFAULT


@dataclass(frozen=True, slots=True)
class DraSupport:
    """Whether the running Volcano allocates DRA claims: `allocates` (None: cannot be told), what is missing
    (sentences, empty when nothing is), and whether a predicates argument it ignores is set (≥ 1.15)."""

    allocates: bool | None
    missing: tuple[str, ...] = ()
    unknown: str = ""  # why it cannot be told (allocates None)
    ignored_argument: bool = False


def dra_support(v: Version, *, predicates: bool, argument: bool | None, argument_set: bool, gate: bool | None,
                gates_known: bool = True, cluster: tuple[int, int] | None, shown: str | None = None) -> DraSupport:
    """`predicates`: the predicates plugin is in a tier; `argument`: `predicate.DynamicResourceAllocationEnable` as
    Volcano `v` reads it (None: absent or unreadable, i.e. false); `gate`: what `--feature-gates` sets it to (None:
    not set); `gates_known`: the scheduler's flags are known at all (else a default-off gate may have been turned
    on: unknown, not off); `cluster`: the API server's (major, minor) when known. `shown`: how the version reads in
    messages."""
    name = shown or f"Volcano {v}"
    if not has_dra(v):
        return DraSupport(False, (f"{name} has no DRA: its predicates plugin runs no dynamicresources filter "
                                  "before 1.12",))
    missing: list[str] = []
    if not predicates:
        missing.append("the predicates plugin, which runs DRA, is in no tier")
    if reads_dra_argument(v) and argument is not True:
        missing.append(f"predicate.DynamicResourceAllocationEnable is not true on the predicates plugin ({name} "
                       "reads it, default false, and only as an unquoted bool)")
    effective = gate if gate is not None else dra_gate_default(v, cluster)
    if effective is False and not gates_known:
        effective = None  # off by default, but the flags that could turn it on are not known
    unknown = ""
    if effective is False:
        if gate is False:
            why = "--feature-gates turns it off"
        elif aligns_gates_with_cluster(v):
            why = (f"off by default on Kubernetes {cluster[0]}.{cluster[1]}, whose version {name} takes its gate "
                   "defaults from" if cluster else "off by default")
        else:
            vendored = vendored_kubernetes(v)
            why = (f"beta and off by default in the Kubernetes {vendored[0]}.{vendored[1]} {name} is built with"
                   if vendored else "off by default")
        missing.append(f"the scheduler's DynamicResourceAllocation feature gate is off ({why})")
    elif effective is None:
        unknown = ("the vc-scheduler Deployment is not in the snapshot, so its --feature-gates are unknown"
                   if not gates_known else
                   f"the scheduler's DynamicResourceAllocation gate is not set in --feature-gates and {name} takes "
                   "its default from the cluster's Kubernetes version, which the snapshot does not say")
    allocates = False if missing else (None if effective is None else True)
    return DraSupport(allocates, tuple(missing), unknown if allocates is None else "",
                      ignored_argument=has_dra(v) and not reads_dra_argument(v) and argument_set)
