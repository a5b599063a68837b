"""Device config checks (VGM001–VGM013): each code fails on a fixture cluster and passes on a healthy one."""

from __future__ import annotations

import pytest

from tests.unit.doctor.conftest import cluster, doctor, found, result, scheduler_cm, vgpu_node
from tests.unit.doctor.devconfig_builders import (
    ASCEND,
    BOTH,
    GOOD_NVIDIA,
    GOOD_VNPUS,
    VGPU,
    VGPU_CM,
    VGPU_SUBJECT,
    VNPU_CM,
    VNPU_SUBJECT,
    device_findings,
    deviceshare,
    mig_node,
    one,
    payload_cm,
    plugin_ds,
    upstream,
    wrapped,
)
from vgpuctl.core.doctor.framework import REGISTRY, Category, Status

VGM_CODES = [f"VGM{i:03d}" for i in range(1, 14)]
VALIDATOR_CODES = [f"VGM{i:03d}" for i in range(2, 12)]
ASC_NEW, ASC_OLD = "projecthami/ascend-device-plugin:v1.4.0", "projecthami/ascend-device-plugin:v1.2.0"
MERGED = "configmap/kube-system/merged-device-config"


def healthy(*extra: dict, args: dict | None = None, payload: str = GOOD_NVIDIA) -> list[dict]:  # type: ignore[type-arg]
    return [deviceshare(**(args or VGPU)), payload_cm(payload), vgpu_node("n1"), *extra]


def test_one_check_per_code_in_the_device_config_category() -> None:
    mine = [c for c in REGISTRY.values() if c.category is Category.DEVICE_CONFIG]
    assert sorted(c.code for c in mine) == VGM_CODES
    assert all("configmaps" in c.reads for c in mine)
    report = doctor(cluster(*healthy()), version="1.15.1")
    assert [r.check.code for r in report.results if r.check.category is Category.DEVICE_CONFIG] == VGM_CODES
    assert device_findings(report) == []
    assert all(result(report, code).status is Status.PASS for code in VGM_CODES)


# --- the upstream ConfigMaps ----------------------------------------------------------------------


def test_upstream_vgpu_configmap_gives_exactly_its_real_findings() -> None:
    report = doctor(cluster(deviceshare(**VGPU), upstream(VGPU_CM), vgpu_node("n1")), version="1.15.1")
    assert device_findings(report) == [
        ("VGM007", "warning", f"{VGPU_SUBJECT}:nvidia.knownMigGeometries[1].models[3]"),
        *[("VGM010", "info", f"{VGPU_SUBJECT}:nvidia.{k}")
          for k in ("overwriteEnv", "defaultMemory", "defaultCores", "defaultGPUNum", "deviceMemoryScaling")],
    ]
    dup = one(found(report, "VGM007"))
    assert "'A100-SXM4-40GB' is listed twice" in dup.message and "(device-config.yaml line 32)" in dup.message
    assert dup.hint  # from the catalogue
    assert result(report, "VGM007").status is Status.WARN and result(report, "VGM010").status is Status.PASS


def _ascend_cluster(version: str) -> list[tuple[str, str, str]]:
    sched = deviceshare(**ASCEND, KnownGeometriesCMName="hami-scheduler-device")
    return device_findings(doctor(cluster(sched, upstream(VNPU_CM)), version=version))


def test_upstream_wrapper_ascend_configmap_is_vgm003_on_1_15_0_only() -> None:
    assert _ascend_cluster("1.15.0") == [("VGM003", "error", f"{VNPU_SUBJECT}:vnpus")]
    assert _ascend_cluster("1.14.3") == [("VGM003", "error", f"{VNPU_SUBJECT}:vnpus")]
    assert _ascend_cluster("1.15.1") == []
    assert _ascend_cluster("1.14.4") == []


# --- VGM001 ---------------------------------------------------------------------------------------


def test_vgm001_missing_configmap_with_vgpu_enabled_and_the_validator_checks_pass() -> None:
    report = doctor(cluster(deviceshare(**VGPU), vgpu_node("n1")), version="1.15.1")
    f = one(found(report, "VGM001"))
    assert (f.severity.value, f.subject) == ("warning", VGPU_SUBJECT)
    assert "does not exist" in f.message and "built-in defaults" in f.message
    assert "no knownMigGeometries" in f.message and "vgpu-memory-percentage" in f.message
    assert "all-zero config" in f.message  # the vGPU plugin looks for the same name
    # Decision: nothing to validate, and the defaults Volcano runs on are well-formed, so these pass.
    for code in [*VALIDATOR_CODES, "VGM012", "VGM013"]:
        assert result(report, code).status is Status.PASS and not result(report, code).findings
    assert [c for c, _, _ in device_findings(report)] == ["VGM001"]


def test_vgm001_configmap_without_the_key_and_ascend_defaults() -> None:
    cm = payload_cm(GOOD_NVIDIA)
    cm["data"] = {"config.json": "{}"}
    f = one(found(doctor(cluster(deviceshare(**ASCEND), cm), version="1.15.1"), "VGM001"))
    assert "has no data key 'device-config.yaml'" in f.message and "Ascend310P only" in f.message


def test_vgm001_names_the_argument_and_points_at_a_configmap_that_exists() -> None:
    sched = deviceshare(**VGPU, KnownGeometriesCMName="merged-device-config")
    f = one(found(doctor(cluster(sched, payload_cm(GOOD_NVIDIA), vgpu_node("n1")), version="1.15.1"), "VGM001"))
    assert f.subject == MERGED
    assert "named by deviceshare.KnownGeometriesCM*" in f.message
    assert "kube-system/volcano-vgpu-device-config carries device-config.yaml" in f.message


def test_vgm001_suggests_only_a_configmap_with_the_sections_needed() -> None:
    objects = [deviceshare(**VGPU), upstream(VNPU_CM), vgpu_node("n1")]  # vnpus only: no use for vGPU
    f = one(found(doctor(cluster(*objects), version="1.15.1"), "VGM001"))
    assert "hami-scheduler-device" not in f.message


@pytest.mark.parametrize("objects, version", [
    (healthy(), "1.15.1"),                              # present
    ([deviceshare(GPUSharingEnable=True)], "1.15.1"),   # no family reads the device config, no device node
    ([deviceshare(**VGPU), vgpu_node("n1")], "1.11.0"),  # Volcano < 1.12 has no device ConfigMap
])
def test_vgm001_passes(objects: list, version: str) -> None:  # type: ignore[type-arg]
    assert found(doctor(cluster(*objects), version=version), "VGM001") == []


def test_vgm001_device_nodes_make_it_relevant_even_without_a_family() -> None:
    assert found(doctor(cluster(deviceshare(), vgpu_node("n1")), version="1.15.1"), "VGM001")


def test_without_scheduler_configmap_the_volcano_side_is_skipped() -> None:
    report = doctor(cluster(payload_cm("nvidia: [broken"), vgpu_node("n1")), version="1.15.1")
    for code in ["VGM001", *[c for c in VALIDATOR_CODES if c != "VGM003"], "VGM012", "VGM013"]:
        assert result(report, code).status is Status.SKIP, code
        assert "scheduler ConfigMap" in result(report, code).reason
    assert result(report, "VGM003").status is Status.PASS  # the plugins' part needs no scheduler config


def test_unreadable_configmaps_skip_every_check_with_vgk001() -> None:
    report = doctor(cluster(*healthy()), version="1.15.1", unreadable=frozenset({"configmaps"}))
    for code in VGM_CODES:
        assert result(report, code).status is Status.SKIP and "VGK001" in result(report, code).reason


# --- VGM002–VGM011 through the geometry validator -------------------------------------------------

TRIGGERS = [
    # code, args, payload, version, severity, subject path, fragment
    ("VGM002", VGPU, GOOD_NVIDIA.replace("deviceSplitCount: 10", "deviceSplitCount: ten"), "1.15.1", "error",
     "nvidia.deviceSplitCount", "built-in defaults"),
    ("VGM002", VGPU, "nvidia: [unclosed\n", "1.15.1", "error", None, "not valid YAML"),
    ("VGM003", BOTH, GOOD_NVIDIA + wrapped(GOOD_VNPUS), "1.15.0", "error", "vnpus", "Volcano 1.15.0 cannot decode"),
    ("VGM004", BOTH, GOOD_VNPUS, "1.15.1", "error", None, "no nvidia: section"),
    ("VGM004", VGPU, GOOD_NVIDIA.replace("volcano.sh/vgpu-number", '""'), "1.15.1", "error",
     "nvidia.resourceCountName", "is empty"),
    ("VGM005", VGPU, GOOD_NVIDIA.replace("volcano.sh/vgpu-memory", "example.com/gpu-mem"), "1.15.1", "warning",
     "nvidia.resourceMemoryName", "hard-coded"),
    ("VGM006", BOTH, GOOD_NVIDIA + GOOD_VNPUS + GOOD_VNPUS.replace("vnpus:\n", ""), "1.15.1", "error",
     "vnpus[1].commonWord", "also used by vnpus[0]"),
    ("VGM006", BOTH, GOOD_NVIDIA + "vnpus: []\n", "1.15.1", "error", "vnpus", "declares no chip"),
    ("VGM007", VGPU, GOOD_NVIDIA + """\
  knownMigGeometries:
  - models: [A30]
    allowedGeometries:
    - group: group-1
      geometries: [{name: 1g.6gb, memory: 6144, count: 4}]
""", "1.15.1", "error", "nvidia.knownMigGeometries[0].allowedGeometries[0].group", "cannot be decoded"),
    ("VGM008", VGPU, GOOD_NVIDIA.replace("  gpuMemoryFactor: 1\n", ""), "1.15.1", "error", "nvidia.gpuMemoryFactor",
     "divides device memory by it"),
    ("VGM009", VGPU, GOOD_NVIDIA + "  disablecorelimit: true\n", "1.15.1", "warning", "nvidia.disablecorelimit",
     "did you mean 'disableCoreLimit'"),
    ("VGM009", VGPU, GOOD_NVIDIA + "  migstrategy: mixed\n", "1.15.1", "warning", "nvidia.migstrategy",
     "operatingmode: mig"),
    ("VGM010", VGPU, GOOD_NVIDIA + "  defaultMemory: 0\n", "1.15.1", "info", "nvidia.defaultMemory", "no effect"),
    ("VGM011", VGPU, GOOD_NVIDIA + "  migProfileAllowlist: []\n", "1.15.1", "error", "nvidia.migProfileAllowlist",
     "HAMi"),
]


@pytest.mark.parametrize("code, args, payload, version, severity, path, fragment", TRIGGERS,
                         ids=[f"{t[0]}-{i}" for i, t in enumerate(TRIGGERS)])
def test_validator_codes_fail(code: str, args: dict, payload: str, version: str,  # type: ignore[type-arg]
                              severity: str, path: str | None, fragment: str) -> None:
    report = doctor(cluster(*healthy(args=args, payload=payload)), version=version)
    f = one(found(report, code))
    assert f.severity.value == severity
    assert f.subject == (VGPU_SUBJECT if path is None else f"{VGPU_SUBJECT}:{path}")
    assert fragment in f.message
    assert "(device-config.yaml line " in f.message
    expected = {"error": Status.FAIL, "warning": Status.WARN, "info": Status.PASS}[severity]
    assert result(report, code).status is expected
    others = [c for c, _, _ in device_findings(report) if c != code]
    assert others == [], others  # each fixture breaks one rule only


PASSES = [
    ("VGM002", VGPU, GOOD_NVIDIA, "1.15.1"),
    ("VGM003", BOTH, GOOD_NVIDIA + wrapped(GOOD_VNPUS), "1.15.1"),
    ("VGM003", BOTH, GOOD_NVIDIA + GOOD_VNPUS, "1.15.0"),
    ("VGM004", ASCEND, GOOD_VNPUS, "1.15.1"),  # vGPU off: no nvidia section needed
    ("VGM005", VGPU, GOOD_NVIDIA.replace("volcano.sh/vgpu-memory", "example.com/gpu-mem"), "1.15.0"),
    ("VGM006", BOTH, GOOD_NVIDIA + GOOD_VNPUS, "1.15.1"),
    ("VGM006", VGPU, GOOD_NVIDIA + "vnpus: []\n", "1.15.1"),  # Ascend off: an empty vnpus is fine
    ("VGM007", VGPU, GOOD_NVIDIA, "1.15.1"),
    ("VGM008", VGPU, GOOD_NVIDIA, "1.15.1"),
    ("VGM009", VGPU, GOOD_NVIDIA + "  disableCoreLimit: true\n", "1.15.1"),
    ("VGM010", VGPU, GOOD_NVIDIA, "1.15.1"),
    ("VGM011", VGPU, GOOD_NVIDIA, "1.15.1"),
]


@pytest.mark.parametrize("code, args, payload, version", PASSES, ids=[f"{p[0]}-{i}" for i, p in enumerate(PASSES)])
def test_validator_codes_pass(code: str, args: dict, payload: str, version: str) -> None:  # type: ignore[type-arg]
    report = doctor(cluster(*healthy(args=args, payload=payload)), version=version)
    assert found(report, code) == []
    assert result(report, code).status is Status.PASS


def test_volcano_version_unknown_assumes_the_newest() -> None:
    payload = GOOD_NVIDIA.replace("volcano.sh/vgpu-memory", "example.com/gpu-mem")
    assert found(doctor(cluster(*healthy(payload=payload))), "VGM005")
    assert found(doctor(cluster(*healthy(args=BOTH, payload=GOOD_NVIDIA + wrapped(GOOD_VNPUS)))), "VGM003") == []


def test_non_string_payload_is_vgm002() -> None:
    cm = payload_cm(GOOD_NVIDIA)
    cm["data"]["device-config.yaml"] = {"nvidia": {}}
    f = one(found(doctor(cluster(deviceshare(**VGPU), cm), version="1.15.1"), "VGM002"))
    assert (f.subject, f.severity.value) == (VGPU_SUBJECT, "error") and "not a string" in f.message


# --- VGM003: the Ascend plugin and HAMi ------------------------------------------------------------


def test_vgm003_new_ascend_plugin_reading_a_list_form_configmap() -> None:
    objects = [deviceshare(**ASCEND, KnownGeometriesCMName="hami-scheduler-device"),
               payload_cm(GOOD_VNPUS, name="hami-scheduler-device"), plugin_ds(ASC_NEW, "hami-scheduler-device")]
    report = doctor(cluster(*objects), version="1.15.1")
    f = one(found(report, "VGM003"))
    assert (f.severity.value, f.subject) == ("error", f"{VNPU_SUBJECT}:vnpus")
    assert "the Ascend device plugin 1.4.0 (DaemonSet kube-system/hami-ascend-device-plugin)" in f.message
    assert "decodes only the wrapper form" in f.message and "own list-form copy" not in f.message
    # On 1.15.0 no single form suits both readers of that ConfigMap.
    old = one(found(doctor(cluster(*objects), version="1.15.0"), "VGM003"))
    assert "Volcano 1.15.0 reads it too and needs the list form" in old.message and "own list-form copy" in old.message


def test_vgm003_wrapper_shared_by_volcano_1_15_0_and_a_new_plugin_says_so() -> None:
    objects = [deviceshare(**ASCEND, KnownGeometriesCMName="hami-scheduler-device"), upstream(VNPU_CM),
               plugin_ds(ASC_NEW, "hami-scheduler-device", "hami-device-node-config")]
    f = one(found(doctor(cluster(*objects), version="1.15.0"), "VGM003"))
    assert f.subject == f"{VNPU_SUBJECT}:vnpus"
    assert "Volcano 1.15.0 cannot decode" in f.message
    assert f.message.endswith("needs the wrapper form, so give Volcano its own list-form copy and point "
                              "deviceshare.KnownGeometriesCMName at it (device-config.yaml line 1)")


@pytest.mark.parametrize("image, payload, fragment", [
    (ASC_OLD, wrapped(GOOD_VNPUS), "the Ascend device plugin 1.2.0"),
    ("projecthami/hami:v2.8.2", wrapped(GOOD_VNPUS), "HAMi 2.8.2"),
    ("projecthami/hami:v2.10.0", GOOD_VNPUS, "HAMi 2.10.0"),
])
def test_vgm003_plugin_form_mismatch_without_the_scheduler_configmap(image: str, payload: str, fragment: str) -> None:
    # Not the ConfigMap Volcano reads, no scheduler ConfigMap at all: the plugin still exits on it.
    objects = [payload_cm(payload, name="hami-scheduler-device"), plugin_ds(image, name="plugin")]
    f = one(found(doctor(cluster(*objects), version="1.15.1"), "VGM003"))
    assert f.subject == f"{VNPU_SUBJECT}:vnpus" and fragment in f.message and "exits" in f.message


@pytest.mark.parametrize("image, payload", [
    (ASC_NEW, wrapped(GOOD_VNPUS)),
    (ASC_OLD, GOOD_VNPUS),
    ("projecthami/ascend-device-plugin:latest", GOOD_VNPUS),  # unknown version: not guessed
    (ASC_NEW, GOOD_NVIDIA),  # no vnpus section
])
def test_vgm003_plugin_form_accepted(image: str, payload: str) -> None:
    objects = [deviceshare(**ASCEND), payload_cm(GOOD_NVIDIA + GOOD_VNPUS), vgpu_node("n1"),
               payload_cm(payload, name="hami-scheduler-device"), plugin_ds(image, "hami-scheduler-device")]
    assert found(doctor(cluster(*objects), version="1.15.0"), "VGM003") == []


def test_vgm003_follows_the_mounted_configmap() -> None:
    objects = [deviceshare(**VGPU), payload_cm(GOOD_NVIDIA), payload_cm(GOOD_VNPUS, name="ascend-config"),
               payload_cm(wrapped(GOOD_VNPUS), name="hami-scheduler-device"), plugin_ds(ASC_NEW, "ascend-config")]
    f = one(found(doctor(cluster(*objects), version="1.15.1"), "VGM003"))
    assert f.subject == "configmap/kube-system/ascend-config:vnpus"


# --- VGM012 ---------------------------------------------------------------------------------------


def test_vgm012_nvidia_differs_from_the_vgpu_plugins_configmap() -> None:
    sched = deviceshare(**VGPU, KnownGeometriesCMName="merged-device-config")
    plugin = GOOD_NVIDIA.replace("gpuMemoryFactor: 1", "gpuMemoryFactor: 10") + "  defaultMemory: 100\n"
    objects = [sched, payload_cm(GOOD_NVIDIA, name="merged-device-config"), payload_cm(plugin), vgpu_node("n1")]
    report = doctor(cluster(*objects), version="1.15.1")
    f = one(found(report, "VGM012"))
    assert (f.severity.value, f.subject) == ("warning", f"{MERGED}:nvidia")
    assert "nvidia differs in gpuMemoryFactor between kube-system/merged-device-config (read by Volcano)" in f.message
    assert "defaultMemory" not in f.message  # no effect on either reader
    assert result(report, "VGM012").status is Status.WARN


def test_vgm012_vgpu_plugin_configmap_missing() -> None:
    sched = deviceshare(**VGPU, KnownGeometriesCMName="merged-device-config")
    f = one(found(doctor(cluster(sched, payload_cm(GOOD_NVIDIA, name="merged-device-config")), version="1.15.1"),
                  "VGM012"))
    assert f.subject == f"{MERGED}:nvidia" and "all-zero config" in f.message


def test_vgm012_vnpus_differ_from_the_ascend_plugins_configmap() -> None:
    sched = deviceshare(**BOTH)
    mine = GOOD_NVIDIA + GOOD_VNPUS.replace("memoryAllocatable: 21527", "memoryAllocatable: 20000")
    objects = [sched, payload_cm(mine), upstream(VNPU_CM), vgpu_node("n1"), plugin_ds(ASC_NEW, "hami-scheduler-device")]
    f = one(found(doctor(cluster(*objects), version="1.15.1"), "VGM012"))
    assert (f.severity.value, f.subject) == ("warning", f"{VGPU_SUBJECT}:vnpus")
    assert "mounted by DaemonSet kube-system/hami-ascend-device-plugin" in f.message
    assert "only in kube-system/hami-scheduler-device: Ascend910A, Ascend910B2," in f.message
    assert "Ascend310P.memoryAllocatable, Ascend310P.templates" in f.message


def test_vgm012_uses_the_default_ascend_configmap_when_no_plugin_is_seen() -> None:
    objects = [deviceshare(**ASCEND), payload_cm(GOOD_VNPUS), upstream(VNPU_CM)]
    f = one(found(doctor(cluster(*objects), version="1.15.1"), "VGM012"))
    assert "the Ascend device plugin's default" in f.message


@pytest.mark.parametrize("objects", [
    healthy(),  # Volcano reads the vGPU plugin's own ConfigMap
    [deviceshare(**VGPU, KnownGeometriesCMName="merged"), payload_cm(GOOD_NVIDIA + "  defaultCores: 5\n",
                                                                     name="merged"), payload_cm(GOOD_NVIDIA)],
    # the same chips in the list form for Volcano and the wrapper form for the plugin
    [deviceshare(**ASCEND), payload_cm(GOOD_VNPUS), payload_cm(wrapped(GOOD_VNPUS), name="hami-scheduler-device"),
     plugin_ds(ASC_NEW, "hami-scheduler-device")],
    # Ascend is off: the vnpus of the two ConfigMaps may differ
    [deviceshare(**VGPU), payload_cm(GOOD_NVIDIA), upstream(VNPU_CM), plugin_ds(ASC_NEW, "hami-scheduler-device")],
])
def test_vgm012_passes(objects: list) -> None:  # type: ignore[type-arg]
    report = doctor(cluster(*objects), version="1.15.1")
    assert found(report, "VGM012") == [] and result(report, "VGM012").status is Status.PASS


# --- VGM013 ---------------------------------------------------------------------------------------

MIG_TYPO = GOOD_NVIDIA + """\
  knownMigGeometries:
  - models: [A100-PCIe-40GB]
    allowedGeometries:
    - group: group1
      geometries: [{name: 1g.5gb, memory: 5120, count: 7}]
"""


def test_vgm013_model_matching_no_gpu_with_a_did_you_mean() -> None:
    report = doctor(cluster(*healthy(mig_node("m1"), payload=MIG_TYPO)), version="1.15.1")
    f = one(found(report, "VGM013"))
    assert (f.severity.value, f.subject) == ("warning", f"{VGPU_SUBJECT}:nvidia.knownMigGeometries[0].models")
    assert "no node's GPU type contains any of 'A100-PCIe-40GB'" in f.message
    assert "did you mean 'A100-PCIE-40GB'" in f.message


def test_vgm013_upstream_entries_for_absent_gpus() -> None:
    report = doctor(cluster(deviceshare(**VGPU), upstream(VGPU_CM), mig_node("m1")), version="1.15.1")
    subjects = [f.subject for f in found(report, "VGM013")]
    assert subjects == [f"{VGPU_SUBJECT}:nvidia.knownMigGeometries[0].models",
                        f"{VGPU_SUBJECT}:nvidia.knownMigGeometries[2].models"]  # A30 and A100-80GB


@pytest.mark.parametrize("objects", [
    healthy(mig_node("m1", mode="hami-core"), payload=MIG_TYPO),  # no MIG node: nothing to judge
    healthy(mig_node("m1"), payload=MIG_TYPO.replace("A100-PCIe-40GB", "A100-PCIE-40GB")),
    healthy(mig_node("m1"), mig_node("m2", kind="NVIDIA-NVIDIA A30"),
            payload=MIG_TYPO.replace("[A100-PCIe-40GB]", "[A100-PCIE-40GB]\n  - models: [A30]\n"
                                     "    allowedGeometries: []")),
])
def test_vgm013_passes(objects: list) -> None:  # type: ignore[type-arg]
    assert found(doctor(cluster(*objects), version="1.15.1"), "VGM013") == []


def test_vgm013_skipped_when_volcano_cannot_parse_the_config() -> None:
    broken = MIG_TYPO.replace("count: 7", "count: seven")
    report = doctor(cluster(*healthy(mig_node("m1"), payload=broken)), version="1.15.1")
    assert result(report, "VGM013").status is Status.SKIP
    assert "device-config.yaml parses" in result(report, "VGM013").reason


def test_vgm013_silent_when_volcano_falls_back_over_the_vnpus_form() -> None:
    payload = MIG_TYPO + wrapped(GOOD_VNPUS)
    report = doctor(cluster(*healthy(mig_node("m1"), args=BOTH, payload=payload)), version="1.15.0")
    assert found(report, "VGM003") and found(report, "VGM013") == []
    newer = doctor(cluster(*healthy(mig_node("m1"), args=BOTH, payload=payload)), version="1.15.1")
    assert found(newer, "VGM003") == [] and found(newer, "VGM013")


def test_scheduler_configmap_only_and_no_device_family_is_quiet() -> None:
    assert device_findings(doctor(cluster(scheduler_cm()), version="1.15.1")) == [
        ("VGM001", "warning", VGPU_SUBJECT)]  # DEVICESHARE_VGPU enables vGPU
