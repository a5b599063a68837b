"""Codecs for every node and pod annotation of Volcano device sharing (docs/volcano.md#vocabulary,
docs/vgpu.md#nvidia-vgpu … docs/ascend.md#mindcluster, docs/device-plugins.md#vgpu-plugin,
docs/device-plugins.md#ascend-plugin … docs/hami.md#hami-webhook-configuration).

Pure functions: stdlib and `vgpuctl.core` only, no clock (lock staleness takes `now`). Every decoder
accepts any object — `None` (annotation absent), non-strings, garbage — and never raises: it returns what
it could read plus a tuple of `CodecProblem`s, each carrying the finding code (docs/contracts.md#finding-families and
friends) and
a one-line message saying what is wrong and what Volcano does about it. Encoders reproduce the upstream
format byte for byte (JSON as Go's `json.Marshal` writes it), so encode → decode round-trips.
"""

from vgpuctl.core.codecs._common import CodecProblem, Problems
from vgpuctl.core.codecs.ascend import (
    AscendRegister,
    VnpuCoreFlag,
    decode_ascend_register,
    decode_hami_vnpu_core,
    encode_ascend_register,
)
from vgpuctl.core.codecs.ascend_pod import (
    AscendDeviceAllocation,
    AscendPodAllocation,
    AscendRuntimeEntry,
    AscendRuntimeInfo,
    NpuCoreAllocation,
    decode_ascend_allocations,
    decode_ascend_runtime_info,
    decode_npu_core,
    encode_ascend_allocations,
    encode_ascend_runtime_info,
    encode_npu_core,
)
from vgpuctl.core.codecs.hami_nvidia import (
    HamiGpu,
    HamiNvidiaForm,
    HamiNvidiaRegister,
    decode_hami_nvidia_register,
    encode_hami_nvidia_register,
)
from vgpuctl.core.codecs.handshake import (
    HANDSHAKE_TIMEOUT,
    Handshake,
    HandshakeState,
    decode_handshake,
    encode_handshake,
)
from vgpuctl.core.codecs.locks import (
    LOCK_NAMES,
    LOCK_STALE_AFTER,
    NodeLock,
    decode_node_lock,
    encode_node_lock,
    find_node_locks,
)
from vgpuctl.core.codecs.pod_alloc import (
    DeviceAllocation,
    GpuIndex,
    MigIdParse,
    MigSlot,
    VgpuPodAllocation,
    decode_gpu_index,
    decode_gpu_unhealthy_ids,
    decode_mig_id,
    decode_vgpu_ids,
    encode_device_id,
    encode_gpu_index,
    encode_vgpu_ids,
)
from vgpuctl.core.codecs.vgpu_register import VgpuRegister, decode_vgpu_register, encode_vgpu_register, sharing_mode

__all__ = [
    "HANDSHAKE_TIMEOUT",
    "LOCK_NAMES",
    "LOCK_STALE_AFTER",
    "AscendDeviceAllocation",
    "AscendPodAllocation",
    "AscendRegister",
    "AscendRuntimeEntry",
    "AscendRuntimeInfo",
    "CodecProblem",
    "DeviceAllocation",
    "GpuIndex",
    "HamiGpu",
    "HamiNvidiaForm",
    "HamiNvidiaRegister",
    "Handshake",
    "HandshakeState",
    "MigIdParse",
    "MigSlot",
    "NodeLock",
    "NpuCoreAllocation",
    "Problems",
    "VgpuPodAllocation",
    "VgpuRegister",
    "VnpuCoreFlag",
    "decode_ascend_allocations",
    "decode_ascend_register",
    "decode_ascend_runtime_info",
    "decode_gpu_index",
    "decode_gpu_unhealthy_ids",
    "decode_hami_nvidia_register",
    "decode_hami_vnpu_core",
    "decode_handshake",
    "decode_mig_id",
    "decode_node_lock",
    "decode_npu_core",
    "decode_vgpu_ids",
    "decode_vgpu_register",
    "encode_ascend_allocations",
    "encode_ascend_register",
    "encode_ascend_runtime_info",
    "encode_device_id",
    "encode_gpu_index",
    "encode_hami_nvidia_register",
    "encode_handshake",
    "encode_node_lock",
    "encode_npu_core",
    "encode_vgpu_ids",
    "encode_vgpu_register",
    "find_node_locks",
    "sharing_mode",
]
