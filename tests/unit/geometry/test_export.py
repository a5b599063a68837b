"""`geometry export`: normalised, in upstream key order, and export → parse is the identity on the model."""

from __future__ import annotations

import json

import yaml
from hypothesis import given

from tests.unit.geometry import strategies
from tests.unit.geometry.helpers import VGPU_CM, VNPU_PAYLOAD, payload
from vgpuctl.core.deviceconfig import VnpusForm, default_device_config, parse_device_config
from vgpuctl.core.geometry.export import configmap, dump_yaml, export_document, export_payload
from vgpuctl.core.geometry.validate import validate_payload


def reparse(document: object) -> object:
    return parse_device_config(yaml.safe_load(dump_yaml(document))).config


def test_upstream_configs_round_trip_and_keep_upstream_key_order() -> None:
    for path in (VGPU_CM, VNPU_PAYLOAD):
        config = parse_device_config(payload(path)).config
        assert config is not None
        exported = export_payload(config)
        assert reparse(exported) == config
    nv = export_payload(parse_device_config(payload(VGPU_CM)).config)["nvidia"]  # type: ignore[arg-type]
    assert list(nv)[:4] == ["resourceCountName", "resourceMemoryName", "resourceMemoryPercentageName",
                            "resourceCoreName"]
    assert list(nv)[-1] == "knownMigGeometries"
    assert "defaultMemory" not in nv and nv["defaultGPUNum"] == 1  # zero no-effect keys are left out


def test_zero_values_that_matter_stay_visible() -> None:
    exported = export_payload(parse_device_config({"nvidia": {}}).config)  # type: ignore[arg-type]
    assert exported["nvidia"] == {"resourceCountName": "", "resourceMemoryName": "", "resourceCoreName": "",
                                  "deviceSplitCount": 0, "deviceCoreScaling": 0, "gpuMemoryFactor": 0}
    assert {f.finding.code for f in validate_payload(exported)} == {"VGM004", "VGM008"}


def test_unknown_keys_are_dropped_and_forms_convert() -> None:
    config = parse_device_config({"vnpus": {"hamiVnpuCore": True, "configs": [{"commonWord": "A", "zz": 1}]},
                                  "extra": 1}).config
    assert config is not None
    assert export_payload(config) == {"vnpus": {"hamiVnpuCore": True, "configs": [
        {"chipName": "", "commonWord": "A", "resourceName": "", "resourceMemoryName": "", "memoryAllocatable": 0,
         "memoryCapacity": 0, "aiCore": 0, "aiCPU": 0, "templates": []}]}}
    listed = export_payload(config, VnpusForm.LIST)
    assert isinstance(listed["vnpus"], list)
    assert export_payload(default_device_config(), VnpusForm.WRAPPER)["vnpus"]["hamiVnpuCore"] is False


def test_configmap_input_stays_a_configmap_with_a_block_payload() -> None:
    found = yaml.safe_load(VGPU_CM.read_text())
    config = parse_device_config(payload(VGPU_CM)).config
    document = export_document(config, found)  # type: ignore[arg-type]
    assert document["metadata"] == {"name": "volcano-vgpu-device-config", "namespace": "kube-system",
                                    "labels": {"app.kubernetes.io/component": "volcano-vgpu-device-plugin"}}
    text = dump_yaml(document)
    assert "  device-config.yaml: |\n    nvidia:\n" in text
    assert parse_device_config(yaml.safe_load(yaml.safe_load(text)["data"]["device-config.yaml"])).config == config
    # Without labels or annotations the metadata is the name and namespace alone; an empty payload is a block too.
    assert dump_yaml(configmap({}, "n", "ns")) == ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: n\n"
                                                  "  namespace: ns\ndata:\n  device-config.yaml: |\n    {}\n")


@given(strategies.payload())
def test_export_then_parse_is_the_identity_on_the_model(raw: dict) -> None:  # type: ignore[type-arg]
    config = parse_device_config(raw).config
    assert config is not None
    assert reparse(export_payload(config)) == config
    assert parse_device_config(json.loads(json.dumps(export_payload(config)))).config == config


@given(strategies.payload())
def test_export_is_a_fixed_point(raw: dict) -> None:  # type: ignore[type-arg]
    config = parse_device_config(raw).config
    assert config is not None
    once = export_payload(config)
    assert export_payload(parse_device_config(once).config) == once  # type: ignore[arg-type]
