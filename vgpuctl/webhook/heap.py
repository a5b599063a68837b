"""Whether this worker froze its heap, remembered rather than asked.

The server moves everything alive after loading into the collector's permanent generation (`gc.freeze`), and the
cluster view does the same after each publish. Asking `gc.get_freeze_count()` whether that happened walks the
whole permanent generation under the GIL: ~60 ms per view rebuild with a 5,000-node view frozen (issue 26's
profile), time every review waiting on the GIL pays. The answer never changes once given, so it is kept here.
"""

from __future__ import annotations

import gc

_frozen = False


def freeze(generation: int = 2) -> None:
    """Collect up to `generation`, then move every object still alive out of the collector's scans."""
    global _frozen
    gc.collect(generation)
    gc.freeze()
    _frozen = True


def frozen() -> bool:
    """Whether `freeze` ran in this process (the server's start-up), so views published later are frozen too."""
    return _frozen


def freeze_young() -> None:
    """Once `freeze` ran: move what is alive now out of the collector's scans, without a collection first (O(1)).

    For a long run of allocations that mostly stay alive, such as a 150,000-pod list being slimmed: every list
    page outlives a few young collections, is promoted to the oldest generation, and sets off a full collection
    of everything kept so far, again and again — 3.2 s of a 5.8 s list (benchmarks/cluster_aware.py). Frozen,
    they are freed by reference counting as before; only cyclic garbage frozen with them would stay."""
    if _frozen:
        gc.freeze()
