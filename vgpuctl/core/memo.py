"""The one bound every process-lifetime memo in the core keeps.

Memos of the pod rules are keyed by what users write (resource names, quantities, annotation values), and
the webhook lives for weeks: a memo that grew with every distinct key would be a memory leak anyone can
drive. So each memo is cleared when it grows past `MEMO_LIMIT` entries. Memos are shared by request
threads: a caller reads once (`memo.get(key, MISSING)`) and, on a miss, computes and `store`s; a race
at worst computes a value twice.
"""

from __future__ import annotations

from typing import Any, Final, TypeVar

MEMO_LIMIT: Final = 4096
MISSING: Final[Any] = object()  # `memo.get(key, MISSING)`: for memos that remember None too

K = TypeVar("K")
V = TypeVar("V")


def store(memo: dict[K, V], key: K, value: V) -> V:
    """Remember `value` under `key` (clearing a full memo first) and return it."""
    if len(memo) > MEMO_LIMIT:
        memo.clear()
    memo[key] = value
    return value
