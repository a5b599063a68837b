"""Large answers (a /metrics of 5,000 nodes is ~57 MB in ~10,000 chunks): the connection writes them piece by piece,
never joined whole, within one deadline for the whole answer. A real asyncio server serving `Connection`, a real
socket client: nothing replaced."""

from __future__ import annotations

import asyncio
import re
import socket
from typing import Any

import pytest

from vgpuctl.webhook.connection import SEND_BUFFER, Connection, Limits, pieces
from vgpuctl.webhook.wsgi_call import Answer, Request


@pytest.mark.parametrize("sizes", [
    [], [0], [5], [SEND_BUFFER], [SEND_BUFFER + 1], [3 * SEND_BUFFER + 7],
    [10] * 1000, [SEND_BUFFER - 1, 2, SEND_BUFFER * 2, 1, 1], [11_000] * 300,
])
def test_pieces_keep_every_byte_in_order_and_stay_bounded(sizes: list[int]) -> None:
    chunks = [bytes([i % 251]) * n for i, n in enumerate(sizes)]
    out = list(pieces(chunks, SEND_BUFFER))
    assert b"".join(out) == b"".join(chunks)
    assert all(0 < len(p) < 2 * SEND_BUFFER for p in out)
    if sum(sizes) >= SEND_BUFFER:
        assert len(out) >= sum(sizes) // (2 * SEND_BUFFER)  # not one piece of everything


def serve(answer: Answer, limits: Limits, drops: list[str]) -> tuple[int, Any, asyncio.AbstractEventLoop]:
    """A server on a loop in a thread answering every request with `answer`: (port, server, loop)."""
    import threading

    loop = asyncio.new_event_loop()
    ready = threading.Event()
    box: dict[str, Any] = {}

    async def call(_request: Request) -> Answer:
        return answer

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connection = Connection(reader, writer, call, limits, lambda: False, lambda reason, _d: drops.append(reason))
        connection.phase = "head"
        await connection.run()

    async def start() -> None:
        box["server"] = await asyncio.start_server(handle, "127.0.0.1", 0)
        ready.set()

    threading.Thread(target=lambda: (loop.run_until_complete(start()), loop.run_forever()), daemon=True).start()
    ready.wait(10)
    server = box["server"]
    return server.sockets[0].getsockname()[1], server, loop


def stop(server: Any, loop: asyncio.AbstractEventLoop) -> None:
    loop.call_soon_threadsafe(server.close)
    loop.call_soon_threadsafe(loop.stop)


def test_a_large_answer_in_many_chunks_arrives_whole_with_its_length() -> None:
    chunks = tuple(f"family{{node=\"n{i}\"}} {i}\n".encode() * 400 for i in range(2000))  # ~12 MB, 2,000 chunks
    answer = Answer(200, b"OK", ((b"content-type", b"text/plain"),), chunks)
    drops: list[str] = []
    port, server, loop = serve(answer, Limits(body=30.0), drops)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
            client.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            received = bytearray()
            while data := client.recv(1 << 20):
                received += data
    finally:
        stop(server, loop)
    head, _, body = bytes(received).partition(b"\r\n\r\n")
    length = re.search(rb"(?i)content-length: *(\d+)", head)
    assert head.startswith(b"HTTP/1.1 200") and length is not None
    assert int(length.group(1)) == len(body) == answer.length
    assert body == b"".join(chunks) and drops == []


def test_a_client_that_reads_slowly_is_dropped_at_the_answer_deadline() -> None:
    """One deadline for the whole answer, not one per piece: a client reading a little at a time (at most 256 KiB
    every 10 ms: each 1 MiB piece well in time, the whole 128 MiB in 5 s or more) cannot hold the connection past
    it."""
    import time

    answer = Answer(200, b"OK", (), (b"x" * 65536,) * 2048)  # 128 MiB, one chunk object repeated
    drops: list[str] = []
    port, server, loop = serve(answer, Limits(body=2.0), drops)
    received = 0
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as client:
            client.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
            client.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
            deadline = time.monotonic() + 20
            while not drops and time.monotonic() < deadline:
                data = client.recv(1 << 18)
                if not data:
                    break
                received += len(data)
                time.sleep(0.01)
    finally:
        stop(server, loop)
    assert drops == ["write-timeout"]
    assert received < answer.length * 3 // 4  # dropped at the deadline, not once the last piece was handed over
