"""`vgpuctl nodes` as a table (its default output) vs `-o json` on issue 17's fleet, stdout not a terminal.

    python benchmarks/nodes_table.py [--nodes 5000] [--repeat 3] [--workdir /tmp]

Both run as the real CLI in a fresh process on the same snapshot (`benchmarks/scale.py`'s fleet, bytecode
cached), alternating; stdout is not a terminal (/dev/null), as in `vgpuctl nodes | less` or `> file`, where
no style shows. Prints the median seconds of each and the ratio table / JSON per round (best and median).
A rich Table per node made the table 17× the JSON (20 s on 5,000 nodes); the renderer's one-Text layout
and plain printing (`vgpuctl/render/nodes.py`) are what this measures. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.scale import child_env, measure, snapshot


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", default=tempfile.gettempdir())
    args = parser.parse_args()
    workdir = Path(args.workdir)
    workdir.mkdir(parents=True, exist_ok=True)
    path, env = snapshot(args.nodes, workdir), child_env(workdir)
    vgpuctl = str(Path(sys.executable).with_name("vgpuctl"))
    table_argv = [vgpuctl, "nodes", "--snapshot", str(path)]
    json_argv = [*table_argv, "-o", "json"]
    measure(json_argv, env)  # writes the bytecode cache
    tables, jsons = [], []
    for _ in range(args.repeat):
        jsons.append(measure(json_argv, env).wall)
        tables.append(measure(table_argv, env).wall)
    ratios = [t / j for t, j in zip(tables, jsons, strict=True)]
    print(f"fleet: {args.nodes} nodes × 8 GPUs; {args.repeat} rounds, stdout not a terminal")
    print(f"nodes -o json  {statistics.median(jsons):6.2f} s")
    print(f"nodes (table)  {statistics.median(tables):6.2f} s")
    print(f"ratio table / json: best {min(ratios):.2f}, median {statistics.median(ratios):.2f}")


if __name__ == "__main__":
    main()
