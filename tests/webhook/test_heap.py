"""The worker remembers that it froze its heap instead of asking gc.get_freeze_count() on each view rebuild."""

from __future__ import annotations

import subprocess
import sys
import textwrap


def test_freeze_is_remembered_and_really_freezes() -> None:
    # A fresh interpreter: freezing in the test process would leak into every other test.
    script = textwrap.dedent("""
        import gc
        from vgpuctl.webhook import heap
        assert not heap.frozen() and gc.get_freeze_count() == 0
        kept = [[i] for i in range(10_000)]
        heap.freeze()
        assert heap.frozen()
        assert gc.get_freeze_count() >= len(kept)
        heap.freeze(1)  # the view's publish: younger generations only, still frozen
        assert heap.frozen()
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
