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
