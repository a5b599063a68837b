"""A local Kubernetes API server that serves list *and watch* for nodes and pods, for the real client.

Built on `tests.kube.conftest.FakeCluster` (pytest-httpserver, threaded). Each `WatchableList` keeps
objects and a history of events under one growing resourceVersion, like etcd: a list answers the current
objects (paginated, items without apiVersion/kind, as kube-apiserver does) and the version to watch
from; `?watch=true&resourceVersion=N` streams every later event as newline-delimited JSON over a chunked
response, then waits for more, sending a BOOKMARK when idle. `expire()` makes the versions seen so far
too old (410 Gone, as an ERROR event in the open streams, or as the HTTP status of the next watch);
`disconnect()` ends the open streams; `fail_watches` answers watches with an error status.
"""

from __future__ import annotations

import copy
import itertools
import threading
import time
from collections.abc import Iterator
from typing import Any

import orjson
from werkzeug import Request, Response

from tests.kube.conftest import FakeCluster, status_body

IDLE_BOOKMARK = 0.3  # seconds between bookmarks on an idle stream (also how a closed client is noticed)


class WatchableList:
    def __init__(self, api: FakeApi, path: str, api_version: str, kind: str) -> None:
        self.api = api
        self.path = path
        self.api_version = api_version
        self.kind = kind
        self.objects: dict[str, dict[str, Any]] = {}
        self.history: list[tuple[int, str, dict[str, Any]]] = []
        self.gone_before = 0  # a watch from a version below this is 410 Gone
        self.gone_as_status = False  # answer such a watch with HTTP 410 instead of an ERROR event
        self.fail_watches: int | None = None  # HTTP status every watch gets (None: serve them)
        self.list_gate = threading.Event()  # lists wait while it is clear
        self.list_gate.set()
        self.lists: list[Request] = []
        self.watches: list[Request] = []
        self._cut = 0  # streams opened before the last `disconnect()` end
        api.cluster.route(path, self.handle)

    # ---- what tests do ---------------------------------------------------------------------------
    def put(self, obj: dict[str, Any], *, silent: bool = False) -> None:
        """Create or replace an object; `silent`: no event (only a new list shows it)."""
        self._change("MODIFIED" if self._key(obj) in self.objects else "ADDED", obj, silent)

    def delete(self, obj: dict[str, Any]) -> None:
        self._change("DELETED", obj, False)

    def expire(self, *, disconnect: bool = False) -> None:
        """Compact: every version seen so far is gone. Open streams get an ERROR 410 event, or with
        `disconnect` just end (so the reconnect meets the 410)."""
        with self.api.cond:
            self.gone_before = self.api.next_version()
            if disconnect:
                self._cut += 1
            self.api.cond.notify_all()

    def disconnect(self) -> None:
        with self.api.cond:
            self._cut += 1
            self.api.cond.notify_all()

    # ---- serving ---------------------------------------------------------------------------------
    @staticmethod
    def _key(obj: dict[str, Any]) -> str:
        meta = obj["metadata"]
        return f"{meta.get('namespace', '')}/{meta['name']}"

    def _change(self, event: str, obj: dict[str, Any], silent: bool) -> None:
        with self.api.cond:
            version = self.api.next_version()
            stored = copy.deepcopy(obj)
            stored["metadata"]["resourceVersion"] = str(version)
            if event == "DELETED":
                self.objects.pop(self._key(obj), None)
            else:
                self.objects[self._key(obj)] = stored
            if not silent:
                self.history.append((version, event, stored))
            self.api.cond.notify_all()

    def handle(self, request: Request) -> Response:
        if request.args.get("watch") in ("true", "1"):
            return self._watch(request)
        return self._list(request)

    def _list(self, request: Request) -> Response:
        self.lists.append(request)
        self.list_gate.wait(30)
        with self.api.cond:
            items = [self.objects[k] for k in sorted(self.objects)]
            version = self.api.version
        limit = int(request.args.get("limit") or 0) or len(items) or 1
        token = request.args.get("continue", "")
        start = int(token.split("-")[1]) if token else 0
        if token:
            version = int(token.split("-")[2])  # a paginated list is one snapshot
        end = start + limit
        metadata: dict[str, Any] = {"resourceVersion": str(version)}
        if end < len(items):
            metadata |= {"continue": f"page-{end}-{version}", "remainingItemCount": len(items) - end}
        body = {"kind": f"{self.kind}List", "apiVersion": self.api_version, "metadata": metadata,
                "items": [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")} for o in items[start:end]]}
        return Response(orjson.dumps(body), content_type="application/json")

    def _event(self, event: str, obj: dict[str, Any]) -> bytes:
        return orjson.dumps({"type": event, "object": {"apiVersion": self.api_version, "kind": self.kind, **obj}}) \
            + b"\n"

    def _watch(self, request: Request) -> Response:
        self.watches.append(request)
        if self.fail_watches is not None:
            code = self.fail_watches
            return Response(status_body(code, "InternalError", "etcd is having a bad day"), status=code,
                            content_type="application/json")
        since = int(request.args["resourceVersion"])
        timeout = float(request.args.get("timeoutSeconds") or 300)
        if since < self.gone_before and self.gone_as_status:
            return Response(status_body(410, "Expired", f"too old resource version: {since}"), status=410,
                            content_type="application/json")
        return Response(self._stream(since, timeout), content_type="application/json")

    def _stream(self, since: int, timeout: float) -> Iterator[bytes]:
        gone = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Expired", "code": 410,
                "message": f"too old resource version: {since}"}
        cut = self._cut
        sent = since
        deadline = time.monotonic() + timeout
        idle_since = time.monotonic()
        while time.monotonic() < deadline and not self.api.closed:
            with self.api.cond:
                current = self.api.version
                if cut != self._cut:
                    return
                if sent < self.gone_before:
                    yield orjson.dumps({"type": "ERROR", "object": gone}) + b"\n"
                    return
                pending = [(v, e, o) for v, e, o in self.history if v > sent]
                if not pending:
                    self.api.cond.wait(0.05)
            if pending:
                for version, event, obj in pending:
                    yield self._event(event, obj)
                    sent = version
                idle_since = time.monotonic()
            elif time.monotonic() - idle_since > IDLE_BOOKMARK:
                yield self._event("BOOKMARK", {"metadata": {"resourceVersion": str(current)}})
                idle_since = time.monotonic()


class FakeApi:
    """Nodes and pods, listable and watchable, on one FakeCluster."""

    def __init__(self, cluster: FakeCluster) -> None:
        self.cluster = cluster
        self.cond = threading.Condition()
        self._versions = itertools.count(100)
        self.version = next(self._versions)
        self.closed = False
        self.nodes = WatchableList(self, "/api/v1/nodes", "v1", "Node")
        self.pods = WatchableList(self, "/api/v1/pods", "v1", "Pod")

    def next_version(self) -> int:
        self.version = next(self._versions)
        return self.version

    @property
    def url(self) -> str:
        return self.cluster.url

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()
        self.nodes.list_gate.set()
        self.pods.list_gate.set()
