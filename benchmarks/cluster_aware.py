"""The cluster-aware webhook on a 5,000-node fleet (not a test: a benchmark), in two parts.

    python benchmarks/cluster_aware.py [--nodes 5000] [--churn 20] [--json]        # served, issue 26's table
    python benchmarks/cluster_aware.py --in-process [--nodes 5000] [--repeat 300]  # per-request cost

**Served** (the default: a figure for every row of issue 26 part 1's table): a real `vgpuctl webhook serve
--cluster-aware` with one worker, as deployed, lists and watches a local API server (`cluster_memory.FakeApi`)
holding `snapshot_gen.fleet()`: N nodes × 8 A100s, 30 pods per node (8 vGPU pods, 22 plain ones that look
real), the finished ones left out as the watch's field selector leaves them out. Phases, in one run: sync →
a /metrics scrape → 50 reviews/s quiet → a GPU pod deleted and re-created (how soon /readyz counts it) →
`--churn` seconds of ~100 pod watch events/s (GPU pods deleted and re-created, plain pods modified) with
50 reviews/s → two 410 re-lists (the API server ends both watches with an ERROR 410 event) → quiet. Memory is
sampled 10×/s as PSS (worker + arbiter, what a container's cgroup is charged); the ratios are to figures of
the same run: the ready time to one process parsing the same list pages (`orjson.loads`), the peak above a
webhook synced to an empty cluster to the list JSON, the memory after the re-lists to the memory before.

**In process** (`--in-process`): the fleet is `benchmarks/snapshot_gen.generate()`: N nodes × 8 A100s, one vGPU
pod on every GPU (40,000 pods). Objects go through the cluster state's own sink (`keep`, `replace`), as the
watch delivers them; the heap is frozen the way `webhook serve` freezes it after loading. Printed per request
shape:

- fits-now: `parse_pod` + `first_fit` alone (the new work on the request path);
- /validate: the whole request through the Flask app, cluster-aware (review with 5,000 nodes of facts +
  fits-now), next to the same request on an app with only the device config.

Times are per request, in microseconds: p50, p99, max over --repeat runs.
"""

from __future__ import annotations

import argparse
import gc
import http.client
import json
import random
import re
import shutil
import ssl
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.cluster_memory import FakeApi, certificates, serve  # noqa: E402
from benchmarks.snapshot_gen import GPUS_PER_NODE, fleet, node, pod  # noqa: E402
from vgpuctl.core.why.anyfit import first_fit  # noqa: E402
from vgpuctl.core.why.request import parse_pod  # noqa: E402
from vgpuctl.webhook import heap  # noqa: E402
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


def in_process(args: argparse.Namespace) -> None:
    plain = create_app(Settings(device_config_path=str(DEVICE_CONFIG))).test_client()
    app = create_app(Settings(device_config_path=str(DEVICE_CONFIG), cluster_aware=True))
    state = app.extensions["vgpuctl"].cluster
    heap.freeze()  # as `webhook serve` does after building the app (server.py), so later views are frozen too

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


# ---- served: the deployed webhook through sync, a scrape, churn and two 410 re-lists -------------------

NODES, PODS = "/api/v1/nodes", "/api/v1/pods"
PAGE = 500  # the watch's list page size (kube/watch.py WatchOptions)
MiB = 1024 * 1024


def served_fleet(nodes: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """`snapshot_gen.fleet()`'s nodes and the pods the watch's field selector lists (bound, not finished), each
    with a resourceVersion (the fleet's objects have none; an API server's always do)."""
    node_objs, pods = [], []
    for version, obj in enumerate(fleet(nodes)["items"], start=1000):
        if obj["kind"] == "Node":
            node_objs.append(obj)
        elif obj["kind"] == "Pod" and obj["status"].get("phase") not in ("Succeeded", "Failed"):
            pods.append(obj)
        else:
            continue
        obj["metadata"]["resourceVersion"] = str(version)
    return node_objs, pods


def _smaps(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, _, value = line.partition(":")
        if name in ("Rss", "Pss"):
            fields[name] = int(value.split()[0]) * 1024
    return fields


class Sampler:
    """PSS of the worker and the arbiter, 10 times a second (the sum is what the pod's cgroup holds of them)."""

    def __init__(self, worker: int, arbiter: int) -> None:
        self.pids = (worker, arbiter)
        self.samples: list[tuple[float, int]] = []  # (time.monotonic(), worker PSS + arbiter PSS)
        self.phases: list[tuple[float, str]] = [(0.0, "sync")]  # (from when, the phase)
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def now(self) -> int:
        return sum(_smaps(pid)["Pss"] for pid in self.pids)

    def _run(self) -> None:
        while not self.stop.wait(0.1):
            try:
                self.samples.append((time.monotonic(), self.now()))
            except OSError:
                return

    def mark(self, phase: str) -> None:
        self.phases.append((time.monotonic(), phase))

    def peak(self) -> int:
        return max(pss for _, pss in self.samples)

    def peaks(self) -> dict[str, int]:
        """The peak of each phase."""
        found: dict[str, int] = {}
        for t, pss in self.samples:
            phase = [name for since, name in self.phases if since <= t][-1]
            found[phase] = max(found.get(phase, 0), pss)
        return found

    def settled(self, seconds: float = 3.0) -> int:
        """PSS after `seconds` without anything asked of the webhook (the minimum over the last second)."""
        time.sleep(seconds - 1)
        since = time.monotonic()
        time.sleep(1)
        return min(pss for t, pss in self.samples if t >= since)


class Client:
    """One keep-alive HTTPS connection to a port of the webhook."""

    def __init__(self, port: int, context: ssl.SSLContext) -> None:
        self.connection = http.client.HTTPSConnection("127.0.0.1", port, context=context, timeout=30)

    def call(self, method: str, path: str, body: bytes | None = None) -> tuple[float, bytes]:
        started = time.perf_counter()
        self.connection.request(method, path, body, {"Content-Type": "application/json"} if body else {})
        response = self.connection.getresponse()
        data = response.read()
        if response.status != 200:
            raise RuntimeError(f"{method} {path}: {response.status} {data[:300]!r}")
        return time.perf_counter() - started, data

    def counted_pods(self) -> int:
        return int(json.loads(self.call("GET", "/readyz")[1])["checks"]["clusterWatch"]["pods"])

    def builds(self) -> tuple[float, float]:
        """(count, sum of seconds) of the view builds so far, from /metrics."""
        text = self.call("GET", "/metrics")[1]
        found = dict(re.findall(rb"^vgpuctl_webhook_cluster_view_build_seconds_(count|sum) (\S+)$", text, re.M))
        return float(found[b"count"]), float(found[b"sum"])


def reviews(client: Client, body: bytes, rate: float, seconds: float) -> list[float]:
    """POST /validate `rate` times a second for `seconds`; each one's latency, sorted."""
    latencies = []
    start = time.monotonic()
    for i in range(int(rate * seconds)):
        pause = start + i / rate - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        latencies.append(client.call("POST", "/validate", body)[0])
    return sorted(latencies)


def _p(samples: list[float], q: float) -> float:
    return samples[min(len(samples) - 1, int(len(samples) * q))] * 1000


def churn(api: FakeApi, gpu: list[dict[str, Any]], plain: list[dict[str, Any]], seconds: float) -> int:
    """~100 pod watch events a second: per tenth of a second a GPU pod deleted, the one deleted half a second
    before re-created, 8 plain pods modified (a container restarted). Every pod is back at the end."""
    start, events, lag = time.monotonic(), 0, 5
    steps = int(seconds * 10)
    for step in range(steps):
        pause = start + step / 10 - time.monotonic()
        if pause > 0:
            time.sleep(pause)
        api.delete(PODS, gpu[step % len(gpu)])
        if step >= lag:
            api.put(PODS, gpu[(step - lag) % len(gpu)])
        for k in range(8):
            obj = plain[(step * 8 + k) % len(plain)]
            obj["status"]["containerStatuses"][0]["restartCount"] += 1
            api.put(PODS, obj)
        events += 10 if step >= lag else 9
    for step in range(max(0, steps - lag), steps):
        api.put(PODS, gpu[step % len(gpu)])
        events += 1
    return events


def _until(check: Any, timeout: float = 60.0) -> float:
    started = time.monotonic()
    while not check():
        if time.monotonic() - started > timeout:
            raise RuntimeError("timed out")
        time.sleep(0.02)  # polling the webhook
    return time.monotonic() - started


def relist(api: FakeApi) -> float:
    """Both watches end with 410 Gone; seconds until both re-lists were served and new watches opened."""
    resources = [api.resources[p] for p in (NODES, PODS)]
    before = [(r.lists_done, r.watches) for r in resources]
    for path in (NODES, PODS):
        api.expire(path)
    return _until(lambda: all(r.lists_done > d and r.watches > w for r, (d, w) in zip(resources, before,
                                                                                    strict=True)))


_PARSE = """
import sys, time, orjson
data = open(sys.argv[1], "rb").read()
bodies, at = [], 0
while at < len(data):
    size = int.from_bytes(data[at:at + 8], "little")
    bodies.append(data[at + 8:at + 8 + size])
    at += 8 + size
times = []
for _ in range(3):
    started = time.perf_counter()
    for body in bodies:
        orjson.loads(body)
    times.append(time.perf_counter() - started)
print(sorted(times)[1])
"""


def parse_floor(api: FakeApi, scratch: Path) -> float:
    """Seconds for one fresh process to parse the list pages the webhook reads (the median of 3 passes)."""
    pages = scratch / "pages"
    with open(pages, "wb") as out:
        for resource in api.resources.values():
            items = list(resource.objects.values())
            for i in range(0, len(items), PAGE):
                body = b'{"kind":"List","metadata":{},"items":[' + b",".join(items[i:i + PAGE]) + b"]}"
                out.write(len(body).to_bytes(8, "little") + body)
    return float(subprocess.run([sys.executable, "-c", _PARSE, str(pages)], check=True, capture_output=True,
                                text=True).stdout)


def served(args: argparse.Namespace) -> None:
    scratch = Path(tempfile.mkdtemp(prefix="vgpuctl-cluster-aware-"))
    certificates(scratch)
    body = json.dumps(admission_review(SHAPES["1 GPU, 8192 MiB (fits)"])).encode()
    out: dict[str, Any] = {"nodes": args.nodes}
    try:
        empty = FakeApi([], [])
        with serve("empty", empty, scratch) as webhook:
            sampler = Sampler(webhook.worker, webhook.process.pid)
            reviews(Client(webhook.admission, webhook.context), body, 50, 2)
            out["empty_pss"] = sampler.settled(2)
            out["empty_ready_s"] = webhook.ready_s
            sampler.stop.set()
        empty.close()
        node_objs, pods = served_fleet(args.nodes)
        gpu = [p for p in pods if "volcano.sh/vgpu-ids-new" in p["metadata"].get("annotations", {})]
        plain = [p for p in pods if p["status"].get("containerStatuses")][:4000]
        spare, gpu = gpu[-1], gpu[:2000]
        out.update(pods=len(pods), gpu_pods=sum(1 for p in pods if "volcano.sh/vgpu-ids-new"
                                                in p["metadata"].get("annotations", {})))
        api = FakeApi(node_objs, pods)
        del node_objs, pods
        gc.collect()
        gc.freeze()  # the fleet's leftovers: this process's collections stay small while it serves pages
        out["list_bytes"] = api.bytes
        samplers: list[Sampler] = []
        with serve("fleet", api, scratch, lambda worker, arbiter: samplers.append(Sampler(worker, arbiter))) as webhook:
            sampler = samplers[0]
            res = {p: api.resources[p] for p in (NODES, PODS)}
            out["ready_s"] = webhook.ready_s
            out["sync_s"] = time.monotonic() - min(r.first_list or 0 for r in res.values())
            out["requests"] = {p: {"lists": r.lists, "pages": r.pages, "watches": r.watches} for p, r in res.items()}
            admission_client = Client(webhook.admission, webhook.context)
            metrics = Client(webhook.metrics, webhook.context)
            sampler.mark("scrape")
            out["metrics_s"], text = metrics.call("GET", "/metrics")
            out["metrics_mb"] = len(text) / 1e6
            out["metrics_series"] = sum(1 for line in text.splitlines() if line and not line.startswith(b"#"))
            del text
            out["pss_synced"] = sampler.settled()
            sampler.mark("reviews")
            quiet = reviews(admission_client, body, 50, 5)
            out["quiet_p50"], out["quiet_p99"] = _p(quiet, 0.5), _p(quiet, 0.99)
            counted = admission_client.counted_pods()
            api.delete(PODS, spare)
            out["deleted_s"] = _until(lambda: admission_client.counted_pods() == counted - 1)
            api.put(PODS, spare)
            out["recreated_s"] = _until(lambda: admission_client.counted_pods() == counted)
            builds = metrics.builds()
            sampler.mark("churn")
            events: list[int] = []
            mover = threading.Thread(target=lambda: events.append(churn(api, gpu, plain, args.churn)))
            started = time.monotonic()
            mover.start()
            busy = reviews(admission_client, body, 50, args.churn)
            mover.join()
            out["churn_events_per_s"] = events[0] / (time.monotonic() - started)
            out["churn_p50"], out["churn_p99"], out["churn_max"] = _p(busy, 0.5), _p(busy, 0.99), busy[-1] * 1000
            _until(lambda: admission_client.counted_pods() == counted)
            after = metrics.builds()
            out["churn_builds"] = after[0] - builds[0]
            out["churn_build_ms"] = (after[1] - builds[1]) / max(1, after[0] - builds[0]) * 1000
            out["pss_churned"] = sampler.settled()
            sampler.mark("re-lists")
            out["relist_s"] = [relist(api), relist(api)]
            out["pss_relisted"] = sampler.settled(5)
            out["peak_pss"] = sampler.peak()
            out["peaks"] = sampler.peaks()
            out["requests_end"] = {p: {"lists": r.lists, "watches": r.watches} for p, r in res.items()}
            sampler.stop.set()
        out["parse_s"] = parse_floor(api, scratch)
        api.close()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    report(out, args.json)


def report(out: dict[str, Any], as_json: bool) -> None:
    out["ready_x"] = out["ready_s"] / out["parse_s"]
    out["sync_x"] = out["sync_s"] / out["parse_s"]
    out["peak_over_empty_x"] = (out["peak_pss"] - out["empty_pss"]) / out["list_bytes"]
    out["relist_ratio"] = out["pss_relisted"] / out["pss_synced"]
    if as_json:
        print(json.dumps(out, indent=2))
        return
    print(f"fleet: {out['nodes']} nodes × {GPUS_PER_NODE} GPUs, {out['pods']} listed pods ({out['gpu_pods']} vGPU), "
          f"{out['list_bytes'] / MiB:.1f} MiB of list JSON; one process parses its pages in {out['parse_s']:.2f} s")
    requests = ", ".join(f"{p.rsplit('/', 1)[1]}: {r['lists']} list ({r['pages']} pages) + {r['watches']} watch"
                         for p, r in out["requests"].items())
    rows = [
        ("ready with cluster knowledge", f"{out['ready_s']:.2f} s from the spawn = {out['ready_x']:.1f}× the parse "
         f"({out['sync_s']:.2f} s from the first list = {out['sync_x']:.1f}×; empty cluster "
         f"{out['empty_ready_s']:.2f} s)"),
        ("peak PSS worker+arbiter", f"{out['peak_pss'] / MiB:.0f} MiB; above the empty cluster's "
         f"{out['empty_pss'] / MiB:.0f} MiB: {out['peak_over_empty_x']:.2f}× the list JSON"),
        ("peak PSS by phase", ", ".join(f"{k} {v / MiB:.0f}" for k, v in out["peaks"].items()) + " MiB"),
        ("PSS after 2 re-lists / before", f"{out['pss_synced'] / MiB:.0f} → {out['pss_relisted'] / MiB:.0f} MiB = "
         f"{out['relist_ratio']:.2f} (after churn {out['pss_churned'] / MiB:.0f} MiB; re-lists "
         f"{out['relist_s'][0]:.1f} s, {out['relist_s'][1]:.1f} s)"),
        ("review p99 under churn", f"{out['churn_p99']:.1f} ms (p50 {out['churn_p50']:.1f}, "
         f"max {out['churn_max']:.0f}; "
         f"quiet p50 {out['quiet_p50']:.1f}, p99 {out['quiet_p99']:.1f}); {out['churn_events_per_s']:.0f} events/s, "
         f"{out['churn_builds']:.0f} view builds of {out['churn_build_ms']:.0f} ms"),
        ("GPU pod deleted / re-created", f"reflected in {out['deleted_s']:.2f} s / {out['recreated_s']:.2f} s"),
        ("GET /metrics", f"{out['metrics_s']:.2f} s ({out['metrics_series']} series, {out['metrics_mb']:.0f} MB)"),
        ("requests at sync", requests),
    ]
    for name, value in rows:
        print(f"{name:32s} {value}")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=5000)
    parser.add_argument("--in-process", action="store_true", help="per-request cost, in this process")
    parser.add_argument("--repeat", type=int, default=300, help="--in-process: runs per request shape")
    parser.add_argument("--churn", type=float, default=20.0, help="seconds of watch events with reviews")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.in_process:
        in_process(args)
        return
    served(args)


if __name__ == "__main__":
    main()
