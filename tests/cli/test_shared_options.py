"""Options several commands share are declared once (`vgpuctl/cli/options.py`): the same flags, metavar and
choices everywhere, and `--volcano-version` read the same way, with the same one-line usage error (exit 2,
docs/contracts.md#exit-codes)."""

from __future__ import annotations

from typing import Any

import pytest
from typer.main import get_command

from tests.cli.conftest import EXAMPLES
from vgpuctl.cli.app import COMMANDS, app

HEALTHY = str(EXAMPLES / "clusters" / "healthy.yaml")
POD = str(EXAMPLES / "vgpu" / "deployment.yaml")
BAD = "banana"
MESSAGE = f"vgpuctl: --volcano-version: not a version: {BAD!r} (expected e.g. v1.15.1)\n"

# Each command that takes --volcano-version, with arguments that are fine apart from the version.
WITH_VERSION = [
    ("lint", POD),
    ("why", "kube-system/x", "--snapshot", HEALTHY),
    ("nodes", "--snapshot", HEALTHY),
    ("doctor", "--snapshot", HEALTHY),
    ("geometry", "validate", "-"),
    ("geometry", "export", "-"),
    ("install", "--mode", "vgpu", "--dry-run"),
]


@pytest.mark.parametrize("words", WITH_VERSION, ids=lambda words: " ".join(words[:2]))
def test_an_unreadable_volcano_version_is_the_same_usage_error_everywhere(run: Any, words: tuple[str, ...]) -> None:
    result = run(*words, "--volcano-version", BAD, input="nvidia: {}\n")
    assert (result.exit_code, result.stderr, result.stdout) == (2, MESSAGE, "")


def _options() -> dict[str, list[tuple[str, Any]]]:
    """Every option of every (sub)command, by its long flag: (command, click parameter)."""
    root = get_command(app)
    found: dict[str, list[tuple[str, Any]]] = {}
    for name in COMMANDS:
        command: Any = root.get_command(None, name)  # type: ignore[attr-defined]
        subcommands = getattr(command, "commands", None) or {}
        for sub, cmd in [(name, command), *((f"{name} {s}", c) for s, c in subcommands.items())]:
            for param in cmd.params:
                for flag in param.opts:
                    if flag.startswith("--"):
                        found.setdefault(flag, []).append((sub, param))
    return found


def test_shared_options_have_one_spelling() -> None:
    options = _options()
    assert len(options["--output"]) >= 10 and len(options["--volcano-version"]) >= 8
    for flag, metavar in (("--volcano-version", "V"), ("--snapshot", "FILE")):
        assert {(tuple(p.opts), p.metavar) for _, p in options[flag]} == {((flag,), metavar)}, flag
    # -o: table|json|yaml, except the commands whose output is a document to apply (yaml first).
    outputs = {sub: (tuple(p.opts), p.metavar, p.help) for sub, p in options["--output"]}
    documents = {sub: outputs.pop(sub) for sub in ("geometry export", "geometry merge")}
    assert set(documents.values()) == {(("-o", "--output"), "yaml|json", "Output format.")}
    assert set(outputs.values()) == {(("-o", "--output"), "table|json|yaml", "Output format.")}, outputs
    # --fail-on: error|warning, except `geometry validate`, where an info finding may fail CI too.
    fail_on = {sub: p.metavar for sub, p in options["--fail-on"]}
    assert fail_on.pop("geometry validate") == "error|warning|info"
    assert set(fail_on.values()) == {"error|warning"}, fail_on


@pytest.mark.parametrize("spelling", [["-o=json"], ["-ojson"], ["--output=json"], ["-o", "json"],
                                      ["--output", "json"]])
def test_output_is_spelled_as_kubectl_spells_it(run: Any, spelling: list[str]) -> None:
    """Issue 27: `-o=json` was the value "=json" (a usage error); kubectl accepts all of these."""
    result = run("nodes", "--snapshot", HEALTHY, *spelling)
    assert result.exit_code == 0, result.stderr
    assert result.json()["kind"] == "NodeReport"


def test_debug_may_come_after_the_command(run: Any) -> None:
    """Issue 27: `vgpuctl lint x --debug` was "No such option"; kubectl's global flags go anywhere."""
    for args in (["lint", POD, "--debug"], ["--debug", "lint", POD]):
        result = run(*args)
        assert result.exit_code == 0, result.stderr
    after_dashes = run("lint", "--", "--debug")  # after `--` it is a path, not the flag
    assert after_dashes.exit_code == 2 and "--debug" in after_dashes.stderr


def test_kubectl_style_keeps_everything_else() -> None:
    from vgpuctl.cli.app import kubectl_style

    assert kubectl_style(["nodes", "-l=zone=a", "-n=ml", "--debug", "-o=yaml"]) == [
        "--debug", "nodes", "-l", "zone=a", "-n", "ml", "-o", "yaml"]
    assert kubectl_style(["lint", "--", "-o=json", "--debug"]) == ["lint", "--", "-o=json", "--debug"]
    assert kubectl_style(["why", "-fpod.yaml", "--x=1"]) == ["why", "-fpod.yaml", "--x=1"]
