"""Shared pieces of the codecs: the problem value and Go-faithful scalar parsing.

The annotations are read by Go code (`strconv.Atoi`, `strconv.ParseBool`, `encoding/json`), so what a
value *means* is what Go makes of it, not what Python's `int()` or `json.loads` would accept: Python
takes `" 7"`, `"1_000"` and `"٣"`, JSON `NaN` and `1.0` for an int field; Go takes none of them. These
helpers reproduce the Go reading so a codec can say precisely what Volcano will do.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Final

from vgpuctl.core.spec import MAX_ALLOCATION_VALUE


@dataclass(frozen=True, slots=True)
class CodecProblem:
    """Something wrong with an annotation value, with the finding code it maps to
    (docs/contracts.md#finding-families)."""

    code: str
    message: str  # one line: what is wrong and what Volcano does about it


Problems = tuple[CodecProblem, ...]

_GO_INT: Final = re.compile(r"[+-]?[0-9]+")
INT32_MIN: Final = -(2**31)
INT32_MAX: Final = 2**31 - 1
INT64_MIN: Final = -(2**63)
INT64_MAX: Final = 2**63 - 1
UINT_MAX: Final = 2**64 - 1
_GO_TRUE: Final = frozenset({"1", "t", "T", "TRUE", "true", "True"})
_GO_FALSE: Final = frozenset({"0", "f", "F", "FALSE", "false", "False"})


def go_parse_int(text: str, *, bits: int = 64) -> int | None:
    """`strconv.ParseInt(text, 10, bits)` (and `Atoi` for 64): the int, or None where Go returns an error."""
    if len(text) > 40 or not _GO_INT.fullmatch(text):  # longer cannot fit in 64 bits (and int() would refuse 4300+)
        return None
    value = int(text)
    if not -(2 ** (bits - 1)) <= value <= 2 ** (bits - 1) - 1:
        return None
    return value


def go_parse_bool(text: str) -> bool | None:
    """`strconv.ParseBool`: the bool, or None where Go returns an error (and callers read false)."""
    if text in _GO_TRUE:
        return True
    if text in _GO_FALSE:
        return False
    return None


def quote(value: object, limit: int = 60) -> str:
    """A one-line, quoted, shortened rendering of a value for a problem message."""
    text = value if isinstance(value, str) else repr(value)
    if len(text) > limit:
        text = text[:limit] + "…"
    return json.dumps(text, ensure_ascii=False)


def json_text(value: object, limit: int = 60) -> str:
    """A decoded JSON value shown as JSON text, shortened, for a problem message."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        text = type_name(value)
    return text if len(text) <= limit else text[:limit] + "…"


def type_name(value: object) -> str:
    return "null" if value is None else type(value).__name__


def not_a_string(code: str, what: str, value: object) -> CodecProblem:
    return CodecProblem(code, f"{what} is a {type_name(value)}, not a string; Volcano cannot read it")


def too_long(code: str, what: str, value: str) -> CodecProblem | None:
    """An allocation value longer than Volcano ever writes (`spec.MAX_ALLOCATION_VALUE`): not read."""
    if len(value) <= MAX_ALLOCATION_VALUE:
        return None
    return CodecProblem(code, f"{what} is {len(value)} characters long, more than any allocation Volcano writes "
                              f"({MAX_ALLOCATION_VALUE}); not read, so nothing is booked from it")


# ---- JSON as Go's encoding/json reads it -------------------------------------------------------------


class _NotGoJsonError(ValueError):
    pass


def _reject_constant(name: str) -> object:
    raise _NotGoJsonError(f"{name} is not valid JSON")


def go_json_loads(text: str) -> tuple[object, str | None]:
    """Parse JSON the way `json.Unmarshal` would accept it; (value, None) or (None, reason)."""
    try:
        return json.loads(text, parse_constant=_reject_constant), None
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError; so is a too-long int
        reason = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return None, reason[:120]


_GO_HTML_ESCAPES: Final = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_json_dumps(value: object) -> str:
    """`json.Marshal`: compact, UTF-8, with Go's escaping of `<`, `>`, `&`, U+2028 and U+2029."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in _GO_HTML_ESCAPES.items():
        text = text.replace(char, escaped)
    return text


def json_field(obj: dict[str, object], key: str) -> tuple[bool, object]:
    """Look a struct field up as Go does: an exact key first, else a case-insensitive one."""
    if key in obj:
        return True, obj[key]
    lowered = key.lower()
    for name, value in obj.items():
        if name.lower() == lowered:
            return True, value
    return False, None


def go_json_int(value: object, *, lo: int, hi: int) -> int | None:
    """A JSON value decoded into a Go integer field: the int (null → 0), or None for a type error."""
    if value is None:
        return 0
    if type(value) is not int:  # bools, floats (1.0 is an error for Go ints) and strings are type errors
        return None
    return value if lo <= value <= hi else None


def go_json_bool(value: object) -> bool | None:
    if value is None:
        return False
    return value if isinstance(value, bool) else None


def go_json_str(value: object) -> str | None:
    if value is None:
        return ""
    return value if isinstance(value, str) else None


# ---- times --------------------------------------------------------------------------------------------

_RFC3339: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})",
    re.ASCII,
)


def _frac_micros(frac: str | None) -> int:
    return int((frac or "0")[:6].ljust(6, "0"))


def parse_rfc3339(text: str) -> datetime | None:
    """Go's `time.Parse(time.RFC3339, text)` (fractional seconds accepted); an aware datetime or None."""
    m = _RFC3339.fullmatch(text)
    if m is None:
        return None
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    zone = m.group(8)
    if zone == "Z":
        tz = UTC
    else:
        hours, minutes = int(zone[1:3]), int(zone[4:6])
        if hours > 23 or minutes > 59:
            return None
        offset = timedelta(hours=hours, minutes=minutes)
        tz = timezone(-offset if zone[0] == "-" else offset)
    try:
        return datetime(year, month, day, hour, minute, second, _frac_micros(m.group(7)), tzinfo=tz)
    except ValueError:
        return None


def as_aware(moment: datetime) -> datetime:
    """Treat a naive `now` as UTC so comparisons never raise."""
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


# ---- pod allocation annotations: `<id>,<…>,<mem>,<cores>:` per device, containers split by `;` ----------

def device_pieces(c_no: int, block: str, code: str, problems: list[CodecProblem]) -> Iterator[tuple[str, list[str]]]:
    """The `:`-separated device pieces of container `c_no`'s block with their `,` fields; a piece without a
    `,` is skipped as Volcano skips it (reported unless blank)."""
    for piece in block.split(":"):
        if "," not in piece:
            if piece.strip():
                problems.append(CodecProblem(code, f"container {c_no}: piece {quote(piece)} has no ',' and is skipped"))
            continue
        yield piece, piece.split(",")


def int32_field(c_no: int, piece: str, name: str, raw: str, code: str, problems: list[CodecProblem]) -> int | None:
    """A device field Volcano reads with strconv.Atoi into an int32: None (reported; Volcano reads 0) if not."""
    parsed = go_parse_int(raw, bits=32)
    if parsed is None:
        problems.append(CodecProblem(
            code, f"container {c_no}: device {quote(piece)}: {name} {quote(raw)} is not an int32; Volcano reads 0"))
    return parsed
