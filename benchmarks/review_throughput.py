"""Throughput of `podrules.review` on a mixed generated corpus, as a ratio to a bare walk of the same data.

Run: python benchmarks/review_throughput.py [--size 10000] [--repeat 5] [--device-config FILE]

The baseline visits every container's resources of every object (the least any rule engine must do),
so the ratio says how much the rules cost on top of reading the data; absolute pods/s are printed too.
Best-of-N timing on one core (this process), so a noisy neighbour only makes the figure pessimistic.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.corpus import corpus
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.podrules import review


def walk(obj: Any) -> int:
    """Baseline: touch every resource entry of every container, as any checker must."""
    spec = obj.get("spec", {})
    if obj.get("kind") != "Pod":
        spec = (spec.get("template") or spec.get("tasks", [{}])[0].get("template", {})).get("spec", {})
    n = 0
    for c in spec.get("containers", []):
        for section in c.get("resources", {}).values():
            n += len(section)
    return n


def best_of(repeat: int, fn: Callable[[], None]) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--device-config", help="device ConfigMap/payload to review with (default: none)")
    args = parser.parse_args()
    facts = ClusterFacts()
    if args.device_config:
        from vgpuctl.sources import load_device_config

        facts = ClusterFacts(device_config=load_device_config(args.device_config))
    objects = corpus(args.size)

    def run_review() -> None:
        for obj in objects:
            review(obj, facts)

    def run_walk() -> None:
        for obj in objects:
            walk(obj)

    run_review()  # warm caches (quantity parsing, resource names) as a long-running webhook would be
    t_review = best_of(args.repeat, run_review)
    t_walk = best_of(args.repeat, run_walk)
    denied = sum(1 for obj in objects if not review(obj, facts).allowed)
    print(f"corpus: {len(objects)} objects ({denied} denied), best of {args.repeat}")
    print(f"review: {len(objects) / t_review:,.0f} objects/s ({t_review * 1e6 / len(objects):.1f} µs each)")
    print(f"walk  : {len(objects) / t_walk:,.0f} objects/s (baseline)")
    print(f"ratio : review costs {t_review / t_walk:.1f}× a bare walk")


if __name__ == "__main__":
    main()
