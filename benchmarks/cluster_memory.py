"""Memory of the cluster-aware webhook when pods carry junk annotations (not a test: a benchmark).

    python benchmarks/cluster_memory.py [--nodes 250] [--junk 2000] [--junk-kib 256]

Any pod author can put what they like into their pod's annotations, and set `spec.nodeName` to any name so
the pod counts as bound. The webhook keeps what its watch of bound pods delivers, in every replica. A real
`vgpuctl webhook serve --cluster-aware` (one worker, as deployed) lists and watches a local API server (this
process: plain HTTP, paginated lists, watches that stay open), in three runs:

- clean:     N nodes × 8 GPUs and one vGPU pod per GPU;
- junk:      the same plus `--junk` pods, each with a `--junk-kib` KiB `volcano.sh/junk` annotation;
- long-ids:  the same plus `--junk` pods, each with a `--junk-kib` KiB `volcano.sh/vgpu-ids-new`.

Printed per run, once /readyz says the first sync is in: the worker's resident memory (VmRSS) and its peak
(VmHWM, which includes the largest list page being parsed), and the ratio of each to the clean run's. The
list bytes are printed too: the junk is real (`--junk 2000 --junk-kib 256` serves 500 MiB of it).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.snapshot_gen import GPUS_PER_NODE, node, pod  # noqa: E402

LISTENING = re.compile(r"Listening at: https://127\.0\.0\.1:(\d+)")


class FakeApi:
    """Serves `/api/v1/nodes` and `/api/v1/pods`: paginated lists, and watches that send nothing."""

    def __init__(self, nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> None:
        # Each item serialised once; a page is joined per request, `limit` items from the `continue` offset.
        self.items = {"/api/v1/nodes": ("NodeList", [json.dumps(n).encode() for n in nodes]),
                      "/api/v1/pods": ("PodList", [json.dumps(p).encode() for p in pods])}
        self.bytes = sum(len(i) for _, items in self.items.values() for i in items)
        self.stop = threading.Event()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                found = api.items.get(url.path)
                if found is None:
                    self.send_error(404)
                    return
                if query.get("watch") == ["true"]:
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    api.stop.wait(600)  # an open watch with no events
                    return
                kind, items = found
                start = int((query.get("continue") or ["0"])[0])
                end = start + int((query.get("limit") or [str(len(items))])[0])
                meta = {"continue": str(end)} if end < len(items) else {"resourceVersion": "100"}
                body = (b'{"apiVersion":"v1","kind":"' + kind.encode() + b'","metadata":' + json.dumps(meta).encode()
                        + b',"items":[' + b",".join(items[start:end]) + b"]}")
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the webhook refused a page too large to read

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.stop.set()
        self.server.shutdown()


def kubeconfig(path: Path, url: str) -> None:
    path.write_text(json.dumps({
        "apiVersion": "v1", "kind": "Config", "current-context": "bench",
        "clusters": [{"name": "bench", "cluster": {"server": url}}],
        "contexts": [{"name": "bench", "context": {"cluster": "bench", "user": "bench"}}],
        "users": [{"name": "bench", "user": {"token": "t"}}]}))


def junk_pods(count: int, kib: int, key: str) -> list[dict[str, Any]]:
    value = "x" * (kib * 1024)
    return [{"apiVersion": "v1", "kind": "Pod",
             "metadata": {"name": f"junk-{i}", "namespace": "evil", "annotations": {key: value}},
             "spec": {"nodeName": f"gpu-node-{i % 7:05d}", "containers": [{"name": "c", "image": "x"}]},
             "status": {"phase": "Running"}} for i in range(count)]


def _status(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "VmHWM"):
            fields[name] = int(value.split()[0]) * 1024
    return fields


def _worker(master: int) -> int | None:
    for task in Path(f"/proc/{master}/task").glob("*/children"):
        children = task.read_text().split()
        if children:
            return int(children[0])
    return None


def run(name: str, nodes: list[dict[str, Any]], pods: list[dict[str, Any]], scratch: Path) -> dict[str, Any]:
    api = FakeApi(nodes, pods)
    config = scratch / f"{name}.kubeconfig"
    kubeconfig(config, api.url)
    log = scratch / f"{name}.log"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("VGPUCTL_")}, "KUBECONFIG": str(config),
           "VGPUCTL_METRICS_PORT": "0"}
    with open(log, "wb") as sink:
        process = subprocess.Popen([sys.executable, "-c", "from vgpuctl.cli.app import main; main()", "webhook",
                                    "serve", "--host", "127.0.0.1", "--port", "0", "--cluster-aware",
                                    "--cert", str(scratch / "tls.crt"), "--key", str(scratch / "tls.key")],
                                   stdout=subprocess.DEVNULL, stderr=sink, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        port = None
        while port is None:
            match = LISTENING.search(log.read_text(errors="replace"))
            port = int(match.group(1)) if match else None
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name}: the webhook did not start: {log.read_text()[-2000:]}")
            time.sleep(0.1)  # polling the log for the port
        import ssl
        import urllib.request

        context = ssl.create_default_context(cafile=str(scratch / "ca.crt"))
        context.check_hostname = False
        started = time.monotonic()
        while True:
            try:
                with urllib.request.urlopen(f"https://127.0.0.1:{port}/readyz", context=context, timeout=10) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name}: never ready: {log.read_text()[-2000:]}")
            time.sleep(0.2)  # polling readiness
        ready_s = time.monotonic() - started
        worker = _worker(process.pid)
        assert worker is not None
        memory = _status(worker)
        return {"run": name, "pods": len(pods), "list_bytes": api.bytes, "ready_s": ready_s,
                "rss": memory["VmRSS"], "peak": memory["VmHWM"]}
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
        api.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--nodes", type=int, default=250)
    parser.add_argument("--junk", type=int, default=2000, help="junk pods added in the junk runs")
    parser.add_argument("--junk-kib", type=int, default=256, help="size of each junk annotation, KiB")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if args.nodes > 5000 or args.junk * args.junk_kib > 1024 * 1024:
        parser.error("bounded benchmark: at most 5000 nodes and 1 GiB of junk")
    from vgpuctl.webhook.certs import generate_ca, issue_serving_cert, write_pem_files

    scratch = Path(tempfile.mkdtemp(prefix="vgpuctl-cluster-memory-"))
    ca = generate_ca()
    write_pem_files(scratch, ca, issue_serving_cert(ca, ["localhost"], ["127.0.0.1"]))
    rng = random.Random(7)
    nodes, gpu_pods = [], []
    for i in range(args.nodes):
        obj, uuids = node(i, rng)
        nodes.append(obj)
        gpu_pods += [pod(len(gpu_pods), obj["metadata"]["name"], uuid, rng) for uuid in uuids]
    try:
        results = [run("clean", nodes, gpu_pods, scratch),
                   run("junk", nodes, gpu_pods + junk_pods(args.junk, args.junk_kib, "volcano.sh/junk"), scratch),
                   run("long-ids", nodes, gpu_pods + junk_pods(args.junk, args.junk_kib, "volcano.sh/vgpu-ids-new"),
                       scratch)]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    clean = results[0]
    for r in results:
        r["rss_ratio"] = r["rss"] / clean["rss"]
        r["peak_ratio"] = r["peak"] / clean["peak"]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    mib = 1024 * 1024
    print(f"cluster-aware webhook, {args.nodes} nodes × {GPUS_PER_NODE} GPUs, {len(gpu_pods)} vGPU pods; junk runs "
          f"add {args.junk} pods with a {args.junk_kib} KiB annotation")
    print(f"{'run':<10} {'pods':>7} {'list MiB':>9} {'ready s':>8} {'RSS MiB':>8} {'× clean':>8} {'peak MiB':>9} "
          f"{'× clean':>8}")
    for r in results:
        print(f"{r['run']:<10} {r['pods']:>7} {r['list_bytes'] / mib:>9.1f} {r['ready_s']:>8.1f} "
              f"{r['rss'] / mib:>8.1f} {r['rss_ratio']:>8.2f} {r['peak'] / mib:>9.1f} {r['peak_ratio']:>8.2f}")


if __name__ == "__main__":
    main()
