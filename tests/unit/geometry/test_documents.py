"""Finding the device config in an input and mapping its JSON paths to lines."""

from __future__ import annotations

from tests.unit.geometry.helpers import FIXTURES, VGPU_CM, VGPU_PAYLOAD
from vgpuctl.core.geometry.documents import find_device_configs, join_path, line_for, parent_path


def test_paths_join_like_the_parser_reports_them() -> None:
    assert join_path("$", "nvidia") == "nvidia"
    assert join_path("nvidia", "knownMigGeometries") == "nvidia.knownMigGeometries"
    assert join_path("nvidia.knownMigGeometries", 1) == "nvidia.knownMigGeometries[1]"
    assert join_path("$", "odd.key") == '["odd.key"]'
    assert join_path("nvidia", "odd key") == 'nvidia["odd key"]'
    assert parent_path("nvidia.knownMigGeometries[1].models[3]") == "nvidia.knownMigGeometries[1].models"
    assert parent_path("nvidia") == "$"
    assert parent_path("$") is None


def test_line_for_falls_back_to_the_nearest_ancestor() -> None:
    lines = {"$": 1, "nvidia": 2, "nvidia.knownMigGeometries": 5}
    assert line_for(lines, "nvidia.knownMigGeometries[0].models[2]") == 5
    assert line_for(lines, "nvidia.gpuMemoryFactor") == 2
    assert line_for({}, "nvidia") is None


def test_configmap_payload_lines_are_shifted_into_the_manifest() -> None:
    text = VGPU_CM.read_text()
    (src,) = find_device_configs(text, "cm.yaml")
    assert src.configmap is not None and src.payload["nvidia"]["gpuMemoryFactor"] == 1
    file_lines = text.splitlines()
    assert "gpuMemoryFactor: 1" in file_lines[src.lines["nvidia.gpuMemoryFactor"] - 1]
    assert '"A100-SXM4-40GB"' in file_lines[src.lines["nvidia.knownMigGeometries[1].models[3]"] - 1]
    assert "7g.80gb" in file_lines[src.lines["nvidia.knownMigGeometries[2].allowedGeometries[3].geometries[0]"] - 1]


def test_bare_payload_lines_are_its_own() -> None:
    text = VGPU_PAYLOAD.read_text()
    (src,) = find_device_configs(text, "p.yaml")
    assert src.configmap is None
    assert text.splitlines()[src.lines["nvidia.deviceSplitCount"] - 1].strip() == "deviceSplitCount: 10"


def test_multi_document_manifest_keeps_only_device_configs() -> None:
    node_cm = (FIXTURES / "volcano-vgpu-node-config.yaml").read_text()
    daemonset = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: x}\n"
    text = daemonset + "---\n" + VGPU_CM.read_text() + "\n---\n" + node_cm
    found = find_device_configs(text, "all.yaml")
    assert [s.source for s in found] == ["all.yaml:1"]
    assert not found[0].missing_key


def test_configmap_without_the_key_counts_only_alone() -> None:
    (src,) = find_device_configs((FIXTURES / "volcano-vgpu-node-config.yaml").read_text(), "n.yaml")
    assert src.missing_key and src.configmap_subject == "configmap/kube-system/volcano-vgpu-node-config"


def test_yaml_errors_carry_their_line_even_inside_a_configmap() -> None:
    (src,) = find_device_configs("a: [1,\n", "bad.yaml")
    assert src.error and src.error.startswith("not valid YAML") and src.error_line == 2
    cm = ("kind: ConfigMap\nmetadata: {name: x}\ndata:\n  device-config.yaml: |\n    nvidia:\n"
          "      models: [a\n    x: 1\n")
    (src,) = find_device_configs(cm, "cm.yaml")
    assert src.error and src.error_line == 7


def test_quoted_payload_has_no_lines_and_a_non_string_is_an_error() -> None:
    (src,) = find_device_configs('kind: ConfigMap\ndata:\n  device-config.yaml: "nvidia: {gpuMemoryFactor: 2}"\n', "q")
    assert src.payload == {"nvidia": {"gpuMemoryFactor": 2}} and src.lines == {}
    (src,) = find_device_configs("kind: ConfigMap\ndata:\n  device-config.yaml: {nvidia: {}}\n", "m")
    assert src.error == "data['device-config.yaml'] must be a string" and src.error_line == 3


def test_json_input_and_empty_payload() -> None:
    (src,) = find_device_configs('{"nvidia": {"gpuMemoryFactor": 1}}', "p.json")
    assert src.payload == {"nvidia": {"gpuMemoryFactor": 1}}
    assert find_device_configs("", "empty") == []
    (src,) = find_device_configs("kind: ConfigMap\ndata:\n  device-config.yaml: ''\n", "e")
    assert src.payload is None and src.error is None
