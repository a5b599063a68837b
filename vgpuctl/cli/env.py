"""The streams a command writes to, and the one place errors become exit codes (docs/contracts.md#interfaces).

0 nothing at or above --fail-on · 1 findings at or above it · 2 usage error · 3 could not complete.
No traceback reaches the user unless `--debug` (or VGPUCTL_DEBUG=1) asks for it.

A closed stdout (`vgpuctl nodes | head -1`) is neither: the reader has gone, so the process ends the way
git, kubectl and the coreutils do, killed by SIGPIPE (the shell reports 141), silently.
"""

from __future__ import annotations

import errno
import functools
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar

import typer

from vgpuctl.core.findings import ExitStatus
from vgpuctl.errors import MissingExtra, UsageError

if TYPE_CHECKING:
    from rich.console import Console

F = TypeVar("F", bound=Callable[..., Any])


def stdout() -> IO[str]:
    return sys.stdout


def stderr() -> IO[str]:
    return sys.stderr


@functools.cache
def _console_class() -> type[Console]:
    # rich is imported when a table is drawn, not by `-o json` (20 ms of every run: benchmarks/scale.py)
    from rich.console import Console

    class _Console(Console):
        def on_broken_pipe(self) -> None:
            """rich would point fd 1 at /dev/null and exit 1, the status of a finding: fail like any write."""
            self.quiet = True
            raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))

    return _Console


def make_console(stream: IO[str]) -> Console:
    """Colour only on a terminal, and never when NO_COLOR is set."""
    is_tty = bool(getattr(stream, "isatty", lambda: False)())
    # Piped output is read by people too (less, CI logs): give tables room instead of 80 columns.
    width = None if is_tty else int(os.environ.get("COLUMNS", "0") or 0) or 200
    return _console_class()(
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
        except MissingExtra as exc:
            raise fail(str(exc), ExitStatus.INCOMPLETE) from None
        except BrokenPipeError:
            raise  # stdout closed: `stdout_closed_escapes` takes it to `main`, which ends the process
        except KeyboardInterrupt:
            raise fail("interrupted", ExitStatus.INCOMPLETE) from None
        except Exception as exc:
            # A module of an optional extra that does not import (not installed, or installed broken).
            missing = MissingExtra.from_import_error(exc) if isinstance(exc, ImportError) else None
            if missing is not None:
                raise fail(str(missing), ExitStatus.INCOMPLETE) from None
            if debug_enabled():
                raise
            raise fail(f"internal error: {type(exc).__name__}: {exc} (rerun with --debug for the traceback)",
                       ExitStatus.INCOMPLETE) from None

    return wrapper  # type: ignore[return-value]


class StdoutClosed(Exception):  # noqa: N818 - the name says what happened
    """Writing stdout failed with EPIPE: whoever read it has gone. Not an `OSError`, so that it passes
    click's own EPIPE handler (which would exit 1, like a finding) and reaches `main`."""


@contextmanager
def stdout_closed_escapes() -> Iterator[None]:
    """Around everything click runs (parsing, --help and --version included): a broken pipe becomes
    `StdoutClosed`."""
    try:
        yield
    except BrokenPipeError as exc:
        raise StdoutClosed() from exc


def stdout_file() -> tuple[int, int] | None:
    """Which file fd 1 is (device, inode), to notice later that something replaced it."""
    try:
        st = os.fstat(1)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def exit_if_stdout_closed(started_with: tuple[int, int] | None) -> None:
    """Once the command is over: end the process quietly if its reader has gone. Two signs: rich (typer's
    help pages) met the broken pipe, pointed fd 1 at /dev/null and exited 1 (see rich's
    `Console.on_broken_pipe`); or what is still buffered cannot be written, which at interpreter exit would
    print "Exception ignored … BrokenPipeError" and exit 120."""
    now = stdout_file()
    if now is not None and now != started_with:
        try:
            null = os.stat(os.devnull)
        except OSError:
            null = None
        if null is not None and now == (null.st_dev, null.st_ino):
            exit_for_closed_stdout()
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        exit_for_closed_stdout()
    except (OSError, ValueError):  # closed by the program itself, or no stream at all: nothing to write
        pass


def exit_for_closed_stdout() -> NoReturn:
    """End the process as a C or Go program does when its reader goes away: killed by SIGPIPE, no message
    (the shell reports 141; `set -o pipefail` sees it as it sees `cat`'s or `kubectl`'s). Python ignores
    SIGPIPE so that writes raise instead; restore the default action and raise it on ourselves. Exiting 0
    would tell a CI pipeline "no findings" when the verdict reached no one."""
    with suppress(OSError, ValueError):
        sys.stderr.flush()
    sigpipe = getattr(signal, "SIGPIPE", None)
    if sigpipe is not None:
        signal.signal(sigpipe, signal.SIG_DFL)
        signal.raise_signal(sigpipe)
    os._exit(128 + 13)  # no SIGPIPE on this platform: the status a shell would report for it
