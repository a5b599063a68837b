"""Start-up: a command imports what it uses, not every other command's dependencies."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("kubernetes", "flask", "gunicorn", "vgpuctl.core.doctor", "vgpuctl.webhook.app", "vgpuctl.core.install",
         "vgpuctl.sources", "markdown_it")


def loaded_after(*argv: str) -> tuple[int, set[str]]:
    code = ("import json, sys\nfrom vgpuctl.cli.app import main\n"
            "try:\n    main()\nfinally:\n"
            f"    sys.stderr.write('MODULES' + json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    return done.returncode, set(json.loads(done.stderr.rsplit("MODULES", 1)[1]))


def test_version_and_explain_load_no_other_command() -> None:
    assert loaded_after("--version") == (0, set())
    assert loaded_after("explain", "VGP001", "-o", "json") == (0, set())
    code, modules = loaded_after("explain", "VGP001")
    assert code == 0 and modules == {"markdown_it"}  # the page itself is rendered markdown


def test_a_command_loads_its_own_module_and_help_lists_every_command() -> None:
    code, modules = loaded_after("doctor", "--snapshot", "examples/clusters/healthy.yaml", "-o", "json")
    assert code == 0 and "vgpuctl.core.doctor" in modules and "flask" not in modules
    done = subprocess.run([sys.executable, "-c", "from vgpuctl.cli.app import main; main()", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0
    for name in ("doctor", "lint", "explain", "geometry", "nodes", "snapshot", "webhook", "why", "install",
                 "uninstall"):
        assert f" {name} " in done.stdout, name
