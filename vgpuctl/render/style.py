"""Shared marks and colours, so every command speaks the same visual language."""

from __future__ import annotations

from vgpuctl.core.findings import Severity

SEVERITY_STYLE = {Severity.ERROR: "bold red", Severity.WARNING: "yellow", Severity.INFO: "cyan"}
SEVERITY_MARK = {Severity.ERROR: "×", Severity.WARNING: "‼", Severity.INFO: "i"}
PASS_MARK = "√"


def plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"
