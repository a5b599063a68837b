"""The gunicorn worker the webhook runs in: connections on an asyncio loop, the Flask app on a few threads.

Why not gunicorn's gthread worker: it reads each new connection's TLS handshake, headers and body on a
pool thread, with no deadline. A handful of connections that open and go silent (TCP with nothing sent,
one byte of a ClientHello, half a header, an unfinished body) held all four threads, and every review —
so every GPU pod in the cluster, the validating webhook failing closed — waited behind them
(benchmarks/webhook_stall.py: 0 of 160 reviews answered with 64 such connections open). Here a connection
costs a coroutine until its request is complete, every phase has a deadline (`connection.Limits`), and
only a finished request takes a thread (`wsgi_call`), so `threads` bounds concurrent reviews, not
connections.

gunicorn stays the process manager: the arbiter, heartbeat, graceful stop, `gunicorn.conf.py` and the
`ssl_context` hook that reloads a rotated certificate (`tls.ReloadingContext`), consulted once per
connection: TLS starts after the accept (`StreamWriter.start_tls`), so a failed or timed-out handshake is
ours to count and log (`DropLog`, `vgpuctl_webhook_connections_dropped_total`).
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
import signal
import ssl
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from gunicorn import sock as gunicorn_sock  # type: ignore[import-untyped]
from gunicorn.workers.base import Worker  # type: ignore[import-untyped]

from vgpuctl.webhook.connection import WAITING, Connection, Limits
from vgpuctl.webhook.wsgi_call import Answer, Request, call_app

HEARTBEAT_S = 1.0
log = logging.getLogger("vgpuctl.webhook")


class GuardedWorker(Worker):  # type: ignore[misc]
    """Set `limits` on a subclass (`worker_class_for`); gunicorn instantiates it in each worker process."""

    limits = Limits()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.loop: asyncio.AbstractEventLoop | None = None
        self.connections: dict[Connection, asyncio.Task[None]] = {}
        self.pool: ThreadPoolExecutor | None = None
        self.drops = DropLog()
        self._quick = False

    # ---- process lifecycle (called by gunicorn) ----

    def init_process(self) -> None:
        self.loop = asyncio.new_event_loop()
        asyncio.set_event_loop(self.loop)
        self.pool = ThreadPoolExecutor(max_workers=max(1, self.cfg.threads), thread_name_prefix="review")
        super().init_process()

    def load_wsgi(self) -> None:
        super().load_wsgi()
        state = getattr(self.wsgi, "extensions", {}).get("vgpuctl")  # the app's WebhookState: count drops there
        metrics = getattr(state, "metrics", None)
        if metrics is not None:
            self.drops.counter = metrics.dropped

    def init_signals(self) -> None:
        for number in self.SIGNALS:
            signal.signal(number, signal.SIG_DFL)
        assert self.loop is not None
        self.loop.add_signal_handler(signal.SIGTERM, self._stop, False)
        self.loop.add_signal_handler(signal.SIGQUIT, self._stop, True)
        self.loop.add_signal_handler(signal.SIGINT, self._stop, True)
        self.loop.add_signal_handler(signal.SIGUSR1, self.log.reopen_files)
        self.loop.add_signal_handler(signal.SIGABRT, self._abort)

    def run(self) -> None:
        assert self.loop is not None and self.pool is not None
        try:
            self.loop.run_until_complete(self._serve())
        finally:
            self.pool.shutdown(wait=not self._quick, cancel_futures=True)
            self.loop.close()

    def _stop(self, quick: bool) -> None:
        self.alive = False
        if quick:
            self._quick = True
            self.cfg.worker_int(self)

    def _abort(self) -> None:
        self.alive = False
        self.cfg.worker_abort(self)
        sys.exit(1)

    # ---- serving ----

    async def _serve(self) -> None:
        servers = [await asyncio.start_server(functools.partial(self._accepted, listener_role(index)),
                                              sock=listener.sock, limit=READ_LIMIT)
                   for index, listener in enumerate(self.sockets)]
        try:
            while self.alive:
                self.notify()
                if self.ppid != os.getppid():
                    self.log.info("Parent changed, shutting down: %s", self)
                    break
                await asyncio.sleep(HEARTBEAT_S)
        finally:
            for server in servers:
                server.close()
            await self._drain_connections()

    def _accepted(self, role: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """asyncio's accept callback. A plain function that starts a task of ours: a coroutine here would be a
        task asyncio's stream protocol watches, and it logs a traceback for each one we cancel (CPython 3.11)."""
        if not self.alive:
            writer.transport.abort()
            return
        limits = self.limits
        if len(self.connections) >= limits.max_connections and not self._evict_oldest_waiting():
            self._dropped("too-many-connections", writer, f"{limits.max_connections} busy connections open")
            writer.transport.abort()
            return
        connection = Connection(reader, writer, self._call, limits, lambda: not self.alive,
                                lambda reason, detail: self._dropped(reason, writer, detail), role)
        assert self.loop is not None
        self.connections[connection] = self.loop.create_task(self._connection(connection))

    async def _connection(self, connection: Connection) -> None:
        try:
            if await self._handshake(connection.writer):
                await connection.run()
        finally:
            self.connections.pop(connection, None)  # already gone when evicted

    def _evict_oldest_waiting(self) -> bool:
        """At the limit: give up the longest-open connection that has not yet sent a whole request (the
        dict keeps accept order). A client that holds connections open to fill the limit loses its own
        first; one that is being answered or kept alive is never cut for a newcomer."""
        for connection, task in self.connections.items():
            if connection.phase in WAITING:
                self._dropped("too-many-connections", connection.writer, "the oldest connection still waiting for a "
                              "request, given up for a new one")
                connection.writer.transport.abort()
                task.cancel()
                del self.connections[connection]
                return True
        return False

    async def _handshake(self, writer: asyncio.StreamWriter) -> bool:
        """TLS with the serving context of the moment (a rotated certificate is served from the next
        connection on), within `limits.handshake`; False when it failed (counted, logged, connection cut)."""
        try:
            context = gunicorn_sock.ssl_context(self.cfg)  # `tls.ReloadingContext`: cached until the files change
            # Our own deadline: asyncio's (kept as a backstop) ends in an anonymous ConnectionAbortedError. Not
            # `wait_for`: start_tls in a task of its own never finishes the handshake (CPython 3.11).
            async with asyncio.timeout(self.limits.handshake):
                await writer.start_tls(context, ssl_handshake_timeout=self.limits.handshake * 2)
            return True
        except TimeoutError:
            self._dropped("handshake-timeout", writer, f"no TLS handshake within {self.limits.handshake:g} s")
        except ssl.SSLError as exc:
            self._dropped("handshake-failed", writer, f"TLS handshake failed: {exc}")
        except (OSError, EOFError):
            pass  # the client went away
        writer.transport.abort()
        return False

    def _dropped(self, reason: str, writer: asyncio.StreamWriter, detail: str) -> None:
        self.drops.record(reason, writer.get_extra_info("peername"), detail)

    async def _call(self, request: Request) -> Answer:
        assert self.loop is not None
        self.nr += 1
        return await self.loop.run_in_executor(self.pool, _call_app, self.wsgi, request, self.cfg.workers > 1)

    async def _drain_connections(self) -> None:
        """Stop: idle keep-alive connections close now; requests under way get `graceful_timeout` to finish
        (their answers say `Connection: close`), then whatever is left is cut."""
        deadline = asyncio.get_running_loop().time() + (0 if self._quick else self.cfg.graceful_timeout)
        while self.connections and asyncio.get_running_loop().time() < deadline and not self._quick:
            for connection, task in list(self.connections.items()):
                if connection.phase == "idle":
                    task.cancel()
            await asyncio.sleep(0.05)
        for task in list(self.connections.values()):
            task.cancel()
        if self.connections:
            await asyncio.gather(*self.connections.values(), return_exceptions=True)


# What each listener serves, in bind order (`server.ServerOptions.binds`): the first the admission calls,
# any other /metrics. The app refuses a path on the wrong one (`app.py`).
LISTENER_ROLES = ("admission", "metrics")


def listener_role(index: int) -> str:
    return LISTENER_ROLES[min(index, len(LISTENER_ROLES) - 1)]


READ_LIMIT = 64 * 1024  # the stream reader's buffer; `Connection` reads in chunks of this size
DROP_LOG_INTERVAL_S = 10.0


class DropLog:
    """Counts the connections closed before an answer, by reason, and logs them without letting a flood of
    them flood the log: the first of a reason at once, then at most one line per reason every
    `DROP_LOG_INTERVAL_S`, saying how many more there were."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.counter: Any = None  # the app's `vgpuctl_webhook_connections_dropped` (labels: reason)
        self._clock = clock
        self._last: dict[str, float] = {}
        self._since: dict[str, int] = {}

    def record(self, reason: str, peer: Any, detail: str) -> None:
        if self.counter is not None:
            self.counter.labels(reason).inc()
        now = self._clock()
        last = self._last.get(reason)
        if last is not None and now - last < DROP_LOG_INTERVAL_S:
            self._since[reason] = self._since.get(reason, 0) + 1
            return
        more = self._since.pop(reason, 0)
        self._last[reason] = now
        where = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else "a client"
        log.info("dropped a connection from %s (%s): %s%s", where, reason, detail,
                 f" (and {more} more since the last such line)" if more else "")


def _call_app(app: Any, request: Request, multiprocess: bool) -> Answer:
    try:
        return call_app(app, request, multiprocess=multiprocess)
    except Exception as exc:  # the app answers its own errors; this is a bug between it and us
        log.exception("the app failed on %s %r", request.method, request.target)
        body = b'{"error":"request could not be handled: ' + type(exc).__name__.encode() + b'","code":400}'
        return Answer(400, b"Bad Request", ((b"content-type", b"application/json"),), (body,))


@functools.cache
def worker_class_for(limits: Limits) -> type[GuardedWorker]:
    """A worker class carrying `limits` (gunicorn's `worker_class` takes a class; it is inherited by fork);
    the same class for the same limits, so two configurations that agree compare equal."""
    return type("VgpuctlWorker", (GuardedWorker,), {"limits": limits})
