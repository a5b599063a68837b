"""The device config sections a fresh install writes: the device plugins' own shipped defaults.

`nvidia:` is the volcano-vgpu-device-plugin's `volcano-vgpu-device-config` (Project-HAMi/volcano-vgpu-device-plugin
v1.12.0, `deployments/static/volcano-vgpu-device-plugin.yml`; the A100-40GB alias listed twice there is listed
once here). `vnpus:` is the ascend-device-plugin's `hami-scheduler-device` (Project-HAMi/ascend-device-plugin
main ed35e1c, `ascend-device-configmap.yaml`, wrapper form). They are only ever added where the cluster's
ConfigMap has no such section: an admin's own section is never replaced.
"""

from __future__ import annotations

import copy
from typing import Any

import yaml

NVIDIA_YAML = """\
nvidia:
  resourceCountName: volcano.sh/vgpu-number
  resourceMemoryName: volcano.sh/vgpu-memory
  resourceMemoryPercentageName: volcano.sh/vgpu-memory-percentage
  resourceCoreName: volcano.sh/vgpu-cores
  overwriteEnv: false
  defaultMemory: 0
  defaultCores: 0
  defaultGPUNum: 1
  deviceSplitCount: 10
  deviceMemoryScaling: 1
  deviceCoreScaling: 1
  gpuMemoryFactor: 1
  knownMigGeometries:
  - models:
    - A30
    allowedGeometries:
    - group: group1
      geometries:
      - name: 1g.6gb
        memory: 6144
        count: 4
    - group: group2
      geometries:
      - name: 2g.12gb
        memory: 12288
        count: 2
    - group: group3
      geometries:
      - name: 4g.24gb
        memory: 24576
        count: 1
  - models:
    - A100-SXM4-40GB
    - A100-40GB-PCIe
    - A100-PCIE-40GB
    allowedGeometries:
    - group: group1
      geometries:
      - name: 1g.5gb
        memory: 5120
        count: 7
    - group: group2
      geometries:
      - name: 2g.10gb
        memory: 10240
        count: 3
      - name: 1g.5gb
        memory: 5120
        count: 1
    - group: group3
      geometries:
      - name: 3g.20gb
        memory: 20480
        count: 2
    - group: group4
      geometries:
      - name: 7g.40gb
        memory: 40960
        count: 1
  - models:
    - A100-SXM4-80GB
    - A100-80GB-PCIe
    - A100-PCIE-80GB
    allowedGeometries:
    - group: group1
      geometries:
      - name: 1g.10gb
        memory: 9728
        count: 7
    - group: group2
      geometries:
      - name: 2g.20gb
        memory: 19968
        count: 3
      - name: 1g.10gb
        memory: 9728
        count: 1
    - group: group3
      geometries:
      - name: 3g.40gb
        memory: 40192
        count: 2
    - group: group4
      geometries:
      - name: 7g.80gb
        memory: 80896
        count: 1
"""

VNPUS_YAML = """\
vnpus:
  hamiVnpuCore: false
  configs:
  - chipName: 910A
    commonWord: Ascend910A
    resourceName: huawei.com/Ascend910A
    resourceMemoryName: huawei.com/Ascend910A-memory
    memoryAllocatable: 32768
    memoryCapacity: 32768
    aiCore: 30
    templates:
    - name: vir02
      memory: 2184
      aiCore: 2
    - name: vir04
      memory: 4369
      aiCore: 4
    - name: vir08
      memory: 8738
      aiCore: 8
    - name: vir16
      memory: 17476
      aiCore: 16
  - chipName: 910B2
    commonWord: Ascend910B2
    resourceName: huawei.com/Ascend910B2
    resourceMemoryName: huawei.com/Ascend910B2-memory
    memoryAllocatable: 65536
    memoryCapacity: 65536
    aiCore: 24
    aiCPU: 6
    templates:
    - name: vir03_1c_8g
      memory: 8192
      aiCore: 3
      aiCPU: 1
    - name: vir06_1c_16g
      memory: 16384
      aiCore: 6
      aiCPU: 1
    - name: vir12_3c_32g
      memory: 32768
      aiCore: 12
      aiCPU: 3
  - chipName: 910B3
    commonWord: Ascend910B3
    resourceName: huawei.com/Ascend910B3
    resourceMemoryName: huawei.com/Ascend910B3-memory
    resourceCoreName: huawei.com/Ascend910B3-core
    memoryAllocatable: 65536
    memoryCapacity: 65536
    aiCore: 20
    aiCPU: 7
    templates:
    - name: vir05_1c_16g
      memory: 16384
      aiCore: 5
      aiCPU: 1
    - name: vir10_3c_32g
      memory: 32768
      aiCore: 10
      aiCPU: 3
  - chipName: 910B4-1
    commonWord: Ascend910B4-1
    resourceName: huawei.com/Ascend910B4-1
    resourceMemoryName: huawei.com/Ascend910B4-1-memory
    memoryAllocatable: 65536
    memoryCapacity: 65536
    aiCore: 20
    aiCPU: 7
    templates:
    - name: vir05_1c_16g
      memory: 16384
      aiCore: 5
      aiCPU: 1
    - name: vir10_3c_32g
      memory: 32768
      aiCore: 10
      aiCPU: 3
  - chipName: 910B4
    commonWord: Ascend910B4
    resourceName: huawei.com/Ascend910B4
    resourceMemoryName: huawei.com/Ascend910B4-memory
    memoryAllocatable: 32768
    memoryCapacity: 32768
    aiCore: 20
    aiCPU: 7
    templates:
    - name: vir05_1c_8g
      memory: 8192
      aiCore: 5
      aiCPU: 1
    - name: vir10_3c_16g
      memory: 16384
      aiCore: 10
      aiCPU: 3
  - chipName: 310P3
    commonWord: Ascend310P
    resourceName: huawei.com/Ascend310P
    resourceMemoryName: huawei.com/Ascend310P-memory
    memoryAllocatable: 21527
    memoryCapacity: 24576
    aiCore: 8
    aiCPU: 7
    templates:
    - name: vir01
      memory: 3072
      aiCore: 1
      aiCPU: 1
    - name: vir02
      memory: 6144
      aiCore: 2
      aiCPU: 2
    - name: vir04
      memory: 12288
      aiCore: 4
      aiCPU: 4
  - chipName: Ascend910
    commonWord: Ascend910C
    resourceName: huawei.com/Ascend910C
    resourceMemoryName: huawei.com/Ascend910C-memory
    resourceCoreName: huawei.com/Ascend910C-core
    memoryAllocatable: 65536
    memoryCapacity: 65536
    aiCore: 20
    aiCPU: 7
    templates:
    - name: vir05_1c_16g
      memory: 16384
      aiCore: 5
      aiCPU: 1
    - name: vir10_3c_32g
      memory: 32768
      aiCore: 10
      aiCPU: 3
"""

_NVIDIA: dict[str, Any] = yaml.safe_load(NVIDIA_YAML)["nvidia"]
_VNPUS: dict[str, Any] = yaml.safe_load(VNPUS_YAML)["vnpus"]


def default_nvidia() -> dict[str, Any]:
    return copy.deepcopy(_NVIDIA)


def default_vnpus() -> dict[str, Any]:
    """The `vnpus` wrapper `{hamiVnpuCore, configs}`; the merge writes the list form where Volcano needs it."""
    return copy.deepcopy(_VNPUS)
