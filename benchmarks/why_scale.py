"""`vgpuctl why -f pod.yaml --snapshot` on the generated 5,000-node fleet, next to a plain `json.load`.

    python benchmarks/why_scale.py [--nodes 5000] [--workdir /tmp] [--repeat 2]

A what-if pod asks for one GPU with 30,000 MiB (each A100 has 40,960 MiB and already carries one pod).
Two runs: on the fleet as generated — it has no scheduler ConfigMap, so `deviceshare.VGPUEnable` is off and
every node is answered "not-device-node" without looking at its GPUs — and on the same fleet plus a
`volcano-scheduler-configmap` that turns vGPU on, where the filter runs on all 40,000 GPUs and the pod fits
every node (checked once before timing). Target: ≤ 2 s end to end; the snapshot load dominates, so the
`json.load` time of the same file is printed beside it.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.nodes_scale import best
from benchmarks.snapshot_gen import generate

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "what-if", "namespace": "ml"},
       "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "resources": {"limits": {
           "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "30000"}}}]}}
SCHEDULER_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.VGPUEnable: true
"""


def with_vgpu_enabled(fleet: dict[str, Any]) -> dict[str, Any]:
    """The fleet plus the scheduler ConfigMap that turns the vGPU filter on."""
    scheduler = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
                 "data": {"volcano-scheduler.conf": SCHEDULER_CONF}}
    return {**fleet, "items": [scheduler, *fleet["items"]]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--workdir", default="/tmp")
    parser.add_argument("--repeat", type=int, default=2)
    args = parser.parse_args()
    path = Path(args.workdir) / f"vgpuctl-fleet-{args.nodes}.json"
    enabled = Path(args.workdir) / f"vgpuctl-fleet-{args.nodes}-vgpu-on.json"
    if not path.exists():
        path.write_text(json.dumps(generate(args.nodes)))
    if not enabled.exists():
        enabled.write_text(json.dumps(with_vgpu_enabled(json.loads(path.read_text()))))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as pod_file:
        json.dump(POD, pod_file)
    vgpuctl = str(Path(sys.executable).with_name("vgpuctl"))

    def why(snapshot: Path) -> list[str]:
        return [vgpuctl, "why", "-f", pod_file.name, "-o", "json", "--snapshot", str(snapshot)]

    check = json.loads(subprocess.run(why(enabled), capture_output=True, check=True, text=True).stdout)
    if len(check["fits"]) != args.nodes:
        raise SystemExit(f"expected the pod to fit all {args.nodes} nodes with vGPU on, got {len(check['fits'])}")
    base_t, base_m = best([sys.executable, "-c", f"import json; json.load(open({str(path)!r}))"], args.repeat)
    off_t, off_m = best(why(path), args.repeat)
    on_t, on_m = best(why(enabled), args.repeat)
    print(f"snapshot: {args.nodes} nodes, {args.nodes * 8} GPUs, {path.stat().st_size / 1e6:.0f} MB")
    print(f"json.load                    : {base_t:6.2f} s  {base_m:5.0f} MiB")
    print(f"why -f pod.yaml (vGPU off)   : {off_t:6.2f} s  {off_m:5.0f} MiB  ({off_t / base_t:.2f}× json.load)")
    print(f"why -f pod.yaml (vGPU on)    : {on_t:6.2f} s  {on_m:5.0f} MiB  ({on_t / base_t:.2f}× json.load)")


if __name__ == "__main__":
    main()
