"""`doctor --node` where it could not look: a check without its facts is skipped with the reason, never passed,
and each node-local finding names the part of the node it is about (`node/<name>:<part>`).

Host trees and recorded outputs as in test_checks.py: `collect` runs for real over a temporary root. Files that
cannot be read are made the way root cannot read them either: a directory where the config file belongs, or
bytes that are not UTF-8.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.unit.host.helpers import NPU_INFO, QUERY, FakeRunner, failed, fixture, host_tree, ok
from tests.unit.host.test_checks import NVIDIA_CONTAINERD, diagnose, observe, result, upstream_config
from vgpuctl.core.doctor.checks.host import ASPECTS
from vgpuctl.core.doctor.framework import Status
from vgpuctl.core.findings import Severity
from vgpuctl.node_probe import collect

T4 = fixture("nvidia-smi/query-tesla-t4.csv")


def test_a_host_with_nothing_on_it_passes_no_check(tmp_path: Path) -> None:
    results = diagnose(observe(tmp_path, {}, files={}))
    assert {r.check.id: r.status for r in results} == {
        "host.tools": Status.FAIL, "host.driver": Status.SKIP, "host.runtime": Status.SKIP,
        "host.mig": Status.SKIP, "host.npu": Status.SKIP}
    not_nvidia = "no NVIDIA GPU seen (nvidia-smi: not found; no /dev/nvidiactl)"
    assert [result(results, c).reason for c in ("host.driver", "host.runtime", "host.mig")] == [not_nvidia] * 3
    assert result(results, "host.npu").reason == "no Ascend NPU seen (npu-smi: not found; no /dev/davinci_manager)"
    assert [f.subject for f in result(results, "host.tools").findings] == ["node/gpu-1:driver"]


def test_an_ascend_node_skips_the_nvidia_checks(tmp_path: Path) -> None:
    host = observe(tmp_path, {NPU_INFO: ok(fixture("npu-smi/info-310p3-2cards.txt"))},
                   files={"/dev/davinci_manager": ""})
    results = diagnose(host)
    assert [result(results, c).status for c in ("host.driver", "host.runtime", "host.mig")] == [Status.SKIP] * 3
    assert result(results, "host.npu").status is Status.PASS


def test_no_gpu_listed_skips_mig_with_the_reason(tmp_path: Path) -> None:
    listed_none = result(diagnose(observe(tmp_path, {QUERY: ok("")})), "host.mig")
    assert (listed_none.status, listed_none.reason) == (Status.SKIP, "nvidia-smi listed no GPU")
    text = fixture("nvidia-smi/driver-not-loaded.txt")
    down = result(diagnose(observe(tmp_path, {QUERY: failed(text.splitlines()[0], 9, text)})), "host.mig")
    assert down.status is Status.SKIP and down.reason.startswith("no GPU could be listed (nvidia-smi --query-gpu=")
    assert "couldn't communicate" in down.reason


def test_an_npu_smi_that_fails_skips_chip_health(tmp_path: Path) -> None:
    host = observe(tmp_path, {NPU_INFO: failed("dcmi module initialize failed. ret is -8005", 255)},
                   files={"/dev/davinci_manager": ""})
    checked = result(diagnose(host), "host.npu")
    assert checked.status is Status.SKIP and "ret is -8005" in checked.reason


@pytest.mark.parametrize(("files", "unread"), [
    ({"/etc/containerd/config.toml/": "", "/run/containerd/containerd.sock": ""},
     "/etc/containerd/config.toml (is a directory)"),
    ({"/etc/docker/daemon.json": "\udcff", "/run/cri-dockerd.sock": ""}, "/etc/docker/daemon.json (UnicodeDecodeError"),
    ({"/etc/crio/crio.conf.d/99-nvidia.conf": "\udcff", "/run/crio/crio.sock": ""},
     "/etc/crio/crio.conf.d/99-nvidia.conf (UnicodeDecodeError"),
], ids=["containerd", "docker", "crio"])
def test_an_engine_config_that_cannot_be_read_is_not_judged(tmp_path: Path, files: dict[str, str],
                                                            unread: str) -> None:
    """Before, an unreadable config counted as no config: "default runtime not set: runc", an error."""
    host = collect(_tree(tmp_path, {**files, "/dev/nvidiactl": ""}), _runner(T4), node_name="gpu-1")
    checked = result(diagnose(host), "host.runtime")
    assert checked.status is Status.SKIP and not checked.findings
    assert checked.reason.startswith(f"could not read {unread}") and "the default runtime was not checked" in \
        checked.reason


def test_an_unreadable_config_beside_a_readable_one_is_said(tmp_path: Path) -> None:
    files = {"/etc/containerd/config.toml": fixture("runtime/containerd-v3-runc-default-nvidia-declared.toml"),
             "/etc/docker/daemon.json/": ""}  # the engine in use is unknown: both are candidates
    host = collect(_tree(tmp_path, files), _runner(T4), node_name="gpu-1")
    messages = [(f.severity, f.message) for f in result(diagnose(host), "host.runtime").findings]
    assert (Severity.INFO, "could not read /etc/docker/daemon.json (is a directory): the default runtime of docker "
                           "was not checked") in messages
    assert any(s is Severity.WARNING and m.startswith("containerd default runtime 'runc'") for s, m in messages)


def test_each_node_local_part_has_its_own_subject(tmp_path: Path) -> None:
    """The four VGN019 checks (and VGN017) on one node, told apart by subject alone."""
    files = {**NVIDIA_CONTAINERD,
             "/etc/containerd/config.toml": fixture("runtime/containerd-v3-runc-default-nvidia-declared.toml"),
             "/dev/davinci_manager": ""}
    npu = fixture("npu-smi/info-310p3-2cards.txt").replace("| 1       310P3     | OK              |",
                                                            "| 1       310P3     | Alarm           |")
    a800 = fixture("nvidia-smi/query-a800-80gb-pcie.csv").replace("Disabled", "Enabled").replace("580.", "440.")
    host = observe(tmp_path, {QUERY: ok("garbage\n" + a800), NPU_INFO: ok(npu)}, files)
    results = diagnose(host, device_config=upstream_config())
    subjects = {r.check.id: {f.subject for f in r.findings} for r in results}
    assert subjects == {"host.tools": {"node/gpu-1:nvidia-smi"}, "host.driver": {"node/gpu-1:driver"},
                        "host.runtime": {"node/gpu-1:runtime"}, "host.mig": {"node/gpu-1:mig"},
                        "host.npu": {"node/gpu-1:npu"}}
    assert {s.split(":", 1)[1] for found in subjects.values() for s in found} <= set(ASPECTS)


def test_a_path_that_cannot_be_looked_at_is_recorded_not_raised(tmp_path: Path) -> None:
    """As for a user who may not search a directory above a config (`doctor --node` without root): looking at
    the path fails (here: a name too long), and that is what the facts say; `collect` used to raise."""
    host = collect(tmp_path / ("x" * 300), _runner(T4), node_name="gpu-1")
    unreadable = {p.source for p in host.problems if p.kind == "unreadable"}
    assert {"/dev/nvidiactl", "/etc/containerd/config.toml", "/etc/docker/daemon.json"} <= unreadable
    assert result(diagnose(host), "host.runtime").reason.startswith("could not read /etc/containerd/config.toml")


def _tree(tmp_path: Path, files: dict[str, str]) -> Path:
    """`host_tree`, where a path ending in `/` is a directory and `\\udcff` stands for bytes that are not UTF-8."""
    root = host_tree(tmp_path, {p: t for p, t in files.items() if not p.endswith("/") and "\udcff" not in t})
    for path, text in files.items():
        target = root / path.strip("/")
        if path.endswith("/"):
            target.mkdir(parents=True)
        elif "\udcff" in text:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(b"{\"default-runtime\": \"nvidia\xff\"}")
    return root


def _runner(query: str) -> FakeRunner:
    return FakeRunner({QUERY: ok(query)})
