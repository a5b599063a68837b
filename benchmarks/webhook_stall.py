"""The webhook under stalled connections: do normal reviews still get answered, and does the server drop
the stalled connections by itself?

Run: python benchmarks/webhook_stall.py [--stalled 64] [--seconds 10] [--rate 20] [--drop-wait 40]

One `vgpuctl webhook serve` as deployed (one worker, TLS ≥ 1.2, the deployed device config) on 127.0.0.1.
A connection that opens and goes silent is what any pod in the cluster can do to port 8443; the validating
webhook is fail-closed, so if such connections starve it, every GPU pod in the cluster is rejected. Four
kinds of stall, `--stalled` connections in all, spread evenly:

- `tcp-silent`:      TCP connected, nothing sent;
- `tls-one-byte`:    the first byte of a TLS ClientHello, then nothing;
- `half-header`:     TLS done, `POST /validate HTTP/1.1` and one header line, then nothing;
- `body-unfinished`: TLS done, headers announcing a 4 KiB body, 100 bytes of it, then nothing.

Two phases, each with normal reviews sent open-loop at `--rate` per second for `--seconds` (latency from
each request's scheduled time, so a stall is not hidden by coordinated omission), every review on a new
TLS connection (what a fresh API-server connection costs) and, alternately, on one kept-alive connection:

1. quiet: no stalled connections (the baseline of the same run);
2. stalled: the stalled connections opened first (and kept open by the client).

Reported: p50/p99/max latency and failures (no answer within `--timeout`, 5 s as the API server waits by
default for our webhook) per phase and the ratio stalled p99 / quiet p99; then how long the server took to
close each stalled connection by itself (the client never closes them), per kind, within `--drop-wait`.
Goal (issue 23): every review answered within 1 s with 64 stalled connections, each dropped within 30 s.
"""

from __future__ import annotations

import argparse
import http.client
import json
import selectors
import shutil
import socket
import ssl
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.webhook_load import DEVICE_CONFIG, SERVICE_HOST, Server, _pct, connect, workload  # noqa: E402

KINDS = ("tcp-silent", "tls-one-byte", "half-header", "body-unfinished")
DEADLINE_S = 300


def _client_hello_first_byte() -> bytes:
    return b"\x16"  # TLS record type "handshake": the server now waits for the rest of the ClientHello


def open_stalled(kind: str, port: int, context: ssl.SSLContext) -> socket.socket:
    raw = socket.create_connection(("127.0.0.1", port), timeout=5)
    if kind == "tcp-silent":
        return raw
    if kind == "tls-one-byte":
        raw.sendall(_client_hello_first_byte())
        return raw
    tls = context.wrap_socket(raw, server_hostname=SERVICE_HOST)
    if kind == "half-header":
        tls.sendall(b"POST /validate HTTP/1.1\r\nHost: " + SERVICE_HOST.encode() + b"\r\n")
    else:
        tls.sendall(b"POST /validate HTTP/1.1\r\nHost: " + SERVICE_HOST.encode()
                    + b"\r\nContent-Type: application/json\r\nContent-Length: 4096\r\n\r\n" + b"{" * 100)
    return tls


def watch_drops(stalled: list[tuple[str, socket.socket, float]], wait: float) -> dict[str, list[float | None]]:
    """Seconds from opening until the server closed each connection (EOF or reset); None if still open."""
    selector = selectors.DefaultSelector()
    closed: dict[int, float] = {}
    for n, (_, sock, _) in enumerate(stalled):
        sock.setblocking(False)
        selector.register(sock, selectors.EVENT_READ, n)
    deadline = time.monotonic() + wait
    while len(closed) < len(stalled) and time.monotonic() < deadline:
        for key, _ in selector.select(timeout=0.2):
            n = key.data
            sock = stalled[n][1]
            try:
                data = sock.recv(65536)
            except (ssl.SSLWantReadError, BlockingIOError):
                continue
            except (OSError, ssl.SSLError):
                data = b""
            if not data:  # EOF, reset, or an alert before close: the server gave up on it
                closed[n] = time.monotonic()
                selector.unregister(sock)
    selector.close()
    out: dict[str, list[float | None]] = {kind: [] for kind in KINDS}
    for n, (kind, _, opened) in enumerate(stalled):
        out[kind].append(closed[n] - opened if n in closed else None)
    return out


def _one_review(port: int, ca: str, connection: http.client.HTTPSConnection | None, path: str, body: bytes,
                scheduled: float, timeout: float) -> tuple[float | None, str]:
    """(latency from the scheduled time, "") or (None, why it failed)."""
    delay = scheduled - time.perf_counter()
    if delay > 0:
        time.sleep(delay)  # pacing the open-loop schedule
    fresh = connection is None
    try:
        if connection is None:
            connection = connect(port, ca)
        connection.timeout = timeout
        if connection.sock is not None:
            connection.sock.settimeout(timeout)
        connection.request("POST", path, body=body, headers={"Content-Type": "application/json"})
        response = connection.getresponse()
        data = response.read()
    except (OSError, http.client.HTTPException) as exc:
        if connection is not None:
            connection.close()
        return None, type(exc).__name__
    finally:
        if fresh and connection is not None:
            connection.close()
    latency = time.perf_counter() - scheduled
    if response.status != 200 or b'"uid"' not in data:
        return None, f"HTTP {response.status}"
    if latency > timeout:
        return None, "answered too late"
    return latency, ""


def _kept_alive(port: int, ca: str, jobs: list[tuple[str, bytes, float]],
                timeout: float) -> list[tuple[float | None, str]]:
    connection = connect(port, ca)
    out = []
    for path, body, scheduled in jobs:
        if time.perf_counter() > scheduled + timeout:  # fell behind by a whole timeout: the rest fail too
            out.append((None, "not sent: the kept-alive connection was still busy"))
            continue
        result = _one_review(port, ca, connection, path, body, scheduled, timeout)
        out.append(result)
        if result[0] is None:
            connection = connect(port, ca)
    connection.close()
    return out


def reviews(port: int, ca: str, items: list[tuple[str, bytes]], rate: float, seconds: float,
            timeout: float) -> dict[str, Any]:
    """Open loop: a review every 1/rate s, alternating a new connection (each on its own thread, so one
    stuck review does not delay the next) and one kept-alive connection (in order, as the API server's)."""
    count = int(rate * seconds)
    start = time.perf_counter() + 0.05
    fresh_jobs = [(items[n % len(items)], start + n / rate) for n in range(0, count, 2)]
    kept_jobs = [(*items[n % len(items)], start + n / rate) for n in range(1, count, 2)]
    with ThreadPoolExecutor(max_workers=min(256, len(fresh_jobs) + 1)) as pool:
        kept = pool.submit(_kept_alive, port, ca, kept_jobs, timeout)
        futures = [pool.submit(_one_review, port, ca, None, path, body, scheduled, timeout)
                   for (path, body), scheduled in fresh_jobs]
        results = [f.result() for f in futures] + kept.result()
    latencies = sorted(r[0] for r in results if r[0] is not None)
    failures = [r[1] for r in results if r[0] is None]
    return {"requests": count, "answered": len(latencies), "failures": len(failures),
            "failure_kinds": sorted(set(failures)), "p50_ms": _pct(latencies, 50), "p99_ms": _pct(latencies, 99),
            "max_ms": latencies[-1] * 1000 if latencies else float("nan")}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--stalled", type=int, default=64, help="stalled connections, spread over the 4 kinds")
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each review phase")
    parser.add_argument("--rate", type=float, default=20.0, help="normal reviews per second")
    parser.add_argument("--timeout", type=float, default=5.0, help="a review not answered by then failed")
    parser.add_argument("--drop-wait", type=float, default=40.0, help="how long to watch for the server's drops")
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("serve_args", nargs="*", help="extra `webhook serve` arguments (after --)")
    args = parser.parse_args()
    if args.stalled > 1000 or args.seconds > 60 or args.drop_wait > 120 or args.rate > 200:
        parser.error("bounded benchmark: at most 1000 connections, 60 s per phase, 120 s of watching, 200/s")

    from vgpuctl.webhook.certs import generate_ca, issue_serving_cert, service_dns_names, write_pem_files

    scratch = Path(tempfile.mkdtemp(prefix="vgpuctl-stall-"))
    ca = generate_ca()
    write_pem_files(scratch, ca, issue_serving_cert(ca, service_dns_names("vgpuctl-webhook", "vgpuctl-system")))
    cert, key, ca_file = str(scratch / "tls.crt"), str(scratch / "tls.key"), str(scratch / "ca.crt")
    context = ssl.create_default_context(cafile=ca_file)
    items = workload(200)
    cli = [sys.executable, "-c", "from vgpuctl.cli.app import main; main()"]
    server = Server("vgpuctl", [*cli, "webhook", "serve", "--host", "127.0.0.1", "--port", "0", "--metrics-port", "0",
                                "--cert", cert, "--key", key, "--device-config", str(DEVICE_CONFIG), *args.serve_args],
                    scratch / "server.log", ca_file)
    stalled: list[tuple[str, socket.socket, float]] = []
    open_failures: dict[str, int] = {}
    try:
        reviews(server.port, ca_file, items, args.rate, 1.0, args.timeout)  # warm-up
        quiet = reviews(server.port, ca_file, items, args.rate, args.seconds, args.timeout)
        opened_at = time.monotonic()
        # The kinds that need a finished handshake first: a server already starved by the others could not
        # even complete it (counted as failed opens).
        order = sorted(range(args.stalled), key=lambda n: (KINDS[n % len(KINDS)] in KINDS[:2], n))
        for n in order:
            kind = KINDS[n % len(KINDS)]
            try:
                stalled.append((kind, open_stalled(kind, server.port, context), time.monotonic()))
            except (OSError, ssl.SSLError):
                open_failures[kind] = open_failures.get(kind, 0) + 1
        open_s = time.monotonic() - opened_at
        with ThreadPoolExecutor(max_workers=1) as watcher:  # drops are timed while the reviews run
            watching = watcher.submit(watch_drops, stalled, args.drop_wait)
            under = reviews(server.port, ca_file, items, args.rate, args.seconds, args.timeout)
            drops = watching.result(timeout=args.drop_wait + 30)
    finally:
        for _, sock, _ in stalled:
            sock.close()
        server.stop()
        shutil.rmtree(scratch, ignore_errors=True)
    report = {
        "settings": {"stalled": args.stalled, "kinds": list(KINDS), "rate": args.rate, "seconds": args.seconds,
                     "timeout_s": args.timeout, "serve_args": args.serve_args, "open_stalled_s": round(open_s, 2),
                     "open_failures": open_failures},
        "quiet": quiet, "stalled": under,
        "ratio_p99_stalled_over_quiet": under["p99_ms"] / quiet["p99_ms"] if quiet["p99_ms"] else float("nan"),
        "drops": {kind: {"dropped": sum(1 for t in times if t is not None), "of": len(times),
                         "max_s": max((t for t in times if t is not None), default=None)}
                  for kind, times in drops.items()},
        "drop_wait_s": args.drop_wait,
    }
    if args.json:
        print(json.dumps(report, indent=2))
        return
    print(f"webhook under {args.stalled} stalled connections ({', '.join(KINDS)}); reviews at {args.rate:.0f}/s "
          f"for {args.seconds:.0f} s per phase, half on new TLS connections; timeout {args.timeout:.0f} s")
    if open_failures:
        print(f"  stalled connections the server did not even take (handshake timed out): {open_failures}")
    for name in ("quiet", "stalled"):
        r = report[name]
        print(f"  {name:<8} answered {r['answered']}/{r['requests']}  p50 {r['p50_ms']:.1f} ms  "
              f"p99 {r['p99_ms']:.1f} ms  max {r['max_ms']:.1f} ms  failures {r['failures']} {r['failure_kinds']}")
    print(f"  ratio p99 stalled / quiet: {report['ratio_p99_stalled_over_quiet']:.2f}")
    print(f"stalled connections closed by the server within {args.drop_wait:.0f} s of opening:")
    for kind, d in report["drops"].items():
        slowest = f"{d['max_s']:.1f} s" if d["max_s"] is not None else "-"
        print(f"  {kind:<16} {d['dropped']}/{d['of']}  slowest {slowest}")


if __name__ == "__main__":
    main()
