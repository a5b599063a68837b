"""Parser for `npu-smi info` (Huawei Ascend), enough to list the chips, their names and health.

The table has two lines per chip: `| <NPU id>  <name> | <health> | power temp ... |` then
`| <chip id> [<device or phy id>] | <bus id or NA> | ... |`. Atlas 300I Pro/Duo (310P3) and older cards
head the second column `Chip Device`; Atlas 800 A2 (910B) has `Chip` alone; Atlas A3 has `Chip Phy-ID`
and two chips per NPU. A process table follows (`| NPU Chip | Process id | ...`), whose rows look like chip
rows, so parsing stops there. The name is what `node.kubernetes.io/npu.chip.name` and the Ascend device
config's `chipName` use (`310P3`, `910B3`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

INFO_ARGS = ("npu-smi", "info")

_VERSION = re.compile(r"npu-smi\s+(\S+)\s+Version:\s*(\S+)")
_CHIP_HEAD = re.compile(r"^(?P<npu>\d+)\s+(?P<name>\S+)$")
_CHIP_TAIL = re.compile(r"^(?P<chip>\d+)(?:\s+(?P<device>\d+))?$")


@dataclass(frozen=True, slots=True)
class NpuChip:
    npu_id: int
    chip_id: int
    name: str  # "310P3", "910B2", "Ascend910"
    health: str  # "OK", "Warning", "Alarm", "Critical", …
    bus_id: str | None = None  # None for SoCs that print "NA"
    device_id: int | None = None  # the "Device" / "Phy-ID" column when the table has one

    @property
    def healthy(self) -> bool:
        return self.health.upper() == "OK"


@dataclass(frozen=True, slots=True)
class NpuInfo:
    chips: tuple[NpuChip, ...]
    version: str | None = None
    problems: tuple[str, ...] = ()


def _cells(line: str) -> list[str]:
    parts = [p.strip() for p in line.strip().split("|")]
    return parts[1:-1] if len(parts) >= 3 else []


def parse_npu_info(text: str) -> NpuInfo:
    """Parse `npu-smi info`."""
    chips: list[NpuChip] = []
    problems: list[str] = []
    version: str | None = None
    pending: tuple[int, str, str, int] | None = None  # (npu id, name, health, line number) awaiting its chip line
    seen_table = False
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if version is None and (match := _VERSION.search(stripped)):
            version = match.group(2)
            continue
        if not stripped.startswith("|"):
            continue
        cells = _cells(stripped)
        if len(cells) < 2:
            continue
        if "Process id" in cells[1] or cells[1].startswith("Process"):
            break  # the process table: its rows look like chip rows
        if cells[0].startswith("NPU") or cells[0].startswith("Chip"):
            seen_table = True  # the header
            continue
        head = _CHIP_HEAD.match(cells[0])
        tail = _CHIP_TAIL.match(cells[0])
        if pending is None and head and not tail:
            pending = (int(head["npu"]), head["name"], cells[1].split()[0] if cells[1] else "", number)
        elif pending is not None and tail:
            npu, name, health, _ = pending
            bus = cells[1] if cells[1] and cells[1].upper() != "NA" else None
            device = int(tail["device"]) if tail["device"] is not None else None
            chips.append(NpuChip(npu, int(tail["chip"]), name, health, bus, device))
            pending = None
        elif pending is not None:
            problems.append(f"line {pending[3]}: NPU {pending[0]} ({pending[1]}) has no chip line after it")
            pending = None
    if pending is not None:
        problems.append(f"line {pending[3]}: NPU {pending[0]} ({pending[1]}) has no chip line after it")
    if not chips and text.strip() and not seen_table:
        problems.append(f"not an npu-smi info table: {text.strip().splitlines()[0][:80]!r}")
    return NpuInfo(tuple(chips), version, tuple(problems))
