"""Presentation: rich tables for people, JSON/YAML for programs. No rule logic lives here."""

from __future__ import annotations

import enum
import json
from typing import Any

import orjson
import yaml


class OutputFormat(str, enum.Enum):
    TABLE = "table"
    JSON = "json"
    YAML = "yaml"


def to_json(data: Any) -> str:
    """Two-space indented JSON, non-ASCII kept, one newline at the end.

    orjson writes the same text as `json.dumps(indent=2, ensure_ascii=False)` for what reports hold (floats
    aside, which it spells shortest-first: `1e-5`, same value) several times faster: the standard encoder was
    a third of `nodes -o json` on 5,000 nodes (benchmarks/nodes_scale.py). What orjson refuses (integers
    beyond 64 bits, non-string keys, lone surrogates) goes the standard way.
    """
    try:
        return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE).decode()
    except orjson.JSONEncodeError:
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def to_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120)


def dump(data: Any, fmt: OutputFormat) -> str:
    if fmt is OutputFormat.YAML:
        return to_yaml(data)
    return to_json(data)
