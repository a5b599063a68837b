"""Cost of the device allocation metrics on the generated fleet (not a test: a benchmark).

    python benchmarks/alloc_metrics.py [--nodes 5000] [--repeat 5]

The fleet is `benchmarks/snapshot_gen.generate()`'s shape: N nodes × 8 A100s, one vGPU pod on every GPU,
fed through the cluster state's own sink as the watch delivers it. Printed:

- publish: the allocation samples of every node (`alloc_metrics.allocation_of`: the doctor's node checks
  plus the rows), the part a full publication adds, next to the whole first publication;
- one node changed: the same for a one-node publication (what a watch event costs);
- scrape: `GET /metrics` through the Flask app (p50 and max over --repeat), and the exposition's size.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.snapshot_gen import GPUS_PER_NODE, node, pod  # noqa: E402
from vgpuctl.webhook.alloc_metrics import allocation_of  # noqa: E402
from vgpuctl.webhook.app import create_app  # noqa: E402
from vgpuctl.webhook.settings import Settings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    app = create_app(Settings(cluster_aware=True))
    state = app.extensions["vgpuctl"].cluster
    rng = random.Random(1)
    nodes, pods = [], []
    for i in range(args.nodes):
        node_obj, uuids = node(i, rng)
        nodes.append(state.keep("nodes", node_obj))
        for k in range(GPUS_PER_NODE):
            kept = state.keep("pods", pod(i * GPUS_PER_NODE + k, node_obj["metadata"]["name"], uuids[k], rng))
            if kept is not None:
                pods.append(kept)
    started = time.perf_counter()
    state.replace("nodes", nodes)
    state.replace("pods", pods)
    while state.published is None:
        time.sleep(0.01)
    first = time.perf_counter() - started
    parts = state._parts  # a benchmark reads the publisher's own parts
    started = time.perf_counter()
    allocation_of(parts, None, None, time.time())
    whole = time.perf_counter() - started
    one = dict(list(parts.items())[:1])
    started = time.perf_counter()
    for _ in range(100):
        allocation_of(one, None, None, time.time())
    single = (time.perf_counter() - started) / 100
    print(f"fleet: {len(parts)} nodes, {len(parts) * GPUS_PER_NODE} GPUs, {len(pods)} pods")
    print(f"first publication {first:.2f} s, of which allocation samples for every node {whole:.2f} s; "
          f"one node's samples {single * 1e3:.2f} ms")
    client = app.test_client()
    times, size = [], 0
    for _ in range(args.repeat):
        started = time.perf_counter()
        body = client.get("/metrics").get_data()
        times.append(time.perf_counter() - started)
        size = len(body)
    series = sum(1 for line in body.splitlines() if line.startswith(b"vgpuctl_device_") or
                 line.startswith(b"vgpuctl_node_"))
    print(f"GET /metrics: p50 {statistics.median(times) * 1e3:.0f} ms, max {max(times) * 1e3:.0f} ms; "
          f"{size / 1e6:.1f} MB, {series} allocation series ({series / len(parts):.1f} per node)")
    state.stop()


if __name__ == "__main__":
    main()
