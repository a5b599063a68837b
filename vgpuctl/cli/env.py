"""The streams a command writes to, and the one place errors become exit codes (docs/contracts.md#interfaces).

0 nothing at or above --fail-on · 1 findings at or above it · 2 usage error · 3 could not complete.
No traceback reaches the user unless `--debug` (or VGPUCTL_DEBUG=1) asks for it.

A closed stdout (`vgpuctl nodes | head -1`) is neither: the reader has gone, so the process ends the way
git, kubectl and the coreutils do, killed by SIGPIPE (the shell reports 141), silently. A stdout that cannot
be written at all (started closed, `>&-`; a full disk) ends the command with one line and exit 3.

The environment is read once, before anything is printed (`prepare_environment`): a COLUMNS that is not a
width is ignored (one line says so), and a stream whose encoding lacks a character writes a stand-in for it
instead of failing (`vgpuctl/render/terminal.py`).
"""

from __future__ import annotations

import errno
import functools
import io
import os
import signal
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar

import typer

from vgpuctl.core.findings import ExitStatus
from vgpuctl.errors import MissingExtra, UsageError
from vgpuctl.render.terminal import STANDIN_ERRORS, safe

if TYPE_CHECKING:
    from rich.console import Console

F = TypeVar("F", bound=Callable[..., Any])

#: The widest COLUMNS honoured: rich lays a rule or a padded line out in full, so an absurd width would be
#: an absurd allocation (COLUMNS=99999999999 was a MemoryError).
MAX_COLUMNS = 10_000
#: The error handlers Python gives its standard streams by itself (the last two: C locale, and stderr).
PYTHON_DEFAULT_ERRORS = ("strict", "surrogateescape", "backslashreplace")


def stdout() -> IO[str]:
    return sys.stdout


def stderr() -> IO[str]:
    return sys.stderr


class _ClosedStdout(io.TextIOBase):
    """sys.stdout of a process started with fd 1 closed (`vgpuctl doctor >&-`), where Python leaves None: a
    write fails as writing a closed descriptor does (EBADF), so the command stops at its first output and says
    so, and a command that prints nothing (`webhook serve`) runs as usual."""

    encoding = "utf-8"

    def __init__(self) -> None:
        super().__init__()
        self.failure: OSError | None = None

    def write(self, s: str) -> int:
        self.failure = OSError(errno.EBADF, os.strerror(errno.EBADF))
        raise self.failure

    def flush(self) -> None:
        if self.failure is not None:
            raise self.failure


def prepare_environment(*, quiet: bool = False) -> None:
    """Once per run, before anything is printed (`cli/app.py`): the streams, then the COLUMNS check (said on
    stderr unless `quiet`: shell completion, whose stderr lands on the command line being typed)."""
    if sys.stdout is None:
        sys.stdout = _ClosedStdout()
    if sys.stderr is None:  # started with fd 2 closed: messages have nowhere to go
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - it lives as long as the process
    for stream in (sys.stdout, sys.stderr):
        # A character the encoding lacks (√ on `PYTHONIOENCODING=ascii` or in the C locale, the surrogate of an
        # undecodable file name anywhere) becomes a stand-in or an escape, never a UnicodeEncodeError nor a raw
        # byte; an error handler the user chose (`PYTHONIOENCODING=ascii:replace`) is kept.
        if isinstance(stream, io.TextIOWrapper) and stream.errors in PYTHON_DEFAULT_ERRORS:
            stream.reconfigure(errors=STANDIN_ERRORS)
    raw = os.environ.get("COLUMNS")
    if raw and columns() is None:  # set but empty is unset
        del os.environ["COLUMNS"]  # typer's help pages read it too
        if not quiet:
            note(f"ignoring COLUMNS={raw!r}: not a whole number from 1 to {MAX_COLUMNS}")


def columns() -> int | None:
    """COLUMNS when it is a whole number from 1 to MAX_COLUMNS, else None."""
    raw = os.environ.get("COLUMNS", "")
    width = int(raw) if raw.isascii() and raw.isdigit() else 0
    return width if 1 <= width <= MAX_COLUMNS else None


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
    """Colour only on a terminal, and never when NO_COLOR is set. Nothing printed is read as rich markup
    (`[bold]` in a pod name prints as it is), and no control character reaches the terminal raw
    (`render.style.ControlsEscaped`; the renderers make values `safe` before laying them out)."""
    from vgpuctl.render.style import ControlsEscaped

    is_tty = bool(getattr(stream, "isatty", lambda: False)())
    # Piped output is read by people too (less, CI logs): give tables room instead of 80 columns.
    width = None if is_tty else columns() or 200
    console = _console_class()(
        file=stream,
        width=width,
        force_terminal=is_tty,
        no_color=not is_tty or "NO_COLOR" in os.environ,
        markup=False,
        highlight=False,
        soft_wrap=not is_tty,
        emoji=False,
    )
    console.push_render_hook(ControlsEscaped())
    return console


def note(message: str) -> None:
    """A line for the reader on stderr (`vgpuctl: …`), its values `safe`."""
    typer.echo(f"vgpuctl: {safe(message)}", err=True)


def fail(message: str, status: ExitStatus = ExitStatus.USAGE) -> typer.Exit:
    """One line on stderr, `safe` (a file name or cluster value in it can neither control the terminal nor
    start a second line), and the exit to raise."""
    note(message)
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
            if isinstance(exc, OSError) and stdout_failure() is not None:
                raise  # stdout cannot be written: `stdout_closed_escapes` says so, not "internal error"
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


class StdoutUnwritable(Exception):  # noqa: N818 - the name says what happened
    """Writing stdout failed otherwise (EBADF: started closed; ENOSPC: `> /dev/full`). Not an `OSError`,
    for the same reason as `StdoutClosed`; `main` ends the process with one line and exit 3."""

    def __init__(self, failure: OSError) -> None:
        super().__init__(failure)
        self.failure = failure


def stdout_failure() -> OSError | None:
    """Why stdout cannot be written, or None when it can: what is pending does not flush, or writing nothing to
    its descriptor fails (EBADF: not open for writing; ENOSPC: /dev/full), as the write that failed did — an
    error elsewhere stays an internal error. EPIPE is not asked here: it has its own ending
    (`exit_for_closed_stdout`)."""
    try:
        sys.stdout.flush()
        os.write(sys.stdout.fileno(), b"")
    except BrokenPipeError:
        return None
    except io.UnsupportedOperation:  # no descriptor (a test's buffer): nothing more to ask
        return None
    except OSError as exc:
        return exc
    except (ValueError, AttributeError):  # closed by the program itself, or no stream at all: nothing to write
        return None
    return None


@contextmanager
def stdout_closed_escapes() -> Iterator[None]:
    """Around everything click runs (parsing, --help and --version included): a broken pipe becomes
    `StdoutClosed`, any other failure to write stdout `StdoutUnwritable`."""
    try:
        yield
    except BrokenPipeError as exc:
        raise StdoutClosed() from exc
    except OSError as exc:
        failure = stdout_failure()
        if failure is None:
            raise
        raise StdoutUnwritable(failure) from exc


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
    except OSError as exc:  # what is buffered cannot be written (a full disk)
        exit_for_unwritable_stdout(exc)
    except (ValueError, AttributeError):  # closed by the program itself, or no stream at all: nothing to write
        pass


def exit_for_unwritable_stdout(failure: OSError) -> NoReturn:
    """One line and exit 3 (could not complete: the output reached no one), as git says "write failure on
    standard output". `os._exit`: the interpreter's own last flush of stdout would fail again, noisily."""
    with suppress(OSError, ValueError, AttributeError):
        sys.stderr.write(f"vgpuctl: cannot write to standard output: {failure.strerror or failure}\n")
        sys.stderr.flush()
    os._exit(int(ExitStatus.INCOMPLETE))


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
