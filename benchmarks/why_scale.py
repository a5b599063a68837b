"""`vgpuctl why -f pod.json -o json --snapshot` (a pod that fits nowhere) on issue 17's fleet, vs `orjson.loads`.

    python benchmarks/why_scale.py [--nodes 5000] [--repeat 3] [--no-growth]
    python benchmarks/why_scale.py --phases [--nodes 5000] [--repeat 5]

The fleet, the floor, the measurement and the goals are `benchmarks/scale.py`'s (which runs all three
commands side by side); this runs `why` alone. `--phases` times, in this process, what `why -f` does after the
parse, phase by phase (median of `--repeat` rounds, the garbage collector off as the CLI has it while it builds):
the snapshot build with its tally of every node's pods (`why/usage.py NodeTallies`), decoding the nodes'
devices, the rule facts, the replay of every node, and the report's JSON. Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.scale import WHY_POD, main, snapshot

PHASES = ("build + tally", "decode devices", "rule facts", "replay", "to JSON")


def phases(nodes: int, repeat: int, workdir: Path) -> dict[str, list[float]]:
    """Seconds per phase of `why -f` on the fleet of `nodes`, one list entry per round."""
    from vgpuctl.core.cluster.build import build_snapshot
    from vgpuctl.core.cluster.rule_facts import facts_from_snapshot
    from vgpuctl.core.why.simulate import env_from_snapshot, explain
    from vgpuctl.core.why.usage import NodeTallies
    from vgpuctl.render import OutputFormat, dump
    from vgpuctl.snapshotfile import load_snapshot

    data = load_snapshot(str(snapshot(nodes, workdir)))
    times: dict[str, list[float]] = {name: [] for name in PHASES}
    gc.disable()
    for _ in range(repeat):
        marks = [time.perf_counter()]
        built = build_snapshot(data.objects, data.server_version, kinds=data.kinds, pod_visitor=NodeTallies())
        marks.append(time.perf_counter())
        devices = sum(len(node.devices) for node in built.nodes)  # decoded on first read
        marks.append(time.perf_counter())
        facts = facts_from_snapshot(built)
        marks.append(time.perf_counter())
        report = explain(WHY_POD, built.nodes, env_from_snapshot(built, now=datetime.now(UTC)), what_if=True,
                         facts=facts, source=WHY_POD)
        marks.append(time.perf_counter())
        dump(report.to_dict(), OutputFormat.JSON)
        marks.append(time.perf_counter())
        if report.fits or not devices:
            raise SystemExit(f"the what-if pod fits {len(report.fits)} of {len(built.nodes)} nodes ({devices} "
                             "devices); expected none")
        for name, start, end in zip(PHASES, marks, marks[1:], strict=False):  # marks: one more than phases
            times[name].append(end - start)
    gc.enable()
    return times


def report_phases(nodes: int, times: dict[str, list[float]]) -> None:
    print(f"why -f in process, fleet of {nodes} nodes, median of {len(times[PHASES[0]])} rounds (s):")
    for name, values in times.items():
        print(f"  {name:<15} {statistics.median(values):>7.3f}")
    print(f"  {'total':<15} {sum(statistics.median(v) for v in times.values()):>7.3f}")


if __name__ == "__main__":
    if "--phases" in sys.argv:
        parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
        parser.add_argument("--phases", action="store_true")
        parser.add_argument("--nodes", type=int, default=5000)
        parser.add_argument("--repeat", type=int, default=5)
        parser.add_argument("--workdir", default=tempfile.gettempdir())
        args = parser.parse_args()
        report_phases(args.nodes, phases(args.nodes, args.repeat, Path(args.workdir)))
    else:
        main(["why"])
