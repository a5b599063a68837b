"""`vgpuctl doctor -o json --snapshot` at fleet scale, as a ratio to a plain `json.load` of the same file.

    python benchmarks/doctor_scale.py [--sizes 1250 2500 5000] [--workdir /tmp]

Same generated snapshots and per-process measurement as `nodes_scale.py`. Targets: ≤ 10 s and ≤ 1.5 GiB
at 5,000 nodes × 8 GPUs with 40,000 vGPU pods on a 2-core machine, near-linear growth.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.nodes_scale import main

if __name__ == "__main__":
    main(command="doctor")
