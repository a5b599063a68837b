"""The adapter: `collect` over a temporary host tree with a fake runner, and the real subprocess runner."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.unit.host.helpers import (
    LEGACY_QUERY,
    LGIP,
    NPU_INFO,
    QUERY,
    FakeRunner,
    failed,
    fixture,
    host_tree,
    ok,
    timeout,
)
from vgpuctl.core.host.nvidia_smi import MigMode
from vgpuctl.core.host.observed import Outcome
from vgpuctl.node_probe import collect, subprocess_runner


def test_mig_node_on_containerd_with_nvidia_default(tmp_path: Path) -> None:
    root = host_tree(tmp_path, {
        "/etc/containerd/config.toml": fixture("runtime/containerd-v2-nvidia-default.toml"),
        "/run/containerd/containerd.sock": "",
        "/dev/nvidiactl": "",
    })
    runner = FakeRunner({QUERY: ok(fixture("nvidia-smi/query-a100-sxm4-80gb-mixed-mig.csv")),
                         LGIP: ok(fixture("nvidia-smi/lgip-a100-sxm4-80gb-wide.txt"))})
    facts = collect(root, runner, node_name="gpu-1", timeout=5)
    assert facts.hostname == "gpu-1" and facts.device_nodes == {"nvidia"}
    assert len(facts.gpus) == 4 and facts.driver_version == "535.216.01"
    assert [g.index for g in facts.gpus if g.mig_mode is MigMode.ENABLED] == [0]
    assert {p.name for p in facts.profiles_of(0)} >= {"1g.10gb", "7g.80gb"}
    assert facts.engine_in_use == "containerd" and "containerd.sock" in facts.engine_evidence
    containerd = facts.runtime("containerd")
    assert containerd is not None and containerd.is_nvidia
    # npu-smi is not installed: recorded, never raised
    assert facts.npu_smi is not None and facts.npu_smi.outcome is Outcome.MISSING
    assert [p.kind for p in facts.problems] == ["missing"]
    assert all(t == 5 for _, t in runner.calls)
    assert runner.commands[:2] == [QUERY, LGIP]


def test_lgip_not_run_without_a_mig_enabled_gpu(tmp_path: Path) -> None:
    runner = FakeRunner({QUERY: ok(fixture("nvidia-smi/query-tesla-t4.csv"))})
    facts = collect(host_tree(tmp_path, {}), runner, node_name="t4")
    assert LGIP not in runner.commands and facts.mig_profiles_result is None
    assert all(g.mig_mode is MigMode.NOT_SUPPORTED for g in facts.gpus)


def test_nvidia_smi_failing_and_npu_smi_timing_out(tmp_path: Path) -> None:
    driver_down = fixture("nvidia-smi/driver-not-loaded.txt")
    runner = FakeRunner({QUERY: failed(driver_down.splitlines()[0], returncode=9, stdout=driver_down),
                         NPU_INFO: timeout()})
    facts = collect(host_tree(tmp_path, {}), runner, node_name="n")
    assert facts.gpus == () and facts.nvidia_smi is not None and facts.nvidia_smi.outcome is Outcome.FAILED
    assert "couldn't communicate with the NVIDIA driver" in facts.nvidia_smi.describe()
    assert "(exit 9)" in facts.nvidia_smi.describe()
    assert facts.npu_smi is not None and facts.npu_smi.outcome is Outcome.TIMEOUT
    assert {(p.source.split()[0], p.kind) for p in facts.problems} == {("nvidia-smi", "failed"), ("npu-smi", "timeout")}


def test_pre_r450_driver_is_asked_again_without_mig_fields(tmp_path: Path) -> None:
    runner = FakeRunner({QUERY: failed(fixture("nvidia-smi/query-pre-r450-invalid-field.txt").strip(), returncode=2),
                         LEGACY_QUERY: ok(fixture("nvidia-smi/query-legacy-v100-440.csv"))})
    facts = collect(host_tree(tmp_path, {}), runner, node_name="old")
    assert runner.commands[:2] == [QUERY, LEGACY_QUERY]
    assert facts.driver_version == "440.64.00" and facts.gpus[0].mig_mode is MigMode.NOT_SUPPORTED
    assert not any(p.source.startswith("nvidia-smi") for p in facts.problems)


def test_npu_smi_found_in_usr_local_sbin(tmp_path: Path) -> None:
    runner = FakeRunner({"/usr/local/sbin/npu-smi info": ok(fixture("npu-smi/info-910b2-8npu.txt"))})
    facts = collect(host_tree(tmp_path, {"/dev/davinci_manager": ""}), runner, node_name="npu-1")
    assert len(facts.npus) == 8 and facts.npu_smi_version == "23.0.7"
    assert facts.npu_smi is not None and facts.npu_smi.argv[0] == "/usr/local/sbin/npu-smi"
    assert facts.device_nodes == {"ascend"} and facts.is_ascend_node and not facts.is_nvidia_node
    assert [p.source for p in facts.problems] == [QUERY]  # only nvidia-smi is missing


def test_npu_smi_missing_everywhere_is_one_problem(tmp_path: Path) -> None:
    facts = collect(host_tree(tmp_path, {}), FakeRunner({}), node_name="cpu")
    npu = [p for p in facts.problems if "npu-smi" in p.source]
    assert len(npu) == 1 and npu[0].kind == "missing" and "/usr/local/sbin/npu-smi" in npu[0].detail


def test_containerd_imports_are_followed_under_the_root(tmp_path: Path) -> None:
    root = host_tree(tmp_path, {
        "/etc/containerd/config.toml": fixture("runtime/containerd-v2-imports-main.toml"),
        "/etc/containerd/conf.d/99-nvidia.toml": fixture("runtime/containerd-v2-dropin-99-nvidia.toml"),
        "/etc/containerd/conf.d/readme.txt": "not imported",
        "/var/lib/kubelet/kubeadm-flags.env": fixture("runtime/kubeadm-flags.env"),
    })
    facts = collect(root, FakeRunner({}), node_name="n")
    config = facts.runtime("containerd")
    assert config is not None and config.is_nvidia
    assert config.files == ("/etc/containerd/config.toml", "/etc/containerd/conf.d/99-nvidia.toml")
    assert facts.engine_in_use == "containerd" and "kubelet" in facts.engine_evidence


def test_crio_main_file_and_drop_ins(tmp_path: Path) -> None:
    root = host_tree(tmp_path, {
        "/etc/crio/crio.conf": fixture("runtime/crio.conf"),
        "/etc/crio/crio.conf.d/99-nvidia.conf": fixture("runtime/crio-99-nvidia.conf"),
        "/etc/crio/crio.conf.d/10-crun.conf": '[crio.runtime]\ndefault_runtime = "crun"\n',
        "/var/lib/kubelet/config.yaml": fixture("runtime/kubelet-config.yaml"),
    })
    facts = collect(root, FakeRunner({}), node_name="n")
    config = facts.runtime("crio")
    assert facts.engine_in_use == "crio" and config is not None and config.is_nvidia
    assert config.files == ("/etc/crio/crio.conf", "/etc/crio/crio.conf.d/10-crun.conf",
                            "/etc/crio/crio.conf.d/99-nvidia.conf")


def test_engine_in_use_without_a_config_file_gets_its_built_in_default(tmp_path: Path) -> None:
    facts = collect(host_tree(tmp_path, {"/run/containerd/containerd.sock": ""}), FakeRunner({}), node_name="n")
    config = facts.runtime("containerd")
    assert config is not None and config.effective == "runc" and config.files == ()


def test_garbage_and_unreadable_configs_become_problems(tmp_path: Path) -> None:
    root = host_tree(tmp_path, {
        "/etc/containerd/config.toml": fixture("runtime/containerd-garbage.toml"),
        "/etc/docker/daemon.json": "{oops",
    })
    (root / "etc/crio/crio.conf").mkdir(parents=True)  # a directory where a file should be
    facts = collect(root, FakeRunner({}), node_name="n")
    kinds = {(p.source, p.kind) for p in facts.problems}
    assert ("containerd", "unparsable") in kinds and ("docker", "unparsable") in kinds
    assert ("/etc/crio/crio.conf", "unreadable") in kinds


def test_a_runner_that_raises_is_still_only_a_problem(tmp_path: Path) -> None:
    def broken(argv: object, timeout: float) -> object:
        raise RuntimeError("boom")

    facts = collect(host_tree(tmp_path, {}), broken, node_name="n")  # type: ignore[arg-type]
    assert facts.nvidia_smi is not None and facts.nvidia_smi.outcome is Outcome.FAILED
    assert "RuntimeError: boom" in facts.nvidia_smi.detail


def test_unparsable_nvidia_smi_rows_are_recorded(tmp_path: Path) -> None:
    runner = FakeRunner({QUERY: ok("garbage without commas\n" + fixture("nvidia-smi/query-tesla-t4.csv"))})
    facts = collect(host_tree(tmp_path, {}), runner, node_name="n")
    assert len(facts.gpus) == 2
    assert any(p.kind == "unparsable" and p.source == QUERY for p in facts.problems)


# ---- the real runner, on real processes ---------------------------------------------------------


def test_real_runner_ok_and_failed() -> None:
    done = subprocess_runner([sys.executable, "-c", "print('a, b')"], 10)
    assert done.ok and done.stdout == "a, b\n" and done.returncode == 0
    code = "import sys; print('stdout line'); sys.stderr.write('\\nfirst error\\nsecond\\n'); sys.exit(3)"
    bad = subprocess_runner([sys.executable, "-c", code], 10)
    assert bad.outcome is Outcome.FAILED and bad.returncode == 3 and bad.detail == "first error"
    only_stdout = subprocess_runner([sys.executable, "-c", "print('NVIDIA-SMI has failed'); raise SystemExit(9)"], 10)
    assert only_stdout.detail == "NVIDIA-SMI has failed"


def test_real_runner_missing_and_timeout(tmp_path: Path) -> None:
    assert subprocess_runner([str(tmp_path / "no-such-tool")], 5).outcome is Outcome.MISSING
    slow = subprocess_runner([sys.executable, "-c", "import time; time.sleep(30)"], 0.3)
    assert slow.outcome is Outcome.TIMEOUT and "0.3 s" in slow.detail


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_real_runner_not_executable(tmp_path: Path) -> None:
    script = tmp_path / "tool"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    result = subprocess_runner([str(script)], 5)
    assert result.outcome is Outcome.FAILED and "PermissionError" in result.detail
