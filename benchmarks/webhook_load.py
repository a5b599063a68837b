"""Load benchmark of the admission webhook over keep-alive HTTPS, as a ratio to a bare Flask handler.

Run: python benchmarks/webhook_load.py [--requests 4000] [--concurrency 4] [--rate 200] [--rate-seconds 5]

Two servers under identical gunicorn settings (the deployed ones: 1 vgpuctl worker, 4 threads, TLS ≥ 1.2
with the reloading context, 127.0.0.1, port chosen by the kernel):
- `vgpuctl webhook serve` with the deployed device config, and
- a bare Flask app that parses the AdmissionReview and answers `allowed: true` (same JSON library), i.e.
  what any webhook must at least do.
Both get the same realistic mix: `benchmarks/corpus.py` objects (Pods of every family, valid and broken,
Deployments, Volcano Jobs) wrapped in AdmissionReviews, half to /validate and half to /mutate.

1. Throughput: `--concurrency` keep-alive connections (spread over client processes, so the client's own
   GIL is not the bottleneck) send `--requests` requests as fast as they are answered; requests/s and
   p50/p99 latency per server, and the ratio. Rounds alternate between the servers; the best round of
   each is reported (a noisy neighbour can only make a figure pessimistic).
2. Fixed rate: one keep-alive connection at `--rate` requests/s for `--rate-seconds`, latency measured
   from each request's scheduled time (so a stall is not hidden by coordinated omission); p50/p99.

Bounded in count and time; loopback only. The client and the server share this machine's cores.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.corpus import corpus  # noqa: E402

DEVICE_CONFIG = ROOT / "deploy" / "base" / "configmap-device-config.yaml"
SERVICE_HOST = "vgpuctl-webhook.vgpuctl-system.svc"
LISTENING = re.compile(r"Listening at: https://127\.0\.0\.1:(\d+)")
DEADLINE_S = 300  # the whole benchmark gives up after this


# ---- the baseline server ---------------------------------------------------------------------------

def bare_app() -> Any:
    import orjson
    from flask import Flask, Response, request

    app = Flask("baseline")

    def answer() -> Response:
        review = orjson.loads(request.get_data())
        body = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                "response": {"uid": review["request"]["uid"], "allowed": True}}
        return Response(orjson.dumps(body), mimetype="application/json")

    app.add_url_rule("/validate", "validate", answer, methods=["POST"])
    app.add_url_rule("/mutate", "mutate", answer, methods=["POST"])
    return app


def serve_baseline(cert: str, key: str, threads: int) -> None:
    from vgpuctl.webhook.server import ServerOptions, WebhookServer, gunicorn_options

    options = ServerOptions(host="127.0.0.1", port=0, metrics_port=0, workers=1, threads=threads)
    WebhookServer(bare_app, gunicorn_options(options, cert, key), options.log_level).run()


# ---- starting and stopping servers -------------------------------------------------------------------

class Server:
    def __init__(self, name: str, args: list[str], log: Path, ca: str, cpus: set[int] | None = None) -> None:
        self.name = name
        self.ca = ca
        self.log_path = log
        self._log = open(log, "wb")  # noqa: SIM115 - closed in stop()
        pin = (lambda: os.sched_setaffinity(0, cpus)) if cpus else None  # inherited by gunicorn's workers
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self._log, start_new_session=True,
                                        preexec_fn=pin)
        deadline = time.monotonic() + 30
        while True:
            match = LISTENING.search(log.read_text(errors="replace"))
            if match:
                self.port = int(match.group(1))
                break
            if self.process.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"{name} did not start: {log.read_text(errors='replace')[-2000:]}")
            time.sleep(0.02)
        while True:  # until a worker answers
            try:
                connection = connect(self.port, ca)
                connection.request("POST", "/validate", body=b"{}", headers={"Content-Type": "application/json"})
                connection.getresponse().read()
                connection.close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    self.stop()
                    raise
                time.sleep(0.02)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=5)
        self._log.close()


class _Connection(http.client.HTTPSConnection):
    def connect(self) -> None:
        raw = socket.create_connection((self.host, self.port), self.timeout)
        raw.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # as Go's net/http (the API server) does
        self.sock = self._ctx.wrap_socket(raw, server_hostname=SERVICE_HOST)


def connect(port: int, ca: str) -> _Connection:
    context = ssl.create_default_context(cafile=ca)
    connection = _Connection("127.0.0.1", port, timeout=10)
    connection._ctx = context  # type: ignore[attr-defined]
    return connection


# ---- the workload ------------------------------------------------------------------------------------

def _kind(obj: dict[str, Any]) -> dict[str, str]:
    group, _, version = obj["apiVersion"].rpartition("/")
    return {"group": group, "version": version, "kind": obj["kind"]}


def workload(size: int) -> list[tuple[str, bytes]]:
    """(path, body) pairs: corpus objects as AdmissionReview v1 CREATE requests, alternating endpoints."""
    items = []
    for n, obj in enumerate(corpus(size=size, seed=11)):
        kind = _kind(obj)
        review = {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                  "request": {"uid": f"00000000-0000-4000-8000-{n:012d}", "kind": kind,
                              "resource": {"group": kind["group"], "version": kind["version"],
                                           "resource": kind["kind"].lower() + "s"},
                              "namespace": obj["metadata"]["namespace"], "operation": "CREATE",
                              "userInfo": {"username": "system:serviceaccount:kube-system:job-controller"},
                              "object": obj, "oldObject": None, "dryRun": False}}
        items.append(("/validate" if n % 2 else "/mutate", json.dumps(review).encode()))
    return items


def _client(port: int, ca: str, items: list[tuple[str, bytes]]) -> tuple[list[float], float, int]:
    """One client process: one keep-alive connection, `items` sent back to back."""
    connection = connect(port, ca)
    latencies = []
    errors = 0
    start = time.perf_counter()
    for path, body in items:
        t0 = time.perf_counter()
        connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        data = response.read()
        latencies.append(time.perf_counter() - t0)
        if response.status != 200 or b'"uid"' not in data:
            errors += 1
    elapsed = time.perf_counter() - start
    connection.close()
    return latencies, elapsed, errors


def throughput(pool: ProcessPoolExecutor, server: Server, items: list[tuple[str, bytes]],
               requests: int, concurrency: int) -> dict[str, float]:
    per_client = requests // concurrency
    cpu_start = server_cpu_seconds(server.process.pid)
    jobs = []
    for c in range(concurrency):
        share = [items[(c * per_client + i) % len(items)] for i in range(per_client)]
        jobs.append(pool.submit(_client, server.port, server.ca, share))
    wall = time.perf_counter()
    results = [job.result(timeout=DEADLINE_S) for job in jobs]
    cpu = server_cpu_seconds(server.process.pid) - cpu_start
    wall = time.perf_counter() - wall
    latencies = sorted(x for r in results for x in r[0])
    errors = sum(r[2] for r in results)
    return {"rps": len(latencies) / max(r[1] for r in results), "p50_ms": _pct(latencies, 50),
            "p99_ms": _pct(latencies, 99), "requests": len(latencies), "errors": errors, "wall_s": wall,
            "server_cpu_us_per_request": cpu / len(latencies) * 1e6}


def fixed_rate(server: Server, items: list[tuple[str, bytes]], rate: float, seconds: float) -> dict[str, float]:
    connection = connect(server.port, server.ca)
    count = int(rate * seconds)
    interval = 1.0 / rate
    latencies = []
    errors = 0
    start = time.perf_counter()
    for n in range(count):
        scheduled = start + n * interval
        delay = scheduled - time.perf_counter()
        if delay > 0:
            time.sleep(delay)  # pacing the open-loop schedule
        path, body = items[n % len(items)]
        connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        response.read()
        latencies.append(time.perf_counter() - scheduled)
        errors += response.status != 200
    achieved = count / (time.perf_counter() - start)
    connection.close()
    latencies.sort()
    return {"rate": achieved, "p50_ms": _pct(latencies, 50), "p99_ms": _pct(latencies, 99),
            "max_ms": latencies[-1] * 1000, "requests": count, "errors": errors}


def server_cpu_seconds(pid: int) -> float:
    """CPU time (user + system) used so far by the gunicorn master and its workers (Linux /proc). CPU per
    request is the figure a noisy neighbour cannot distort: it only slows the wall clock."""
    tick = os.sysconf("SC_CLK_TCK")
    pids = [pid]
    for task in Path(f"/proc/{pid}/task").glob("*/children"):
        pids += [int(c) for c in task.read_text().split()]
    total = 0.0
    for p in pids:
        try:
            fields = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += (int(fields[11]) + int(fields[12])) / tick  # utime, stime
    return total


def _pct(sorted_seconds: list[float], pct: float) -> float:
    if not sorted_seconds:
        return float("nan")
    index = min(len(sorted_seconds) - 1, max(0, round(pct / 100 * len(sorted_seconds)) - 1))
    return sorted_seconds[index] * 1000


def _cpu_split(no_pin: bool) -> tuple[set[int] | None, set[int] | None]:
    """Servers on the first CPU, clients on the others: the client's own work (TLS, JSON) then cannot
    steal the server's CPU in one round and not in the next, which made the ratio swing by ±0.1."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if no_pin or len(cpus) < 2:
        return None, None
    return {cpus[0]}, set(cpus[1:])


def _pin(cpus: set[int] | None) -> None:
    if cpus:
        os.sched_setaffinity(0, cpus)


# ---- main --------------------------------------------------------------------------------------------

def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--requests", type=int, default=4000, help="requests per throughput round and server")
    parser.add_argument("--concurrency", type=int, default=4, help="keep-alive connections (client processes)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--rate-seconds", type=float, default=5.0)
    parser.add_argument("--threads", type=int, default=4, help="gunicorn threads (both servers)")
    parser.add_argument("--corpus", type=int, default=2000)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--no-pin", action="store_true",
                        help="do not pin the servers to CPU 0 and the clients to the other CPUs")
    parser.add_argument("--serve-baseline", nargs=2, metavar=("CERT", "KEY"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_baseline:
        serve_baseline(*args.serve_baseline, threads=args.threads)
        return
    if args.requests > 50_000 or args.rate_seconds > 60 or args.concurrency > 16:
        parser.error("bounded benchmark: at most 50000 requests, 60 s at fixed rate, 16 connections")

    from vgpuctl.webhook.certs import generate_ca, issue_serving_cert, service_dns_names, write_pem_files

    scratch = Path(tempfile.mkdtemp(prefix="vgpuctl-bench-"))
    ca = generate_ca()
    write_pem_files(scratch, ca, issue_serving_cert(ca, service_dns_names("vgpuctl-webhook", "vgpuctl-system")))
    cert, key, ca_file = str(scratch / "tls.crt"), str(scratch / "tls.key"), str(scratch / "ca.crt")
    items = workload(args.corpus)
    server_cpus, client_cpus = _cpu_split(args.no_pin)
    env_cli = [sys.executable, "-c", "from vgpuctl.cli.app import main; main()"]
    servers: dict[str, Server] = {}
    try:
        servers["vgpuctl"] = Server("vgpuctl", [*env_cli, "webhook", "serve", "--host", "127.0.0.1", "--port", "0",
                                                "--metrics-port", "0", "--cert", cert, "--key", key,
                                                "--device-config", str(DEVICE_CONFIG),
                                                "--workers", "1", "--threads", str(args.threads)],
                                    scratch / "vgpuctl.log", ca_file, server_cpus)
        servers["bare-flask"] = Server("bare-flask", [sys.executable, __file__, "--serve-baseline", cert, key,
                                                      "--threads", str(args.threads)],
                                       scratch / "baseline.log", ca_file, server_cpus)
        rounds: dict[str, list[dict[str, float]]] = {name: [] for name in servers}
        with ProcessPoolExecutor(max_workers=args.concurrency, initializer=_pin,
                                 initargs=(client_cpus,)) as pool:
            for server in servers.values():  # warm-up: imports, first TLS handshakes, caches
                throughput(pool, server, items, min(400, args.requests), args.concurrency)
            for _ in range(args.rounds):
                for name, server in servers.items():
                    rounds[name].append(throughput(pool, server, items, args.requests, args.concurrency))
        best = {name: max(runs, key=lambda r: r["rps"]) for name, runs in rounds.items()}
        rate = {name: fixed_rate(server, items, args.rate, args.rate_seconds) for name, server in servers.items()}
    finally:
        for server in servers.values():
            server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    report = {
        "settings": {"gunicorn": f"vgpuctl worker, 1 process, {args.threads} threads, TLS",
                     "concurrency": args.concurrency,
                     "pinning": f"servers on CPU {sorted(server_cpus)}, clients on {sorted(client_cpus)}"
                     if server_cpus and client_cpus else "none",
                     "requests_per_round": args.requests, "rounds": args.rounds, "cpus": os.cpu_count(),
                     "mix": "corpus.py objects, 50% /validate, 50% /mutate"},
        "throughput": best,
        "throughput_all_rounds_rps": {n: [round(r["rps"]) for r in runs] for n, runs in rounds.items()},
        "ratio_rps": best["vgpuctl"]["rps"] / best["bare-flask"]["rps"],
        "server_cpu_us_per_request_median": {
            n: statistics.median(r["server_cpu_us_per_request"] for r in runs) for n, runs in rounds.items()},
        # Per round, each server against the other's run next to it: less sensitive to a noisy neighbour.
        "ratio_rps_median_of_rounds": statistics.median(
            v["rps"] / b["rps"] for v, b in zip(rounds["vgpuctl"], rounds["bare-flask"], strict=True)),
        "fixed_rate": rate,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"webhook load: {report['settings']['gunicorn']}, {args.concurrency} keep-alive connections, "
          f"{args.requests} requests x {args.rounds} rounds, {os.cpu_count()} CPUs; pinning: "
          f"{report['settings']['pinning']}")
    print(f"{'server':<12} {'req/s':>8} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7}   rounds req/s")
    for name, r in best.items():
        runs = ", ".join(str(x) for x in report["throughput_all_rounds_rps"][name])
        print(f"{name:<12} {r['rps']:>8.0f} {r['p50_ms']:>8.2f} {r['p99_ms']:>8.2f} {r['errors']:>7.0f}   {runs}")
    print(f"ratio vgpuctl / bare-flask throughput: best rounds {report['ratio_rps']:.2f}, "
          f"median of per-round ratios {report['ratio_rps_median_of_rounds']:.2f}")
    cpu = report["server_cpu_us_per_request_median"]
    print(f"server CPU per request (median of rounds): vgpuctl {cpu['vgpuctl']:.0f} us, bare-flask "
          f"{cpu['bare-flask']:.0f} us; ratio (bare / vgpuctl, the throughput ratio when CPU-bound): "
          f"{cpu['bare-flask'] / cpu['vgpuctl']:.2f}")
    print(f"fixed rate {args.rate:.0f} req/s for {args.rate_seconds:.0f} s, one keep-alive connection "
          "(latency from the scheduled send time):")
    for name, r in rate.items():
        print(f"  {name:<12} achieved {r['rate']:.0f} req/s  p50 {r['p50_ms']:.2f} ms  p99 {r['p99_ms']:.2f} ms  "
              f"max {r['max_ms']:.2f} ms  errors {r['errors']:.0f}")


if __name__ == "__main__":
    main()
