"""Errors every layer may raise, in a module that imports nothing but the standard library (the CLI loads
it at start-up).

`vgpuctl.cli.env.guarded` is the one place that turns them into exit codes.
"""

from __future__ import annotations

from collections.abc import Sequence

# The optional extras and the top-level modules each brings (pyproject.toml [project.optional-dependencies],
# with the packages those pull in that nothing else does): an ImportError naming one of them means the
# extra is missing or broken, not that vgpuctl has a bug.
EXTRA_MODULES = {
    "webhook": ("flask", "werkzeug", "gunicorn", "h11", "cryptography", "prometheus_client"),
}


class UsageError(Exception):
    """Bad input named on the command line (exit 2)."""


class MissingExtra(Exception):  # noqa: N818 - the name says what happened; callers catch it by name
    """The command needs an optional extra this install lacks or cannot import (exit 3: the command was
    right, this install cannot run it; installing the extra and rerunning the same command succeeds)."""

    def __init__(self, extra: str, modules: Sequence[str], detail: str = "") -> None:
        self.extra = extra
        self.modules = tuple(modules)
        state = f"cannot import ({detail})" if detail else "lacks"
        super().__init__(f"this command needs {', '.join(self.modules)} from the [{extra}] extra, which this "
                         f"install {state}: pip install 'vgpuctl[{extra}]'")

    @classmethod
    def from_import_error(cls, exc: ImportError) -> MissingExtra | None:
        """The extra a failed import belongs to, or None when the module is not one of an extra's."""
        name = exc.name or ""
        top = name.split(".")[0]
        absent = isinstance(exc, ModuleNotFoundError) and name == top  # the package itself is not there
        detail = "" if absent else (str(exc).strip().splitlines() or [f"cannot import {name}"])[0]
        for extra, modules in EXTRA_MODULES.items():
            if top in modules:
                return cls(extra, [top], detail)
        return None


# The deepest value the parsers build (orjson 1,024 levels, libyaml 1,000; `core/safeyaml.py` refuses deeper
# user input anyway, but not in snapshots or reviews): a process holding such values walks them (repr in a
# message, a rule, a copy) with 2-3 Python frames per level, so it raises its recursion limit to this
# (`cli/app.py main`, `webhook/server.py worker_app`) instead of dying on one.
RECURSION_LIMIT = 4096
