"""Hostile inputs the tests of issue 23 run for real (tests/unit/test_safe_yaml.py, tests/cli/test_hostile_input.py)."""

from __future__ import annotations


def laughs(levels: int = 10, width: int = 9, flow: bool = True) -> str:
    """The classic billion laughs: each level an anchored list of `width` aliases to the one before
    (10 levels of 9: 30 nodes written, 4,412,961,516 decoded)."""
    lines = [f"a0: &a0 [{', '.join(['lol'] * width)}]"]
    for i in range(1, levels):
        refs = [f"*a{i - 1}"] * width
        lines.append(f"a{i}: &a{i} [{','.join(refs)}]" if flow else
                     f"a{i}: &a{i}\n" + "".join(f"  - {ref}\n" for ref in refs).rstrip("\n"))
    return "\n".join(lines) + "\n"
