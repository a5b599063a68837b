"""`Document`: one document of an input file as `vgpuctl.sources` reads it, for `lint` and `why -f`.

A module of its own, not `lintreport`'s: reading `why -f pod.json` needs this class, not lint's review and
line map (`lintlines` imports PyYAML), ~5 ms of start-up (benchmarks/scale.py, `python -X importtime`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class Document:
    source: str  # "<file>:<line>": the line where the object starts (an editor's, and kubeconform's, place)
    obj: Any  # the decoded YAML/JSON document, or None when it could not be read
    error: str = ""  # why it could not be read (reported as VGL001)
    document: int | None = None  # its index among the file's documents (None: the file could not be read)
    path: str = ""  # the file (`<stdin>`), to place a List's items at their own lines
    item_lines: tuple[int, ...] = ()  # the line of each item, when the document is a List read from YAML
    text: str = ""  # the whole YAML text it came from, to place findings at their fields (`core/lintlines.py`)
    span: tuple[int, int] | None = None  # its lines in `text`: the first, and the next after it
    item: bool = False  # a List's item (its lines start with `- `)
