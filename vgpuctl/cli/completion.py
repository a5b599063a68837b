"""Shell completion: `vgpuctl completion bash|zsh|fish` prints the script (the convention of kubectl, helm
and Volcano's vcctl); `kubectl_complete-vgpu` (`cli/plugin_completion.py`) answers kubectl's own completion
for `kubectl vgpu`.

Both ask the same command tree (typer's completion over the lazily loaded commands), so they offer the same
commands, options and choices. kubectl ≥ 1.26 completes a plugin `kubectl-NAME` by running an executable
`kubectl_complete-NAME` on PATH with the words after the plugin's name (the last one being completed,
possibly empty) and reading a completion per line, then an optional `:DIRECTIVE` line (Cobra's
ShellCompDirective): kubernetes/kubernetes, staging/src/k8s.io/kubectl/pkg/cmd/plugin/plugin_completion.go
(`pluginCompletion`, `getPluginCompletions`; added by kubernetes/kubernetes#105867).
"""

from __future__ import annotations

import enum

import typer

from vgpuctl.cli.env import guarded, stdout

PROG = "vgpuctl"
#: The variable the scripts set when asking vgpuctl for completions (typer's `_<PROG>_COMPLETE`).
COMPLETE_VAR = "_VGPUCTL_COMPLETE"
# Cobra's ShellCompDirective values kubectl understands (github.com/spf13/cobra, completions.go).
DIRECTIVE_DEFAULT = 0  # nothing to offer: let the shell complete file names
DIRECTIVE_NO_FILE_COMP = 4


class Shell(str, enum.Enum):
    BASH = "bash"
    ZSH = "zsh"
    FISH = "fish"


EPILOG = """[bold]Examples[/bold]

  source <(vgpuctl completion bash)                 # this shell; add the line to ~/.bashrc to keep it
  vgpuctl completion zsh > "${fpath[1]}/_vgpuctl"   # zsh (compinit loads it in new shells)
  vgpuctl completion fish > ~/.config/fish/completions/vgpuctl.fish

`kubectl vgpu` completes through kubectl's own completion (kubectl ≥ 1.26): it runs
kubectl_complete-vgpu, installed next to kubectl-vgpu, from PATH.
"""


def enable() -> None:
    """Register typer's bash, zsh and fish completion (the scripts' requests are answered in `main`)."""
    from typer._completion_classes import completion_init

    completion_init()


@guarded
def completion_command(
    shell: Shell = typer.Argument(..., metavar="SHELL", help="bash, zsh or fish."),
) -> None:
    """Print the shell completion script for vgpuctl (commands, options, choices, schema names)."""
    from typer._completion_shared import get_completion_script

    stdout().write(get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell.value) + "\n")


def register(app: typer.Typer) -> None:
    app.command("completion", epilog=EPILOG)(completion_command)
