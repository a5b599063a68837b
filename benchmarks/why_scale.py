"""`vgpuctl why -f pod.yaml --snapshot` on the generated 5,000-node fleet, next to a plain `json.load`.

    python benchmarks/why_scale.py [--nodes 5000] [--workdir /tmp]

A what-if pod asking for one GPU with 30,000 MiB is simulated against every node (each A100 has 40,960 MiB
and already carries one pod), so the filter runs on all 40,000 GPUs. Target: ≤ 2 s end to end; the
snapshot load dominates, so the `json.load` time of the same file is printed beside it.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.nodes_scale import best
from benchmarks.snapshot_gen import generate

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "what-if", "namespace": "ml"},
       "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "resources": {"limits": {
           "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "30000"}}}]}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--workdir", default="/tmp")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    path = Path(args.workdir) / f"vgpuctl-fleet-{args.nodes}.json"
    if not path.exists():
        path.write_text(json.dumps(generate(args.nodes)))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as pod_file:
        json.dump(POD, pod_file)
    vgpuctl = str(Path(sys.executable).with_name("vgpuctl"))
    base_t, base_m = best([sys.executable, "-c", f"import json; json.load(open({str(path)!r}))"], args.repeat)
    why_t, why_m = best([vgpuctl, "why", "-f", pod_file.name, "-o", "json", "--snapshot", str(path)], args.repeat)
    print(f"snapshot: {args.nodes} nodes, {args.nodes * 8} GPUs, {path.stat().st_size / 1e6:.0f} MB")
    print(f"json.load          : {base_t:6.2f} s  {base_m:5.0f} MiB")
    print(f"why -f pod.yaml    : {why_t:6.2f} s  {why_m:5.0f} MiB  ({why_t / base_t:.2f}× json.load)")


if __name__ == "__main__":
    main()
