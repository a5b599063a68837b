"""Volcano >= 1.16 and the ascend-device-plugin's node-lock release: the matrix (VGK005, install) and the
cause a held lock's finding (VGN011) names.

Upstream evidence:
- volcano-sh/volcano 3347c2025 ("fix: the key of nodelock", first tagged in v1.16.0-alpha.0),
  `pkg/scheduler/api/devices/ascend/hami/device_info.go`: `Allocate` locks the node with
  `nodelock.LockNode(ads.NodeName, NodeLockAscend)` (`hami.io/mutex.lock`) and no longer calls
  `ReleaseNodeLock`; `pkg/scheduler/plugins/util/nodelock/nodelock.go` writes `time.Now().Format(time.RFC3339)`
  and refuses the node while that time is younger than 5 minutes.
- Project-HAMi/ascend-device-plugin v1.3.0 `go.mod` pins HAMi 61c6cbe7d480, whose
  `pkg/util/nodelock/nodelock.go` `ReleaseNodeLock` returns without deleting when the lock does not contain
  the pod's name (`!skipNodeLockOwnerCheck && !strings.Contains(lockStr, pod.Name)`); v1.3.0's
  `internal/server/server.go` releases only through HAMi's `PodAllocationTrySuccess`/`PodAllocationFailed`,
  which pass `false`. v1.1.0/v1.2.0 pass `true` after a successful Allocate only.
- Project-HAMi/ascend-device-plugin v1.4.0 `go.mod` pins HAMi 5f0adaa7a5ba ("fix: skip owner check for legacy
  lock format", HAMi #2054): a lock without the `,` separator is deleted whoever wrote it.
"""

from __future__ import annotations

import pytest

from tests.unit.doctor.cluster_builders import DEVICESHARE_ASCEND_HAMI, ds_status, scheduler
from tests.unit.doctor.conftest import cluster, doctor, found, pod, scheduler_cm, workload
from tests.unit.doctor.nodes_builders import ascend_node
from vgpuctl.core.install.modes import InstallError, Mode
from vgpuctl.core.install.plugins import choose_version
from vgpuctl.core.versions import (
    LockRelease,
    PluginRole,
    ascend_plugin_lock_release,
    parse_version,
    recommended_plugin,
)

NODE_LOCK_ON = DEVICESHARE_ASCEND_HAMI + "      deviceshare.NodeLockEnable: true\n"
YOUNG = "2026-11-21T11:58:00Z"  # two minutes before the tests' NOW


def ascend_plugin(tag: str) -> dict[str, object]:
    return workload("DaemonSet", "kube-system", "hami-ascend-device-plugin",
                    f"docker.io/projecthami/ascend-device-plugin:{tag}", status=ds_status(1, 1),
                    node_selector={"ascend": "on"})


def locked_node(value: str = YOUNG) -> dict[str, object]:
    return ascend_node("a1", annotations={"hami.io/mutex.lock": value})


@pytest.mark.parametrize(("tag", "release"), [
    ("v1.0.1", LockRelease.ALWAYS), ("v1.1.0", LockRelease.ON_SUCCESS), ("v1.2.0", LockRelease.ON_SUCCESS),
    ("v1.3.0", LockRelease.NEVER), ("v1.4.0", LockRelease.ALWAYS), ("latest", LockRelease.ALWAYS),
    ("sha-1234", None),
])
def test_lock_release_by_plugin_tag(tag: str, release: LockRelease | None) -> None:
    """Each tag's vendored HAMi (module docstring): owner check none / on failure only / always / legacy skipped."""
    assert ascend_plugin_lock_release(tag) is release


@pytest.mark.parametrize("volcano", ["1.16.0-alpha.0", "1.16.0", "1.17.0"])
def test_vgk005_plugin_v1_3_0_never_releases_the_lock_volcano_1_16_takes(volcano: str) -> None:
    report = doctor(cluster(scheduler_cm(NODE_LOCK_ON), scheduler(f"v{volcano}"), ascend_plugin("v1.3.0")),
                    version=volcano)
    (f,) = found(report, "VGK005")
    assert f.subject == "daemonset/kube-system/hami-ascend-device-plugin"
    assert "v1.3.0 never releases the node lock hami.io/mutex.lock" in f.message
    assert "one allocation per 5 minutes" in f.message and "use v1.4.0" in f.message


@pytest.mark.parametrize(("volcano", "tag", "conf"), [
    ("1.16.0", "v1.4.0", NODE_LOCK_ON),  # v1.4.0 deletes a bare-time lock
    ("1.16.0", "latest", NODE_LOCK_ON),
    ("1.15.1", "v1.3.0", NODE_LOCK_ON),  # before 3347c2025 Volcano releases its own (commonWord) lock
    ("1.16.0", "v1.3.0", DEVICESHARE_ASCEND_HAMI),  # NodeLockEnable off: no lock is taken
    ("1.16.0", "v1.2.0", NODE_LOCK_ON),  # releases after every successful allocation: not incompatible
])
def test_vgk005_not_raised_when_the_lock_is_released(volcano: str, tag: str, conf: str) -> None:
    report = doctor(cluster(scheduler_cm(conf), scheduler(f"v{volcano}"), ascend_plugin(tag)), version=volcano)
    assert found(report, "VGK005") == []


@pytest.mark.parametrize("tag", ["v1.3.0", "v1.4.0"])
def test_install_refuses_exactly_the_ascend_builds_the_doctor_flags(tag: str) -> None:
    """One matrix: `install --device-plugin-version vnpu-hami=T` refuses what VGK005 flags (NodeLockEnable on,
    the case install cannot rule out)."""
    flagged = bool(found(doctor(cluster(scheduler_cm(NODE_LOCK_ON), scheduler("v1.16.0"), ascend_plugin(tag)),
                                version="1.16.0"), "VGK005"))
    try:
        choose_version(Mode.VNPU_HAMI, parse_version("1.16.0"), tag)
        refused = False
    except InstallError as exc:
        refused = "never releases the node lock" in str(exc)
    assert refused is flagged


@pytest.mark.parametrize("volcano", ["1.16.0-alpha.0", "1.16.0", "1.17.0"])
def test_install_picks_v1_4_0_for_volcano_1_16(volcano: str) -> None:
    """`install --mode vnpu-hami` takes its tag from the matrix: v1.4.0, the first that releases the lock."""
    chosen = choose_version(Mode.VNPU_HAMI, parse_version(volcano), None)
    assert chosen.version == recommended_plugin(PluginRole.ASCEND_HAMI, parse_version(volcano)).tag == "v1.4.0"
    assert ascend_plugin_lock_release(chosen.version) is LockRelease.ALWAYS


def test_vgn011_names_the_plugin_that_never_releases_the_lock() -> None:
    snap = cluster(scheduler_cm(NODE_LOCK_ON), scheduler("v1.16.0"), ascend_plugin("v1.3.0"), locked_node())
    (f,) = found(doctor(snap, version="1.16.0"), "VGN011")
    assert f.subject == "node/a1"
    assert "lock 'hami.io/mutex.lock' is younger than 5 minutes" in f.message
    assert "probably because ascend-device-plugin v1.3.0 never releases" in f.message


def test_vgn011_names_a_failed_allocation_for_plugins_releasing_only_on_success() -> None:
    snap = cluster(scheduler_cm(NODE_LOCK_ON), scheduler("v1.16.0"), ascend_plugin("v1.2.0"), locked_node())
    (f,) = found(doctor(snap, version="1.16.0"), "VGN011")
    assert "v1.2.0 releases the node lock hami.io/mutex.lock" in f.message
    assert "a failed allocation keeps the node locked for 5 minutes" in f.message


@pytest.mark.parametrize(("volcano", "tag"), [("1.16.0", "v1.4.0"), ("1.15.1", "v1.3.0")])
def test_vgn011_names_no_plugin_cause_when_it_does_not_apply(volcano: str, tag: str) -> None:
    """v1.4.0 releases it; on 1.15 Volcano releases its lock itself (and locks under the commonWord)."""
    snap = cluster(scheduler_cm(NODE_LOCK_ON), scheduler(f"v{volcano}"), ascend_plugin(tag), locked_node())
    for f in found(doctor(snap, version=volcano), "VGN011"):
        assert "probably because" not in f.message


def test_vgn011_cause_needs_a_held_lock() -> None:
    """A lock older than 5 minutes is broken by Volcano itself; a pod allocating explains a young one."""
    old = cluster(scheduler_cm(NODE_LOCK_ON), scheduler("v1.16.0"), ascend_plugin("v1.3.0"),
                  locked_node("2026-11-21T11:50:00Z"))
    assert found(doctor(old, version="1.16.0"), "VGN011") == []
    allocating = pod("ml", "p", node="a1", annotations={"volcano.sh/bind-phase": "allocating"})
    busy = cluster(scheduler_cm(NODE_LOCK_ON), scheduler("v1.16.0"), ascend_plugin("v1.3.0"), locked_node(),
                   allocating)
    assert found(doctor(busy, version="1.16.0"), "VGN011") == []
