"""Kubernetes resource quantities, parsed the way k8s.io/apimachinery's ``resource.ParseQuantity`` does.

A quantity is ``<sign>? <number> <suffix>``: ``<number>`` is ``digits``, ``digits.digits``, ``digits.`` or
``.digits``; ``<suffix>`` is a decimal SI suffix (``n u m "" k M G T P E``), a binary SI suffix
(``Ki Mi Gi Ti Pi Ei``) or a decimal exponent (``e``/``E`` followed by an optionally signed integer).
"1E" is exa (10^18) while "1E3" is an exponent, because the suffix table is consulted first.

Kubernetes' scanner (``parseQuantityString`` in pkg/api/resource/quantity.go) is more permissive than
that grammar and this module reproduces it, quirks included:

* a leading ``+``/``-``, leading zeros (``007``), ``1.`` and ``.5`` are all accepted;
* the number may be missing altogether: ``"+"``, ``"-"``, ``"."``, ``"k"``, ``"Gi"``, ``".Ki"`` and ``"e3"``
  all parse as zero (kubernetes/apimachinery#165).  Only when Kubernetes leaves its int64 fast path does
  a digit-less number fail (``"Pi"``, ``"Ei"``, ``"e-10"``: "unable to parse numeric part");
* the value is kept exactly down to nano (10^-9); anything finer is rounded *away from zero* to the next
  nano, so ``"0.1n"`` is 1n and ``"1e-30"`` is 1n too;
* a binary-SI value is silently capped at 2^63-1 in magnitude (``"8Ei"`` == 9223372036854775807), and
  a binary-SI value strictly between -1 and 1 (``"0.0001Ki"``) reports the DecimalSI format;
* suffixes are case sensitive (``"1ki"``, ``"1g"``, ``"1KB"`` are errors) and no whitespace is allowed
  inside; `parse_quantity` strips surrounding whitespace (Go's ``unicode.IsSpace`` set) the way
  ``Quantity.UnmarshalJSON`` does before parsing.

Deliberate deviations, all for inputs Kubernetes itself mishandles:

* Go parses an exponent as int64 and then truncates it to int32, so ``"1e4294967296"`` silently means 1
  and exponents near ±2^31 wrap its scale arithmetic.  A non-zero quantity whose exponent does not fit
  in int32, or whose scale would wrap, raises `QuantityError` (reason ``"range"``).  Zero stays zero.
* Go accepts a decimal quantity up to about 10^2147483647 (every int64 accessor then overflows).  This
  module raises `QuantityError` (reason ``"range"``) once the magnitude reaches 10^`MAX_MAGNITUDE_DIGITS`,
  so that ``"1e999999999"`` can never make `as_int` build a gigantic integer.
* Go's int64 accessors (``Value()``, ``MilliValue()``) overflow silently past 2^63; the methods here
  return the exact integer instead.

The package is pure: standard library only.
"""

from __future__ import annotations

import enum
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from decimal import Decimal
from types import MappingProxyType
from typing import Final, Literal

__all__ = [
    "BINARY_SUFFIXES",
    "DECIMAL_SUFFIXES",
    "MAX_INT64",
    "MAX_MAGNITUDE_DIGITS",
    "ErrorReason",
    "Format",
    "Quantity",
    "QuantityError",
    "parse_quantity",
]

ErrorReason = Literal["type", "empty", "format", "numeric", "suffix", "range"]
"""Why parsing failed.  ``format``, ``numeric`` and ``suffix`` are Go's ErrFormatWrong, ErrNumeric and
ErrSuffix; ``type`` and ``empty`` concern the raw input; ``range`` is this module's magnitude limit."""


class QuantityError(ValueError):
    """A value that Kubernetes would not accept as a resource quantity (or that is absurdly large).

    ``text`` is the offending input as a string (``None`` when the input was not a string or number) and
    ``reason`` classifies the failure (see `ErrorReason`).
    """

    def __init__(self, message: str, *, text: str | None = None, reason: ErrorReason = "format") -> None:
        super().__init__(message)
        self.text = text
        self.reason: ErrorReason = reason


class Format(str, enum.Enum):
    """How Kubernetes remembers a quantity was written (it re-serialises it in the same style)."""

    BINARY_SI = "BinarySI"
    DECIMAL_SI = "DecimalSI"
    DECIMAL_EXPONENT = "DecimalExponent"


DECIMAL_SUFFIXES: Final[Mapping[str, int]] = MappingProxyType(
    {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
)
"""Decimal SI suffix -> power of ten."""

BINARY_SUFFIXES: Final[Mapping[str, int]] = MappingProxyType(
    {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
)
"""Binary SI suffix -> power of two."""

MAX_INT64: Final = 2**63 - 1
"""The cap Kubernetes applies to binary-SI quantities."""

MAX_MAGNITUDE_DIGITS: Final = 4096
"""Quantities with magnitude >= 10**MAX_MAGNITUDE_DIGITS are rejected (Kubernetes accepts them)."""

_NANO: Final = -9
_INT32_MIN: Final = -(2**31)
_INT32_MAX: Final = 2**31 - 1
_INT64_MIN: Final = -(2**63)
_MAX_MAGNITUDE: Final = 10**MAX_MAGNITUDE_DIGITS
_DIGITS: Final = frozenset("0123456789")
_SUFFIX_CHARS: Final = frozenset("eEinumkKMGTP")
# Go's unicode.IsSpace, which strings.TrimSpace uses (Python's str.strip() also strips \x1c-\x1f).
_GO_SPACE: Final = (
    "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
# Digits of a binary-SI fraction kept exactly; the rest collapse to one sticky digit.  Any cut-off
# beyond 9 + 60 digits cannot change the nano rounding of (x * 2**k) for k <= 60.
_BINARY_FRACTION_DIGITS: Final = 100
_UNITS_HELP: Final = "n u m k M G T P E Ki Mi Gi Ti Pi Ei, or an exponent such as e3"


@dataclass(frozen=True, slots=True)
class Quantity:
    """A parsed quantity.

    ``value`` is exact: what Kubernetes stores after its own rounding (to nano, away from zero) and, for
    binary SI, capping at 2^63-1.  Integral values have exponent 0 (``Decimal("3000")``, not ``3E+3``)
    and fractional ones have no trailing zeros, so ``str(value)`` is plain positional notation.
    ``suffix`` is the suffix exactly as written; ``format`` is the format Kubernetes records.
    """

    text: str
    value: Decimal
    suffix: str
    format: Format

    @property
    def is_integer(self) -> bool:
        """Whether the apiserver accepts this value for an integer resource.

        For extended resources such as ``nvidia.com/gpu`` (and hugepages, pods, ...) the apiserver checks
        ``MilliValue() % 1000 == 0``, where ``MilliValue()`` first rounds the value *up* (away from zero)
        to a whole number of thousandths.  So ``"2"``, ``"2000m"`` and ``"1Ki"`` pass; ``"1500m"`` fails,
        and so do ``"1000001u"`` (1000.001m -> 1001m) and ``"1001u"`` (1.001m -> 2m).  But a value less
        than a thousandth *below* a whole number passes: ``"999999u"`` (999.999m), ``"999999999n"`` and
        ``"0.9999999"`` all round up to exactly 1000m, and Kubernetes then counts them as 1 (see
        `as_int`), while ``value`` stays exact (``0.9999999``, not 1).
        """
        return self.milli_value_rounded_up() % 1000 == 0

    def as_int(self) -> int | None:
        """The integer Kubernetes uses when `is_integer` holds (``Value()``), else ``None``.

        For ``"0.9999999"`` this is 1: the apiserver accepts it and the scheduler counts ``Value()``.
        """
        milli = self.milli_value_rounded_up()
        if milli % 1000 != 0:
            return None
        return milli // 1000

    def value_rounded_up(self) -> int:
        """Like Go's ``Quantity.Value()``: the value rounded to an integer away from zero.

        For non-negative values this is the ceiling (``"1500m"`` -> 2, ``"1n"`` -> 1).  Negative values
        round towards minus infinity (``"-1.5"`` -> -2), which is what Go does for every quantity it
        keeps in its int64 form -- i.e. anything with at most 18 significant digits and no finer than
        nano.  (Go's big-decimal form of a *negative* value instead truncates and adds one, so it gives
        0 for ``"-1.5000000000000000000"``; negative resource quantities are rejected by the apiserver
        anyway.)  Unlike Go, the result never overflows int64: it is exact.
        """
        return _round_away(*self.value.as_integer_ratio())

    def milli_value_rounded_up(self) -> int:
        """Like Go's ``Quantity.MilliValue()``: ``value * 1000`` rounded to an integer away from zero."""
        numerator, denominator = self.value.as_integer_ratio()
        return _round_away(numerator * 1000, denominator)


def _round_away(numerator: int, denominator: int) -> int:
    quotient, remainder = divmod(abs(numerator), denominator)
    if remainder:
        quotient += 1
    return quotient if numerator >= 0 else -quotient


@dataclass(frozen=True, slots=True)
class _Scanned:
    negative: bool
    has_digits: bool  # whether the numeric text Go hands to inf.Dec.SetString contains a digit
    num: str  # integer digits without leading zeros, "0" when there are none
    denom: str  # fraction digits as written, possibly ""
    suffix: str


def parse_quantity(raw: object) -> Quantity:
    """Parse a quantity as found in a decoded manifest: a ``str``, an ``int`` or a ``float``.

    Strings are stripped of surrounding whitespace first (like ``Quantity.UnmarshalJSON``); ints use
    ``str(n)`` and floats ``repr(x)`` (so ``1.5`` is "1.5" and ``1e3`` is "1000.0"; a float may already
    have lost digits the manifest had).  ``bool`` (YAML ``true``), ``None`` and any other type raise
    `QuantityError`, as do NaN and infinities.  (Go decodes a JSON ``null`` quantity as zero; callers
    that want that must handle ``None`` themselves.)
    """
    text = _to_text(raw)
    if not text:
        raise QuantityError("quantity must not be empty", text=text, reason="empty")
    scanned = _scan(text)
    base, exponent, fmt = _interpret_suffix(text, scanned.suffix)
    if not scanned.has_digits and not _go_fast_path(scanned, exponent, fmt):
        raise QuantityError(
            f"quantity {_q(text)} has no digits before its suffix {_q(scanned.suffix)}",
            text=text,
            reason="numeric",
        )
    if base == 2:
        value, fmt = _binary_value(scanned, exponent)
    else:
        value = _decimal_value(text, scanned, exponent)
    return Quantity(text=text, value=value, suffix=scanned.suffix, format=fmt)


def _to_text(raw: object) -> str:
    if isinstance(raw, bool):
        raise QuantityError(f"quantity must be a string or a number, got a boolean ({raw!r})", reason="type")
    if isinstance(raw, str):
        return raw.strip(_GO_SPACE)
    if isinstance(raw, int):
        number = int(raw)
        if abs(number) >= _MAX_MAGNITUDE:
            raise QuantityError(
                f"quantity is too large: an integer of {number.bit_length()} bits has more than "
                f"{MAX_MAGNITUDE_DIGITS} digits",
                reason="range",
            )
        try:
            return str(number)
        except ValueError as exc:  # sys.set_int_max_str_digits() was lowered below our limit
            raise QuantityError(f"quantity is too large to convert: {exc}", reason="range") from exc
    if isinstance(raw, float):
        if not math.isfinite(raw):
            raise QuantityError(f"quantity must be a finite number, got {raw!r}", text=repr(raw), reason="type")
        return float.__repr__(raw)
    kind = "None" if raw is None else type(raw).__name__
    raise QuantityError(f"quantity must be a string or a number, got {kind}", reason="type")


def _scan(text: str) -> _Scanned:
    """Split ``text`` the way Go's parseQuantityString does, raising on ErrFormatWrong."""
    end = len(text)
    pos = 0
    negative = False
    if text[0] in "+-":
        negative = text[0] == "-"
        pos = 1
    sign_end = pos
    while pos < end and text[pos] == "0":
        pos += 1
    if pos == end:
        # Nothing but a sign and zeros: Go returns "0" right away, so "+" and "-" alone are zero.
        return _Scanned(negative=negative, has_digits=True, num="0", denom="", suffix="")
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos]
    has_digits = start > sign_end or num != ""
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        fraction_start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[fraction_start:pos]
        has_digits = has_digits or denom != ""
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise _malformed(text, suffix_start, pos)
    return _Scanned(negative=negative, has_digits=has_digits, num=num or "0", denom=denom, suffix=text[suffix_start:])


def _malformed(text: str, suffix_start: int, bad: int) -> QuantityError:
    rest = text[suffix_start:]
    number = text[:suffix_start]
    if any(ch.isspace() for ch in text):
        message = f"quantity {_q(text)} must not contain whitespace"
    elif not any(ch in _DIGITS for ch in number):
        message = f"quantity {_q(text)} is not a number with an optional suffix ({_UNITS_HELP})"
    elif rest.isascii() and rest.isalpha():
        message = f"quantity {_q(text)} has an unknown suffix {_q(rest)}{_suffix_hint(rest)}"
    elif text[bad] == "." and "." in number:
        message = f"quantity {_q(text)} has more than one decimal point"
    else:
        message = (
            f"quantity {_q(text)} is malformed: unexpected {_q(text[bad])} at position {bad}; expected a "
            f"number and an optional suffix ({_UNITS_HELP})"
        )
    return QuantityError(message, text=text, reason="format")


def _q(text: str) -> str:
    """Double-quote ``text`` for a message, escaping control characters."""
    return json.dumps(text, ensure_ascii=False)


def _suffix_hint(written: str) -> str:
    """Suggest the suffix a user probably meant ("g" -> "G", "GB" -> "G" or "Gi", "KiB" -> "Ki")."""
    bare = written[:-1] if len(written) > 1 and written[-1] in "bB" else written
    known = [*DECIMAL_SUFFIXES, *BINARY_SUFFIXES]
    candidates = [s for s in known if s and s.lower() in (written.lower(), bare.lower())]
    if bare != written:  # a byte unit such as "GB": memory, so never milli/micro/nano
        candidates = [s for s in candidates if s not in ("m", "u", "n")]
        binary = bare[:1].upper() + "i"
        if len(bare) == 1 and binary in BINARY_SUFFIXES and binary not in candidates:
            candidates.append(binary)
    candidates = [s for s in candidates if s != written]
    if not candidates:
        return f" (suffixes are case sensitive: {_UNITS_HELP})"
    quoted = [f'"{s}"' for s in candidates]
    choice = quoted[0] if len(quoted) == 1 else ", ".join(quoted[:-1]) + " or " + quoted[-1]
    return f" (did you mean {choice}?)"


def _interpret_suffix(text: str, suffix: str) -> tuple[int, int, Format]:
    """Go's suffixer.interpret: (base, exponent, format)."""
    if suffix in DECIMAL_SUFFIXES:
        return 10, DECIMAL_SUFFIXES[suffix], Format.DECIMAL_SI
    if suffix in BINARY_SUFFIXES:
        return 2, BINARY_SUFFIXES[suffix], Format.BINARY_SI
    if len(suffix) > 1 and suffix[0] in "eE":
        return 10, _parse_exponent(text, suffix), Format.DECIMAL_EXPONENT
    raise QuantityError(
        f"quantity {_q(text)} has an unknown suffix {_q(suffix)}{_suffix_hint(suffix)}",
        text=text,
        reason="suffix",
    )


def _parse_exponent(text: str, suffix: str) -> int:
    """``strconv.ParseInt(suffix[1:], 10, 64)``; the int32 truncation Go applies next is checked later."""
    body = suffix[1:]
    digits = body[1:] if body[:1] in ("+", "-") else body
    if not digits or any(ch not in _DIGITS for ch in digits):
        raise QuantityError(
            f'quantity {_q(text)} has an invalid exponent {_q(suffix)} (expected e.g. "e3" or "e-3")',
            text=text,
            reason="suffix",
        )
    significant = digits.lstrip("0") or "0"
    magnitude = int(significant) if len(significant) <= 20 else _MAX_MAGNITUDE
    exponent = -magnitude if body[0] == "-" else magnitude
    if not _INT64_MIN <= exponent <= MAX_INT64:
        raise QuantityError(
            f"quantity {_q(text)} has an exponent that does not fit in 64 bits", text=text, reason="suffix"
        )
    return exponent


def _go_fast_path(scanned: _Scanned, exponent: int, fmt: Format) -> bool:
    """Whether ParseQuantity finishes in its int64 path (it never looks at the digit-less text then)."""
    num, denom = scanned.num, scanned.denom
    if fmt is Format.BINARY_SI:
        if denom:
            return False
        precision = 15 - len(num) - (exponent * 3) // 10 - 1
        return precision >= 0 and int(num) << exponent <= MAX_INT64
    precision = 18 - (len(num) + len(denom))
    return precision >= 0 and _wrap_int32(exponent) - len(denom) >= _NANO


def _wrap_int32(number: int) -> int:
    """Go's ``int32(number)`` conversion."""
    return (number - _INT32_MIN) % 2**32 + _INT32_MIN


def _decimal_value(text: str, scanned: _Scanned, exponent: int) -> Decimal:
    digits = (scanned.num + scanned.denom).lstrip("0")
    if not digits:
        return Decimal(0)
    if not _INT32_MIN <= exponent <= _INT32_MAX:
        raise QuantityError(
            f"quantity {_q(text)} has exponent {exponent}, outside the 32-bit range; Kubernetes would "
            f"silently read it as {_wrap_int32(exponent)}",
            text=text,
            reason="range",
        )
    scale = exponent - len(scanned.denom)  # value == int(digits) * 10**scale
    if scale <= _INT32_MIN:
        raise QuantityError(
            f"quantity {_q(text)} has an exponent Kubernetes cannot handle (its scale overflows 32 bits)",
            text=text,
            reason="range",
        )
    if len(digits) + scale > MAX_MAGNITUDE_DIGITS:
        raise QuantityError(
            f"quantity {_q(text)} is too large: it has {len(digits) + scale} integer digits, at most "
            f"{MAX_MAGNITUDE_DIGITS} are supported (Kubernetes' int64 accessors overflow beyond 19)",
            text=text,
            reason="range",
        )
    if scale < _NANO:
        # Kubernetes keeps nano precision and rounds anything finer away from zero.
        dropped = _NANO - scale
        if dropped >= len(digits):
            digits = "1"
        else:
            kept, tail = digits[:-dropped], digits[-dropped:]
            digits = _increment(kept) if tail.strip("0") else kept
        scale = _NANO
    return _make_decimal(scanned.negative, digits, scale)


def _binary_value(scanned: _Scanned, exponent: int) -> tuple[Decimal, Format]:
    fraction = scanned.denom
    if len(fraction) > _BINARY_FRACTION_DIGITS:
        sticky = "1" if fraction[_BINARY_FRACTION_DIGITS:].strip("0") else ""
        fraction = fraction[:_BINARY_FRACTION_DIGITS] + sticky
    cap_nanos = MAX_INT64 * 10**9
    if len(scanned.num) > 19:  # >= 10**19 > 2**63 before even multiplying by 2**10
        nanos = cap_nanos
    else:
        scaled = int(scanned.num + fraction) << exponent
        nanos = _round_away(scaled * 10**9, 10 ** len(fraction))
        nanos = min(nanos, cap_nanos)
    if nanos == 0:
        return Decimal(0), Format.BINARY_SI
    fmt = Format.DECIMAL_SI if nanos < 10**9 else Format.BINARY_SI
    return _make_decimal(scanned.negative, str(nanos), _NANO), fmt


def _increment(digits: str) -> str:
    """Add one to a non-empty decimal digit string without converting it to int."""
    body = digits.rstrip("9")
    nines = len(digits) - len(body)
    if not body:
        return "1" + "0" * nines
    return body[:-1] + str(int(body[-1]) + 1) + "0" * nines


def _make_decimal(negative: bool, digits: str, scale: int) -> Decimal:
    """``(-1)**negative * int(digits) * 10**scale`` as a Decimal in plain positional form."""
    digits = digits.lstrip("0")
    if not digits:
        return Decimal(0)
    if scale >= 0:
        digits += "0" * scale
        scale = 0
    else:
        trimmed = digits.rstrip("0")
        removable = min(len(digits) - len(trimmed), -scale)
        digits = digits[: len(digits) - removable]
        scale += removable
    return Decimal((int(negative), tuple(int(ch) for ch in digits), scale))


def int_value(raw: object) -> int | None:
    """A resource value as the integer the API server would store, or None when absent or unreadable.

    For object fields (capacity, allocatable, limits) read by the cluster model and the doctor, where a
    bad value is someone else's finding and must not stop the reading.
    """
    if raw is None or isinstance(raw, bool):
        return None
    try:
        return parse_quantity(raw).as_int()
    except QuantityError:
        return None
