"""`vgpuctl geometry` end to end: exit codes, stdout/stderr split, JSON contract, inputs of every shape."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
import yaml

from tests.cli.conftest import ROOT, validate
from vgpuctl.core.deviceconfig import parse_device_config

FIXTURES = ROOT / "tests" / "fixtures"
VGPU_CM = str(FIXTURES / "volcano-vgpu-device-config.yaml")
VNPU_CM = str(FIXTURES / "hami-scheduler-device.yaml")
VGPU_PAYLOAD = str(FIXTURES / "volcano-vgpu-device-config.payload.yaml")
VNPU_PAYLOAD = str(FIXTURES / "hami-scheduler-device.payload.yaml")
MODELS = {"A30", "A100-SXM4-40GB", "A100-40GB-PCIe", "A100-PCIE-40GB", "A100-SXM4-80GB", "A100-80GB-PCIe",
          "A100-PCIE-80GB"}
CHIPS = ["Ascend910A", "Ascend910B2", "Ascend910B3", "Ascend910B4-1", "Ascend910B4", "Ascend310P", "Ascend910C"]


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


# --- validate ---------------------------------------------------------------------------------------

def test_validate_upstream_files_json_is_schema_valid(run) -> None:  # type: ignore[no-untyped-def]
    result = run("geometry", "validate", VGPU_CM, VNPU_PAYLOAD, "-o", "json")
    assert result.exit_code == 0
    report = result.json()
    validate("geometry-report.schema.json", report)
    assert report["volcanoVersionAssumed"] is True and report["volcanoVersion"] == "1.16.0"
    assert "newest" in result.stderr
    assert report["summary"] == {"configs": 2, "errors": 0, "warnings": 1, "infos": 5}
    (dup,) = [f for f in report["findings"] if f["code"] == "VGM007"]
    assert dup["subject"] == "nvidia.knownMigGeometries[1].models[3]"
    assert (dup["source"], dup["line"]) == (VGPU_CM, 41)


def test_validate_exit_codes_follow_fail_on_not_the_format(run) -> None:  # type: ignore[no-untyped-def]
    for fmt in ("table", "json", "yaml"):
        assert run("geometry", "validate", VGPU_CM, "-o", fmt).exit_code == 0
        assert run("geometry", "validate", VGPU_CM, "-o", fmt, "--fail-on", "warning").exit_code == 1
    assert run("geometry", "validate", VNPU_CM, "--fail-on", "warning").exit_code == 0
    assert run("geometry", "validate", VNPU_CM, "--fail-on", "info").exit_code == 0


def test_validate_vnpus_form_against_the_volcano_version(run) -> None:  # type: ignore[no-untyped-def]
    old = run("geometry", "validate", VNPU_CM, "--volcano-version", "v1.15.0", "-o", "json")
    assert old.exit_code == 1 and [f["code"] for f in old.json()["findings"]] == ["VGM003"]
    assert old.json()["volcanoVersionAssumed"] is False and "newest" not in old.stderr
    assert run("geometry", "validate", VNPU_CM, "--volcano-version", "v1.15.1").exit_code == 0


def test_validate_table_shows_codes_lines_and_summary(run) -> None:  # type: ignore[no-untyped-def]
    result = run("geometry", "validate", VGPU_CM)
    assert result.exit_code == 0
    assert "VGM007" in result.stdout and "line 41" in result.stdout and "nvidia.knownMigGeometries[1]" in result.stdout
    assert "1 device config checked for Volcano 1.16.0 (assumed: newest)" in result.stdout


def test_validate_stdin_and_a_broken_file(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    result = run("geometry", "validate", "-", "-o", "json", input=Path(VGPU_PAYLOAD).read_text())
    assert result.exit_code == 0 and result.json()["sources"] == ["<stdin>"]
    broken = write(tmp_path, "b.yaml", "nvidia:\n  gpuMemoryFactor: two\n  knownMigGeometries: [\n")
    bad = run("geometry", "validate", broken, "-o", "json")
    assert bad.exit_code == 1
    validate("geometry-report.schema.json", bad.json())
    assert [(f["code"], f["line"]) for f in bad.json()["findings"]] == [("VGM002", 4)]


def test_usage_errors_exit_2(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert run("geometry", "validate", str(tmp_path / "missing.yaml")).exit_code == 2
    assert run("geometry", "validate", VGPU_CM, "--volcano-version", "latest").exit_code == 2
    other = write(tmp_path, "pod.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n")
    result = run("geometry", "validate", other)
    assert result.exit_code == 2 and "no device config found" in result.stderr
    malformed = run("geometry", "validate", "cluster:volcano-vgpu-device-config")
    assert malformed.exit_code == 2 and "expected cluster:NAMESPACE/NAME" in malformed.stderr
    assert run("geometry", "explain", "--memory", "3000").exit_code == 2
    assert run("geometry", "explain", "--model", "A30", "--chip", "Ascend310P", "--memory", "1").exit_code == 2
    assert run("geometry", "explain", "--chip", "Ascend310P", "--memory", "0").exit_code == 2


# --- show / export --------------------------------------------------------------------------------

def test_show_tables_and_json(run) -> None:  # type: ignore[no-untyped-def]
    table = run("geometry", "show", VGPU_CM)
    assert table.exit_code == 0
    for text in ("knownMigGeometries", "A100-SXM4-80GB", "group4", "7g.80gb", "80896"):
        assert text in table.stdout
    chips = run("geometry", "show", VNPU_PAYLOAD)
    assert "wrapper form" in chips.stdout and "vir10_3c_32g" in chips.stdout and "21527 / 24576" in chips.stdout
    report = run("geometry", "show", VNPU_CM, "-o", "json").json()
    validate("geometry-view.schema.json", report)
    assert report["kind"] == "GeometryView" and report["source"] == VNPU_CM
    data = report["config"]
    assert [c["commonWord"] for c in data["vnpus"]["configs"]] == CHIPS
    validate("device-config.schema.json", data)


def test_show_is_borderless_with_a_row_per_instance(run) -> None:  # type: ignore[no-untyped-def]
    """Issue 27: like every other table (nodes, explain --list), no box; each instance on its own row."""
    table = run("geometry", "show", VGPU_CM).stdout
    assert not set("┏┃━│─┼╇┡└┘") & set(table)
    header = next(line for line in table.splitlines() if line.startswith("#  MODELS"))
    assert header.split() == ["#", "MODELS", "GROUP", "INSTANCE", "MEMORY", "(MiB)", "COUNT"]
    rows = [line for line in table.splitlines() if "7g.80gb" in line]
    assert len(rows) == 1 and rows[0].split()[-2:] == ["80896", "1"]


def test_show_a_config_volcano_rejects_exits_1(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    broken = write(tmp_path, "b.yaml", "nvidia:\n  gpuMemoryFactor: two\n")
    result = run("geometry", "show", broken)
    assert result.exit_code == 1 and result.stdout == "" and "VGM002" in result.stderr


def test_export_round_trips_and_keeps_the_wrapper(run) -> None:  # type: ignore[no-untyped-def]
    result = run("geometry", "export", VGPU_CM)
    assert result.exit_code == 0
    document = yaml.safe_load(result.stdout)
    assert document["kind"] == "ConfigMap" and document["metadata"]["name"] == "volcano-vgpu-device-config"
    exported = parse_device_config(yaml.safe_load(document["data"]["device-config.yaml"])).config
    original = parse_device_config(yaml.safe_load(yaml.safe_load(Path(VGPU_CM).read_text())["data"]
                                                  ["device-config.yaml"])).config
    assert exported == original
    again = run("geometry", "export", "-", input=result.stdout)
    assert again.stdout == result.stdout  # normalised output is a fixed point
    bare = run("geometry", "export", VNPU_PAYLOAD, "--volcano-version", "v1.15.0", "-o", "json").json()
    assert isinstance(bare["vnpus"], list) and len(bare["vnpus"]) == 7


def test_export_reports_dropped_unknown_keys_on_stderr(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, "p.yaml", Path(VGPU_PAYLOAD).read_text() + "  migstrategy: mixed\n")
    result = run("geometry", "export", path)
    assert result.exit_code == 0 and "migstrategy" not in result.stdout and "migstrategy" in result.stderr


# --- explain --------------------------------------------------------------------------------------

def test_explain_mig_and_vnpu(run) -> None:  # type: ignore[no-untyped-def]
    mig = run("geometry", "explain", "--model", "NVIDIA A100-SXM4-40GB", "--memory", "3000", "--config", VGPU_CM)
    assert mig.exit_code == 0 and "1g.5gb (5120 MiB) in group1" in mig.stdout
    data = run("geometry", "explain", "--model", "NVIDIA A100-SXM4-40GB", "--memory", "8000", "--config",
               VGPU_PAYLOAD, "-o", "json").json()
    assert data["kind"] == "GeometryExplanation" and data["fits"] is True and data["result"]["instance"] == "2g.10gb"
    npu = run("geometry", "explain", "--chip", "Ascend310P", "--memory", "3000")
    assert npu.exit_code == 0 and "vir01 (3072 MiB)" in npu.stdout and "built-in defaults" in npu.stderr


def test_explain_exits_1_when_it_can_never_fit(run) -> None:  # type: ignore[no-untyped-def]
    assert run("geometry", "explain", "--model", "NVIDIA A100-SXM4-40GB", "--memory", "50000",
               "--config", VGPU_CM).exit_code == 1
    no_mig = run("geometry", "explain", "--model", "NVIDIA A100-SXM4-40GB", "--memory", "3000")
    assert no_mig.exit_code == 1 and "no knownMigGeometries" in no_mig.stdout
    assert run("geometry", "explain", "--chip", "Ascend310P", "--memory", "30000").exit_code == 1
    assert run("geometry", "explain", "--chip", "Ascend310P", "--memory", "3000", "--count", "2").exit_code == 1
    assert run("geometry", "explain", "--chip", "Ascend910B3", "--memory", "3000",
               "--config", VNPU_CM).exit_code == 0


def test_explain_says_never_fits_only_when_volcano_never_places_it(run) -> None:  # type: ignore[no-untyped-def]
    """volcano-sh/volcano ed72c7c81 pkg/scheduler/api/devices/ascend/hami/device_info.go: trimMemory gives an
    oversized request 0; verifyReq then refuses any count > 1 whose trimmed memory is not memoryAllocatable
    (never placed), while a single device with 0 still passes `fit` and is placed (the annotation then names
    the smallest template)."""
    both = run("geometry", "explain", "--chip", "Ascend310P", "--memory", "30000", "--count", "2", "-o", "json")
    data = both.json()
    assert both.exit_code == 1 and data["fits"] is False
    assert data["answer"].startswith("never fits") and "VGH004" in data["answer"]
    one = run("geometry", "explain", "--chip", "Ascend310P", "--memory", "30000", "-o", "json")
    assert one.exit_code == 1 and "never fits" not in one.json()["answer"] and "still places it" in one.json()["answer"]
    whole = run("geometry", "explain", "--chip", "Ascend310P", "--memory", "20000", "--count", "2")
    assert whole.exit_code == 0 and "2 × a whole card (21527 MiB)" in whole.stdout


@pytest.mark.parametrize(("memory", "count"), [(3000, 1), (3000, 2), (12288, 1), (13000, 3), (20000, 2),
                                              (30000, 1), (30000, 2)])
def test_explain_and_lint_agree_on_an_ascend_request(run, tmp_path: Path, memory: int,  # type: ignore[no-untyped-def]
                                                     count: int) -> None:
    """The same request through `geometry explain` and `lint` (both on Volcano's built-in config): explain
    exits 1 exactly when lint denies the pod."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"schedulerName": "volcano", "runtimeClassName": "ascend", "containers": [
               {"name": "c", "resources": {"limits": {"huawei.com/Ascend310P": count,
                                                      "huawei.com/Ascend310P-memory": memory}}}]}}
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(pod))
    denied = not run("lint", str(path), "-o", "json").json()["items"][0]["allowed"]
    explained = run("geometry", "explain", "--chip", "Ascend310P", "--memory", str(memory), "--count", str(count))
    assert explained.exit_code == (1 if denied else 0)


def test_the_readme_explain_examples_exit_as_documented(run) -> None:  # type: ignore[no-untyped-def]
    readme = (ROOT / "README.md").read_text()
    examples = re.findall(r"^vgpuctl (geometry explain [^#\n]*?)\s+#([^\n]*\bexit (\d)[^\n]*)$", readme, re.M)
    assert len(examples) >= 2
    for command, comment, code in examples:
        result = run(*shlex.split(command))
        assert result.exit_code == int(code), command
        assert ("never fits" in comment) == ("never fits" in result.stdout), command


# --- merge ----------------------------------------------------------------------------------------

def _merged(stdout: str) -> dict:  # type: ignore[type-arg]
    document = yaml.safe_load(stdout)
    assert document["kind"] == "ConfigMap"
    return yaml.safe_load(document["data"]["device-config.yaml"])  # type: ignore[no-any-return]


def test_merge_upstream_configs_in_both_forms(run) -> None:  # type: ignore[no-untyped-def]
    for version, form in (("v1.15.0", list), ("v1.15.1", dict)):
        result = run("geometry", "merge", "--vgpu", VGPU_CM, "--vnpu", VNPU_CM, "--volcano-version", version)
        assert result.exit_code == 0
        payload = _merged(result.stdout)
        assert isinstance(payload["vnpus"], form)
        config = parse_device_config(payload).config
        assert config is not None
        assert {m for g in config.nvidia.known_mig_geometries for m in g.models} == MODELS
        assert [v.common_word for v in config.vnpus] == CHIPS
        check = run("geometry", "validate", "-", "--volcano-version", version, "-o", "json", input=result.stdout)
        assert check.exit_code == 0 and check.json()["summary"]["errors"] == 0
        assert f"vnpus written in the {'list' if form is list else 'wrapper'} form" in result.stderr


def test_merge_output_contract(run) -> None:  # type: ignore[no-untyped-def]
    result = run("geometry", "merge", "--vgpu", VGPU_PAYLOAD, "--vnpu", VNPU_CM, "--name", "merged",
                 "--namespace", "volcano-system")
    assert result.exit_code == 0
    document = yaml.safe_load(result.stdout)
    # No `app.kubernetes.io/managed-by` label: vgpuctl does not manage what the user applies (issue 15 §4).
    assert document["metadata"] == {"name": "merged", "namespace": "volcano-system"}
    assert "newest" in result.stderr and "VGM007" in result.stderr
    assert result.stderr.rstrip().splitlines()[-7:] == [
        "deviceshare arguments to set in volcano-scheduler.conf (then restart the scheduler):",
        "  - name: deviceshare",
        "    arguments:",
        "      deviceshare.KnownGeometriesCMName: merged",
        "      deviceshare.KnownGeometriesCMNamespace: volcano-system",
        "      deviceshare.VGPUEnable: true",
        "      deviceshare.AscendHAMiVNPUEnable: true",
    ]  # last on stderr
    again = run("geometry", "merge", "--vgpu", VGPU_PAYLOAD, "--vnpu", VNPU_CM, "--name", "merged",
                "--namespace", "volcano-system")
    assert again.stdout == result.stdout  # byte-identical on rerun
    as_json = run("geometry", "merge", "--vgpu", VGPU_PAYLOAD, "--vnpu", "-", "-o", "json",
                  input=Path(VNPU_PAYLOAD).read_text())
    assert as_json.exit_code == 0 and as_json.json()["data"]["device-config.yaml"] == document["data"][
        "device-config.yaml"]


def test_merge_conflict_exits_1_with_nothing_on_stdout_unless_preferred(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    other = Path(VGPU_PAYLOAD).read_text().replace("gpuMemoryFactor: 1", "gpuMemoryFactor: 2") + \
        Path(VNPU_PAYLOAD).read_text()
    vnpu = write(tmp_path, "both.yaml", other)
    result = run("geometry", "merge", "--vgpu", VGPU_CM, "--vnpu", vnpu)
    assert result.exit_code == 1 and result.stdout == ""
    assert "VGM014" in result.stderr and "nvidia.gpuMemoryFactor" in result.stderr
    assert "deviceshare arguments" not in result.stderr
    preferred = run("geometry", "merge", "--vgpu", VGPU_CM, "--vnpu", vnpu, "--prefer", "vnpu")
    assert preferred.exit_code == 0 and _merged(preferred.stdout)["nvidia"]["gpuMemoryFactor"] == 2
    assert "VGM014" in preferred.stderr  # the resolved conflict is still reported


def test_merge_usage_errors(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    assert run("geometry", "merge", "--vgpu", "-", "--vnpu", "-").exit_code == 2
    assert run("geometry", "merge", "--vgpu", VGPU_CM).exit_code == 2
    assert run("geometry", "merge", "--vgpu", "cluster:x", "--vnpu", VNPU_CM).exit_code == 2
    node_cm = str(FIXTURES / "volcano-vgpu-node-config.yaml")
    keyless = run("geometry", "merge", "--vgpu", node_cm, "--vnpu", VNPU_CM)
    assert keyless.exit_code == 2 and "no data key" in keyless.stderr
    broken = write(tmp_path, "b.yaml", "nvidia: [\n")
    bad = run("geometry", "merge", "--vgpu", broken, "--vnpu", VNPU_CM)
    assert bad.exit_code == 1 and bad.stdout == "" and "VGM002" in bad.stderr


def test_show_works_on_a_config_with_hami_keys_volcano_ignores(run, tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = write(tmp_path, "p.yaml", Path(VGPU_PAYLOAD).read_text() + "  migProfileAllowlist: []\n")
    assert run("geometry", "validate", path).exit_code == 1  # VGM011
    assert run("geometry", "show", path).exit_code == 0  # but Volcano still reads the rest
