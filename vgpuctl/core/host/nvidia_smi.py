"""Parsers for the two `nvidia-smi` outputs `doctor --node` reads.

`nvidia-smi --query-gpu=... --format=csv,noheader,nounits` gives one CSV row per GPU; a value the driver
cannot supply is written in brackets (`[N/A]` for MIG mode on a GPU without MIG, `[Not Supported]`,
`[Insufficient Permissions]`). `nvidia-smi mig -lgip` prints a box table with two lines per GPU instance
profile; only MIG-enabled GPUs appear in it, and with none enabled it prints `No MIG-enabled devices found.`
Both parsers keep going past a bad line and report it, because a doctor that stops at the first surprise
hides everything after it.
"""

from __future__ import annotations

import csv
import enum
import re
from dataclasses import dataclass

#: The fields `doctor --node` queries, in order; the adapter passes them, the parser expects them.
QUERY_FIELDS = ("index", "uuid", "name", "driver_version", "mig.mode.current", "memory.total")
QUERY_ARGS = ("nvidia-smi", f"--query-gpu={','.join(QUERY_FIELDS)}", "--format=csv,noheader,nounits")
#: Drivers before R450 (no MIG) reject `mig.mode.current`; the adapter then asks again without it.
LEGACY_QUERY_FIELDS = ("index", "uuid", "name", "driver_version", "memory.total")
LEGACY_QUERY_ARGS = ("nvidia-smi", f"--query-gpu={','.join(LEGACY_QUERY_FIELDS)}", "--format=csv,noheader,nounits")
INVALID_FIELD = "is not a valid field to query"
MIG_PROFILES_ARGS = ("nvidia-smi", "mig", "-lgip")

NO_MIG_DEVICES = "No MIG-enabled devices found"


class MigMode(str, enum.Enum):
    ENABLED = "Enabled"
    DISABLED = "Disabled"
    NOT_SUPPORTED = "[N/A]"  # the GPU has no MIG (T4, V100, RTX…)
    UNKNOWN = "unknown"  # any other bracketed value, e.g. [Insufficient Permissions]


@dataclass(frozen=True, slots=True)
class GpuInfo:
    index: int
    uuid: str
    name: str  # the NVML name, e.g. "NVIDIA A100-SXM4-40GB"; the plugin registers "NVIDIA-" + this
    driver_version: str | None
    mig_mode: MigMode
    memory_mib: int | None

    @property
    def registered_type(self) -> str:
        """The `type` field the vGPU device plugin writes into `volcano.sh/node-vgpu-register`."""
        return f"NVIDIA-{self.name}"


@dataclass(frozen=True, slots=True)
class GpuQuery:
    gpus: tuple[GpuInfo, ...]
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class MigProfile:
    gpu: int
    name: str  # without the "MIG " prefix: "1g.5gb", "1g.10gb+me", "7g.80gb"
    profile_id: int
    free: int
    total: int
    memory_gib: float


@dataclass(frozen=True, slots=True)
class MigProfileList:
    profiles: tuple[MigProfile, ...]
    problems: tuple[str, ...] = ()
    no_mig_devices: bool = False  # the output said "No MIG-enabled devices found."


def _value(raw: str) -> str | None:
    value = raw.strip()
    if not value or (value.startswith("[") and value.endswith("]")) or value.upper() == "N/A":
        return None
    return value


def _mig_mode(raw: str) -> MigMode:
    value = raw.strip()
    if value == "Enabled":
        return MigMode.ENABLED
    if value == "Disabled":
        return MigMode.DISABLED
    if value in ("[N/A]", "N/A"):
        return MigMode.NOT_SUPPORTED
    return MigMode.UNKNOWN


def _mib(raw: str) -> int | None:
    value = _value(raw)
    if value is None:
        return None
    value = value.removesuffix("MiB").strip()  # tolerate output produced without `nounits`
    try:
        return int(float(value))
    except ValueError:
        return None


def parse_gpu_query(text: str, fields: tuple[str, ...] = QUERY_FIELDS) -> GpuQuery:
    """Parse `nvidia-smi --query-gpu=<fields> --format=csv,noheader,nounits` (QUERY_FIELDS or the legacy set).

    Without `mig.mode.current` among the fields (drivers before R450) every GPU's mode is NOT_SUPPORTED.
    """
    gpus: list[GpuInfo] = []
    problems: list[str] = []
    lines = [line for line in text.splitlines() if line.strip()]
    for number, row in enumerate(csv.reader(lines, skipinitialspace=True), start=1):
        if row and row[0].strip() == fields[0]:  # produced without `noheader`
            continue
        if len(row) != len(fields):
            problems.append(f"line {number}: expected {len(fields)} comma-separated fields, got {len(row)}: "
                            f"{','.join(row)[:80]!r}")
            continue
        value = dict(zip(fields, (cell.strip() for cell in row), strict=True))
        try:
            gpu_index = int(value["index"])
        except ValueError:
            problems.append(f"line {number}: GPU index {value['index']!r} is not an integer")
            continue
        mig = value.get("mig.mode.current")
        gpus.append(GpuInfo(index=gpu_index, uuid=value["uuid"], name=value["name"],
                            driver_version=_value(value["driver_version"]),
                            mig_mode=_mig_mode(mig) if mig is not None else MigMode.NOT_SUPPORTED,
                            memory_mib=_mib(value["memory.total"])))
    return GpuQuery(tuple(gpus), tuple(problems))


_DRIVER = re.compile(r"^\s*(\d+)(?:\.\d+)*\s*$")


def driver_major(version: str | None) -> int | None:
    """`"535.104.05"` → 535; None when the version is unknown or not dotted digits."""
    if version is None:
        return None
    match = _DRIVER.match(version)
    return int(match.group(1)) if match else None


# `|   0  MIG 1g.10gb+me    20     1/1        9.75       No     16     1     0   |`
_PROFILE_ROW = re.compile(
    r"^\|\s*(?P<gpu>\d+)\s+MIG\s+(?P<name>\S+)\s+(?P<id>\d+)\s+(?P<free>\d+)/(?P<total>\d+)\s+"
    r"(?P<mem>\d+(?:\.\d+)?)\s"
)


def parse_mig_profiles(text: str) -> MigProfileList:
    """Parse `nvidia-smi mig -lgip` (the GPU instance profiles table)."""
    if NO_MIG_DEVICES in text:
        return MigProfileList((), (), no_mig_devices=True)
    profiles: list[MigProfile] = []
    problems: list[str] = []
    seen_header = False
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if "GPU instance profiles" in stripped:
            seen_header = True
            continue
        match = _PROFILE_ROW.match(stripped)
        if match:
            profiles.append(MigProfile(gpu=int(match["gpu"]), name=match["name"], profile_id=int(match["id"]),
                                       free=int(match["free"]), total=int(match["total"]),
                                       memory_gib=float(match["mem"])))
        elif " MIG " in stripped and stripped.startswith("|"):
            problems.append(f"line {number}: unrecognised profile row {stripped[:80]!r}")
    if not profiles and text.strip() and not seen_header:
        problems.append(f"not a GPU instance profile table: {text.strip().splitlines()[0][:80]!r}")
    return MigProfileList(tuple(profiles), tuple(problems))
