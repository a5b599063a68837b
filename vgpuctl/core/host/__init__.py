"""Node-local facts for `doctor --node`: pure parsers of `nvidia-smi`, `npu-smi` and container-engine configs.

The I/O (running the commands, reading the files) is the adapter `vgpuctl.host`; this package only turns
text into values, so every parser is tested on recorded real outputs.
"""

from vgpuctl.core.host.facts import CommandResult, HostFacts, HostProblem, Outcome
from vgpuctl.core.host.npu_smi import NpuChip, NpuInfo, parse_npu_info
from vgpuctl.core.host.nvidia_smi import (
    GpuInfo,
    GpuQuery,
    MigMode,
    MigProfile,
    MigProfileList,
    driver_major,
    parse_gpu_query,
    parse_mig_profiles,
)
from vgpuctl.core.host.runtime import ConfigDocument, RuntimeConfig

__all__ = [
    "CommandResult",
    "ConfigDocument",
    "GpuInfo",
    "GpuQuery",
    "HostFacts",
    "HostProblem",
    "MigMode",
    "MigProfile",
    "MigProfileList",
    "NpuChip",
    "NpuInfo",
    "Outcome",
    "RuntimeConfig",
    "driver_major",
    "parse_gpu_query",
    "parse_mig_profiles",
    "parse_npu_info",
]
