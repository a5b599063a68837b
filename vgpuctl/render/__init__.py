"""Presentation: rich tables for people, JSON/YAML for programs. No rule logic lives here.

orjson and PyYAML are imported when a document is written: `cli/env.py` imports `render.terminal` on every
run, `--version` and shell completion included.
"""

from __future__ import annotations

import enum
import functools
import json
import re
import sys
from typing import TYPE_CHECKING, Any, Final

from vgpuctl.render.terminal import speaks_unicode

if TYPE_CHECKING:
    import yaml


class OutputFormat(str, enum.Enum):
    TABLE = "table"
    JSON = "json"
    YAML = "yaml"


def _ascii_only(ascii_only: bool | None) -> bool:
    """None: whether stdout, where the documents are written, lacks characters (`PYTHONIOENCODING=ascii`,
    a Latin-1 locale). Then they are written in ASCII with escapes, which read back to the same values; the
    stand-ins a table gets there (`render.terminal.STANDINS`) would change them."""
    return not speaks_unicode(sys.stdout) if ascii_only is None else ascii_only


def to_json(data: Any, *, ascii_only: bool | None = None) -> str:
    """Two-space indented JSON, non-ASCII kept (or `\\u`-escaped, see `_ascii_only`), one newline at the end.

    orjson writes the same text as `json.dumps(indent=2, ensure_ascii=False)` for what reports hold (floats
    aside, which it spells shortest-first: `1e-5`, same value) several times faster: the standard encoder was
    a third of `nodes -o json` on 5,000 nodes (benchmarks/nodes_scale.py). What orjson refuses (integers
    beyond 64 bits, non-string keys, lone surrogates) goes the standard way. JSON escapes the C0 controls itself;
    DEL and the C1 controls (U+007F–U+009F: an 8-bit CSI clears a screen), which both encoders write raw, are
    escaped here (`\\u009b`, the same value read back): nothing in a document reaches a terminal raw.
    """
    import orjson

    if _ascii_only(ascii_only):
        return _escape_c1(json.dumps(data, indent=2, ensure_ascii=True) + "\n")
    try:
        out = orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    except orjson.JSONEncodeError:
        return _escape_c1(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    # In UTF-8 a C1 control is 0xC2 then 0x80-0x9F (0xC2 is never a continuation byte). A byte search decides
    # whether anything runs, and the expression starts with its literal byte: 8 ms on the 21 MB of nodes -o json
    # on 5,000 nodes where an alternation with DEL took 140 ms (benchmarks/nodes_scale.py)
    if b"\xc2" in out:
        out = _C1_UTF8.sub(_escaped_utf8, out)
    if b"\x7f" in out:
        out = out.replace(b"\x7f", b"\\u007f")
    return out.decode()


_C1_TEXT: Final = re.compile("[\x7f-\x9f]")
_C1_UTF8: Final = re.compile(b"\xc2[\x80-\x9f]")


def _escape_c1(text: str) -> str:
    return _C1_TEXT.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _escaped_utf8(match: re.Match[bytes]) -> bytes:
    return b"\\u%04x" % ord(match.group().decode())


_YAML_LINE_BREAKS = re.compile("[\x85\u2028\u2029]")


@functools.cache
def _dumper() -> type[yaml.SafeDumper]:
    import yaml

    class Dumper(yaml.SafeDumper):
        """PyYAML's safe dumper, but a string holding NEL (U+0085, a C1 control) or a Unicode line or paragraph
        separator is double-quoted with escapes: PyYAML would write it raw in single quotes, where NEL reads
        back as a space."""

        def analyze_scalar(self, scalar: str) -> yaml.emitter.ScalarAnalysis:
            analysis = super().analyze_scalar(scalar)
            if not scalar.isascii() and _YAML_LINE_BREAKS.search(scalar):
                analysis.allow_flow_plain = analysis.allow_block_plain = False
                analysis.allow_single_quoted = analysis.allow_block = False
            return analysis

    return Dumper


def to_yaml(data: Any, *, ascii_only: bool | None = None) -> str:
    """Block YAML. A string holding a control character (or, `ascii_only`, any non-ASCII one) is written
    double-quoted with escapes (`"MIG\\e]0;…"`), so the document reads back exact and prints nothing raw."""
    import yaml

    return yaml.dump(data, Dumper=_dumper(), sort_keys=False, allow_unicode=not _ascii_only(ascii_only), width=120)


def dump(data: Any, fmt: OutputFormat) -> str:
    if fmt is OutputFormat.YAML:
        return to_yaml(data)
    return to_json(data)
