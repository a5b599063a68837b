"""Handshake annotations: `volcano.sh/node-vgpu-handshake`, `hami.io/node-handshake[-<CW>]`
(docs/vgpu.md#vgpu-node-registration, docs/device-plugins.md#ascend-plugin-annotations,
docs/hami.md#hami-node-annotations).

Values:

- `Reported <Go time.String()>` — the vGPU device plugin ≤ v1.12.0, every 30 s, e.g.
  `Reported 2026-05-09 10:00:00.123456789 +0800 CST m=+12.345678901`;
- `Reported_2026.05.09 10:00:00` — the Ascend device plugin (local time, layout `2006.01.02 15:04:05`);
- `Requesting_<time>` — written by the scheduler when it uses the node; `Deleted_<time>` — written when a
  `Requesting_` older than 60 s shows the plugin is gone. Volcano's layout is `2006.01.02 15:04:05`;
  HAMi ≥ v2.5 writes `2006-01-02 15:04:05`.

Volcano ≤ v1.14.2 / v1.15.0 (`NewGPUDevices`): a value containing `Requesting` has its time taken from
`strings.Split(value, "_")[1]` (no `_` → index out of range, the scheduler panics) and parsed with
`time.Parse` (an unparseable time reads as year 1, so the node is dropped at once); a value containing
`Deleted` drops the node; anything else counts as a fresh report.

Time zones: the scheduler *writes* `time.Now().Format(...)` in its own local zone but `time.Parse` reads
the zone-less text as UTC. The decoded `time` of a zone-less value is therefore labelled UTC — the instant
Volcano believes — which is off by the scheduler's UTC offset when it does not run in UTC. Only the
`Reported <time.String()>` form carries its own offset.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta, timezone
from typing import Final, Literal

from vgpuctl.core.codecs._common import CodecProblem, Problems, as_aware, not_a_string, quote

VGN006 = "VGN006"
HANDSHAKE_TIMEOUT: Final = timedelta(seconds=60)
VOLCANO_LAYOUT: Final = "%Y.%m.%d %H:%M:%S"  # Go "2006.01.02 15:04:05"
HAMI_LAYOUT: Final = "%Y-%m-%d %H:%M:%S"  # Go time.DateTime, HAMi ≥ v2.5

HandshakeState = Literal["reported", "requesting", "deleted", "unknown"]

_GO_TIME_STRING: Final = re.compile(
    r"(\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))? ([+-])(\d{2})(\d{2})(?: \S+)?(?: m=[+-]\d+(?:\.\d+)?)?",
    re.ASCII,
)
_STAMP: Final = re.compile(r"\d{4}[.-]\d{2}[.-]\d{2} \d{2}:\d{2}:\d{2}", re.ASCII)


@dataclass(frozen=True, slots=True)
class Handshake:
    state: HandshakeState
    time: datetime | None  # aware; see the module note on zone-less values
    raw: str
    problems: Problems = field(default=())

    def expired(self, now: datetime) -> bool:
        """Volcano's test on a `Requesting_` value: more than 60 s old (an unreadable time always is)."""
        if self.state != "requesting":
            return False
        if self.time is None:
            return True
        return as_aware(now) > self.time + HANDSHAKE_TIMEOUT


def parse_stamp(text: str) -> datetime | None:
    """A zone-less `2006.01.02 15:04:05` (Volcano, Ascend) or `2006-01-02 15:04:05` (HAMi ≥ 2.5), read as UTC."""
    if not _STAMP.fullmatch(text):
        return None
    for layout in (VOLCANO_LAYOUT, HAMI_LAYOUT):
        try:
            return datetime.strptime(text, layout).replace(tzinfo=UTC)
        except ValueError:
            continue
    return None


def parse_go_time_string(text: str) -> datetime | None:
    """Go's `time.Time.String()`: `2006-01-02 15:04:05.999999999 -0700 MST` plus an optional ` m=±…` reading."""
    m = _GO_TIME_STRING.fullmatch(text)
    if m is None:
        return None
    base, frac, sign, hh, mm = m.groups()
    try:
        moment = datetime.strptime(base, HAMI_LAYOUT)
    except ValueError:
        return None
    if int(hh) > 23 or int(mm) > 59:
        return None
    offset = timedelta(hours=int(hh), minutes=int(mm))
    tz = timezone(-offset if sign == "-" else offset)
    micros = int((frac or "0")[:6].ljust(6, "0"))
    return moment.replace(microsecond=micros, tzinfo=tz)


def decode_handshake(value: object) -> Handshake:
    """Decode a handshake value; never raises. `None` (absent) gives state "unknown" and no problems."""
    if value is None:
        return Handshake("unknown", None, "")
    if not isinstance(value, str):
        return Handshake("unknown", None, "", (not_a_string(VGN006, "the handshake annotation", value),))
    if "Requesting" in value:
        return _requesting(value)
    if "Deleted" in value:
        return Handshake("deleted", _stamp_after_underscore(value), value)
    if value.startswith("Reported"):
        return _reported(value)
    return Handshake(
        "unknown",
        None,
        value,
        (
            CodecProblem(
                VGN006,
                f"handshake {quote(value)} is neither Reported, Requesting_ nor Deleted_; Volcano treats it as a "
                "fresh report and overwrites it with Requesting_",
            ),
        ),
    )


def _stamp_after_underscore(value: str) -> datetime | None:
    parts = value.split("_")
    return parse_stamp(parts[1]) if len(parts) > 1 else None


def _requesting(value: str) -> Handshake:
    parts = value.split("_")
    if len(parts) < 2:
        problem = CodecProblem(
            VGN006,
            f"handshake {quote(value)} has no '_' after Requesting; Volcano indexes the time unchecked and the "
            "scheduler panics (index out of range)",
        )
        return Handshake("requesting", None, value, (problem,))
    moment = parse_stamp(parts[1])
    problems: Problems = ()
    if moment is None:
        problems = (
            CodecProblem(
                VGN006,
                f"handshake {quote(value)}: time {quote(parts[1])} is not '2006.01.02 15:04:05'; Volcano reads year 1, "
                "so the request looks expired and the node is marked Deleted at once",
            ),
        )
    return Handshake("requesting", moment, value, problems)


def _reported(value: str) -> Handshake:
    rest = value[len("Reported") :]
    moment: datetime | None = None
    if rest.startswith("_"):
        moment = parse_stamp(rest[1:])
    elif rest.startswith(" "):
        moment = parse_go_time_string(rest[1:])
    problems: Problems = ()
    if moment is None:
        problems = (
            CodecProblem(
                VGN006,
                f"handshake {quote(value)}: the report time is unreadable; Volcano only checks the word, so this is "
                "harmless but unusual",
            ),
        )
    return Handshake("reported", moment, value, problems)


def encode_handshake(state: Literal["requesting", "deleted", "reported-ascend"], moment: datetime) -> str:
    """The scheduler's `Requesting_` / `Deleted_` values and the Ascend `Reported_` value (Volcano layout)."""
    prefix = {"requesting": "Requesting_", "deleted": "Deleted_", "reported-ascend": "Reported_"}[state]
    return prefix + moment.strftime(VOLCANO_LAYOUT)
