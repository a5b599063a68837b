"""Reading a request's body from the WSGI environ within the size limit, and the JSON answers.

No body produces a 5xx: one over the limit is a 413 (`app.create_app` sets the limit), and a refused body
of moderate size is still read and dropped so the client receives the answer."""

from __future__ import annotations

from typing import Any

import orjson
from flask import Response
from werkzeug.sansio.utils import get_content_length

JSON = "application/json"
DRAIN_FACTOR = 4  # a refused body up to 4 × the limit is still read (and dropped) so the client sees the 413


def json_response(body: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(body), status=status, content_type=JSON)  # no charset to add for JSON


def error_response(status: int, message: str) -> Response:
    return json_response({"error": message, "code": status}, status)


def content_length(environ: dict[str, Any]) -> int | None:
    """The body's declared length; None for a chunked body. Plain digits (what every client sends) are
    read directly; anything else goes to werkzeug's own parser (`request.content_length` would build the
    whole header view first)."""
    text = environ.get("CONTENT_LENGTH")
    if text and text.isdigit() and text.isascii() and "HTTP_TRANSFER_ENCODING" not in environ:
        return int(text)
    return get_content_length(text, environ.get("HTTP_TRANSFER_ENCODING"))


def discard_body(environ: dict[str, Any], length: int, cap: int) -> None:
    """Read and drop a refused body of moderate size, so the client (which is still sending it) receives
    the 413 instead of a reset connection. Beyond `cap` we answer without reading; the server then closes."""
    stream = environ.get("wsgi.input")
    if stream is None or length > cap:
        return
    left = length
    while left > 0:
        chunk = stream.read(min(65536, left))
        if not chunk:
            return
        left -= len(chunk)


def read_body(environ: dict[str, Any], length: int | None, limit: int) -> bytes | None:
    """The body, or None when it is longer than `limit` (read at most `limit + 1` bytes to find out)."""
    if length is not None:
        if length > limit:
            return None
        stream = environ.get("wsgi.input")
        # The server bounds wsgi.input by Content-Length; reading it directly skips werkzeug's wrappers.
        return stream.read(length) if stream is not None and length else b""
    # Chunked: werkzeug's own limit silently truncates such bodies, so read the raw stream ourselves.
    stream = environ.get("wsgi.input")
    if stream is None or not environ.get("wsgi.input_terminated"):
        return b""
    chunks: list[bytes] = []
    size = 0
    while size <= limit:
        chunk = stream.read(min(65536, limit + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return None if size > limit else b"".join(chunks)
