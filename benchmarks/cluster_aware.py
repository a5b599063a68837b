"""Per-request cost of cluster-aware validation on the generated 5,000-node fleet (not a test: a benchmark).

    python benchmarks/cluster_aware.py [--nodes 5000] [--repeat 300]

The fleet is `benchmarks/snapshot_gen.generate()`: N nodes × 8 A100s, one vGPU pod on every GPU (40,000 pods).
Objects go through the cluster state's own sink (`keep`, `replace`), as the watch delivers them; the heap
is frozen the way `webhook serve` freezes it after loading. Printed per request shape:

- fits-now: `parse_pod` + `first_fit` alone (the new work on the request path);
- /validate: the whole request through the Flask app, cluster-aware (review with 5,000 nodes of facts +
  fits-now), next to the same request on an app with only the device config.

Times are per request, in microseconds: p50, p99, max over --repeat runs.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.snapshot_gen import GPUS_PER_NODE, node, pod  # noqa: E402
from vgpuctl.core.why.anyfit import first_fit  # noqa: E402
from vgpuctl.core.why.request import parse_pod  # noqa: E402
from vgpuctl.webhook.app import create_app  # noqa: E402
from vgpuctl.webhook.settings import Settings  # noqa: E402

DEVICE_CONFIG = ROOT / "deploy" / "base" / "configmap-device-config.yaml"  # what the webhook is deployed with


def admission_review(obj: Any, *, uid: str = "uid-1") -> dict[str, Any]:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"}, "operation": "CREATE",
                        "namespace": "ml", "object": obj, "dryRun": False}}


def request(name: str, limits: dict[str, str], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml",
                                                            "annotations": annotations or {}},
            "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "image": "x", "resources": {
                "limits": {"volcano.sh/vgpu-number": "1", **limits}}}]}}


SHAPES = {
    "1 GPU, 8192 MiB (fits)": request("a", {"volcano.sh/vgpu-memory": "8192"}),
    "8 GPUs, 20000 MiB (fits)": request("b", {"volcano.sh/vgpu-number": "8", "volcano.sh/vgpu-memory": "20000"}),
    "1 GPU, 39000 MiB (no room)": request("c", {"volcano.sh/vgpu-memory": "39000"}),
    "whole GPU (no room)": request("d", {}),
    "vgpu-cores 100 (no room)": request("e", {"volcano.sh/vgpu-memory": "1000", "volcano.sh/vgpu-cores": "100"}),
    "use-gputype H100 (no room)": request("f", {"volcano.sh/vgpu-memory": "1000"}, {"nvidia.com/use-gputype": "H100"}),
    "vgpu-mode mig (no room)": request("g", {"volcano.sh/vgpu-memory": "1000"}, {"volcano.sh/vgpu-mode": "mig"}),
}


def timed(fn: Callable[[], Any], repeat: int) -> tuple[float, float, float]:
    fn()
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - started)
    samples.sort()
    return (samples[len(samples) // 2] * 1e6, samples[int(len(samples) * 0.99) - 1] * 1e6, samples[-1] * 1e6)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--repeat", type=int, default=300)
    args = parser.parse_args()

    plain = create_app(Settings(device_config_path=str(DEVICE_CONFIG))).test_client()
    app = create_app(Settings(device_config_path=str(DEVICE_CONFIG), cluster_aware=True))
    state = app.extensions["vgpuctl"].cluster
    gc.collect()
    gc.freeze()  # as `webhook serve` does after building the app (server.py)

    rng = random.Random(1)
    nodes, pods = [], []
    started = time.perf_counter()
    for i in range(args.nodes):
        node_obj, uuids = node(i, rng)
        nodes.append(state.keep("nodes", node_obj))
        for k in range(GPUS_PER_NODE):
            kept = state.keep("pods", pod(i * GPUS_PER_NODE + k, node_obj["metadata"]["name"], uuids[k], rng))
            if kept is not None:
                pods.append(kept)
    state.replace("nodes", nodes)
    state.replace("pods", pods)
    del nodes, pods
    while state.published is None:
        time.sleep(0.05)
    view = state.published.view
    print(f"fleet: {view.nodes} nodes, {view.nodes * GPUS_PER_NODE} GPUs, {view.pods} pods; generated and "
          f"synced in {time.perf_counter() - started:.1f} s")
    client = app.test_client()
    index = view.index
    print(f"{'request':30s} {'fits-now p50/p99/max µs':>26s} {'/validate aware p50/p99':>24s} "
          f"{'/validate plain p50/p99':>24s}  outcome")
    for name, obj in SHAPES.items():
        answer = first_fit(parse_pod(obj, index.env), index)
        fit = timed(lambda obj=obj: first_fit(parse_pod(obj, index.env), index), args.repeat)
        body = admission_review(obj)
        aware = timed(lambda body=body: client.post("/validate", json=body), args.repeat)
        base = timed(lambda body=body: plain.post("/validate", json=body), args.repeat)
        print(f"{name:30s} {fit[0]:8.0f} {fit[1]:8.0f} {fit[2]:8.0f} {aware[0]:12.0f} {aware[1]:11.0f} "
              f"{base[0]:12.0f} {base[1]:11.0f}  {answer.outcome.value} (simulated {answer.simulated}, "
              f"summaries tested {answer.scanned})")
    state.stop()


if __name__ == "__main__":
    main()
