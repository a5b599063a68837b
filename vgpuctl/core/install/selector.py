"""`--nodes SELECTOR`: the shared label-selector reading (`core.selector`), with install's error type.

The same selector decides which nodes install labels (`ascend=on`) and where the device-plugin DaemonSets
may run (as node affinity), so both read it through `core.selector`, exactly as `nodes -l` does.
"""

from __future__ import annotations

from vgpuctl.core.install.modes import InstallError
from vgpuctl.core.selector import Requirement, Selector, SelectorError, node_labels, parse_selector


def parse_nodes(text: str) -> Selector:
    """`--nodes` as a selector; a selector that cannot be read is an `InstallError` naming the option."""
    try:
        return parse_selector(text)
    except SelectorError as exc:
        raise InstallError(f"--nodes: {exc}") from None


__all__ = ["Requirement", "Selector", "node_labels", "parse_nodes"]
