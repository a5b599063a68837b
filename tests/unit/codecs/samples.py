"""Annotation samples written from the documented encodings (docs/vgpu.md#vgpu-node-registration,
docs/vgpu.md#vgpu-allocation, docs/ascend.md#ascend-hami-keys, docs/ascend.md#mindcluster-pod,
docs/device-plugins.md#vgpu-plugin-node-annotations, docs/device-plugins.md#ascend-plugin-annotations,
docs/hami.md#hami-node-annotations)."""

from __future__ import annotations

UUID_A = "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448"
UUID_B = "GPU-7c1a9e3b-24f0-11ee-9d6a-0242ac120002"
UUID_C = "GPU-b2f4d8e1-5a6c-4e7f-8a9b-0c1d2e3f4a5b"
A100_40 = "NVIDIA-NVIDIA A100-PCIE-40GB"
A100_80 = "NVIDIA-NVIDIA A100-SXM4-80GB"
T4 = "NVIDIA-Tesla T4"

# device plugin v1.10+ (6 fields, trailing ':')
REGISTER_6 = f"{UUID_A},10,40960,{A100_40},true,hami-core:{UUID_B},10,40960,{A100_40},true,hami-core:"
REGISTER_MIG = f"{UUID_A},7,81920,{A100_80},true,mig:"
# device plugin v1.9.x (5 fields, no mode)
REGISTER_5 = f"{UUID_A},10,40960,{A100_40},true:{UUID_B},10,40960,{A100_40},true:"

# volcano.sh/vgpu-ids-new: two containers, the first with two GPUs; a MIG id in the second
VGPU_IDS = f"{UUID_A},NVIDIA,3000,30:{UUID_B},NVIDIA,3000,30:;{UUID_C}[group2-3],NVIDIA,10240,0:"

ASCEND_CW = "Ascend910B3"
ASCEND_REGISTER = (
    '[{"id":"Ascend910B3-4f0e-0","count":7,"devmem":65536,"devcore":20,"type":"Ascend910B3","health":true,'
    '"custominfo":{"NetworkID":0}},'
    '{"id":"Ascend910B3-4f0e-1","index":1,"count":7,"devmem":65536,"devcore":20,"type":"Ascend910B3","health":true,'
    '"custominfo":{"NetworkID":0}}]'
)
ASCEND_ALLOCATED = "Ascend910B3-4f0e-0,Ascend910B3,16384,0:;Ascend910B3-4f0e-1,Ascend910B3,65536,0:;"
