"""The device-config model: parsing as Volcano does, built-in defaults, MIG best-fit, Ascend trimming."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vgpuctl.core import spec
from vgpuctl.core.deviceconfig import (
    DeviceConfigDocumentError,
    MigGeometry,
    MigGroup,
    MigInstance,
    VnpusForm,
    default_device_config,
    mig_fit_in_geometry,
    mig_request_mib,
    parse_device_config,
    payload_from_document,
    trim_vnpu_memory,
)

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
UPSTREAM = Path(__file__).resolve().parents[2] / "examples" / "volcano-vgpu-device-config.yaml"


def load(path: Path):  # type: ignore[no-untyped-def]
    parsed = parse_device_config(payload_from_document(yaml.safe_load(path.read_text())))
    assert parsed.problems == ()
    assert parsed.config is not None
    return parsed.config


def test_upstream_vgpu_config_parses_with_its_mig_geometries() -> None:
    config = load(UPSTREAM)
    nv = config.nvidia
    assert config.has_nvidia and config.vnpus_form is VnpusForm.ABSENT
    assert nv.resource_count_name == spec.VGPU_NUMBER
    assert nv.resource_memory_percentage_name == spec.VGPU_MEMORY_PERCENTAGE
    assert nv.default_gpu_num == 1 and nv.gpu_memory_factor == 1 and nv.device_split_count == 10
    assert [g.models[0] for g in nv.known_mig_geometries] == ["A30", "A100-SXM4-40GB", "A100-SXM4-80GB"]
    a100 = nv.known_mig_geometries[1]
    assert [g.name for g in a100.groups] == ["group1", "group2", "group3", "group4"]
    assert a100.largest_instance == 40960


def test_ascend_wrapper_form_and_sorted_templates() -> None:
    config = load(FIXTURES / "hami-scheduler-device.yaml")
    assert config.vnpus_form is VnpusForm.WRAPPER and not config.has_nvidia
    p310 = next(v for v in config.vnpus if v.common_word == "Ascend310P")
    assert [t.memory for t in p310.templates] == sorted(t.memory for t in p310.templates)


def test_legacy_list_form() -> None:
    entry = {"commonWord": "Ascend310P", "resourceName": "huawei.com/Ascend310P",
             "templates": [{"name": "b", "memory": 6144}, {"name": "a", "memory": 3072}]}
    parsed = parse_device_config({"vnpus": [entry]})
    assert parsed.config is not None and parsed.config.vnpus_form is VnpusForm.LIST
    assert [t.name for t in parsed.config.vnpus[0].templates] == ["a", "b"]
    assert parsed.config.vnpus[0].core_resource_name == "huawei.com/Ascend310P-core"


@pytest.mark.parametrize(
    ("payload", "path"),
    [
        ({"nvidia": {"gpuMemoryFactor": "2"}}, "nvidia.gpuMemoryFactor"),
        ({"nvidia": {"defaultGPUNum": -1}}, "nvidia.defaultGPUNum"),
        ({"nvidia": {"overwriteEnv": "true"}}, "nvidia.overwriteEnv"),
        ({"nvidia": {"knownMigGeometries": {"models": ["A30"]}}}, "nvidia.knownMigGeometries"),
        ({"nvidia": {"knownMigGeometries": [{"allowedGeometries": [{"geometries": [{"memory": "5gb"}]}]}]}},
         "nvidia.knownMigGeometries[0].allowedGeometries[0].geometries[0].memory"),
        ({"vnpus": {"hamiVnpuCore": "yes", "configs": []}}, "vnpus.hamiVnpuCore"),
        ({"vnpus": [{"memoryCapacity": "24Gi"}]}, "vnpus[0].memoryCapacity"),
        (["not", "a", "mapping"], "$"),
    ],
)
def test_type_errors_make_volcano_fall_back(payload: object, path: str) -> None:
    parsed = parse_device_config(payload)
    assert parsed.config is None
    assert path in [p.path for p in parsed.problems]


def test_unknown_keys_and_scalars_in_string_fields_are_accepted_like_yaml_v2() -> None:
    parsed = parse_device_config({"nvidia": {"migstrategy": "mixed", "resourceCountName": 5,
                                             "deviceMemoryScaling": 1}, "extra": 1})
    assert parsed.config is not None and parsed.config.nvidia.resource_count_name == "5"
    assert parsed.config.nvidia.device_memory_scaling == 1.0


def test_missing_sections_are_zero_values_not_defaults() -> None:
    parsed = parse_device_config({"vnpus": []})
    assert parsed.config is not None
    assert parsed.config.nvidia.resource_count_name == "" and not parsed.config.has_nvidia


def test_builtin_defaults_match_volcano() -> None:
    config = default_device_config()
    assert config.nvidia.resource_count_name == spec.VGPU_NUMBER
    assert config.nvidia.resource_memory_percentage_name == ""
    assert config.nvidia.known_mig_geometries == ()
    assert [v.common_word for v in config.vnpus] == ["Ascend310P"]
    assert [t.name for t in config.vnpus[0].templates] == ["vir01", "vir02", "vir04"]


def test_payload_from_configmap_and_bare_payload() -> None:
    cm = {"kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"device-config.yaml": "nvidia: {}\n"}}
    assert payload_from_document(cm) == {"nvidia": {}}
    assert payload_from_document({"nvidia": {}}) == {"nvidia": {}}
    with pytest.raises(DeviceConfigDocumentError, match="no data key"):
        payload_from_document({"kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"other": ""}})
    with pytest.raises(DeviceConfigDocumentError, match="not valid YAML"):
        payload_from_document({"kind": "ConfigMap", "data": {"device-config.yaml": "a: [b"}})
    with pytest.raises(DeviceConfigDocumentError):
        payload_from_document(["list"])


# ---- MIG best-fit (docs/vgpu.md#vgpu-mig) ----------------------------------------------------------------------


def test_dynamic_mig_design_example_picks_group2_for_8000() -> None:
    nv = load(UPSTREAM).nvidia
    geometry = nv.geometry_for("NVIDIA-NVIDIA A100-PCIE-40GB")
    assert geometry is not None
    fit = mig_fit_in_geometry(geometry, mig_request_mib(nv, 8000))
    assert fit is not None and fit.group.name == "group2" and fit.instance.name == "2g.10gb"


@pytest.mark.parametrize(
    ("memory", "group", "instance"),
    [(1, "group1", "1g.5gb"), (5120, "group1", "1g.5gb"), (5121, "group2", "2g.10gb"),
     (10241, "group3", "3g.20gb"), (40960, "group4", "7g.40gb")],
)
def test_first_group_with_a_fitting_instance_wins(memory: int, group: str, instance: str) -> None:
    nv = load(UPSTREAM).nvidia
    geometry = nv.geometry_for("NVIDIA A100-SXM4-40GB")
    assert geometry is not None
    fit = mig_fit_in_geometry(geometry, mig_request_mib(nv, memory))
    assert fit is not None and (fit.group.name, fit.instance.name) == (group, instance)


def test_no_fit_when_too_large_or_model_unknown() -> None:
    nv = load(UPSTREAM).nvidia
    geometry = nv.geometry_for("NVIDIA A100-SXM4-40GB")
    assert geometry is not None
    assert mig_fit_in_geometry(geometry, mig_request_mib(nv, 40961)) is None
    assert nv.geometry_for("NVIDIA H100 80GB HBM3") is None  # not in the shipped models
    assert nv.geometry_for("NVIDIA A100 80GB PCIe") is None  # spaces: no alias is a substring


def test_smallest_instance_inside_a_group_regardless_of_listed_order() -> None:
    geometry = MigGeometry(("X",), (MigGroup("g", (MigInstance("big", 20000, 1), MigInstance("small", 5000, 2))),))
    fit = mig_fit_in_geometry(geometry, 4000)
    assert fit is not None and fit.instance.name == "small"


def test_gpu_memory_factor_multiplies_the_request() -> None:
    from dataclasses import replace

    nv = replace(load(UPSTREAM).nvidia, gpu_memory_factor=2)
    geometry = nv.geometry_for("A100-PCIE-40GB")
    assert geometry is not None
    fit = mig_fit_in_geometry(geometry, mig_request_mib(nv, 3000))  # 6000 MiB after the factor
    assert fit is not None and fit.request == 6000 and fit.instance.name == "2g.10gb"


# ---- Ascend template trimming (docs/ascend.md#ascend-hami-template-mode, upstream Test_trimMemory)
# --------------------------------


@pytest.mark.parametrize(
    ("asked", "memory", "template"),
    [(0, 3072, "vir01"), (3072, 3072, "vir01"), (3073, 6144, "vir02"), (12288, 12288, "vir04"),
     (12289, 21527, None), (24576, 21527, None), (24577, 0, None)],
)
def test_trim_memory_table(asked: int, memory: int, template: str | None) -> None:
    trim = trim_vnpu_memory(default_device_config().vnpus[0], asked)
    assert trim.memory == memory
    assert (trim.template.name if trim.template else None) == template
    assert trim.whole_card == (template is None and memory > 0)
