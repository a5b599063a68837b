"""`python -m vgpuctl` is the `vgpuctl` command (for a venv whose scripts are not on PATH)."""

from __future__ import annotations

import subprocess
import sys


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*argv], capture_output=True, text=True, timeout=120)


def test_python_dash_m_runs_the_same_command() -> None:
    module = run(sys.executable, "-m", "vgpuctl", "explain", "VGP001", "-o", "json")
    script = run(sys.executable, "-c", "from vgpuctl.cli.app import main; main()", "explain", "VGP001", "-o", "json")
    assert module.returncode == script.returncode == 0 and '"VGP001"' in module.stdout
    assert module.stdout == script.stdout
    usage = run(sys.executable, "-m", "vgpuctl", "no-such-command")
    assert usage.returncode == 2 and "vgpuctl" in usage.stderr and "Traceback" not in usage.stderr
