"""`vgpuctl schema [NAME]`: print a JSON Schema the package carries, or list their names.

The schemas are package data (`vgpuctl/schemas`, a link to the repository's `schemas/`, so there is one
copy): what `-o json` prints and what `geometry` reads is described by the installed version's own files,
without a checkout of the repository.
"""

from __future__ import annotations

from importlib import resources
from importlib.abc import Traversable

import typer

from vgpuctl.cli.env import guarded, stdout
from vgpuctl.errors import UsageError

SUFFIX = ".schema.json"

EPILOG = """[bold]Examples[/bold]

  vgpuctl schema                                  # the names
  vgpuctl schema doctor-report > doctor-report.schema.json
  vgpuctl schema device-config                    # for an editor's yaml-language-server
"""


def _folder() -> Traversable:
    return resources.files("vgpuctl").joinpath("schemas")


def schema_names() -> list[str]:
    """The names of the schemas the package carries (`doctor-report`, …), sorted."""
    return sorted(entry.name[: -len(SUFFIX)] for entry in _folder().iterdir() if entry.name.endswith(SUFFIX))


def schema_text(name: str) -> str:
    """The schema `name` (or `name.schema.json`) as the package carries it; UsageError for an unknown one."""
    base = name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name
    if base not in schema_names():
        raise UsageError(f"no schema {name!r}; the schemas are: {', '.join(schema_names())}")
    return _folder().joinpath(base + SUFFIX).read_text(encoding="utf-8")


@guarded
def schema_command(
    name: str | None = typer.Argument(None, metavar="NAME", autocompletion=schema_names,
                                      help="A schema, e.g. doctor-report; none: list the names."),
) -> None:
    """Print the JSON Schema (2020-12) of a report or of the device config; list the names without NAME."""
    out = stdout()
    if name is None:
        out.write("".join(f"{n}\n" for n in schema_names()))
        return
    text = schema_text(name)
    out.write(text if text.endswith("\n") else text + "\n")


def register(app: typer.Typer) -> None:
    app.command("schema", epilog=EPILOG)(schema_command)
