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
import bisect
import contextlib
import itertools
import json
import os
import random
import re
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.snapshot_gen import GPUS_PER_NODE, node, pod  # noqa: E402

LISTENING = re.compile(r"Listening at: https://127\.0\.0\.1:(\d+),https://127\.0\.0\.1:(\d+)")  # admission, metrics


class _Resource:
    """One watchable list: its objects serialised once (key → JSON without apiVersion/kind, as kube-apiserver
    lists them), and the events since the start, each one line of a watch stream."""

    def __init__(self, kind: str, api_version: str, objects: list[dict[str, Any]]) -> None:
        self.kind = kind  # of an item: "Node", "Pod"
        self.api_version = api_version
        self.objects: dict[str, bytes] = {}
        for obj in objects:
            self.objects[_key(obj)] = _item(obj)
        self.events: list[tuple[int, bytes]] = []  # (resourceVersion, the event's line)
        self.gone_before = 0  # a watch from a version below this is answered 410 Gone (an ERROR event)
        self.expired = 0  # bumped by `FakeApi.expire`: the open watches end with an ERROR 410
        self.lists = 0  # lists started (first pages)
        self.lists_done = 0  # lists whose last page was served
        self.pages = 0
        self.watches = 0
        self.first_list: float | None = None  # time.monotonic() of the first page asked for
        self.snapshots: dict[str, tuple[list[bytes], int]] = {}  # a paginated list is one snapshot


def _key(obj: dict[str, Any]) -> str:
    meta = obj["metadata"]
    return f"{meta.get('namespace', '')}/{meta['name']}"


def _item(obj: dict[str, Any]) -> bytes:
    return orjson.dumps({k: v for k, v in obj.items() if k not in ("apiVersion", "kind")})


class _QuietServer(ThreadingHTTPServer):
    """A client going away (the webhook stopped mid-watch) is the end of a benchmark, not an error to print."""

    def handle_error(self, request: Any, client_address: Any) -> None:
        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class FakeApi:
    """Serves `/api/v1/nodes` and `/api/v1/pods` as kube-apiserver does, on plain HTTP: paginated lists (one
    snapshot per list), and watches that stream every change made with `put`/`delete` after the version they
    start from, as chunked newline-delimited JSON. `expire` compacts: open watches get an ERROR 410 event and
    a watch from an older version gets one at once, so the client lists again. Other paths: empty lists
    and idle watches (the DRA kinds)."""

    def __init__(self, nodes: list[dict[str, Any]], pods: list[dict[str, Any]]) -> None:
        self.resources = {"/api/v1/nodes": _Resource("Node", "v1", nodes),
                          "/api/v1/pods": _Resource("Pod", "v1", pods)}
        self.bytes = sum(len(i) for r in self.resources.values() for i in r.objects.values())
        self.cond = threading.Condition()
        self.version = 100
        self.stop = threading.Event()
        self.tokens = itertools.count()
        api = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                url = urlsplit(self.path)
                query = parse_qs(url.query)
                resource = api.resources.get(url.path)
                if query.get("watch") == ["true"]:
                    api.watch(self, resource, int((query.get("resourceVersion") or ["0"])[0]))
                    return
                body = api.page(resource, query) if resource is not None else (
                    b'{"kind":"List","apiVersion":"v1","metadata":{"resourceVersion":"100"},"items":[]}')
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                try:
                    self.wfile.write(body)
                except (BrokenPipeError, ConnectionResetError):
                    self.close_connection = True  # the webhook refused a page too large to read

        self.server = _QuietServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    # ---- what a benchmark does ---------------------------------------------------------------------
    def put(self, path: str, obj: dict[str, Any]) -> None:
        """Create or replace an object (a new resourceVersion), streamed to the open watches."""
        self._change(path, obj, deleted=False)

    def delete(self, path: str, obj: dict[str, Any]) -> None:
        self._change(path, obj, deleted=True)

    def expire(self, path: str) -> None:
        """Every version seen so far is too old: the open watches of `path` end with 410 Gone."""
        resource = self.resources[path]
        with self.cond:
            self.version += 1
            resource.gone_before = self.version
            resource.expired += 1
            self.cond.notify_all()

    def close(self) -> None:
        self.stop.set()
        with self.cond:
            self.cond.notify_all()
        self.server.shutdown()

    # ---- serving -----------------------------------------------------------------------------------
    def _change(self, path: str, obj: dict[str, Any], *, deleted: bool) -> None:
        resource = self.resources[path]
        with self.cond:
            self.version += 1
            obj["metadata"]["resourceVersion"] = str(self.version)
            item = _item(obj)
            key = _key(obj)
            if deleted:
                resource.objects.pop(key, None)
            else:
                event = "MODIFIED" if key in resource.objects else "ADDED"
                resource.objects[key] = item
            line = (b'{"type":"' + (b"DELETED" if deleted else event.encode()) + b'","object":{"apiVersion":"'
                    + resource.api_version.encode() + b'","kind":"' + resource.kind.encode() + b'",' + item[1:]
                    + b"}\n")
            resource.events.append((self.version, line))
            self.cond.notify_all()

    def page(self, resource: _Resource, query: dict[str, list[str]]) -> bytes:
        token = (query.get("continue") or [""])[0]
        with self.cond:
            if not token:
                resource.lists += 1
                resource.first_list = resource.first_list or time.monotonic()
                name = str(next(self.tokens))
                resource.snapshots[name] = (list(resource.objects.values()), self.version)
                start = 0
            else:
                name, _, offset = token.partition(":")
                start = int(offset)
            items, version = resource.snapshots[name]
            resource.pages += 1
        end = start + int((query.get("limit") or [str(len(items))])[0])
        if end < len(items):
            meta = {"continue": f"{name}:{end}", "resourceVersion": str(version)}
        else:
            meta = {"resourceVersion": str(version)}
            with self.cond:
                resource.snapshots.pop(name, None)
                resource.lists_done += 1
        return (b'{"apiVersion":"v1","kind":"' + resource.kind.encode() + b'List","metadata":'
                + json.dumps(meta).encode() + b',"items":[' + b",".join(items[start:end]) + b"]}")

    def watch(self, handler: BaseHTTPRequestHandler, resource: _Resource | None, since: int) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        if resource is None:
            self.stop.wait(600)  # an open watch with no events
            return
        with self.cond:
            resource.watches += 1
            expired = resource.expired
            sent = bisect.bisect_right(resource.events, since, key=lambda e: e[0])
        try:
            while not self.stop.is_set():
                with self.cond:
                    while (sent == len(resource.events) and expired == resource.expired
                           and since >= resource.gone_before and not self.stop.is_set()):
                        self.cond.wait(1.0)
                    lines = [line for _, line in resource.events[sent:]]
                    sent = len(resource.events)
                    gone = expired != resource.expired or since < resource.gone_before
                if gone:
                    lines = [b'{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure",'
                             b'"reason":"Expired","code":410,"message":"too old resource version"}}\n']
                data = b"".join(lines)
                if data:
                    handler.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
                if gone:
                    handler.wfile.write(b"0\r\n\r\n")
                    return
        except (BrokenPipeError, ConnectionResetError):
            handler.close_connection = True


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


@dataclass
class Served:
    """A running `vgpuctl webhook serve --cluster-aware` (one worker, as deployed) and how to reach it."""

    process: subprocess.Popen[bytes]
    worker: int  # the gunicorn worker's pid (the arbiter is `process`)
    admission: int  # port of /validate (and the probes)
    metrics: int  # port of /metrics (and the probes)
    context: ssl.SSLContext
    started: float  # time.monotonic() at the spawn
    ready_s: float  # spawn → /readyz 200 (the first view published)


@contextlib.contextmanager
def serve(name: str, api: FakeApi, scratch: Path,
          on_worker: Callable[[int, int], None] | None = None) -> Iterator[Served]:
    """Start the webhook against `api` (certificates in `scratch`, from `certificates`), wait until /readyz says
    the first view is in, and stop it on exit. `on_worker(worker, arbiter)`: called with the pids as soon as the
    worker is forked, before it lists anything."""
    config = scratch / f"{name}.kubeconfig"
    kubeconfig(config, api.url)
    log = scratch / f"{name}.log"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("VGPUCTL_")}, "KUBECONFIG": str(config),
           "VGPUCTL_METRICS_PORT": "0"}
    started = time.monotonic()
    with open(log, "wb") as sink:
        process = subprocess.Popen([sys.executable, "-c", "from vgpuctl.cli.app import main; main()", "webhook",
                                    "serve", "--host", "127.0.0.1", "--port", "0", "--cluster-aware",
                                    "--cert", str(scratch / "tls.crt"), "--key", str(scratch / "tls.key")],
                                   stdout=subprocess.DEVNULL, stderr=sink, env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        ports: list[int] = []
        while not ports:
            match = LISTENING.search(log.read_text(errors="replace"))
            ports = [int(match[1]), int(match[2])] if match else []
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name}: the webhook did not start: {log.read_text()[-2000:]}")
            time.sleep(0.05)  # polling the log for the ports
        context = ssl.create_default_context(cafile=str(scratch / "ca.crt"))
        context.check_hostname = False
        worker = None
        while True:
            if worker is None and (worker := _worker(process.pid)) is not None and on_worker is not None:
                on_worker(worker, process.pid)
            try:
                with urllib.request.urlopen(f"https://127.0.0.1:{ports[0]}/readyz", context=context,
                                            timeout=10) as r:
                    if r.status == 200:
                        break
            except OSError:
                pass
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{name}: never ready: {log.read_text()[-2000:]}")
            time.sleep(0.05)  # polling readiness
        ready_s = time.monotonic() - started
        worker = worker or _worker(process.pid)
        assert worker is not None
        yield Served(process, worker, ports[0], ports[1], context, started, ready_s)
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def certificates(scratch: Path) -> None:
    """A CA and a serving certificate for 127.0.0.1 in `scratch` (ca.crt, tls.crt, tls.key)."""
    from vgpuctl.webhook.certs import generate_ca, issue_serving_cert, write_pem_files

    ca = generate_ca()
    write_pem_files(scratch, ca, issue_serving_cert(ca, ["localhost"], ["127.0.0.1"]))


def run(name: str, nodes: list[dict[str, Any]], pods: list[dict[str, Any]], scratch: Path) -> dict[str, Any]:
    api = FakeApi(nodes, pods)
    try:
        with serve(name, api, scratch) as served:
            memory = _status(served.worker)
            return {"run": name, "pods": len(pods), "list_bytes": api.bytes, "ready_s": served.ready_s,
                    "rss": memory["VmRSS"], "peak": memory["VmHWM"]}
    finally:
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
    scratch = Path(tempfile.mkdtemp(prefix="vgpuctl-cluster-memory-"))
    certificates(scratch)
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
