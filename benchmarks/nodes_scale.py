"""`vgpuctl nodes -o json --snapshot` at fleet scale, as a ratio to a plain `json.load` of the same file.

    python benchmarks/nodes_scale.py [--sizes 1250 2500 5000] [--workdir /tmp]

For each size it generates a kubectl-shaped snapshot (N nodes × 8 GPUs, 8 vGPU pods per node), then runs,
each in a fresh process, `python -c json.load(...)` (the baseline) and `vgpuctl nodes -o json --snapshot`,
and reports wall time and peak RSS (per child, from wait4) and the ratios. Targets: ≤ 3× json.load time,
peak RSS ≤ 1 GiB at 5,000 nodes, near-linear growth.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.snapshot_gen import generate


def measure(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, peak RSS MiB) of one child process; its stdout is discarded."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        err = proc.stderr.read().decode() if proc.stderr else ""
        raise SystemExit(f"{' '.join(argv)} exited {proc.returncode}: {err}")
    return wall, usage.ru_maxrss / 1024


def best(argv: list[str], repeat: int) -> tuple[float, float]:
    runs = [measure(argv) for _ in range(repeat)]
    return min(r[0] for r in runs), max(r[1] for r in runs)


def main(command: str = "nodes") -> None:
    parser = argparse.ArgumentParser(description=f"`vgpuctl {command} -o json --snapshot` at fleet scale vs json.load")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1250, 2500, 5000])
    parser.add_argument("--workdir", default="/tmp")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    vgpuctl = str(Path(sys.executable).with_name("vgpuctl"))
    label = f"{command} -o json s"
    print(f"{'nodes':>6} {'pods':>6} {'MB':>5} | {'json.load s':>11} {'MiB':>5} | {label:>16} {'MiB':>5} | "
          f"{'time ×':>6} {'RSS ×':>5}")
    previous: float | None = None
    for size in args.sizes:
        path = Path(args.workdir) / f"vgpuctl-fleet-{size}.json"
        if not path.exists():
            path.write_text(json.dumps(generate(size)))
        base_t, base_m = best([sys.executable, "-c", f"import json; json.load(open({str(path)!r}))"], args.repeat)
        ours_t, ours_m = best([vgpuctl, command, "-o", "json", "--snapshot", str(path)], args.repeat)
        growth = f"  (×{ours_t / previous:.2f} vs previous size)" if previous else ""
        previous = ours_t
        print(f"{size:>6} {size * 8:>6} {path.stat().st_size / 1e6:>5.0f} | {base_t:>11.2f} {base_m:>5.0f} | "
              f"{ours_t:>16.2f} {ours_m:>5.0f} | {ours_t / base_t:>6.2f} {ours_m / base_m:>5.2f}{growth}")


if __name__ == "__main__":
    main()
