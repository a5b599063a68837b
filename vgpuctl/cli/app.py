"""Wires the commands into one typer app. Each command lives in its own module."""

from __future__ import annotations

import typer

from vgpuctl import __version__
from vgpuctl.cli import doctor, explain, geometry, install, lint, nodes, snapshot, webhook, why
from vgpuctl.cli.env import set_debug

app = typer.Typer(
    name="vgpuctl",
    help="Check, explain and guard GPU/NPU sharing on the Volcano scheduler "
    "(NVIDIA vGPU and dynamic MIG, gpushare, Ascend vNPU).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"vgpuctl {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for internal errors."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """vgpuctl: lint manifests and explain finding codes for Volcano device sharing."""
    set_debug(debug)


# Each command module exposes `register(app)`; add new commands to this tuple (one line each).
COMMANDS = (
    doctor,
    lint,
    explain,
    geometry,
    nodes,
    snapshot,
    webhook,
    why,
    install,
)
for _command in COMMANDS:
    _command.register(app)


def main() -> None:
    app(prog_name="vgpuctl")
