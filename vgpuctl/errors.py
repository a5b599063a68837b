"""Errors every layer may raise, in a module that imports nothing (the CLI loads it at start-up)."""

from __future__ import annotations


class UsageError(Exception):
    """Bad input named on the command line (exit 2)."""
