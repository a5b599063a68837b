"""What may reach a terminal. Names, annotation values, messages and file names come from the cluster or from
files, and a value holding `ESC ] 0 ;` or `ESC [ 2 J` would retitle or clear the admin's terminal (the class of
kubectl's CVE-2021-25743), a newline would forge a line of its own (`√ all checks passed`). Every human output
therefore shows such characters as escapes (`safe`), and a stream whose encoding lacks a character gets a
stand-in instead of an exception (`STANDIN_ERRORS`).

No rich here: `cli/env.py` sets the streams up on every run, `-o json` included.
"""

from __future__ import annotations

import codecs
import functools
from typing import IO

#: Stand-ins for the marks and punctuation vgpuctl prints, where the output encoding lacks them (`LANG=C` on an
#: old system, `PYTHONIOENCODING=ascii`). One column each where a table lays them out (marks, bars, the
#: ellipsis of a shortened device id), so columns stay aligned; the comparisons keep their meaning.
STANDINS = {"√": "+", "‼": "!", "×": "x", "–": "-", "—": "-", "·": "-", "•": "*", "…": "~", "█": "#", "░": ".",
            "→": "->", "←": "<-", "≥": ">=", "≤": "<=", "≠": "!=", "±": "+/-", "÷": "/", "µ": "u", "↻": "@",
            "‘": "'", "’": "'", "“": '"', "”": '"'}
STANDIN_ERRORS = "vgpuctl-standin"


@functools.lru_cache(maxsize=256)
def _escaped(char: str) -> str:
    return char.encode("unicode_escape").decode("ascii")  # `\x1b`, `\n`, `\x9b`, `\u202e`, `\udcff`, `\xe9`


def safe(value: str) -> str:
    """`value` with every character `str.isprintable` refuses written as an escape, as Python writes it in a
    string literal: C0 controls (ESC `\\x1b`, BEL, CR `\\r`, newline `\\n`, tab `\\t`), DEL, C1 controls
    (`\\x9b` starts a sequence on some terminals too), Unicode format characters (the bidi overrides that
    reorder what is shown, `\\u202e`), spaces other than ` `, and the lone surrogates of undecodable file
    names. Newlines and tabs too: a value is one line, the layout's own line breaks are added after.
    A printable value (nearly all) is returned as it is, after one C-speed test."""
    if value.isprintable():
        return value
    return "".join(char if char.isprintable() else _escaped(char) for char in value)


def safe_lines(value: str) -> str:
    """`safe` for text whose line breaks are layout (a console's output): each line made safe, the breaks kept."""
    if value.isprintable():
        return value
    return "\n".join(map(safe, value.split("\n")))


def _standin(error: UnicodeError) -> tuple[str, int]:
    """The codec error handler `STANDIN_ERRORS`: what the encoding lacks becomes its stand-in, else an escape."""
    if not isinstance(error, UnicodeEncodeError):
        raise error
    lacking = error.object[error.start:error.end]
    return "".join(STANDINS.get(char) or _escaped(char) for char in lacking), error.end


codecs.register_error(STANDIN_ERRORS, _standin)


def speaks_unicode(stream: IO[str] | None) -> bool:
    """Whether `stream` encodes every character (a UTF encoding), so nothing needs a stand-in."""
    encoding = getattr(stream, "encoding", None)
    if not isinstance(encoding, str):
        return True  # not a text file of the system (a test's buffer): it takes str as it is
    try:
        return codecs.lookup(encoding).name.startswith("utf")
    except LookupError:
        return False
