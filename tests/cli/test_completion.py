"""Shell completion for `vgpuctl` (bash, zsh, fish scripts from `vgpuctl completion SHELL`) and for
`kubectl vgpu` (kubectl's plugin completion through `kubectl_complete-vgpu`), and `kubectl vgpu --help`
naming itself so.

kubectl's protocol (kubernetes/kubernetes, staging/src/k8s.io/kubectl/pkg/cmd/plugin/plugin_completion.go,
`pluginCompletion` and `getPluginCompletions`, since v1.26): kubectl runs `kubectl_complete-<plugin>` from
PATH with the plugin's words, the last one being completed (empty for a new word), and reads one completion
per line, optionally `value<TAB>description`, then an optional `:<ShellCompDirective>` line.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

VENV_BIN = Path(sys.executable).parent


def _python(code: str, *argv: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def _kubectl_complete(*words: str) -> list[str]:
    """The `kubectl_complete-vgpu` console script's function, run as kubectl runs it (argv = the words)."""
    code = ("import sys; sys.argv[0] = 'kubectl_complete-vgpu'; "
            "from vgpuctl.cli.plugin_completion import kubectl_complete; kubectl_complete()")
    done = _python(code, *words)
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()


def test_kubectl_complete_offers_commands_then_a_no_file_directive() -> None:
    lines = _kubectl_complete("")
    assert lines[-1] == ":4"  # cobra.ShellCompDirectiveNoFileComp
    names = [line.split("\t")[0] for line in lines[:-1]]
    assert {"doctor", "nodes", "why", "install", "schema", "completion"} <= set(names)
    assert all("\t" in line for line in lines[:-1])  # with the command's description, as cobra shows it


def test_kubectl_complete_options_and_choices() -> None:
    assert [line.split("\t")[0] for line in _kubectl_complete("nodes", "--fa")] == ["--family", "--fail-on", ":4"]
    assert _kubectl_complete("schema", "doc") == ["doctor-report", ":4"]
    # Nothing to offer (a file argument): the default directive lets the shell complete file names.
    assert _kubectl_complete("lint", "exa") == [":0"]


def test_kubectl_complete_is_declared_as_kubectl_looks_for_it() -> None:
    import tomllib
    scripts = tomllib.loads((Path(__file__).resolve().parents[2] / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["kubectl_complete-vgpu"] == "vgpuctl.cli.plugin_completion:kubectl_complete"
    assert scripts["kubectl-vgpu"] == scripts["vgpuctl"] == "vgpuctl.cli.app:main"


@pytest.mark.parametrize("argv0, name", [("/usr/local/bin/kubectl-vgpu", "kubectl vgpu"),
                                         ("/home/u/.venv/bin/vgpuctl", "vgpuctl")])
def test_help_names_the_program_as_it_was_run(argv0: str, name: str) -> None:
    code = f"import sys; sys.argv[0] = {argv0!r}; from vgpuctl.cli.app import main; main()"
    root = _python(code, "--help", env={"COLUMNS": "100"})
    assert root.returncode == 0 and f"Usage: {name} [OPTIONS] COMMAND" in root.stdout
    sub = _python(code, "nodes", "--help", env={"COLUMNS": "100"})
    assert f"Usage: {name} nodes [OPTIONS]" in sub.stdout
    other = "vgpuctl" if name == "kubectl vgpu" else "kubectl vgpu"
    assert f"Usage: {other}" not in root.stdout + sub.stdout


@pytest.mark.skipif(not (VENV_BIN / "kubectl-vgpu").exists(), reason="the console scripts are not installed")
def test_the_installed_kubectl_vgpu_script_says_kubectl_vgpu() -> None:
    done = subprocess.run([str(VENV_BIN / "kubectl-vgpu"), "--help"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and "Usage: kubectl vgpu [OPTIONS] COMMAND" in done.stdout


def test_completion_prints_a_script_per_shell() -> None:
    code = "from vgpuctl.cli.app import main; main()"
    for shell, marker in (("bash", "complete -o default -F _vgpuctl_completion vgpuctl"),
                          ("zsh", "compdef _vgpuctl_completion vgpuctl"),
                          ("fish", "complete --command vgpuctl")):
        done = _python(code, "completion", shell)
        assert done.returncode == 0 and marker in done.stdout and "_VGPUCTL_COMPLETE" in done.stdout, shell
    bad = _python(code, "completion", "tcsh")
    assert bad.returncode == 2 and "Traceback" not in bad.stderr


def test_zsh_and_fish_requests_are_answered() -> None:
    code = "from vgpuctl.cli.app import main; main()"
    zsh = _python(code, env={"_VGPUCTL_COMPLETE": "complete_zsh", "_TYPER_COMPLETE_ARGS": "vgpuctl schema doc"})
    assert zsh.returncode == 0 and '"doctor-report"' in zsh.stdout
    fish = _python(code, env={"_VGPUCTL_COMPLETE": "complete_fish", "_TYPER_COMPLETE_FISH_ACTION": "get-args",
                              "_TYPER_COMPLETE_ARGS": "vgpuctl nodes --fam"})
    assert fish.returncode == 0 and fish.stdout.startswith("--family\t")


@pytest.mark.skipif(shutil.which("bash") is None or not (VENV_BIN / "vgpuctl").exists(),
                    reason="needs bash and the installed vgpuctl script")
def test_bash_completes_through_the_script_it_sources(tmp_path: Path) -> None:
    """The real thing: bash sources `vgpuctl completion bash` and runs its completion function, which asks
    the installed `vgpuctl`."""
    script = ('source <(vgpuctl completion bash)\n'
              'COMP_WORDS=(vgpuctl schema d); COMP_CWORD=2\n'
              '_vgpuctl_completion vgpuctl\n'
              'printf "%s\\n" "${COMPREPLY[@]}"\n')
    env = {**os.environ, "PATH": f"{VENV_BIN}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=120, env=env,
                          cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["device-config", "doctor-report"]


def test_explain_completes_finding_codes() -> None:
    """Issue 27: `vgpuctl explain VGN0<TAB>` offers the codes, with their titles, in both completions."""
    from vgpuctl.core.catalogue import CATALOGUE

    lines = _kubectl_complete("explain", "VGN01")
    assert lines[-1] == ":4"
    offered = [line.split("\t") for line in lines[:-1]]
    assert [code for code, _ in offered] == [c for c in CATALOGUE if c.startswith("VGN01")]
    assert all(title == CATALOGUE[code].title for code, title in offered)
    bash = _python("from vgpuctl.cli.app import main; main()", env={
        "_VGPUCTL_COMPLETE": "complete_bash", "COMP_WORDS": "vgpuctl explain VGC00", "COMP_CWORD": "2"})
    assert bash.returncode == 0, bash.stderr
    assert sorted(bash.stdout.split()) == sorted(c for c in CATALOGUE if c.startswith("VGC00"))
