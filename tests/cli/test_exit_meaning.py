"""Exit codes mean what the README's table says, whichever command meets the condition (issue 15 §6).

2 usage: the user named a file that is not there, whether by `--kubeconfig` or by `KUBECONFIG`.
3 could not complete: a missing `[webhook]` extra, said in one line with the `pip install` that fixes it.
A closed stdout (`vgpuctl … | head -1`): no message, and the status git, kubectl and the coreutils give,
killed by SIGPIPE (the shell shows 141), never 1, which means "findings".

Each runs a real interpreter: the point is what the process does, as the shell sees it.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
ENTRY = "from vgpuctl.cli.app import main; main()"

# A meta-path finder that refuses the named modules, as when they are not installed (no code of ours is
# changed: Python's own import system reports them missing). Matching a submodule name exactly simulates
# a package that is installed but broken further in, e.g. cryptography without its compiled bindings.
WITHOUT = """\
import sys
BLOCKED = set(sys.argv.pop(1).split(","))
class Absent:
    def find_spec(self, name, path=None, target=None):
        if name in BLOCKED or name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None
sys.meta_path.insert(0, Absent())
from vgpuctl.cli.app import main
main()
"""


def vgpuctl(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", ENTRY, *args], capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env=env)


def without(modules: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", WITHOUT, modules, *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


# ---- a closed stdout ------------------------------------------------------------------------------

SIGPIPE = getattr(signal, "SIGPIPE", None)
pytestmark_pipes = pytest.mark.skipif(SIGPIPE is None, reason="no SIGPIPE on this platform")


def into_a_closed_pipe(*args: str) -> subprocess.CompletedProcess[str]:
    """stdout is a pipe whose reader has already gone: the first write meets EPIPE, deterministically."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run([sys.executable, "-c", ENTRY, *args], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=120, cwd=ROOT)
    finally:
        os.close(write_end)


@pytestmark_pipes
@pytest.mark.parametrize("args", [
    ("nodes", "--snapshot", "examples/clusters/broken.yaml"),  # a rich table, and findings (would exit 1)
    ("doctor", "--snapshot", "examples/clusters/broken.yaml", "-o", "json"),
    ("explain", "--list"),
    ("--help",),  # typer's own rich help page, written while parsing
    ("why", "--help"),
    ("--version",),  # click's echo
], ids=lambda a: " ".join(a))
def test_a_closed_stdout_ends_quietly_as_sigpipe(args: tuple[str, ...]) -> None:
    """Before: exit 1 (click's and rich's EPIPE handling), the status of "findings", so `set -o pipefail`
    could not tell a truncated listing from a failed check; Python's exit flush could add "Exception
    ignored … BrokenPipeError". Now: no output on stderr, and death by SIGPIPE as git's write_or_die.c
    (check_pipe) and any Go or C tool, which the shell shows as 141."""
    done = into_a_closed_pipe(*args)
    assert done.returncode == -SIGPIPE, (done.returncode, done.stderr)  # type: ignore[operator]
    assert done.stderr == ""


@pytestmark_pipes
def test_head_dash_1_on_a_long_table(tmp_path: Path) -> None:
    """`vgpuctl lint pods.yaml | head -1`: the reader takes one line and leaves while vgpuctl is still
    writing (the table is larger than a pipe's buffer, so the write after the close must fail)."""
    pod = (EXAMPLES / "vgpu" / "hami-core-pod.yaml").read_text()
    many = tmp_path / "pods.yaml"
    many.write_text("\n---\n".join(pod.replace("gpu-pod12", f"gpu-pod-{i:05d}").replace("3000", "3Gi")
                                   for i in range(1500)))
    proc = subprocess.Popen([sys.executable, "-c", ENTRY, "lint", str(many)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    proc.stderr.close()
    assert proc.wait(timeout=120) == -SIGPIPE  # type: ignore[operator]
    assert first.strip()
    assert "Traceback" not in err and "Exception ignored" not in err and "BrokenPipe" not in err


def test_an_open_stdout_keeps_the_verdict(tmp_path: Path) -> None:
    """The SIGPIPE path is taken only for a reader that left: output to a file exits with the verdict."""
    with (tmp_path / "out").open("w") as out:
        findings = subprocess.run([sys.executable, "-c", ENTRY, "nodes", "--snapshot", "examples/clusters/broken.yaml"],
                                  stdout=out, stderr=subprocess.PIPE, text=True, timeout=120, cwd=ROOT)
    assert findings.returncode == 1 and "gpu-h100-0" in (tmp_path / "out").read_text()
    with open(os.devnull, "w") as null:
        help_page = subprocess.run([sys.executable, "-c", ENTRY, "--help"], stdout=null, timeout=120, cwd=ROOT)
    assert help_page.returncode == 0


# ---- a missing [webhook] extra ----------------------------------------------------------------------

@pytest.mark.parametrize(("blocked", "args", "named"), [
    ("flask", ("webhook", "serve"), "flask"),
    ("gunicorn,cryptography", ("webhook", "certs", "--service", "s", "--namespace", "n", "--out", "x"),
     "gunicorn, cryptography"),
    # installed, but its compiled part does not load: before, "internal error: ModuleNotFoundError" (exit 3)
    ("cryptography.hazmat.bindings._rust", ("webhook", "certs", "--service", "s", "--namespace", "n",
                                            "--out", "x"), "cryptography"),
    ("gunicorn.app.base", ("webhook", "serve"), "gunicorn"),
], ids=["flask-serve", "two-certs", "broken-cryptography-certs", "broken-gunicorn-serve"])
def test_a_missing_webhook_extra_is_exit_3_naming_the_fix(blocked: str, args: tuple[str, ...], named: str) -> None:
    """Exit 3, "could not complete": the command line was right (2 would send the user to fix it), this
    install cannot run it, and `pip install 'vgpuctl[webhook]'` then the same command succeeds, like a
    cluster that becomes reachable. One line, never "internal error"."""
    done = without(blocked, *args)
    assert done.returncode == 3, done.stderr
    assert done.stdout == ""
    line = done.stderr.strip()
    assert "\n" not in line and "internal error" not in line and "Traceback" not in line
    assert line.startswith(f"vgpuctl: this command needs {named} from the [webhook] extra")
    assert line.endswith("pip install 'vgpuctl[webhook]'")


def test_without_the_webhook_extra_lint_still_works() -> None:
    done = without("flask,werkzeug,gunicorn,cryptography,prometheus_client", "lint",
                   str(EXAMPLES / "vgpu" / "hami-core-pod.yaml"))
    assert done.returncode == 0, done.stderr


# ---- a kubeconfig file that is not there -------------------------------------------------------------

def test_a_missing_kubeconfig_file_is_usage_whether_flag_or_env(tmp_path: Path) -> None:
    """Before: `--kubeconfig /nope` exited 2 but `KUBECONFIG=/nope` exited 3. Both name a file that is not
    there: a usage error. (Having named nothing and found no configuration stays 3.)"""
    home = tmp_path / "home"
    home.mkdir()
    base = {k: v for k, v in os.environ.items() if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST")}
    base["HOME"] = str(home)
    missing = str(tmp_path / "nope")
    by_flag = vgpuctl("doctor", "--kubeconfig", missing, env=base)
    by_env = vgpuctl("doctor", env={**base, "KUBECONFIG": missing})
    assert (by_flag.returncode, by_env.returncode) == (2, 2), (by_flag.stderr, by_env.stderr)
    assert by_flag.stderr == f"vgpuctl: --kubeconfig {missing}: no such file\n"
    assert by_env.stderr == f"vgpuctl: KUBECONFIG={missing}: no such file\n"
    nothing = vgpuctl("doctor", env=base)
    assert nothing.returncode == 3 and "no Kubernetes configuration" in nothing.stderr


def test_only_an_extras_import_error_is_called_a_missing_extra() -> None:
    """A module of ours that does not import is a bug, reported as one ("internal error"), not hidden
    behind a `pip install` hint."""
    from vgpuctl.errors import MissingExtra

    assert MissingExtra.from_import_error(ModuleNotFoundError("No module named 'vgpuctl.nope'", name="vgpuctl.nope")) \
        is None
    broken = MissingExtra.from_import_error(ImportError("cannot import name 'x' from 'werkzeug'", name="werkzeug"))
    assert broken is not None and str(broken) == (
        "this command needs werkzeug from the [webhook] extra, which this install cannot import (cannot import "
        "name 'x' from 'werkzeug'): pip install 'vgpuctl[webhook]'")
