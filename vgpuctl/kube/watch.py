"""List-then-watch of nodes and bound pods, for the cluster-aware webhook: raw JSON through the client.

The pattern is client-go's reflector: a paginated list gives the current objects and a resourceVersion;
a watch from that version streams every change after it (newline-delimited JSON events over a chunked
response). The stream ends when the server's `timeoutSeconds` is up (reconnect from the last version
seen; bookmarks keep it fresh), breaks on network errors (reconnect with exponential backoff, same
version), or says 410 Gone — the version is older than the server's watch cache — and then only a fresh
list can resynchronise.

As in `reader.py`, nothing goes through the client's models (slow, and they reject partial objects); the
kubernetes client still makes every request, so kubeconfig and in-cluster auth work unchanged. One
thread per resource, started in the process that serves (after gunicorn's fork).

Bound pods are selected by the server: `spec.nodeName!=` (bound) and not Succeeded/Failed, the pods
Volcano counts usage of. A pod that finishes leaves the selection, which the server reports as DELETED.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import orjson
import urllib3
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from vgpuctl.kube.errors import transport_message
from vgpuctl.kube.reader import RawClient, ReadError, status_message

log = logging.getLogger("vgpuctl.webhook.watch")

EVENTS = ("ADDED", "MODIFIED", "DELETED")


class WatchSink(Protocol):
    """Where the watch delivers what it learns (implemented by the webhook's cluster state)."""

    def keep(self, kind: str, obj: dict[str, Any]) -> dict[str, Any] | None:
        """What to keep of one listed object (None: nothing). Applied page by page, so a list of 40,000
        pods never sits in memory whole."""

    def replace(self, kind: str, items: list[dict[str, Any]]) -> None:
        """A complete, fresh list of `kind` ("nodes" or "pods"), each item as `keep` returned it."""

    def apply(self, kind: str, event: str, obj: dict[str, Any]) -> None:
        """One watch event: ADDED, MODIFIED or DELETED."""

    def connected(self, kind: str) -> None:
        """A watch of `kind` is streaming again (after the first list, or after a break)."""

    def broken(self, kind: str, reason: str) -> None:
        """Listing or watching `kind` failed; the watch retries by itself."""


@dataclass(frozen=True)
class WatchedResource:
    kind: str  # the sink's name for it
    path: str
    api_version: str
    item_kind: str
    field_selector: str = ""


NODES = WatchedResource("nodes", "/api/v1/nodes", "v1", "Node")
BOUND_PODS = WatchedResource("pods", "/api/v1/pods", "v1", "Pod",
                             "spec.nodeName!=,status.phase!=Succeeded,status.phase!=Failed")


class Gone(Exception):  # noqa: N818 - named after the HTTP status
    """410: the resourceVersion is too old for the server's watch cache; list again."""


@dataclass(frozen=True)
class WatchOptions:
    page_size: int = 500
    watch_timeout: int = 300  # the server ends each watch after this many seconds (timeoutSeconds)
    connect_timeout: float = 5.0
    list_timeout: float = 60.0  # read timeout of one list page
    backoff_initial: float = 0.5
    backoff_max: float = 30.0


class ClusterWatch:
    """Keeps a `WatchSink` current with the cluster's nodes and bound pods, from background threads."""

    def __init__(self, client_factory: Callable[[], ApiClient], sink: WatchSink, *,
                 options: WatchOptions | None = None,
                 resources: tuple[WatchedResource, ...] = (NODES, BOUND_PODS)) -> None:
        self._client_factory = client_factory
        self._sink = sink
        self.options = options or WatchOptions()
        self.resources = resources
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._api: ApiClient | None = None
        self._threads: list[threading.Thread] = []
        self._responses: dict[str, Any] = {}  # kind → the open watch response (closed by `stop`)

    def start(self) -> None:
        with self._lock:
            if self._threads:
                return
            for resource in self.resources:
                thread = threading.Thread(target=self._run, args=(resource,), daemon=True,
                                          name=f"vgpuctl-watch-{resource.kind}")
                self._threads.append(thread)
                thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._lock:
            responses = list(self._responses.values())
        for response in responses:
            _abort(response)
        for thread in self._threads:
            thread.join(timeout)
        if self._api is not None:
            self._api.close()  # type: ignore[no-untyped-call]

    # ---- one resource -----------------------------------------------------------------------------
    def _client(self) -> RawClient:
        with self._lock:
            if self._api is None:
                self._api = self._client_factory()
            api = self._api
        return RawClient(api, (self.options.connect_timeout, self.options.list_timeout))

    def _run(self, resource: WatchedResource) -> None:
        version: str | None = None
        delay = self.options.backoff_initial
        while not self._stop.is_set():
            try:
                client = self._client()
                if version is None:
                    items, version = self._list(client, resource)
                    self._sink.replace(resource.kind, items)
                events = 0
                for seen in self._watch(client, resource, version):
                    version = seen  # a reconnect after a break resumes from here
                    events += 1
                    delay = self.options.backoff_initial  # events flow: a later break starts backing off anew
                if not events:  # ended with nothing: a server closing early must not make us spin
                    self._stop.wait(delay)
                    delay = min(delay * 2, self.options.backoff_max)
            except Gone:
                log.info("watch of %s: resourceVersion %s is gone (410); listing again", resource.kind, version)
                version = None
                self._stop.wait(self.options.backoff_initial)  # never a hot loop, even if every list is 410
                continue
            except Exception as exc:  # a watch thread must never die: report, back off, retry
                if self._stop.is_set():
                    return
                reason = failure_reason(exc)
                log.debug("watch of %s failed: %s", resource.kind, reason, exc_info=not isinstance(exc, ReadError))
                self._sink.broken(resource.kind, reason)
                self._stop.wait(delay)
                delay = min(delay * 2, self.options.backoff_max)

    def _list(self, client: RawClient, resource: WatchedResource) -> tuple[list[dict[str, Any]], str]:
        """Every object, page by page (smaller pages when objects are big: `RawClient.pages`), and the list's
        resourceVersion (where the watch starts)."""
        items: list[dict[str, Any]] = []
        query: list[tuple[str, Any]] = [("fieldSelector", resource.field_selector)] if resource.field_selector else []
        pages = client.pages(resource.path, query, self.options.page_size)
        while True:
            try:
                page = next(pages, None)
            except ReadError as exc:
                if exc.status == 410:  # the continue token expired: start the list over
                    raise Gone from None
                raise
            if page is None:
                raise ReadError(f"{client.host}{resource.path}: the list ended without a resourceVersion")
            raw = page.get("items")
            if not isinstance(raw, list):
                raise ReadError(f"unexpected answer from {client.host}{resource.path}: no items list")
            for item in raw:
                if isinstance(item, dict):
                    kept = self._sink.keep(resource.kind, {"apiVersion": resource.api_version,
                                                           "kind": resource.item_kind, **item})
                    if kept is not None:
                        items.append(kept)
            metadata = _mapping(page.get("metadata"))
            if not metadata.get("continue"):
                version = metadata.get("resourceVersion")
                if not isinstance(version, str) or not version:
                    raise ReadError(f"{client.host}{resource.path}: the list has no resourceVersion")
                return items, version

    def _watch(self, client: RawClient, resource: WatchedResource, version: str) -> Iterator[str]:
        """Stream events from `version`; yields the newest version seen after each event."""
        query: list[tuple[str, Any]] = [("watch", "true"), ("resourceVersion", version),
                                        ("allowWatchBookmarks", "true"),
                                        ("timeoutSeconds", self.options.watch_timeout)]
        if resource.field_selector:
            query.append(("fieldSelector", resource.field_selector))
        request = client.api.param_serialize(
            method="GET", resource_path=resource.path, query_params=query,
            header_params={"Accept": "application/json"}, auth_settings=["BearerToken"])
        # The read timeout outlasts the server's own timeout: silence longer than that is a dead connection.
        timeout = (self.options.connect_timeout, self.options.watch_timeout + 30.0)
        try:
            answer = client.api.call_api(*request, _request_timeout=timeout)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            raise ReadError(transport_message(exc, client.host, timeout[1]), transport=True) from None
        except ApiException as exc:
            raise ReadError(f"TLS error talking to {client.host}: {exc.reason}", transport=True) from None
        response = answer.response
        drained = False  # the whole body was read: the connection may go back to the pool
        try:
            if answer.status == 410:
                response.read()
                drained = True
                raise Gone
            if not 200 <= answer.status <= 299:
                body = response.read()
                drained = True
                raise ReadError(status_message(answer.status, answer.reason or "", body), status=answer.status)
            with self._lock:
                self._responses[resource.kind] = response
            if self._stop.is_set():
                return
            self._sink.connected(resource.kind)
            for line in _lines(response):
                event = orjson.loads(line)
                kind = event.get("type") if isinstance(event, dict) else None
                obj = event.get("object") if isinstance(event, dict) else None
                if not isinstance(obj, dict):
                    raise ReadError(f"watch of {resource.kind}: an event without an object")
                if kind == "ERROR":
                    if obj.get("code") == 410:
                        raise Gone
                    raise ReadError(f"watch of {resource.kind}: {obj.get('message') or obj}")
                seen = _mapping(obj.get("metadata")).get("resourceVersion")
                if kind in EVENTS:
                    self._sink.apply(resource.kind, kind, obj)
                elif kind != "BOOKMARK":
                    continue
                if isinstance(seen, str) and seen:
                    version = seen
                    yield version
            drained = True  # the server ended the stream
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            if self._stop.is_set():
                return
            raise ReadError(transport_message(exc, client.host, timeout[1]), transport=True) from None
        finally:
            with self._lock:
                self._responses.pop(resource.kind, None)
            if drained:
                response.release_conn()
            else:  # left mid-stream (an error, a bad event, stop): the connection holds an unread body
                _abort(response)


MAX_EVENT_BYTES = 16 * 1024 * 1024  # one watch event; an object is at most ~1.5 MiB in etcd


def _lines(response: Any) -> Iterator[bytes]:
    """Complete lines of a streamed body, as they arrive (a chunk may hold part of one or several)."""
    chunks = response.read_chunked(None, decode_content=True) if response.chunked else iter(
        lambda: response.read1(65536), b"")
    buffer = b""
    for chunk in chunks:
        buffer += chunk
        *complete, buffer = buffer.split(b"\n")
        if len(buffer) > MAX_EVENT_BYTES:
            raise ReadError(f"a watch event over {MAX_EVENT_BYTES >> 20} MiB")
        for line in complete:
            if line.strip():
                yield line
    if buffer.strip():
        yield buffer


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _abort(response: Any) -> None:
    """Unblock a thread reading `response`: shut the socket for reading, then close it."""
    for step in (response.shutdown, response.close):
        try:
            step()
        except Exception:  # already closed or released: nothing left to unblock
            continue


def failure_reason(exc: BaseException) -> str:
    if isinstance(exc, ReadError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"[:300]
