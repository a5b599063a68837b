"""Failures of the live adapter that callers handle, and the one wording of a request that got no answer.

Importing this module imports neither `kubernetes` nor `urllib3` (the CLI loads it at start-up): the
formatter imports urllib3 when it has a failure to describe.
"""

from __future__ import annotations

Timeout = float | tuple[float, float]


class ClusterUnreachable(Exception):  # noqa: N818 - the name says what happened; callers catch it by name
    """The cluster cannot be used at all (no config, connection failure, 401): exit 3 with this one line."""


def not_kubernetes_api(host: str, status: int) -> str:
    """What to say of a server that answers, but not as a Kubernetes API server does: every API server lists
    `/api/v1/nodes` (403 at worst), so a 404 there means the kubeconfig's URL points elsewhere (a wrong port or
    path, a proxy, another service). The reader and the writer both end with this line (exit 3)."""
    return (f"{host} does not serve the Kubernetes API (GET /api/v1/nodes: HTTP {status}); check the server URL "
            "of the kubeconfig context")


def one_line(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _seconds(value: float) -> str:
    return f"{value:g}s"


def timed_out(host: str, timeout: Timeout, elapsed: float | None) -> str:
    """Which timeout ended a request that got no answer, said as what happened.

    urllib3 calls every timeout after the TCP connection "Read timed out", but a `(connect, read)` pair
    does not apply the read timeout throughout: the TLS handshake runs under the connect timeout. A
    server that accepts connections and never answers the handshake therefore fails after the connect
    timeout (5 s), not the read timeout (30 s). The elapsed time tells the two apart: the one it is nearer."""
    if not isinstance(timeout, tuple):  # only the read timeout is known (the webhook's watch passes that)
        return f"no answer from {host} within {_seconds(timeout)} (read timeout)"
    connect, read = timeout
    if elapsed is not None and abs(elapsed - connect) < abs(elapsed - read):  # the nearer one ended it
        return f"no answer from {host} within {_seconds(connect)} (connect timeout: the TLS handshake never completed)"
    return f"no answer from {host} within {_seconds(read)} (read timeout)"


def transport_message(exc: BaseException, host: str, timeout: Timeout, elapsed: float | None = None) -> str:
    """What happened to a request that got no HTTP answer, naming the server: refused, unresolvable, timed
    out (with the timeout that applied, see `timed_out`), a TLS failure; never urllib3's pool internals.

    `exc` is what the kubernetes client raised: a urllib3 error (usually `MaxRetryError` wrapping the
    cause in `reason`), an `OSError`, or the client's `ApiException` with status 0 for a TLS failure."""
    import urllib3

    inner = getattr(exc, "reason", None)
    reason: BaseException = inner if isinstance(inner, BaseException) else exc
    if isinstance(reason, urllib3.exceptions.ReadTimeoutError):
        return timed_out(host, timeout, elapsed)
    if isinstance(reason, urllib3.exceptions.NameResolutionError):
        return f"cannot resolve the host of {host}"
    if isinstance(reason, urllib3.exceptions.NewConnectionError):  # a subclass of ConnectTimeoutError
        if "refused" in str(reason).lower():
            return f"cannot connect to {host}: connection refused"
        return f"cannot connect to {host}: {one_line(str(reason).split(': ', 1)[-1], 160)}"
    if isinstance(reason, urllib3.exceptions.ConnectTimeoutError):
        connect = timeout[0] if isinstance(timeout, tuple) else timeout
        return f"timed out connecting to {host} (connect timeout {_seconds(connect)})"
    if isinstance(reason, urllib3.exceptions.SSLError):
        return f"TLS error talking to {host}: {one_line(str(reason), 160)}"
    if getattr(exc, "status", None) == 0 and isinstance(getattr(exc, "reason", None), str):
        return f"TLS error talking to {host}: {one_line(str(getattr(exc, 'reason', '')), 160)}"  # ApiException
    return f"request to {host} failed: {type(reason).__name__}: {one_line(str(reason), 160)}"
