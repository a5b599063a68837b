"""Presentation: rich tables for people, JSON/YAML for programs. No rule logic lives here."""

from __future__ import annotations

import enum
import json
from typing import Any

import yaml


class OutputFormat(str, enum.Enum):
    TABLE = "table"
    JSON = "json"
    YAML = "yaml"


def to_json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def to_yaml(data: Any) -> str:
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=120)


def dump(data: Any, fmt: OutputFormat) -> str:
    if fmt is OutputFormat.YAML:
        return to_yaml(data)
    return to_json(data)
