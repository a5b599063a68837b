"""Help pages say what an option takes the way kubectl does: nothing after a flag, `a|b|c` for a choice,
an upper-case word otherwise — never typer's `<bool>`, `<str>` or `<list[…]>`. (Arguments keep typer's
type column: it has no metavar of its own.)"""

from __future__ import annotations

import re
from typing import Any

import pytest
from typer.main import get_command

from vgpuctl.cli.app import COMMANDS, app

TYPE_LABEL = re.compile(r"<(bool|str|int|float|list\[[^>]*\]|[a-z|-]+)>")


def _pages() -> list[tuple[str, ...]]:
    root = get_command(app)
    pages: list[tuple[str, ...]] = [()]
    for name in COMMANDS:
        command: Any = root.get_command(None, name)  # type: ignore[attr-defined]
        pages.append((name,))
        pages += [(name, sub) for sub in (getattr(command, "commands", None) or {})]
    return pages


@pytest.mark.parametrize("words", _pages(), ids=lambda words: " ".join(words) or "vgpuctl")
def test_help_shows_no_type_labels(run: Any, words: tuple[str, ...]) -> None:
    result = run(*words, "--help")
    assert result.exit_code == 0
    options = result.stdout.split("Options ─", 1)[-1]  # the options panel on (arguments come before it)
    assert not TYPE_LABEL.findall(options), options


def test_choices_and_flags_read_plainly(run: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # one line per option
    page = run("install", "--help").stdout
    # --mode's five choices are listed in its help (a 48-column metavar squeezed the option names at 80).
    assert re.search(r"--mode +MODE +Device family to turn on \(repeatable\): vgpu, gpushare, gpunumber, "
                     r"vnpu-hami, vnpu-mindcluster\.", page)
    assert re.search(r"--dry-run +Print the plan", page)
    assert re.search(r"--output +-o +table\|json\|yaml +Output format", page)
    assert re.search(r"--help +-h +Show this message", page)
