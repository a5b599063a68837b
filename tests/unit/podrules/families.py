"""Shared data for the gpushare / Ascend / MindCluster / workload pod-rule tests (not a test module)."""

from __future__ import annotations

from functools import cache

import yaml

from vgpuctl.core.deviceconfig import DeviceConfig, parse_device_config, payload_from_document

from .conftest import FIXTURES

# The real ConfigMap shipped by Project-HAMi/ascend-device-plugin (wrapper form, hamiVnpuCore: false).
ASCEND_CONFIG_FILE = FIXTURES / "hami-scheduler-device.yaml"

B3 = "huawei.com/Ascend910B3"
B3_MEM = B3 + "-memory"
B3_CORE = B3 + "-core"
P310 = "huawei.com/Ascend310P"
P310_MEM = P310 + "-memory"
NPU_CORE = "huawei.com/npu-core"
RING_310P = {"ring-controller.atlas": "ascend-310P"}
HAMI_CORE = {"huawei.com/vnpu-mode": "hami-core"}


@cache
def ascend_config() -> DeviceConfig:
    """The shipped `hami-scheduler-device` ConfigMap, parsed as Volcano would (it must be accepted)."""
    document = yaml.safe_load(ASCEND_CONFIG_FILE.read_text())
    parsed = parse_device_config(payload_from_document(document))
    assert parsed.config is not None, parsed.problems
    return parsed.config
