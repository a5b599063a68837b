"""Builders for the node-check tests: the other device families' nodes, plugin pods, geometries, garbage."""

from __future__ import annotations

from typing import Any

from tests.unit.doctor.conftest import GPU_A, device_cm, node, pod, workload
from vgpuctl.core.codecs.ascend import encode_ascend_register
from vgpuctl.core.facts import AscendDevice

GPU_C = "GPU-33333333-3333-3333-3333-333333333333"
DRIVER_OK = {"nvidia.com/cuda.driver-version.full": "535.104.05"}
VGPU_PLUGIN = "docker.io/projecthami/volcano-vgpu-device-plugin:v1.11.0"
ASCEND_PLUGIN = "projecthami/ascend-device-plugin:v1.2.0"
ASCEND_REGISTER_KEY = "hami.io/node-register-Ascend310P"


def five_field(*uuids: str, devmem: int = 40960) -> str:
    """The register of device plugin v1.9.x: no mode field."""
    return "".join(f"{u},10,{devmem},NVIDIA-NVIDIA A100-PCIE-40GB,true:" for u in uuids)


def plugin_pod(node_name: str, image: str = VGPU_PLUGIN) -> dict[str, Any]:
    return pod("kube-system", f"volcano-device-plugin-{node_name}", node=node_name,
               containers=[{"name": "device-plugin", "image": image}])


def allocating_pod(node_name: str) -> dict[str, Any]:
    return pod("ml", "binding", node=node_name, annotations={"volcano.sh/bind-phase": "allocating",
                                                             "volcano.sh/vgpu-node": node_name}, phase="Pending")


def mig_config(largest: int = 40960, model: str = "A100-PCIE-40GB", **nvidia: Any) -> dict[str, Any]:
    """A device ConfigMap (the one Volcano reads by default) with one MIG geometry for `model`."""
    extra = "".join(f"  {k}: {v}\n" for k, v in nvidia.items())
    payload = (
        "nvidia:\n"
        "  resourceCountName: volcano.sh/vgpu-number\n"
        "  resourceMemoryName: volcano.sh/vgpu-memory\n"
        "  resourceCoreName: volcano.sh/vgpu-cores\n"
        "  deviceSplitCount: 10\n"
        "  deviceCoreScaling: 1\n"
        "  gpuMemoryFactor: 1\n"
        f"{extra}"
        "  knownMigGeometries:\n"
        f"  - models: [\"{model}\"]\n"
        "    allowedGeometries:\n"
        "    - group: group1\n"
        "      geometries:\n"
        "      - {name: 1g.5gb, memory: 5120, count: 7}\n"
        "    - group: group2\n"
        "      geometries:\n"
        f"      - {{name: 7g.big, memory: {largest}, count: 1}}\n"
    )
    return device_cm(payload)


def ascend_register(count: int = 1) -> str:
    return encode_ascend_register(
        AscendDevice("Ascend310P", 21527, 8, uuid=f"npu-{i}", index=i, count=7, health=True) for i in range(count))


def ascend_node(name: str, *, labels: dict[str, str] | None = None, annotations: dict[str, Any] | None = None,
                register: str | None = None, allocatable: str = "7") -> dict[str, Any]:
    """An Ascend HAMi node: the plugin's register, `ascend=on` and the count resource."""
    ann: dict[str, Any] = {ASCEND_REGISTER_KEY: ascend_register() if register is None else register}
    return node(name, labels={"ascend": "on", **(labels or {})}, annotations={**ann, **(annotations or {})},
                allocatable={"huawei.com/Ascend310P": allocatable})


def mindcluster_node(name: str, *, cores: str = "16", servertype: str | None = "Ascend310P-8",
                     accelerator: str | None = "huawei-Ascend310P", chip: str | None = "310P3") -> dict[str, Any]:
    labels = {k: v for k, v in (("accelerator", accelerator), ("servertype", servertype),
                                ("node.kubernetes.io/npu.chip.name", chip)) if v is not None}
    return node(name, labels=labels, capacity={"huawei.com/npu-core": cores},
                allocatable={"huawei.com/Ascend310P": "2"})


def gpushare_node(name: str, *, memory: str | None = "32768", number: str | None = "2",
                  unhealthy: str | None = None) -> dict[str, Any]:
    capacity = {k: v for k, v in (("volcano.sh/gpu-memory", memory), ("volcano.sh/gpu-number", number)) if v}
    annotations = {"volcano.sh/gpu-unhealthy-ids": unhealthy} if unhealthy is not None else {}
    return node(name, capacity=capacity, allocatable=capacity, annotations=annotations,
                labels=dict(DRIVER_OK))


def ascend_daemonset(node_selector: dict[str, str] | None) -> dict[str, Any]:
    return workload("DaemonSet", "kube-system", "hami-ascend-device-plugin", ASCEND_PLUGIN,
                    node_selector=node_selector)


def garbage() -> list[Any]:
    """Objects a careless or hostile snapshot could hold: wrong types everywhere a check looks."""
    weird_annotations = {
        "volcano.sh/node-vgpu-register": 7, "hami.io/node-nvidia-register": ["x"], "hamivgpu": 5,
        "gpu": "yesterday", "volcano.sh/node-vgpu-handshake": 3, "hami-vnpu-core": 1,
        ASCEND_REGISTER_KEY: {"a": 1}, "hami.io/node-register-": None, "volcano.sh/gpu-unhealthy-ids": 9,
    }
    return [
        {"kind": "Node", "metadata": {"name": "g1", "annotations": weird_annotations,
                                      "labels": {"nvidia.com/cuda.driver-version.full": 440, "servertype": 5,
                                                 "nvidia.com/cuda.driver.major": "²", "ascend": True}},
         "status": {"allocatable": {"volcano.sh/vgpu-number": [], "huawei.com/Ascend310P": "lots",
                                    "volcano.sh/vgpu-memory": float("nan")},
                    "capacity": {"huawei.com/npu-core": {"x": 1}, "volcano.sh/gpu-number": True,
                                 "volcano.sh/gpu-memory": "-1"}}},
        {"kind": "Node", "metadata": {"name": "g2", "annotations": {
            "volcano.sh/node-vgpu-register": f"{GPU_A},x,y,AMD,maybe,mig:,,,:::{GPU_A},-1,0,NVIDIA,true:",
            "volcano.sh/node-vgpu-handshake": "Requesting", "hami.io/node-nvidia-register": "[{\"id\": 5}]",
            ASCEND_REGISTER_KEY: "[null]", "hamivgpu": "2026-11-21T11:59:00Z,ml,p"},
            "labels": {"servertype": "Ascend310P-"}},
         "status": {"allocatable": {"huawei.com/Ascend310P": "1e3"}, "capacity": {"huawei.com/npu-core": "7"}}},
        {"kind": "Node", "metadata": "junk", "status": "junk"},
        {"kind": "Node", "metadata": {"annotations": [], "labels": "x"}, "status": {"allocatable": [], "capacity": 3}},
        {"kind": "Node"},
        {"kind": "Pod", "spec": "x"},
        {"kind": "Pod", "metadata": {"annotations": {"volcano.sh/bind-phase": "allocating"}},
         "spec": {"nodeName": 5, "containers": "zz"}},
        {"kind": "Pod", "metadata": {"annotations": "x"}, "spec": {"nodeName": "g1", "containers": [3, {"image": 4}]}},
        {"kind": "DaemonSet", "metadata": "x", "spec": {"template": {"spec": {
            "containers": [{"image": ASCEND_PLUGIN}], "nodeSelector": ["ascend"]}}}},
        {"kind": "DaemonSet", "spec": {"template": {"spec": {"containers": None}}}},
        {"kind": "DaemonSet", "spec": {"template": "x"}},
    ]
