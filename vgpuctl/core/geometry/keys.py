"""Which keys each level of the device config has, and who reads them (docs/device-plugins.md#vgpu-plugin-device-config,
docs/device-plugins.md#vnpus-forms, docs/hami.md#hami-device-config, docs/volcano.md#device-config-schema).

Volcano, the vGPU plugin and the Ascend plugin decode the same document with yaml.v2 and no strict
mode, so a misspelt key is dropped without a word. `geometry validate` compares every key with these
tables: a key no reader knows is VGM009, a key only some other reader uses is VGM010 (no effect on the
Volcano path), and HAMi's own `nvidia:` vocabulary is VGM011. The tuples are also the key order
`export` and `merge` write, which is the order of the upstream ConfigMaps.
"""

from __future__ import annotations

from typing import Final

TOP: Final = ("nvidia", "vnpus")

NVIDIA: Final = (
    "resourceCountName",
    "resourceMemoryName",
    "resourceMemoryPercentageName",
    "resourceCoreName",
    "resourcePriorityName",
    "overwriteEnv",
    "defaultMemory",
    "defaultCores",
    "defaultGPUNum",
    "deviceSplitCount",
    "deviceMemoryScaling",
    "deviceCoreScaling",
    "disableCoreLimit",
    "gpuMemoryFactor",
    "knownMigGeometries",
)
# Read by the vGPU device plugin's struct only; known, so not VGM009.
NVIDIA_PLUGIN_ONLY: Final = ("passDeviceSpecs",)
# Parsed, but without effect on the Volcano path (VGM010).
NVIDIA_NO_EFFECT: Final = ("deviceMemoryScaling", "defaultMemory", "defaultCores", "defaultGPUNum", "overwriteEnv")
# HAMi's nvidia vocabulary that changes meaning or breaks Volcano (VGM011).
NVIDIA_HAMI_ERRORS: Final = {
    "migProfileAllowlist": "HAMi 2.10's MIG allowlist; Volcano ignores it, so no MIG geometry exists",
    "memoryFactor": "HAMi's memoryFactor multiplies requests; Volcano ignores it and divides registered "
                    "memory by gpuMemoryFactor instead",
}
# HAMi-only nvidia keys that Volcano and the vGPU plugin ignore (VGM009 with a note).
NVIDIA_HAMI_ONLY: Final = ("gpuCorePolicy", "libCudaLogLevel", "runtimeClassName", "preConfiguredDeviceMemory",
                           "enableNumaTopology")
# Spellings the vGPU plugin's doc/config.md documents, none of which is a struct key
# (docs/device-plugins.md#vgpu-plugin-device-config).
MISSPELLINGS: Final = {
    "disablecorelimit": "disableCoreLimit",
    "defaultMem": "defaultMemory",
}
MIGSTRATEGY: Final = "migstrategy"

MIG_ENTRY: Final = ("models", "allowedGeometries")
MIG_GROUP: Final = ("group", "geometries")
MIG_INSTANCE: Final = ("name", "memory", "count")

VNPUS_WRAPPER: Final = ("hamiVnpuCore", "configs")
VNPU: Final = (
    "chipName",
    "commonWord",
    "resourceName",
    "resourceMemoryName",
    "memoryAllocatable",
    "memoryCapacity",
    "aiCore",
    "aiCPU",
    "templates",
)
# vnpus keys the Ascend plugin or HAMi read and Volcano ignores (VGM010).
VNPU_OTHER_READERS: Final = {
    "resourceCoreName": "Volcano ignores it and always uses <resourceName>-core",
    "memoryFactor": "read by HAMi only",
    "runtimeClassName": "read by HAMi's webhook only",
    "overwriteEnv": "read by HAMi only",
    "superPod": "read by HAMi only (910C pairing)",
}
VNPU_TEMPLATE: Final = ("name", "memory", "aiCore", "aiCPU")

# Characters that break the MIG allocation id `<uuid>[<group>-<pos>]` or the annotation around it.
MIG_GROUP_FORBIDDEN: Final = "-[],:;"
