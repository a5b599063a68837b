"""Shared helpers for the geometry tests: the upstream fixtures and a compact way to validate YAML."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import yaml

from vgpuctl.core.deviceconfig import payload_from_document
from vgpuctl.core.geometry.documents import find_device_configs
from vgpuctl.core.geometry.report import LocatedFinding
from vgpuctl.core.geometry.validate import validate_source
from vgpuctl.core.versions import Version

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
VGPU_CM = FIXTURES / "volcano-vgpu-device-config.yaml"
VNPU_CM = FIXTURES / "hami-scheduler-device.yaml"
VGPU_PAYLOAD = FIXTURES / "volcano-vgpu-device-config.payload.yaml"
VNPU_PAYLOAD = FIXTURES / "hami-scheduler-device.payload.yaml"

GOOD_NVIDIA = """\
nvidia:
  resourceCountName: volcano.sh/vgpu-number
  resourceMemoryName: volcano.sh/vgpu-memory
  resourceCoreName: volcano.sh/vgpu-cores
  deviceSplitCount: 10
  deviceCoreScaling: 1
  gpuMemoryFactor: 1
"""


def payload(path: Path) -> Any:
    return payload_from_document(yaml.safe_load(path.read_text()))


def check(text: str, version: Version | None = None, **enabled: bool) -> list[LocatedFinding]:
    found = find_device_configs(textwrap.dedent(text), "test.yaml")
    assert len(found) == 1
    return validate_source(found[0], version=version, **enabled)


def codes(findings: list[LocatedFinding]) -> list[tuple[str, str, str]]:
    return [(f.finding.code, f.finding.severity.value, f.finding.subject) for f in findings]
