"""Calling the Flask app (WSGI) with a request the connection has already read in full.

The worker (`worker`) reads a request's head and body on its event loop, under deadlines, and only then
hands it to a thread: the thread running the app never waits on the network, so a client that stalls
costs no thread. This module is that hand-off: the WSGI environ (PEP 3333) from the parsed request, and
the app's answer collected into one value the event loop writes back.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote_to_bytes, urlsplit

# Hop-by-hop headers: the connection (h11) frames the answer and decides keep-alive itself.
_FRAMING = frozenset({b"connection", b"content-length", b"keep-alive", b"transfer-encoding"})


@dataclass(frozen=True)
class Request:
    method: str
    target: bytes
    http_version: str  # "1.1"
    headers: tuple[tuple[bytes, bytes], ...]  # names lower-case, as h11 gives them
    body: bytes
    client: tuple[str, int] | None
    server: tuple[str, int]
    # The body's length when it was not kept (over the app's limit): the app answers 413 from it.
    declared_length: int | None = None
    listener: str = ""  # which listener it came on ("admission", "metrics"): environ LISTENER_KEY


@dataclass(frozen=True)
class Answer:
    status: int
    reason: bytes
    headers: tuple[tuple[bytes, bytes], ...]  # without framing headers
    chunks: tuple[bytes, ...]  # the body as the app gave it: a 57 MB /metrics is never joined into one copy

    @property
    def body(self) -> bytes:
        return b"".join(self.chunks)

    @property
    def length(self) -> int:
        return sum(len(chunk) for chunk in self.chunks)


LISTENER_KEY = "vgpuctl.listener"

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def environ_for(request: Request, *, multiprocess: bool) -> dict[str, Any]:
    target = request.target
    if not target.startswith(b"/"):  # absolute-form ("https://host/validate") or "*"
        target = urlsplit(target).path or b"/"
        target = target if isinstance(target, bytes) else target.encode("latin-1")
    path, _, query = target.partition(b"?")
    server_host, server_port = request.server[0], request.server[1]
    environ: dict[str, Any] = {
        "REQUEST_METHOD": request.method,
        "SCRIPT_NAME": "",
        "PATH_INFO": unquote_to_bytes(path).decode("latin-1"),
        "QUERY_STRING": query.decode("latin-1"),
        "SERVER_NAME": server_host,
        "SERVER_PORT": str(server_port),
        "SERVER_PROTOCOL": f"HTTP/{request.http_version}",
        "wsgi.version": (1, 0),
        "wsgi.url_scheme": "https",
        "wsgi.input": io.BytesIO(request.body),
        "wsgi.input_terminated": True,
        "wsgi.errors": sys.stderr,
        "wsgi.multithread": True,
        "wsgi.multiprocess": multiprocess,
        "wsgi.run_once": False,
    }
    if request.listener:
        environ[LISTENER_KEY] = request.listener
    if request.client is not None:
        environ["REMOTE_ADDR"], environ["REMOTE_PORT"] = request.client[0], str(request.client[1])
    for raw_name, raw_value in request.headers:
        if b"_" in raw_name:
            # "content_length" and "content-length" would both become CONTENT_LENGTH: drop the ambiguous
            # spelling, as gunicorn does by default (header_map "drop").
            continue
        name = raw_name.decode("latin-1").upper().replace("-", "_")
        value = raw_value.decode("latin-1")
        if name == "TRANSFER_ENCODING":
            continue  # the body is de-chunked already; CONTENT_LENGTH below says how long it is
        if name not in ("CONTENT_TYPE", "CONTENT_LENGTH"):
            name = "HTTP_" + name
        environ[name] = f"{environ[name]},{value}" if name in environ else value
    environ["CONTENT_LENGTH"] = str(request.declared_length if request.declared_length is not None
                                    else len(request.body))
    return environ


def call_app(app: WsgiApp, request: Request, *, multiprocess: bool = False) -> Answer:
    """Run the app on `request` (in a worker thread) and collect its whole answer."""
    started: list[Any] = []
    chunks: list[bytes] = []  # what the app writes (the rare `write` callable) and what it returns, in order

    def start_response(status: str, headers: list[tuple[str, str]], exc_info: Any = None) -> Callable[[bytes], None]:
        if exc_info is not None and started:
            raise exc_info[1].with_traceback(exc_info[2])
        started[:] = [status, headers]
        return chunks.append

    result = app(environ_for(request, multiprocess=multiprocess), start_response)
    try:
        for chunk in result:
            chunks.append(chunk)
    finally:
        close = getattr(result, "close", None)
        if close is not None:
            close()
    if not started:
        raise RuntimeError("the WSGI app returned without calling start_response")
    status_text, headers = started
    code, _, reason = status_text.partition(" ")
    kept = tuple((name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers
                 if name.lower().encode("latin-1") not in _FRAMING)
    return Answer(int(code), reason.encode("latin-1"), kept, tuple(chunk for chunk in chunks if chunk))
