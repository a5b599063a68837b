"""The vocabulary of Volcano device sharing: every resource, annotation, label and argument name.

One source of truth for names (docs/volcano.md#vocabulary). Rules, codecs and checks import these constants instead of
spelling strings, so a renamed key is changed in one place and a typo is an import error.
"""

from __future__ import annotations

import enum
from typing import Final


class Family(str, enum.Enum):
    """A device-sharing family of the `deviceshare` plugin."""

    VGPU = "vgpu"
    GPUSHARE = "gpushare"
    GPUNUMBER = "gpunumber"
    ASCEND_HAMI = "ascend-hami"
    ASCEND_MINDCLUSTER = "ascend-mindcluster"


class VgpuMode(str, enum.Enum):
    """Values of `volcano.sh/vgpu-mode` that Volcano has a sharing handler for (docs/vgpu.md#vgpu-filter)."""

    HAMI_CORE = "hami-core"
    MIG = "mig"


# --- vGPU resources (defaults of the device config's nvidia.resource*Name) -------------------------
VGPU_NUMBER: Final = "volcano.sh/vgpu-number"
VGPU_MEMORY: Final = "volcano.sh/vgpu-memory"
VGPU_CORES: Final = "volcano.sh/vgpu-cores"
VGPU_MEMORY_PERCENTAGE: Final = "volcano.sh/vgpu-memory-percentage"

# --- gpushare / gpu-number ------------------------------------------------------------------------
GPU_MEMORY: Final = "volcano.sh/gpu-memory"
GPU_NUMBER: Final = "volcano.sh/gpu-number"

# --- Ascend ---------------------------------------------------------------------------------------
NPU_CORE: Final = "huawei.com/npu-core"
ASCEND_RESOURCE_PREFIX: Final = "huawei.com/Ascend"
ASCEND_CORE_SUFFIX: Final = "-core"
ASCEND_MEMORY_SUFFIX: Final = "-memory"

# --- Pod annotations read by the scheduler --------------------------------------------------------
ANN_VGPU_MODE: Final = "volcano.sh/vgpu-mode"
ANN_USE_GPUTYPE: Final = "nvidia.com/use-gputype"
ANN_NOUSE_GPUTYPE: Final = "nvidia.com/nouse-gputype"
ANN_USE_GPUUUID: Final = "volcano.sh/vgpu-use-gpuuuid"
ANN_NOUSE_GPUUUID: Final = "volcano.sh/vgpu-nouse-gpuuuid"
ANN_PODGROUP_POLICY: Final = "volcano.sh/vgpu-podgroup-policy"
ANN_VNPU_MODE: Final = "huawei.com/vnpu-mode"
ANN_GPU_INDEX: Final = "volcano.sh/gpu-index"
ANN_PREDICATE_TIME: Final = "volcano.sh/predicate-time"
ANN_GROUP_NAME_K8S: Final = "scheduling.k8s.io/group-name"
ANN_GROUP_NAME_VOLCANO: Final = "scheduling.volcano.sh/group-name"

PODGROUP_POLICY_SPREAD: Final = "spread"
VNPU_MODE_HAMI_CORE: Final = "hami-core"

# --- Pod annotations written by the scheduler (never by users) ------------------------------------
ANN_VGPU_IDS_NEW: Final = "volcano.sh/vgpu-ids-new"
ANN_VGPU_NODE: Final = "volcano.sh/vgpu-node"
ANN_BIND_PHASE: Final = "volcano.sh/bind-phase"
ANN_BIND_TIME: Final = "volcano.sh/bind-time"
ANN_NPU_CORE: Final = "huawei.com/npu-core"

# The vNPU templates Volcano's MindCluster (310P) code knows; fixed in its code, not configurable
# (docs/ascend.md). A slice name no device config or template defines is booked under UNKNOWN_SLICE.
MINDCLUSTER_TEMPLATES: Final = frozenset({"vir01", "vir02", "vir02_1c", "vir04", "vir04_3c", "vir04_3c_ndvpp",
                                          "vir04_4c_dvpp"})
UNKNOWN_SLICE: Final = "unknown"
# The longest allocation annotation value read, in characters. Volcano's longest — 20 containers × 16 GPUs
# of MIG ids, ~70 characters each — is ~22 K; a longer value was not written by Volcano: it is reported
# (VGX002, VGS004) and not read, so junk annotations cannot cost the cluster-aware webhook its memory.
MAX_ALLOCATION_VALUE: Final = 32 * 1024

# --- Pod labels read for MindCluster 310P ---------------------------------------------------------
LABEL_RING_CONTROLLER: Final = "ring-controller.atlas"
RING_CONTROLLER_310P: Final = "ascend-310P"
LABEL_VNPU_LEVEL: Final = "vnpu-level"
LABEL_VNPU_DVPP: Final = "vnpu-dvpp"
VNPU_LEVELS: Final = ("low", "high")
VNPU_DVPP_VALUES: Final = ("yes", "no", "null")
MINDCLUSTER_VNPU_CORES: Final = (1, 2, 4)
DEFAULT_CORES_PER_310P_CHIP: Final = 8

# --- Node annotations -----------------------------------------------------------------------------
NODE_VGPU_REGISTER: Final = "volcano.sh/node-vgpu-register"
NODE_VGPU_HANDSHAKE: Final = "volcano.sh/node-vgpu-handshake"
NODE_HAMI_NVIDIA_REGISTER: Final = "hami.io/node-nvidia-register"
NODE_ASCEND_REGISTER_PREFIX: Final = "hami.io/node-register-"
NODE_ASCEND_HANDSHAKE_PREFIX: Final = "hami.io/node-handshake-"
NODE_HAMI_VNPU_CORE: Final = "hami-vnpu-core"
NODE_GPU_UNHEALTHY_IDS: Final = "volcano.sh/gpu-unhealthy-ids"
LOCK_VGPU: Final = "hamivgpu"
LOCK_GPUSHARE: Final = "gpu"
LOCK_ASCEND_HAMI: Final = "hami.io/mutex.lock"

# --- Scheduler configuration ----------------------------------------------------------------------
SCHEDULER_CONFIGMAP: Final = "volcano-scheduler-configmap"
SCHEDULER_NAMESPACE: Final = "volcano-system"
SCHEDULER_CONF_KEY: Final = "volcano-scheduler.conf"
DEFAULT_SCHEDULER_NAMES: Final = ("volcano",)
KUBE_DEFAULT_SCHEDULER: Final = "default-scheduler"

PLUGIN_DEVICESHARE: Final = "deviceshare"
PLUGIN_PREDICATES: Final = "predicates"

ARG_GPU_SHARING_ENABLE: Final = "deviceshare.GPUSharingEnable"
ARG_GPU_NUMBER_ENABLE: Final = "deviceshare.GPUNumberEnable"
ARG_VGPU_ENABLE: Final = "deviceshare.VGPUEnable"
ARG_NODE_LOCK_ENABLE: Final = "deviceshare.NodeLockEnable"
ARG_SCHEDULE_POLICY: Final = "deviceshare.SchedulePolicy"
ARG_SCHEDULE_WEIGHT: Final = "deviceshare.ScheduleWeight"
ARG_KNOWN_GEOMETRIES_CM_NAME: Final = "deviceshare.KnownGeometriesCMName"
ARG_KNOWN_GEOMETRIES_CM_NAMESPACE: Final = "deviceshare.KnownGeometriesCMNamespace"
ARG_ASCEND_MINDCLUSTER_ENABLE: Final = "deviceshare.AscendMindClusterVNPUEnable"
ARG_ASCEND_HAMI_ENABLE: Final = "deviceshare.AscendHAMiVNPUEnable"
ARG_GPU_EXCLUSIVE_RULES: Final = "deviceshare.GPUExclusiveRules"

DEVICESHARE_ARGS: Final = (
    ARG_GPU_SHARING_ENABLE,
    ARG_GPU_NUMBER_ENABLE,
    ARG_VGPU_ENABLE,
    ARG_NODE_LOCK_ENABLE,
    ARG_SCHEDULE_POLICY,
    ARG_SCHEDULE_WEIGHT,
    ARG_KNOWN_GEOMETRIES_CM_NAME,
    ARG_KNOWN_GEOMETRIES_CM_NAMESPACE,
    ARG_ASCEND_MINDCLUSTER_ENABLE,
    ARG_ASCEND_HAMI_ENABLE,
    ARG_GPU_EXCLUSIVE_RULES,
)

ENABLE_ARG_BY_FAMILY: Final = {
    Family.VGPU: ARG_VGPU_ENABLE,
    Family.GPUSHARE: ARG_GPU_SHARING_ENABLE,
    Family.GPUNUMBER: ARG_GPU_NUMBER_ENABLE,
    Family.ASCEND_HAMI: ARG_ASCEND_HAMI_ENABLE,
    Family.ASCEND_MINDCLUSTER: ARG_ASCEND_MINDCLUSTER_ENABLE,
}

# The `predicates` plugin's switches (`pkg/scheduler/plugins/predicates/predicates.go`, each default true, read with
# GetBool) that `why` replays or names as not replayed (docs/volcano.md#allocate-predicate).
ARG_PREDICATE_NODE_AFFINITY: Final = "predicate.NodeAffinityEnable"
ARG_PREDICATE_NODE_PORTS: Final = "predicate.NodePortsEnable"
ARG_PREDICATE_TAINT_TOLERATION: Final = "predicate.TaintTolerationEnable"
ARG_PREDICATE_POD_AFFINITY: Final = "predicate.PodAffinityEnable"
ARG_PREDICATE_NODE_VOLUME_LIMITS: Final = "predicate.NodeVolumeLimitsEnable"
ARG_PREDICATE_VOLUME_ZONE: Final = "predicate.VolumeZoneEnable"
ARG_PREDICATE_POD_TOPOLOGY_SPREAD: Final = "predicate.PodTopologySpreadEnable"
ARG_PREDICATE_VOLUME_BINDING: Final = "predicate.VolumeBindingEnable"

# --- Node-level scheduling (Kubernetes names the predicates plugin's filters read) -----------------------
TAINT_UNSCHEDULABLE: Final = "node.kubernetes.io/unschedulable"  # the taint NodeUnschedulable lets a pod tolerate
TAINT_EFFECTS_FILTERED: Final = ("NoSchedule", "NoExecute")  # TaintToleration ignores PreferNoSchedule
NODE_CONDITION_READY: Final = "Ready"
RESOURCE_CPU: Final = "cpu"
RESOURCE_MEMORY: Final = "memory"
RESOURCE_PODS: Final = "pods"
RESOURCE_EPHEMERAL_STORAGE: Final = "ephemeral-storage"

# --- Device ConfigMaps ----------------------------------------------------------------------------
DEVICE_CONFIGMAP: Final = "volcano-vgpu-device-config"
DEVICE_CONFIGMAP_NAMESPACE: Final = "kube-system"
DEVICE_CONFIG_KEY: Final = "device-config.yaml"
ASCEND_DEVICE_CONFIGMAP: Final = "hami-scheduler-device"
VGPU_NODE_CONFIGMAP: Final = "volcano-vgpu-node-config"
ASCEND_NODE_CONFIGMAP: Final = "hami-device-node-config"

# --- Workload kinds whose pod templates are checked (docs/contracts.md#interfaces, lint)
# -------------------------------
VOLCANO_JOB_API_GROUP: Final = "batch.volcano.sh"
WORKLOAD_KINDS: Final = ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "Job", "CronJob")

# Annotations and labels that steer device scheduling when they sit on a pod (VGW001 looks for them
# on a Volcano Job's own metadata, where they have no effect).
DEVICE_POD_ANNOTATIONS: Final = (
    ANN_VGPU_MODE,
    ANN_USE_GPUTYPE,
    ANN_NOUSE_GPUTYPE,
    ANN_USE_GPUUUID,
    ANN_NOUSE_GPUUUID,
    ANN_PODGROUP_POLICY,
    ANN_VNPU_MODE,
)
DEVICE_POD_LABELS: Final = (LABEL_RING_CONTROLLER, LABEL_VNPU_LEVEL, LABEL_VNPU_DVPP)

#: Pod phases whose devices are free again: Volcano and the device plugins no longer count these pods.
DONE_POD_PHASES: Final = ("Succeeded", "Failed")

# --- Other GPU stacks on the same nodes (docs/stacks.md) --------------------------------------------
# NVIDIA's device plugin (NVIDIA/k8s-device-plugin v0.20.0): its resources, with `.shared` the default rename of a
# replicated resource (`api/config/v1/resources.go` DefaultSharedRename), and GPU feature discovery's labels per
# resource (`internal/lm/resource.go` baseLabeler: `<resource>.count`, `.replicas`, `.sharing-strategy`, `.product`).
NVIDIA_GPU: Final = "nvidia.com/gpu"
NVIDIA_GPU_SHARED: Final = "nvidia.com/gpu.shared"
NVIDIA_GPU_RESOURCE_PREFIXES: Final = ("nvidia.com/gpu", "nvidia.com/mig-")  # GPUs and MIG devices, every stack
LABEL_NVIDIA_GPU_COUNT: Final = "nvidia.com/gpu.count"
LABEL_NVIDIA_GPU_REPLICAS: Final = "nvidia.com/gpu.replicas"
LABEL_NVIDIA_GPU_SHARING: Final = "nvidia.com/gpu.sharing-strategy"
LABEL_NVIDIA_GPU_PRODUCT: Final = "nvidia.com/gpu.product"
NVIDIA_SHARED_PRODUCT_SUFFIX: Final = "-SHARED"
# gpu-operator (NVIDIA/gpu-operator v26.7.0 `controllers/state_manager.go`): the label its device-plugin DaemonSet
# selects on; a non-empty value set by the administrator is kept, so `false` keeps the plugin off the node.
LABEL_GPU_OPERATOR_DEVICE_PLUGIN: Final = "nvidia.com/gpu.deploy.device-plugin"

# --- DRA (resource.k8s.io), docs/stacks.md#dra ---------------------------------------------------------
# GPU drivers and the DeviceClasses their charts install (kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1
# `deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-*.yaml`; Project-HAMi/k8s-dra-driver v0.1.0
# `chart/hami-dra-driver/templates/deviceclass-hami-gpu.yaml`).
DRA_DRIVER_NVIDIA_GPU: Final = "gpu.nvidia.com"
DRA_DRIVER_HAMI_GPU: Final = "hami-core-gpu.project-hami.io"
DRA_GPU_DRIVERS: Final = frozenset({DRA_DRIVER_NVIDIA_GPU, DRA_DRIVER_HAMI_GPU})
DRA_GPU_CLASSES: Final = frozenset({"gpu.nvidia.com", "mig.nvidia.com", "hami-core-gpu.project-hami.io"})
DRA_ATTR_UUID: Final = "uuid"
DRA_ATTR_PARENT_UUID: Final = "parentUUID"  # a MIG device's GPU
DRA_ATTR_TYPE: Final = "type"
# A manifest without a namespace is applied to this one (kubectl without -n): DRA claims and templates resolve there.
DEFAULT_NAMESPACE: Final = "default"

# The predicates plugin's DRA switch (volcano-sh/volcano v1.12.0–v1.14.x `pkg/scheduler/plugins/predicates/
# predicates.go`; no longer read from v1.15.0) and the scheduler feature gate behind it.
ARG_PREDICATE_DRA: Final = "predicate.DynamicResourceAllocationEnable"
FEATURE_GATES_FLAG: Final = "--feature-gates"
GATE_DRA: Final = "DynamicResourceAllocation"
