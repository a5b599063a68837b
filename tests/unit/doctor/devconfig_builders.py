"""Builders for the device-config doctor tests: scheduler arguments, payloads, MIG nodes, plugin DaemonSets."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import yaml

from tests.unit.doctor.conftest import GPU_A, configmap, node, register, scheduler_cm, workload
from vgpuctl.core.doctor import DoctorReport
from vgpuctl.core.findings import Finding

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
VGPU_CM = FIXTURES / "volcano-vgpu-device-config.yaml"
VNPU_CM = FIXTURES / "hami-scheduler-device.yaml"
VGPU_SUBJECT = "configmap/kube-system/volcano-vgpu-device-config"
VNPU_SUBJECT = "configmap/kube-system/hami-scheduler-device"

GOOD_NVIDIA = """\
nvidia:
  resourceCountName: volcano.sh/vgpu-number
  resourceMemoryName: volcano.sh/vgpu-memory
  resourceCoreName: volcano.sh/vgpu-cores
  deviceSplitCount: 10
  deviceCoreScaling: 1
  gpuMemoryFactor: 1
"""

GOOD_VNPUS = """\
vnpus:
- commonWord: Ascend310P
  chipName: 310P3
  resourceName: huawei.com/Ascend310P
  resourceMemoryName: huawei.com/Ascend310P-memory
  memoryAllocatable: 21527
  memoryCapacity: 24576
  aiCore: 8
  aiCPU: 7
  templates:
  - {name: vir01, memory: 3072, aiCore: 1, aiCPU: 1}
  - {name: vir02, memory: 6144, aiCore: 2, aiCPU: 2}
"""


def wrapped(vnpus_list: str) -> str:
    """The same entries in the wrapper form (`vnpus: {hamiVnpuCore, configs}`)."""
    entries = yaml.safe_load(vnpus_list)["vnpus"]
    return yaml.safe_dump({"vnpus": {"hamiVnpuCore": False, "configs": entries}}, sort_keys=False)


def deviceshare(**arguments: Any) -> dict[str, Any]:
    """A scheduler ConfigMap whose deviceshare plugin has `deviceshare.<key>: value` for each argument."""
    args = {f"deviceshare.{k}": v for k, v in arguments.items()}
    conf = {"actions": "enqueue, allocate, backfill",
            "tiers": [{"plugins": [{"name": "predicates"}, {"name": "deviceshare", "arguments": args}]}]}
    return scheduler_cm(yaml.safe_dump(conf))


VGPU = {"VGPUEnable": True}
ASCEND = {"AscendHAMiVNPUEnable": True}
BOTH = {**VGPU, **ASCEND}


def payload_cm(payload: str, name: str = "volcano-vgpu-device-config", namespace: str = "kube-system"
               ) -> dict[str, Any]:
    return configmap(namespace, name, {"device-config.yaml": textwrap.dedent(payload)})


def upstream(path: Path, **meta: str) -> dict[str, Any]:
    """An upstream ConfigMap fixture, optionally renamed (`name=`, `namespace=`)."""
    obj: dict[str, Any] = yaml.safe_load(path.read_text())
    obj["metadata"].update(meta)
    return obj


def mig_node(name: str, kind: str = "NVIDIA-NVIDIA A100-PCIE-40GB", mode: str = "mig") -> dict[str, Any]:
    alloc = {"volcano.sh/vgpu-number": "10", "volcano.sh/vgpu-memory": "40960", "volcano.sh/vgpu-cores": "100"}
    return node(name, annotations={"volcano.sh/node-vgpu-register": register(GPU_A, kind=kind, mode=mode)},
                allocatable=alloc)


def plugin_ds(image: str, *configmaps: str, name: str = "hami-ascend-device-plugin", namespace: str = "kube-system",
              kind: str = "DaemonSet") -> dict[str, Any]:
    """A plugin workload whose pod template mounts `configmaps` (none: no volumes at all)."""
    obj = workload(kind, namespace, name, image)
    volumes = [{"name": f"v{i}", "configMap": {"name": cm}} for i, cm in enumerate(configmaps)]
    if volumes:
        obj["spec"]["template"]["spec"]["volumes"] = volumes
    return obj


def device_findings(report: DoctorReport) -> list[tuple[str, str, str]]:
    """(code, severity, subject) of every device-config finding, in run order."""
    return [(f.code, f.severity.value, f.subject) for r in report.results if r.check.category.value == "device-config"
            for f in r.findings]


def one(findings: list[Finding]) -> Finding:
    assert len(findings) == 1, [(f.subject, f.message) for f in findings]
    return findings[0]
