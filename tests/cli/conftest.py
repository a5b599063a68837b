"""CLI tests run the real typer app in-process, with separate stdout and stderr, as a user would."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from vgpuctl.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
SCHEMAS = ROOT / "schemas"


class Result:
    def __init__(self, exit_code: int, stdout: str, stderr: str) -> None:
        self.exit_code = exit_code
        self.stdout = stdout
        self.stderr = stderr

    def json(self) -> Any:
        return json.loads(self.stdout)


@pytest.fixture
def run() -> Any:
    def _run(*args: str, input: str | None = None) -> Result:
        runner = CliRunner()
        result = runner.invoke(app, list(args), input=input, catch_exceptions=False)
        return Result(result.exit_code, result.stdout, result.stderr)

    return _run


def validate(schema_name: str, document: Any) -> None:
    schema = json.loads((SCHEMAS / schema_name).read_text())
    jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker()).validate(document)
