"""Host checks (VGN017, VGN019) through the doctor framework with `source="node"` and real HostFacts.

HostFacts come from the real adapter (`collect`) over a temporary host tree and recorded command outputs,
so each case runs the same path as `vgpuctl doctor --node` does on a node.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.host.helpers import LGIP, NPU_INFO, QUERY, FakeRunner, Reply, failed, fixture, host_tree, ok, timeout
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.deviceconfig import DeviceConfig, parse_device_config, payload_from_document
from vgpuctl.core.doctor.framework import REGISTRY, Category, CheckResult, DoctorContext, Status, run_checks
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.host.observed import HostFacts
from vgpuctl.node_probe import collect

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
NOW = datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)
UPSTREAM = Path(__file__).resolve().parents[2] / "fixtures" / "volcano-vgpu-device-config.yaml"
A100_MIXED = "nvidia-smi/query-a100-sxm4-80gb-mixed-mig.csv"
NVIDIA_CONTAINERD = {"/etc/containerd/config.toml": fixture("runtime/containerd-v2-nvidia-default.toml"),
                     "/run/containerd/containerd.sock": "", "/dev/nvidiactl": ""}
HOST_CHECKS = [c for c in REGISTRY.values() if c.category is Category.HOST]


def upstream_config() -> DeviceConfig:
    parsed = parse_device_config(payload_from_document(yaml.safe_load(UPSTREAM.read_text())))
    assert parsed.config is not None
    return parsed.config


def config_with(models: list[str], instances: list[str]) -> DeviceConfig:
    payload = {"nvidia": {"knownMigGeometries": [{"models": models, "allowedGeometries": [
        {"group": "group1", "geometries": [{"name": n, "memory": 10240, "count": 1} for n in instances]}]}]}}
    parsed = parse_device_config(payload)
    assert parsed.config is not None
    return parsed.config


def observe(tmp_path: Path, replies: dict[str, Reply], files: dict[str, str] | None = None) -> HostFacts:
    return collect(host_tree(tmp_path, NVIDIA_CONTAINERD if files is None else files), FakeRunner(replies),
                   node_name="gpu-1")


def diagnose(host: Any, *, device_config: DeviceConfig | None = None, snapshot: ClusterSnapshot | None = None,
             source: str = "node") -> list[CheckResult]:
    ctx = DoctorContext(snapshot=snapshot or build_snapshot([]), facts=ClusterFacts(device_config=device_config),
                        volcano_version=None, version_source="unknown", now=NOW, source=source, host=host)
    return run_checks(ctx, HOST_CHECKS)


def result(results: list[CheckResult], check_id: str) -> CheckResult:
    (found,) = [r for r in results if r.check.id == check_id]
    return found


def findings(results: list[CheckResult], check_id: str) -> list[tuple[Severity, str]]:
    return [(f.severity, f.message) for f in result(results, check_id).findings]


def only(results: list[CheckResult], check_id: str) -> Finding:
    (finding,) = result(results, check_id).findings
    return finding


# ---- framework wiring ---------------------------------------------------------------------------


def test_host_checks_are_registered_for_the_node_source_only() -> None:
    assert {c.id for c in HOST_CHECKS} == {"host.tools", "host.driver", "host.runtime", "host.mig", "host.npu"}
    assert all(c.sources == ("node",) for c in HOST_CHECKS)
    assert {c.code for c in HOST_CHECKS} == {"VGN017", "VGN019"}
    assert diagnose(HostFacts(), source="snapshot") == []


def test_a_healthy_mig_node_passes(tmp_path: Path) -> None:
    gpu0 = fixture(A100_MIXED).splitlines()[0] + "\n"  # the MIG-enabled GPU the -lgip recording lists
    host = observe(tmp_path, {QUERY: ok(gpu0), LGIP: ok(fixture("nvidia-smi/lgip-a100-sxm4-80gb-wide.txt"))})
    results = diagnose(host, device_config=upstream_config())
    assert {r.check.id: r.status for r in results} == {
        "host.tools": Status.PASS, "host.driver": Status.PASS, "host.runtime": Status.PASS,
        "host.mig": Status.PASS, "host.npu": Status.SKIP}
    assert result(results, "host.npu").reason == "no Ascend NPU seen (npu-smi: not found; no /dev/davinci_manager)"
    assert findings(results, "host.tools") == [(INFO, "npu-smi not found: not an Ascend node, so those checks do not "
                                                      "apply")]
    assert all(not r.findings for r in results if r.check.id != "host.tools")
    assert only(results, "host.tools").subject == "node/gpu-1:npu-smi"


def test_missing_host_facts_is_an_error() -> None:
    finding = only(diagnose(None), "host.tools")
    assert finding.severity is ERROR and "no node-local observations" in finding.message


# ---- VGN019: tools ------------------------------------------------------------------------------


def test_no_driver_tools_and_no_devices(tmp_path: Path) -> None:
    finding = only(diagnose(observe(tmp_path, {}, files={})), "host.tools")
    assert finding.severity is ERROR and "neither nvidia-smi nor npu-smi" in finding.message


def test_nvidia_smi_failing(tmp_path: Path) -> None:
    text = fixture("nvidia-smi/driver-not-loaded.txt")
    results = diagnose(observe(tmp_path, {QUERY: failed(text.splitlines()[0], 9, text)}))
    errors = [m for s, m in findings(results, "host.tools") if s is ERROR]
    assert len(errors) == 1 and "failed (exit 9)" in errors[0] and "couldn't communicate" in errors[0]


def test_nvidia_smi_timing_out(tmp_path: Path) -> None:
    errors = [m for s, m in findings(diagnose(observe(tmp_path, {QUERY: timeout()})), "host.tools") if s is ERROR]
    assert len(errors) == 1 and "timed out" in errors[0]


def test_nvidia_smi_missing_on_a_node_with_the_driver_loaded(tmp_path: Path) -> None:
    results = diagnose(observe(tmp_path, {}))  # /dev/nvidiactl exists
    assert (ERROR, "nvidia-smi not found although /dev/nvidiactl exists: the driver is loaded but its tools are "
                   "not installed or not on PATH") in findings(results, "host.tools")


def test_npu_smi_failing_on_an_ascend_node(tmp_path: Path) -> None:
    host = observe(tmp_path, {NPU_INFO: failed("dcmi module initialize failed. ret is -8005", 255)},
                   files={"/dev/davinci_manager": ""})
    messages = findings(diagnose(host), "host.tools")
    assert (INFO, "nvidia-smi not found: not an NVIDIA node, so those checks do not apply") in messages
    assert any(s is ERROR and "ret is -8005" in m and "Ascend device plugin" in m for s, m in messages)


def test_unparsable_output_is_a_warning(tmp_path: Path) -> None:
    host = observe(tmp_path, {QUERY: ok("garbage\n" + fixture("nvidia-smi/query-tesla-t4.csv"))})
    assert any(s is WARNING and "output not understood" in m for s, m in findings(diagnose(host), "host.tools"))


# ---- VGN017: driver -----------------------------------------------------------------------------


def test_driver_440_is_an_error(tmp_path: Path) -> None:
    old = fixture("nvidia-smi/query-tesla-t4.csv").replace("470.57.02", "440.33.01")
    finding = only(diagnose(observe(tmp_path, {QUERY: ok(old)})), "host.driver")
    assert finding.code == "VGN017" and finding.severity is ERROR and "440.33.01" in finding.message


def test_driver_unknown_is_skipped_not_passed(tmp_path: Path) -> None:
    text = fixture("nvidia-smi/driver-not-loaded.txt")
    checked = result(diagnose(observe(tmp_path, {QUERY: failed(text.splitlines()[0], 9, text)})), "host.driver")
    assert checked.status is Status.SKIP and not checked.findings
    assert "version is unknown" in checked.reason and "couldn't communicate" in checked.reason


def test_driver_check_does_not_apply_to_an_ascend_only_node(tmp_path: Path) -> None:
    host = observe(tmp_path, {NPU_INFO: ok(fixture("npu-smi/info-310p3-2cards.txt"))}, files={})
    results = diagnose(host)
    assert result(results, "host.driver").findings == [] and result(results, "host.runtime").findings == []


# ---- VGN019: default runtime --------------------------------------------------------------------


def test_containerd_in_use_with_runc_default(tmp_path: Path) -> None:
    files = {**NVIDIA_CONTAINERD,
             "/etc/containerd/config.toml": fixture("runtime/containerd-v3-runc-default-nvidia-declared.toml")}
    host = observe(tmp_path, {QUERY: ok(fixture("nvidia-smi/query-tesla-t4.csv"))}, files)
    finding = only(diagnose(host), "host.runtime")
    assert finding.severity is ERROR
    assert "containerd default runtime 'runc'" in finding.message and "'nvidia' is declared" in finding.message
    assert "runtimeClassName" in finding.message
    assert "nvidia-ctk runtime configure --runtime=containerd --set-as-default" in finding.hint


def test_docker_via_cri_dockerd_without_default_runtime(tmp_path: Path) -> None:
    files = {"/etc/docker/daemon.json": fixture("runtime/docker-daemon-runtimes-only.json"),
             "/run/cri-dockerd.sock": "", "/run/containerd/containerd.sock": "",
             "/etc/containerd/config.toml": fixture("runtime/containerd-v2-nvidia-default.toml")}
    host = observe(tmp_path, {QUERY: ok(fixture("nvidia-smi/query-tesla-t4.csv"))}, files)
    finding = only(diagnose(host), "host.runtime")
    assert finding.severity is ERROR and finding.message.startswith("docker default runtime not set")
    assert "Docker" in finding.hint


def test_crio_with_nvidia_drop_in_passes(tmp_path: Path) -> None:
    files = {"/etc/crio/crio.conf": fixture("runtime/crio.conf"),
             "/etc/crio/crio.conf.d/99-nvidia.conf": fixture("runtime/crio-99-nvidia.conf"),
             "/var/run/crio/crio.sock": ""}
    host = observe(tmp_path, {QUERY: ok(fixture("nvidia-smi/query-tesla-t4.csv"))}, files)
    assert result(diagnose(host), "host.runtime").status is Status.PASS


def test_engine_unknown_but_a_config_without_nvidia_default(tmp_path: Path) -> None:
    files = {"/etc/containerd/config.toml": fixture("runtime/containerd-garbage.toml")}
    host = observe(tmp_path, {QUERY: ok(fixture("nvidia-smi/query-tesla-t4.csv"))}, files)
    finding = only(diagnose(host), "host.runtime")
    assert finding.severity is WARNING and "could not tell whether the kubelet uses containerd" in finding.message
    assert "not valid TOML" in finding.message


def test_engine_unknown_and_no_config_is_skipped(tmp_path: Path) -> None:
    host = observe(tmp_path, {QUERY: ok(fixture("nvidia-smi/query-tesla-t4.csv"))}, files={})
    checked = result(diagnose(host), "host.runtime")
    assert checked.status is Status.SKIP and not checked.findings
    assert checked.reason.startswith("could not tell which container engine the kubelet uses")


# ---- VGN019: MIG ---------------------------------------------------------------------------------


def test_geometry_model_with_mig_disabled_is_a_warning(tmp_path: Path) -> None:
    host = observe(tmp_path, {QUERY: ok(fixture(A100_MIXED)),
                              LGIP: ok(fixture("nvidia-smi/lgip-a100-sxm4-80gb-wide.txt"))})
    results = diagnose(host, device_config=upstream_config())
    messages = findings(results, "host.mig")
    assert [s for s, _ in messages] == [WARNING] * 3  # GPUs 1-3; GPU 0 runs MIG with every instance offered
    assert "GPU 1 (NVIDIA A100-SXM4-80GB" in messages[0][1] and "MIG mode is Disabled" in messages[0][1]


def registered_node(mode: str, *uuids: str) -> dict[str, Any]:
    register = "".join(f"{u},10,81920,NVIDIA-NVIDIA A100-SXM4-80GB,true,{mode}:" for u in uuids)
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": "gpu-1", "annotations": {"volcano.sh/node-vgpu-register": register}},
            "status": {"allocatable": {"volcano.sh/vgpu-number": "40", "volcano.sh/vgpu-memory": "327680",
                                       "volcano.sh/vgpu-cores": "400"}}}


def test_registered_as_mig_but_mig_disabled_is_an_error(tmp_path: Path) -> None:
    host = observe(tmp_path, {QUERY: ok(fixture(A100_MIXED)),
                              LGIP: ok(fixture("nvidia-smi/lgip-a100-sxm4-80gb-wide.txt"))})
    snapshot = build_snapshot([registered_node("mig", *(g.uuid for g in host.gpus))])
    messages = findings(diagnose(host, device_config=upstream_config(), snapshot=snapshot), "host.mig")
    assert [s for s, _ in messages] == [ERROR] * 3
    assert "is registered as `mig` but has MIG mode Disabled" in messages[0][1]


def test_registered_as_hami_core_silences_the_mig_note(tmp_path: Path) -> None:
    host = observe(tmp_path, {QUERY: ok(fixture(A100_MIXED)),
                              LGIP: ok(fixture("nvidia-smi/lgip-a100-sxm4-80gb-wide.txt"))})
    snapshot = build_snapshot([registered_node("hami-core", *(g.uuid for g in host.gpus))])
    assert findings(diagnose(host, device_config=upstream_config(), snapshot=snapshot), "host.mig") == []


def test_registered_as_mig_on_a_gpu_without_mig(tmp_path: Path) -> None:
    host = observe(tmp_path, {QUERY: ok(fixture("nvidia-smi/query-tesla-t4.csv"))})
    snapshot = build_snapshot([registered_node("mig", host.gpus[0].uuid)])
    finding = only(diagnose(host, snapshot=snapshot), "host.mig")
    assert finding.severity is ERROR and "has no MIG support" in finding.message


def test_mig_enabled_on_a_model_no_geometry_matches(tmp_path: Path) -> None:
    a800 = fixture("nvidia-smi/query-a800-80gb-pcie.csv").replace("Disabled", "Enabled")
    host = observe(tmp_path, {QUERY: ok(a800), LGIP: ok(fixture("nvidia-smi/lgip-a100-sxm4-80gb-wide.txt"))})
    messages = findings(diagnose(host, device_config=upstream_config()), "host.mig")
    assert [s for s, _ in messages] == [ERROR, ERROR]
    assert "'NVIDIA-NVIDIA A800 80GB PCIe' contains no knownMigGeometries model" in messages[0][1]
    assert "hami-core" in messages[0][1]


def test_geometry_instance_the_gpu_does_not_offer(tmp_path: Path) -> None:
    host = observe(tmp_path, {QUERY: ok(fixture("nvidia-smi/query-h100-nvl-mig.csv")),
                              LGIP: ok(fixture("nvidia-smi/lgip-h100-nvl.txt"))})
    config = config_with(["H100 NVL"], ["1g.12gb", "1g.10gb", "3g.47gb"])
    finding = only(diagnose(host, device_config=config), "host.mig")
    assert finding.severity is WARNING and "'1g.10gb' (group group1)" in finding.message
    assert "1g.12gb" in finding.message  # lists what the GPU offers


def test_mig_profiles_could_not_be_listed(tmp_path: Path) -> None:
    host = observe(tmp_path, {QUERY: ok(fixture("nvidia-smi/query-h100-nvl-mig.csv")),
                              LGIP: failed("Failed to display GPU instance profiles: Unknown Error", 255)})
    finding = only(diagnose(host, device_config=config_with(["H100 NVL"], ["1g.12gb"])), "host.mig")
    assert finding.severity is WARNING and "Unknown Error" in finding.message


def test_no_geometry_known_is_info(tmp_path: Path) -> None:
    host = observe(tmp_path, {QUERY: ok(fixture(A100_MIXED)),
                              LGIP: ok(fixture("nvidia-smi/lgip-a100-sxm4-80gb-wide.txt"))})
    finding = only(diagnose(host), "host.mig")
    assert finding.severity is INFO and "no device config was given" in finding.message and "(0)" in finding.message


def test_geometry_from_the_snapshot_device_configmap(tmp_path: Path) -> None:
    host = observe(tmp_path, {QUERY: ok(fixture(A100_MIXED)),
                              LGIP: ok(fixture("nvidia-smi/lgip-a100-sxm4-80gb-wide.txt"))})
    snapshot = build_snapshot([yaml.safe_load(UPSTREAM.read_text())])
    assert snapshot.device_config_source.startswith("configmap")
    assert [s for s, _ in findings(diagnose(host, snapshot=snapshot), "host.mig")] == [WARNING] * 3


# ---- VGN019: NPU health -------------------------------------------------------------------------


@pytest.mark.parametrize(("health", "expected"), [("OK", []), ("Alarm", [WARNING]), ("Critical", [WARNING])])
def test_npu_health(tmp_path: Path, health: str, expected: list[Severity]) -> None:
    text = fixture("npu-smi/info-310p3-2cards.txt").replace(
        "| 1       310P3     | OK              |", f"| 1       310P3     | {health:<15} |")
    host = observe(tmp_path, {NPU_INFO: ok(text)}, files={"/dev/davinci_manager": ""})
    assert len(host.npus) == 2
    assert [s for s, _ in findings(diagnose(host), "host.npu")] == expected


def test_a_mig_gpu_missing_from_the_profile_table(tmp_path: Path) -> None:
    two = "\n".join(fixture(A100_MIXED).replace("Disabled", "Enabled").splitlines()[:2]) + "\n"
    host = observe(tmp_path, {QUERY: ok(two), LGIP: ok(fixture("nvidia-smi/lgip-a100-sxm4-80gb-wide.txt"))})
    finding = only(diagnose(host, device_config=upstream_config()), "host.mig")
    assert finding.severity is WARNING and finding.message.startswith("GPU 1 ")
    assert "lists no profile" in finding.message


def test_nvidia_smi_listing_no_gpu(tmp_path: Path) -> None:
    assert (WARNING, "nvidia-smi ran but listed no GPU") in findings(diagnose(observe(tmp_path, {QUERY: ok("")})),
                                                                      "host.tools")
