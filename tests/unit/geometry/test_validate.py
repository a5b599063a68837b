"""`geometry validate`: each VGM code fails and passes, and the upstream files show what they really have."""

from __future__ import annotations

import pytest

from tests.unit.geometry.helpers import (
    FIXTURES,
    GOOD_NVIDIA,
    VGPU_CM,
    VGPU_PAYLOAD,
    VNPU_CM,
    VNPU_PAYLOAD,
    check,
    codes,
)
from vgpuctl.core.catalogue import lookup
from vgpuctl.core.geometry.documents import find_device_configs
from vgpuctl.core.geometry.validate import validate_payload, validate_source
from vgpuctl.core.versions import parse_version

V1150, V1151 = parse_version("v1.15.0"), parse_version("v1.15.1")

GOOD_VNPUS = """\
vnpus:
- commonWord: Ascend310P
  resourceName: huawei.com/Ascend310P
  resourceMemoryName: huawei.com/Ascend310P-memory
  memoryAllocatable: 21527
  memoryCapacity: 24576
  templates:
  - {name: vir01, memory: 3072}
  - {name: vir04, memory: 12288}
"""


def only(findings, code):  # type: ignore[no-untyped-def]
    return [f for f in codes(findings) if f[0] == code]


# --- the upstream files ---------------------------------------------------------------------------

VGPU_EXPECTED = [
    ("VGM010", "info", "nvidia.overwriteEnv"),
    ("VGM010", "info", "nvidia.defaultMemory"),
    ("VGM010", "info", "nvidia.defaultCores"),
    ("VGM010", "info", "nvidia.defaultGPUNum"),
    ("VGM010", "info", "nvidia.deviceMemoryScaling"),
    ("VGM007", "warning", "nvidia.knownMigGeometries[1].models[3]"),
]


@pytest.mark.parametrize("path", [VGPU_CM, VGPU_PAYLOAD])
def test_upstream_vgpu_config_has_exactly_its_real_findings(path) -> None:  # type: ignore[no-untyped-def]
    (src,) = find_device_configs(path.read_text(), str(path))
    findings = validate_source(src)
    assert codes(findings) == VGPU_EXPECTED
    dup = findings[-1]
    assert "A100-SXM4-40GB" in dup.finding.message
    assert '"A100-SXM4-40GB" ]' in path.read_text().splitlines()[dup.line - 1]  # the entry's models line


@pytest.mark.parametrize("path", [VNPU_CM, VNPU_PAYLOAD])
def test_upstream_ascend_config_is_clean_on_new_volcano_and_vgm003_on_old(path) -> None:  # type: ignore[no-untyped-def]
    (src,) = find_device_configs(path.read_text(), str(path))
    assert validate_source(src) == []
    assert validate_source(src, version=V1151) == []
    old = validate_source(src, version=V1150)
    assert codes(old) == [("VGM003", "error", "vnpus")]
    assert path.read_text().splitlines()[old[0].line - 1].strip() == "vnpus:"


def test_findings_take_severity_and_hint_from_the_catalogue() -> None:
    text = VGPU_PAYLOAD.read_text().replace("group: group2", "group: group-2")
    for f in check(text):
        info = lookup(f.finding.code)
        assert f.finding.severity in info.severities and f.finding.hint == info.hint


# --- one failing and one passing case per code ----------------------------------------------------

def test_vgm001_configmap_without_device_config_yaml() -> None:
    (src,) = find_device_configs((FIXTURES / "volcano-vgpu-node-config.yaml").read_text(), "n.yaml")
    assert codes(validate_source(src)) == [("VGM001", "warning", "configmap/kube-system/volcano-vgpu-node-config")]
    assert only(validate_source(find_device_configs(VGPU_CM.read_text(), "x")[0]), "VGM001") == []


@pytest.mark.parametrize(("text", "subject", "line"), [
    ("nvidia: [1, 2]\n", "nvidia", 1),
    (GOOD_NVIDIA + "  knownMigGeometries:\n  - models: [A30]\n    allowedGeometries:\n    - group: g\n"
     "      geometries:\n      - {name: x, memory: 5GB, count: 1}\n",
     "nvidia.knownMigGeometries[0].allowedGeometries[0].geometries[0].memory", 13),
    (GOOD_VNPUS.replace("memoryCapacity: 24576", "memoryCapacity: lots"), "vnpus[0].memoryCapacity", 6),
    ("- just\n- a list\n", "$", 1),
    ("nvidia: {a: [1,\n", "$", 2),
])
def test_vgm002_type_and_yaml_errors(text: str, subject: str, line: int) -> None:
    found = only(check(text), "VGM002")
    assert found and found[0][1:] == ("error", subject)
    assert next(f.line for f in check(text) if f.finding.code == "VGM002") == line


def test_vgm002_passes_on_well_typed_values() -> None:
    assert only(check(GOOD_NVIDIA + GOOD_VNPUS), "VGM002") == []


def test_vgm003_wrapper_form_on_volcano_that_only_reads_the_list() -> None:
    wrapper = "vnpus:\n  hamiVnpuCore: false\n  configs:\n" + "\n".join(
        "  " + line for line in GOOD_VNPUS.splitlines()[1:]) + "\n"
    for version in ("v1.14.0", "v1.14.3", "v1.15.0"):
        assert only(check(wrapper, parse_version(version)), "VGM003") == [("VGM003", "error", "vnpus")]
    for version in ("v1.14.4", "v1.15.1", "v1.16.0"):
        assert only(check(wrapper, parse_version(version)), "VGM003") == []
    assert only(check(GOOD_VNPUS, V1150), "VGM003") == []  # the list form is read everywhere


def test_vgm004_empty_resource_names_or_missing_section_when_vgpu_is_enabled() -> None:
    broken = GOOD_NVIDIA.replace("  resourceMemoryName: volcano.sh/vgpu-memory\n", "")
    assert only(check(broken), "VGM004") == [("VGM004", "error", "nvidia.resourceMemoryName")]
    assert only(check(GOOD_VNPUS, vgpu_enabled=True), "VGM004") == [("VGM004", "error", "$")]
    assert only(check(GOOD_VNPUS), "VGM004") == []  # unknown whether vGPU is on: not guessed
    assert only(check(GOOD_NVIDIA, vgpu_enabled=True), "VGM004") == []


def test_vgm005_custom_resource_names_where_volcano_hard_codes_them() -> None:
    custom = GOOD_NVIDIA.replace("volcano.sh/vgpu-cores", "example.com/cores")
    assert only(check(custom), "VGM005") == [("VGM005", "warning", "nvidia.resourceCoreName")]
    assert only(check(custom, parse_version("v1.15.0")), "VGM005") == []  # 1.15.0 reads the names it is given
    assert only(check(GOOD_NVIDIA), "VGM005") == []


@pytest.mark.parametrize(("change", "subject"), [
    (("memoryAllocatable: 21527", "memoryAllocatable: 30000"), "vnpus[0].memoryAllocatable"),
    (("memory: 12288", "memory: 22000"), "vnpus[0].templates[1].memory"),
    (("memory: 3072", "memory: 0"), "vnpus[0].templates[0].memory"),
    (("  resourceName: huawei.com/Ascend310P\n", ""), "vnpus[0].resourceName"),
])
def test_vgm006_impossible_vnpus_entries(change: tuple[str, str], subject: str) -> None:
    assert only(check(GOOD_VNPUS.replace(*change)), "VGM006") == [("VGM006", "error", subject)]


def test_vgm006_duplicate_common_word_and_empty_list_when_enabled() -> None:
    entries = GOOD_VNPUS.splitlines()[1:]
    twice = GOOD_VNPUS + "\n".join(entries) + "\n"
    assert only(check(twice), "VGM006") == [("VGM006", "error", "vnpus[1].commonWord")]
    assert only(check("vnpus: []\n", ascend_hami_enabled=True), "VGM006") == [("VGM006", "error", "vnpus")]
    assert only(check(GOOD_NVIDIA, ascend_hami_enabled=True), "VGM006") == [("VGM006", "error", "$")]
    assert only(check(GOOD_VNPUS, ascend_hami_enabled=True), "VGM006") == []


MIG = GOOD_NVIDIA + """\
  knownMigGeometries:
  - models: [A100-SXM4-40GB, A100-PCIE-40GB]
    allowedGeometries:
    - group: group1
      geometries:
      - {name: 1g.5gb, memory: 5120, count: 7}
    - group: group2
      geometries:
      - {name: 2g.10gb, memory: 10240, count: 3}
"""


@pytest.mark.parametrize(("change", "expected"), [
    (("group: group2", "group: group-2"), ("error", "nvidia.knownMigGeometries[0].allowedGeometries[1].group")),
    (("group: group2", "group: 'g[2]'"), ("error", "nvidia.knownMigGeometries[0].allowedGeometries[1].group")),
    (("group: group2", "group: group1"), ("error", "nvidia.knownMigGeometries[0].allowedGeometries[1].group")),
    (("memory: 5120", "memory: 0"),
     ("error", "nvidia.knownMigGeometries[0].allowedGeometries[0].geometries[0].memory")),
    (("count: 3", "count: 0"), ("error", "nvidia.knownMigGeometries[0].allowedGeometries[1].geometries[0].count")),
    (("A100-PCIE-40GB]", "A100-SXM4-40GB]"), ("warning", "nvidia.knownMigGeometries[0].models[1]")),
])
def test_vgm007_mig_geometry_problems(change: tuple[str, str], expected: tuple[str, str]) -> None:
    assert only(check(MIG.replace(*change)), "VGM007") == [("VGM007", *expected)]


def test_vgm007_model_repeated_in_a_later_entry_is_never_used_there() -> None:
    later = MIG + "  - models: [A100-PCIE-40GB]\n    allowedGeometries: []\n"
    (finding,) = [f for f in check(later) if f.finding.code == "VGM007"]
    assert finding.finding.subject == "nvidia.knownMigGeometries[1].models[0]"
    assert "knownMigGeometries[0]" in finding.finding.message and finding.line == 17


def test_vgm007_passes_on_a_clean_geometry() -> None:
    assert only(check(MIG), "VGM007") == []


@pytest.mark.parametrize(("drop", "subject", "says"), [
    ("  gpuMemoryFactor: 1\n", "nvidia.gpuMemoryFactor", "absent"),
    ("  deviceSplitCount: 10\n", "nvidia.deviceSplitCount", "absent"),
    ("  deviceCoreScaling: 1\n", "nvidia.deviceCoreScaling", "absent"),
])
def test_vgm008_zero_factors(drop: str, subject: str, says: str) -> None:
    (finding,) = [f for f in check(GOOD_NVIDIA.replace(drop, "")) if f.finding.code == "VGM008"]
    assert (finding.finding.subject, finding.line) == (subject, 1) and says in finding.finding.message
    zero = GOOD_NVIDIA.replace("gpuMemoryFactor: 1", "gpuMemoryFactor: 0")
    assert "is 0" in next(f for f in check(zero) if f.finding.code == "VGM008").finding.message
    assert only(check(GOOD_NVIDIA), "VGM008") == []


def test_vgm009_unknown_keys_everywhere_with_did_you_mean() -> None:
    text = GOOD_NVIDIA + "  migstrategy: mixed\n  disablecorelimit: true\n  defaultMem: 100\n  gpuCorePolicy: force\n" \
        + GOOD_VNPUS.replace("memoryCapacity: 24576", "memoryCapcity: 24576").replace(
            "{name: vir01, memory: 3072}", "{name: vir01, memory: 3072, aicore: 1}") + "extra: 1\n"
    found = {f.finding.subject: f.finding.message for f in check(text) if f.finding.code == "VGM009"}
    assert set(found) == {"nvidia.migstrategy", "nvidia.disablecorelimit", "nvidia.defaultMem", "nvidia.gpuCorePolicy",
                          "vnpus[0].memoryCapcity", "vnpus[0].templates[0].aicore", "extra"}
    assert "operatingmode" in found["nvidia.migstrategy"]
    assert "'disableCoreLimit'" in found["nvidia.disablecorelimit"]
    assert "'defaultMemory'" in found["nvidia.defaultMem"]
    assert "'memoryCapacity'" in found["vnpus[0].memoryCapcity"]
    assert "'aiCore'" in found["vnpus[0].templates[0].aicore"]
    assert only(check(GOOD_NVIDIA + GOOD_VNPUS), "VGM009") == []


def test_vgm010_keys_without_effect_on_the_volcano_path() -> None:
    text = GOOD_NVIDIA + "  defaultCores: 0\n" + GOOD_VNPUS.replace(
        "  memoryAllocatable", "  resourceCoreName: huawei.com/Ascend310P-cores\n  superPod: true\n  memoryAllocatable")
    assert only(check(text), "VGM010") == [
        ("VGM010", "info", "nvidia.defaultCores"),
        ("VGM010", "info", "vnpus[0].resourceCoreName"),
        ("VGM010", "info", "vnpus[0].superPod"),
    ]
    derived = "  resourceCoreName: huawei.com/Ascend310P-core\n  memoryAllocatable"
    same = GOOD_VNPUS.replace("  memoryAllocatable", derived)
    assert only(check(same), "VGM010") == []  # names what Volcano derives anyway
    assert only(check(GOOD_NVIDIA + GOOD_VNPUS), "VGM010") == []


def test_vgm011_hami_flavoured_nvidia_content() -> None:
    hami = GOOD_NVIDIA + """\
  memoryFactor: 1
  migProfileAllowlist: [{models: [A30], profiles: [1g.6gb]}]
  knownMigGeometries:
  - models: [H100-SXM5-80GB]
    allowedGeometries:
    - - {name: 1g.10gb, core: 14, memory: 10240, count: 7}
"""
    assert codes(check(hami)) == [
        ("VGM011", "error", "nvidia.memoryFactor"),
        ("VGM011", "error", "nvidia.migProfileAllowlist"),
        ("VGM011", "error", "nvidia.knownMigGeometries[0].allowedGeometries"),
    ]  # the list-of-lists is not also reported as VGM002 type errors
    assert only(check(MIG), "VGM011") == []


def test_one_broken_section_does_not_hide_the_other() -> None:
    broken_vnpus = GOOD_VNPUS.replace("memoryCapacity: 24576", "memoryCapacity: x")
    text = MIG.replace("group: group2", "group: group-2") + broken_vnpus
    found = {c for c, _, _ in codes(check(text))}
    assert found == {"VGM002", "VGM007"}


def test_validate_payload_without_lines_and_non_mapping() -> None:
    assert codes(validate_payload(None)) == []
    assert codes(validate_payload("text")) == [("VGM002", "error", "$")]
    assert all(f.line is None for f in validate_payload({"nvidia": {}}))
