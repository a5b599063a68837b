"""`kubectl_complete-vgpu`: kubectl's plugin completion protocol for `kubectl vgpu` (`cli/completion.py` says
how kubectl asks). Its own module because it needs the whole command tree (`cli/app.py`), which loads
`cli/completion.py` as a command: the two would import each other.
"""

from __future__ import annotations

import sys

from vgpuctl.cli.completion import COMPLETE_VAR, DIRECTIVE_DEFAULT, DIRECTIVE_NO_FILE_COMP, PROG, enable


def completions(words: list[str]) -> list[tuple[str, str]]:
    """(value, help) for the last of `words` (the one being typed, possibly empty), after the others."""
    from typer._completion_classes import BashComplete
    from typer.main import get_command

    from vgpuctl.cli.app import app

    *args, incomplete = words or [""]
    asker = BashComplete(get_command(app), {}, PROG, COMPLETE_VAR)
    return [(item.value, item.help or "") for item in asker.get_completions(args, incomplete)]


def kubectl_complete() -> None:
    """The `kubectl_complete-vgpu` console script."""
    enable()
    offered = completions(sys.argv[1:])
    lines = [f"{value}\t{' '.join(help_text.split())}" if help_text else value for value, help_text in offered]
    lines.append(f":{DIRECTIVE_NO_FILE_COMP if offered else DIRECTIVE_DEFAULT}")
    sys.stdout.write("\n".join(lines) + "\n")
