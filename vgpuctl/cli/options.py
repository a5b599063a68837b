"""The options several commands share, declared once: `-o/--output`, `--fail-on`, `--snapshot`,
`--volcano-version` (and its reading into a `Version`, or exit 2 with one line).

A command takes them as parameter defaults (`output: OutputFormat = output_option()`), the way
`kubeopts` declares `--kubeconfig` and `--context`; the help text may be worded for the command, the flag
names, metavars, choices and parsing never differ.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any

import typer

from vgpuctl.errors import UsageError
from vgpuctl.render import OutputFormat

if TYPE_CHECKING:
    from vgpuctl.core.versions import Version


class FailOn(str, enum.Enum):
    """`--fail-on` of the commands whose info findings are notes, never a reason to fail."""

    ERROR = "error"
    WARNING = "warning"


class PrivilegedPolicy(str, enum.Enum):
    """`--privileged`: the severity of VGP016 (a privileged container with a device) in lint, doctor and the
    webhook."""

    ERROR = "error"
    WARNING = "warning"


class FailOnAny(str, enum.Enum):
    """`--fail-on` of `geometry validate`, where an info finding (a key no reader knows) can fail CI."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


FAIL_ON_HELP = "Lowest severity that makes the exit code 1."
VOLCANO_VERSION_HELP = "Volcano version the cluster runs, e.g. v1.15.1."


def output_option(default: enum.Enum = OutputFormat.TABLE) -> Any:
    return typer.Option(default, "-o", "--output", help="Output format.")


def fail_on_option(help: str = FAIL_ON_HELP, default: enum.Enum = FailOn.ERROR) -> Any:
    return typer.Option(default, "--fail-on", help=help)


def snapshot_option(help: str) -> Any:
    from vgpuctl.sources import SNAPSHOT_LIMIT

    return typer.Option(None, "--snapshot", metavar="FILE", help=f"{help} Read {SNAPSHOT_LIMIT.help()}.")


def volcano_version_option(help: str = VOLCANO_VERSION_HELP) -> Any:
    return typer.Option(None, "--volcano-version", metavar="V", help=help)


def read_volcano_version(text: str | None) -> Version | None:
    """`--volcano-version` read; None when not given. Unreadable: `UsageError` (exit 2) naming the flag."""
    if not text:
        return None
    from vgpuctl.core.versions import VersionError, parse_version  # only when given: `explain` never needs it

    try:
        return parse_version(text)
    except VersionError as exc:
        raise UsageError(f"--volcano-version: {exc}") from None
