"""What `doctor --node` observed on the machine it runs on, as plain values.

The adapter (`vgpuctl.node_probe`) runs `nvidia-smi` / `npu-smi` and reads the container engines' config files;
everything it saw lands here, parsed by the pure modules next to this one. Nothing here raises: a command
that is missing, fails or times out, and a file that cannot be read or parsed, becomes a `HostProblem`, so
the host checks can say exactly what could not be verified instead of crashing or guessing.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from vgpuctl.core.host.npu_smi import NpuChip
from vgpuctl.core.host.nvidia_smi import GpuInfo, MigProfile
from vgpuctl.core.host.runtime import RuntimeConfig


class Outcome(str, enum.Enum):
    OK = "ok"
    MISSING = "missing"  # the executable was not found
    FAILED = "failed"  # it ran and exited non-zero (or could not be started)
    TIMEOUT = "timeout"


@dataclass(frozen=True, slots=True)
class CommandResult:
    """One command run by the adapter's runner (the port tests replace with recorded outputs)."""

    argv: tuple[str, ...]
    outcome: Outcome
    stdout: str = ""
    detail: str = ""  # the first non-empty stderr line (or why it could not run)
    returncode: int | None = None

    @property
    def ok(self) -> bool:
        return self.outcome is Outcome.OK

    @property
    def command(self) -> str:
        return " ".join(self.argv)

    def describe(self) -> str:
        """`nvidia-smi mig -lgip: failed (exit 6): No MIG-enabled devices found.` style, for messages."""
        if self.outcome is Outcome.MISSING:
            return f"{self.argv[0]}: not found"
        if self.outcome is Outcome.TIMEOUT:
            return f"{self.command}: timed out" + (f" ({self.detail})" if self.detail else "")
        if self.outcome is Outcome.FAILED:
            code = f" (exit {self.returncode})" if self.returncode is not None else ""
            return f"{self.command}: failed{code}" + (f": {self.detail}" if self.detail else "")
        return f"{self.command}: ok"


@dataclass(frozen=True, slots=True)
class HostProblem:
    """Something `collect` could not observe: `source` is a command or a file path."""

    source: str
    kind: str  # "missing" | "failed" | "timeout" | "unreadable" | "unparsable"
    detail: str


@dataclass(frozen=True)
class HostFacts:
    """Everything observed on one node. Empty tuples mean "nothing seen", never "not looked at":
    whether a command ran and how it went is in the `*_result` fields."""

    hostname: str | None = None
    # NVIDIA
    nvidia_smi: CommandResult | None = None  # the --query-gpu run; None = not attempted
    gpus: tuple[GpuInfo, ...] = ()
    mig_profiles_result: CommandResult | None = None  # `nvidia-smi mig -lgip`; None = not run (no MIG GPU)
    mig_profiles: tuple[MigProfile, ...] = ()
    # Ascend
    npu_smi: CommandResult | None = None
    npu_smi_version: str | None = None
    npus: tuple[NpuChip, ...] = ()
    # Device nodes under /dev that say which vendor's driver is loaded: "nvidia", "ascend".
    device_nodes: frozenset[str] = frozenset()
    # Container engines
    engine_in_use: str | None = None  # "containerd" | "docker" | "crio" | None (could not tell)
    engine_evidence: str = ""  # how engine_in_use was decided
    runtimes: tuple[RuntimeConfig, ...] = ()  # one per engine whose config was read (or that is in use)
    problems: tuple[HostProblem, ...] = field(default_factory=tuple)

    @property
    def driver_version(self) -> str | None:
        """The NVIDIA driver version (all GPUs on a node share one driver)."""
        return next((g.driver_version for g in self.gpus if g.driver_version), None)

    @property
    def is_nvidia_node(self) -> bool:
        return bool(self.gpus) or "nvidia" in self.device_nodes or bool(self.nvidia_smi and self.nvidia_smi.ok)

    @property
    def is_ascend_node(self) -> bool:
        return bool(self.npus) or "ascend" in self.device_nodes or bool(self.npu_smi and self.npu_smi.ok)

    def runtime(self, engine: str) -> RuntimeConfig | None:
        return next((r for r in self.runtimes if r.engine == engine), None)

    def profiles_of(self, gpu_index: int) -> tuple[MigProfile, ...]:
        return tuple(p for p in self.mig_profiles if p.gpu == gpu_index)
