"""The streams a command writes to, and the one place errors become exit codes (SPEC §3).

0 nothing at or above --fail-on · 1 findings at or above it · 2 usage error · 3 could not complete.
No traceback reaches the user unless `--debug` (or VGPUCTL_DEBUG=1) asks for it.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import IO, Any, TypeVar

import typer
from rich.console import Console

from vgpuctl.core.findings import ExitStatus
from vgpuctl.errors import UsageError

F = TypeVar("F", bound=Callable[..., Any])


def stdout() -> IO[str]:
    return sys.stdout


def stderr() -> IO[str]:
    return sys.stderr


def make_console(stream: IO[str]) -> Console:
    """Colour only on a terminal, and never when NO_COLOR is set."""
    is_tty = bool(getattr(stream, "isatty", lambda: False)())
    # Piped output is read by people too (less, CI logs): give tables room instead of 80 columns.
    width = None if is_tty else int(os.environ.get("COLUMNS", "0") or 0) or 200
    return Console(
        file=stream,
        width=width,
        force_terminal=is_tty,
        no_color=not is_tty or "NO_COLOR" in os.environ,
        highlight=False,
        soft_wrap=not is_tty,
        emoji=False,
    )


def fail(message: str, status: ExitStatus = ExitStatus.USAGE) -> typer.Exit:
    typer.echo(f"vgpuctl: {message}", err=True)
    return typer.Exit(int(status))


_debug = False


def set_debug(enabled: bool) -> None:
    """Called by the root callback on every invocation, so the flag never leaks between runs."""
    global _debug
    _debug = enabled


def debug_enabled() -> bool:
    return _debug or os.environ.get("VGPUCTL_DEBUG") == "1"


def guarded(func: F) -> F:
    """Map every failure of a command body to its exit code with a one-line message."""

    @functools.wraps(func)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return func(*args, **kwargs)
        except (typer.Exit, typer.Abort, typer.TyperException):
            raise
        except UsageError as exc:
            raise fail(str(exc), ExitStatus.USAGE) from None
        except BrokenPipeError:
            sys.stderr.close()
            raise typer.Exit(int(ExitStatus.OK)) from None
        except KeyboardInterrupt:
            raise fail("interrupted", ExitStatus.INCOMPLETE) from None
        except Exception as exc:
            if debug_enabled():
                raise
            raise fail(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
                       ExitStatus.INCOMPLETE) from None

    return wrapper  # type: ignore[return-value]
