"""The environment an admin's shell hands vgpuctl: a COLUMNS that is no width, an output encoding without √,
a stdout that is closed, a `--days` no certificate can have. Each ends in one line and the documented exit
code, never a traceback, an empty output or a MemoryError.

Each runs a real interpreter with the variable set (the encoding of the standard streams and a closed fd 1
exist only in a process of their own).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.cli.conftest import validate

ROOT = Path(__file__).resolve().parents[2]
BROKEN = "examples/clusters/broken.yaml"
ENTRY = "from vgpuctl.cli.app import main; main()"
#: Every table command, with the exit code it has on the bundled snapshot.
TABLES = {"doctor": (("doctor", "--snapshot", BROKEN), 1), "nodes": (("nodes", "--snapshot", BROKEN), 1),
          "why": (("why", "notebook-bob", "-n", "ml", "--snapshot", BROKEN), 1),
          "lint": (("lint", "examples/vgpu"), 1), "explain": (("explain", "--list"), 0),
          "page": (("explain", "VGP005"), 0), "help": (("doctor", "--help"), 0)}


def vgpuctl(*args: str, stdout: int = subprocess.PIPE, shell: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    """vgpuctl in a fresh interpreter with `env` added to the environment (COLUMNS and PYTHONIOENCODING of the
    test run removed); `shell` wraps it (`exec "$@" >&-`)."""
    environ = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "PYTHONIOENCODING", "LINES")}
    argv = [sys.executable, "-c", ENTRY, *args]
    if shell:
        argv = ["sh", "-c", shell, "sh", *argv]
    return subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, text=True, encoding="utf-8", timeout=120,
                          cwd=ROOT, env={**environ, **env})


@pytest.fixture(scope="module")
def plain() -> dict[str, subprocess.CompletedProcess[str]]:
    """Every table command with no COLUMNS: what an invalid one must leave unchanged."""
    return {name: vgpuctl(*args) for name, (args, _) in TABLES.items()}


NOT_WIDTHS = ("-5", "0", "99999999999")


@pytest.mark.parametrize(("command", "columns"), [*((c, "abc") for c in TABLES),
                                                   *((c, v) for c in ("nodes", "help") for v in NOT_WIDTHS)])
def test_a_columns_that_is_no_width_is_ignored_in_one_line(command: str, columns: str,
                                                           plain: dict[str, subprocess.CompletedProcess[str]]) -> None:
    """Before: `int(COLUMNS)` (abc: exit 3), a width of -5 or 0 (no output at all, or one column), and a
    99999999999-column help page (MemoryError)."""
    args, code = TABLES[command]
    done = vgpuctl(*args, COLUMNS=columns)
    assert (done.returncode, done.stdout) == (code, plain[command].stdout)
    said = f"vgpuctl: ignoring COLUMNS='{columns}': not a whole number from 1 to 10000"
    assert done.stderr.splitlines() == [said, *plain[command].stderr.splitlines()]


def test_a_valid_columns_still_sets_the_width() -> None:
    narrow = vgpuctl("nodes", "--snapshot", BROKEN, COLUMNS="60")
    assert narrow.returncode == 1 and narrow.stderr == ""
    table = narrow.stdout.splitlines()[1:3]  # the first node's device table, laid out for 60 columns
    assert table[0].startswith("#  DEVICE") and max(map(len, table)) <= 60


ASCII = {"PYTHONIOENCODING": "ascii"}
C_LOCALE = {"LC_ALL": "C", "LANG": "C", "PYTHONCOERCECLOCALE": "0", "PYTHONUTF8": "0"}  # ASCII, surrogateescape


@pytest.mark.parametrize(("command", "env"), [*((c, ASCII) for c in TABLES), ("doctor", C_LOCALE), ("help", C_LOCALE)],
                         ids=lambda v: v if isinstance(v, str) else "ascii" if v is ASCII else "c-locale")
def test_an_output_encoding_without_the_marks_gets_ascii_stand_ins(command: str, env: dict[str, str]) -> None:
    """Before: UnicodeEncodeError on the first √ (exit 3, or a traceback from a help page)."""
    args, code = TABLES[command]
    done = subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True, timeout=120, cwd=ROOT,
                          env={**{k: v for k, v in os.environ.items() if k != "COLUMNS"}, **env})
    assert done.returncode == code, done.stderr
    assert done.stdout.isascii() and done.stdout.strip()
    assert b"Traceback" not in done.stderr and b"Error" not in done.stderr


def test_the_ascii_stand_ins_keep_the_marks_and_the_table() -> None:
    doctor = vgpuctl("doctor", "--snapshot", BROKEN, PYTHONIOENCODING="ascii").stdout
    assert "\n+ Volcano is installed\n" in doctor and "\nx predicates is enabled alongside deviceshare\n" in doctor
    nodes = vgpuctl("nodes", "--snapshot", BROKEN, PYTHONIOENCODING="ascii").stdout.splitlines()
    header = next(i for i, line in enumerate(nodes) if line.startswith("#  DEVICE"))
    assert nodes[header + 1].startswith("0  GPU-5d0a~6c00  ")  # one column per mark: the columns stay aligned
    assert nodes[header].index("MEMORY") == nodes[header + 1].index(".......... 0/81559")


@pytest.mark.parametrize("fmt", ["json", "yaml"])
def test_json_and_yaml_on_an_ascii_stdout_read_back_the_same(fmt: str) -> None:
    utf8 = vgpuctl("doctor", "--snapshot", BROKEN, "-o", fmt)
    ascii_ = vgpuctl("doctor", "--snapshot", BROKEN, "-o", fmt, PYTHONIOENCODING="ascii")
    assert ascii_.returncode == utf8.returncode == 1 and ascii_.stdout.isascii() and not utf8.stdout.isascii()
    load = json.loads if fmt == "json" else yaml.safe_load
    assert load(ascii_.stdout) == load(utf8.stdout)
    validate("doctor-report.schema.json", load(ascii_.stdout))


@pytest.mark.parametrize("args", [("doctor", "--snapshot", BROKEN), ("doctor", "--snapshot", BROKEN, "-o", "json"),
                                  ("nodes", "--snapshot", BROKEN), ("--help",), ("--version",)],
                         ids=lambda a: " ".join(a))
def test_a_stdout_closed_from_the_start_is_exit_3_in_one_line(args: tuple[str, ...]) -> None:
    """`vgpuctl doctor … >&-`: before, a traceback (`'NoneType' object has no attribute 'write'`)."""
    done = vgpuctl(*args, shell='exec "$@" >&-')
    assert done.returncode == 3
    assert done.stderr == "vgpuctl: cannot write to standard output: Bad file descriptor\n"


@pytest.mark.parametrize(("redirect", "said"), [("> /dev/full", "No space left on device"),
                                                ("1< /dev/null", "Bad file descriptor")], ids=["full", "read-only"])
def test_a_stdout_that_cannot_be_written_is_exit_3_in_one_line(redirect: str, said: str) -> None:
    """Before: "internal error: OSError: [Errno 28] …" (exit 3, but not what happened)."""
    for args in (("explain", "VGP005"), ("doctor", "--snapshot", BROKEN, "-o", "json"), ("--version",)):
        done = vgpuctl(*args, shell=f'exec "$@" {redirect}')
        assert (done.returncode, done.stderr) == (3, f"vgpuctl: cannot write to standard output: {said}\n"), args


def test_certificate_days_beyond_the_year_9999_are_a_usage_error(tmp_path: Path) -> None:
    """Before: OverflowError, exit 3 "internal error"."""
    for flag in ("--days", "--ca-days"):
        done = vgpuctl("webhook", "certs", "--service", "s", "--namespace", "n", "--out", str(tmp_path / "tls"),
                       flag, "99999999999")
        assert done.returncode == 2 and done.stdout == ""
        (line,) = done.stderr.splitlines()
        assert line.startswith(f"vgpuctl: {flag} 99999999999 is too large: a certificate cannot be valid past "
                               "9999-12-31, so the largest allowed today is ")
        largest = int(line.rsplit(" ", 1)[1])
        assert 2_900_000 < largest < 3_000_000
    assert not (tmp_path / "tls").exists()


def test_shell_completion_keeps_quiet_about_columns() -> None:
    """The note is for a person running a command, not for the line being typed (completion's stderr)."""
    code = ("import sys; sys.argv[0] = 'kubectl_complete-vgpu'; "
            "from vgpuctl.cli.plugin_completion import kubectl_complete; kubectl_complete()")
    done = subprocess.run([sys.executable, "-c", code, "nodes", "--fa"], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env={**os.environ, "COLUMNS": "abc"})
    assert (done.returncode, done.stderr) == (0, "")
    assert [line.split("\t")[0] for line in done.stdout.splitlines()] == ["--family", "--fail-on", ":4"]
