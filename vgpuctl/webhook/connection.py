"""One client connection of the webhook, read on the worker's event loop under a deadline per phase.

The validating webhook fails closed: while it cannot answer, the API server rejects every GPU/NPU pod. So
no connection may hold what the others need. Each is read here, on the event loop and without a thread,
under deadlines (`Limits`):

- the TLS handshake: `handshake` (asyncio's `ssl_handshake_timeout`, set by `worker`);
- the request line and headers: `header`, from the end of the handshake, or for a kept-alive connection
  from the first byte of its next request; at most `max_header_bytes` of them (431 beyond);
- the body: `body`, from the end of the headers;
- idle between requests (keep-alive): `keepalive`;
- writing the answer: `body` again (a client that does not read its answer is dropped).

A deadline missed mid-request is answered 408 (when the client could still read it) and the connection
closed; an idle keep-alive connection is closed quietly. Only a complete request reaches a thread
(`wsgi_call`), so the app never waits on the network. HTTP/1.1 framing is h11's.

Bodies over the app's limit are not buffered: the app still answers them (413, counted in its metrics),
from the declared length, after the body is read and dropped — up to `DRAIN_FACTOR` × the limit, so the
client sees the 413 instead of a reset; beyond that the answer goes out unread and the connection closes.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import h11
import orjson

from vgpuctl.webhook.bodies import DRAIN_FACTOR
from vgpuctl.webhook.wsgi_call import Answer, Request

READ_SIZE = 65536
SEND_BUFFER = 1 << 20  # bytes of an answer written before waiting for the transport to take them


@dataclass(frozen=True)
class Limits:
    handshake: float = 5.0  # seconds
    header: float = 5.0
    body: float = 10.0
    keepalive: float = 30.0
    max_body_bytes: int = 3 * 1024 * 1024  # the app's limit (`Settings.max_body_bytes`)
    max_header_bytes: int = 16 * 1024
    max_connections: int = 1000  # per worker; one more is closed at once


# Why a connection was closed before it was answered (the `reason` of the drop counter and log).
DROP_REASONS = ("handshake-timeout", "handshake-failed", "header-timeout", "body-timeout", "write-timeout",
                "malformed", "too-many-connections")


class DeadlineError(Exception):
    """A phase's deadline passed; `reason` is the drop reason."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class WriteTimeoutError(Exception):
    """The client did not read its answer within the deadline."""


AppCall = Callable[[Request], Awaitable[Answer]]
OnDrop = Callable[[str, str], None]  # (reason, detail)


WAITING = frozenset({"handshake", "head", "body"})  # phases in which a connection has not yet made a request


class Connection:
    """Serves one accepted connection, once TLS is up, until it closes. `phase` tells the worker what it is
    doing: "handshake" (the worker's part), "head", "body", "app" (being answered), "idle" (kept alive
    between requests). Idle ones are closed first at shutdown; the oldest still `WAITING` is given up when
    the connection limit is reached, so connections held open on purpose cannot lock the others out."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, call: AppCall,
                 limits: Limits, stopping: Callable[[], bool], on_drop: OnDrop, listener: str = "") -> None:
        self.reader = reader
        self.writer = writer
        self.call = call
        self.limits = limits
        self.stopping = stopping
        self.on_drop = on_drop
        self.listener = listener
        self.phase = "handshake"
        self.h11 = h11.Connection(h11.SERVER, max_incomplete_event_size=limits.max_header_bytes)
        self.loop = asyncio.get_running_loop()
        peer = writer.get_extra_info("peername")
        local = writer.get_extra_info("sockname")
        self.client = (str(peer[0]), int(peer[1])) if isinstance(peer, tuple) else None
        self.server = (str(local[0]), int(local[1])) if isinstance(local, tuple) else ("", 0)

    async def run(self) -> None:
        clean = False
        try:
            await self._serve()
            clean = True
        except DeadlineError as exc:
            self.on_drop(exc.reason, "request not received in time")
            await self._refuse(408, "request not received in time")
        except h11.RemoteProtocolError as exc:
            status = exc.error_status_hint if 400 <= exc.error_status_hint < 500 else 400
            self.on_drop("malformed", str(exc))
            await self._refuse(status, f"malformed HTTP request: {exc}"[:200])
        except WriteTimeoutError:
            self.on_drop("write-timeout", "the client did not read its answer in time")
        except (OSError, ssl.SSLError, asyncio.IncompleteReadError, h11.LocalProtocolError):
            pass  # the client went away, or the connection broke: nothing to answer
        finally:
            self._close(graceful=clean)

    async def _serve(self) -> None:
        deadline = self.loop.time() + self.limits.header
        while True:
            self.phase = "head"
            event = await self._next_event(deadline, "header-timeout")
            if not isinstance(event, h11.Request):
                return  # the client closed the connection (or sent nothing more)
            if _head_size(event) > self.limits.max_header_bytes:
                # h11 bounds a head still arriving; one that came in a single read is measured here.
                raise h11.RemoteProtocolError("request line and headers too large", error_status_hint=431)
            self.phase = "body"
            request, close_after = await self._read_request(event)
            self.phase = "app"
            answer = await self.call(request)
            keep = not close_after and not self.stopping()
            await self._send_answer(answer, keep)
            if not keep or self.h11.our_state is not h11.DONE or self.h11.their_state is not h11.DONE:
                return
            self.h11.start_next_cycle()
            if not await self._await_next_request():
                return
            deadline = self.loop.time() + self.limits.header

    async def _await_next_request(self) -> bool:
        """Idle keep-alive: wait for the first byte of the next request (False: closed or idle too long)."""
        if self.h11.trailing_data[0]:
            return True  # pipelined: already here
        if self.stopping():
            return False
        self.phase = "idle"
        try:
            async with asyncio.timeout(self.limits.keepalive):
                data = await self.reader.read(READ_SIZE)
        except TimeoutError:
            return False
        self.h11.receive_data(data)
        return bool(data)

    async def _next_event(self, deadline: float, reason: str) -> Any:
        """The next h11 event, reading as needed until `deadline` (loop time); `DeadlineError(reason)` after."""
        while True:
            event = self.h11.next_event()
            if event is not h11.NEED_DATA:
                return event
            try:
                async with asyncio.timeout_at(deadline):
                    data = await self.reader.read(READ_SIZE)
            except TimeoutError:
                raise DeadlineError(reason) from None
            self.h11.receive_data(data)  # b"": the client closed; h11 reports it or a protocol error

    async def _read_request(self, head: h11.Request) -> tuple[Request, bool]:
        """The request with its body (kept up to the app's limit + 1 byte), and whether to close after
        answering (a body too large to read)."""
        limit = self.limits.max_body_bytes
        cap = limit * DRAIN_FACTOR
        declared = _declared_length(head.headers)
        request = Request(method=head.method.decode("latin-1"), target=bytes(head.target),
                          http_version=head.http_version.decode("latin-1"), headers=tuple(head.headers),
                          body=b"", client=self.client, server=self.server, listener=self.listener)
        if declared is not None and declared > cap:
            return replace(request, declared_length=declared), True  # answered unread, then closed
        if self.h11.client_is_waiting_for_100_continue:
            await self._send(h11.InformationalResponse(status_code=100, headers=[]))
        deadline = self.loop.time() + self.limits.body
        kept: list[bytes] = []
        size = 0
        while True:
            event = await self._next_event(deadline, "body-timeout")
            if isinstance(event, h11.Data):
                if size <= limit:
                    kept.append(bytes(event.data)[: limit + 1 - size])
                size += len(event.data)
                if size > cap:  # a chunked body far over the limit: stop reading it
                    return replace(request, body=b"".join(kept), declared_length=size), True
            elif isinstance(event, h11.EndOfMessage):
                body = b"".join(kept)
                return replace(request, body=body, declared_length=size if size > len(body) else None), False
            else:  # ConnectionClosed mid-body
                raise ConnectionResetError("the client closed the connection mid-request")

    async def _send_answer(self, answer: Answer, keep: bool) -> None:
        """The head and the body's chunks, in pieces of about `SEND_BUFFER` (`pieces`), each drained before the
        next: a 57 MB /metrics body is not copied into one frame, nor encrypted whole into the TLS transport's
        buffer; a review is one write. The whole answer has `limits.body` seconds, however the client paces its
        reads."""
        headers = [*answer.headers, (b"content-length", str(answer.length).encode())]
        if not keep:
            headers.append((b"connection", b"close"))
        deadline = self.loop.time() + self.limits.body
        pending = self.h11.send(h11.Response(status_code=answer.status, headers=headers, reason=answer.reason)) or b""
        for piece in pieces(answer.chunks, SEND_BUFFER):
            self.writer.write(pending + (self.h11.send(h11.Data(data=piece)) or b""))  # the head with the first
            pending = b""
            await self._drain(deadline - self.loop.time())
        tail = pending + (self.h11.send(h11.EndOfMessage()) or b"")
        if tail:
            self.writer.write(tail)
        await self._drain(deadline - self.loop.time())

    async def _send(self, event: Any) -> None:
        data = self.h11.send(event)
        if data:
            self.writer.write(data)
            await self._drain(self.limits.body)

    async def _drain(self, seconds: float) -> None:
        if seconds <= 0:
            raise WriteTimeoutError
        try:
            async with asyncio.timeout(seconds):
                await self.writer.drain()
        except TimeoutError:
            raise WriteTimeoutError from None

    async def _refuse(self, status: int, message: str) -> None:
        """Best effort: answer `status` when the protocol still allows an answer, then the caller closes."""
        if self.h11.our_state not in (h11.IDLE, h11.SEND_RESPONSE):
            return
        body = orjson.dumps({"error": message, "code": status})
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close")]
        try:
            self.writer.write(b"".join(self.h11.send(event) or b"" for event in (
                h11.Response(status_code=status, headers=headers), h11.Data(data=body), h11.EndOfMessage())))
            await self._drain(1.0)
        except (WriteTimeoutError, OSError, ssl.SSLError, h11.LocalProtocolError):
            pass

    def _close(self, *, graceful: bool) -> None:
        """A connection that ended cleanly says goodbye (TLS close_notify); one that stalled or broke is cut
        at once, so it holds nothing while its peer takes its time."""
        transport = self.writer.transport
        if graceful:
            transport.close()
        else:
            transport.abort()


def pieces(chunks: Iterable[bytes], size: int) -> Iterator[bytes]:
    """The chunks' bytes in order, as pieces of about `size`: small chunks joined (the allocation families come
    per node, ~11 KB each), large ones cut."""
    pending: list[bytes] = []
    held = 0
    for chunk in chunks:
        if not chunk:
            continue
        if len(chunk) >= size:
            if pending:
                yield b"".join(pending)
                pending, held = [], 0
            for start in range(0, len(chunk), size):
                yield chunk[start:start + size]
            continue
        pending.append(chunk)
        held += len(chunk)
        if held >= size:
            yield b"".join(pending)
            pending, held = [], 0
    if pending:
        yield b"".join(pending)


def _head_size(head: h11.Request) -> int:
    """The request line and headers as sent, give or take whitespace."""
    return (len(head.method) + len(head.target) + 11
            + sum(len(name) + len(value) + 4 for name, value in head.headers) + 2)


def _declared_length(headers: Any) -> int | None:
    for name, value in headers:
        if name == b"content-length":
            return int(value)  # h11 has checked it is one non-negative integer
    return None
