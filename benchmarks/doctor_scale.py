"""`vgpuctl doctor -o json --snapshot` on issue 17's fleet, as a ratio to `orjson.loads` (gc off).

    python benchmarks/doctor_scale.py [--nodes 5000] [--repeat 3] [--no-growth]

The fleet, the floor, the measurement and the goals are `benchmarks/scale.py`'s (which runs all three
commands side by side); this runs `doctor` alone.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.scale import main

if __name__ == "__main__":
    main(["doctor"])
