"""List-then-watch of DeviceClasses, ResourceClaims and ResourceClaimTemplates, for the cluster-aware webhook.

The DRA group is served as resource.k8s.io/v1 from Kubernetes 1.34, v1beta2 (1.33) and v1beta1 (1.32) before
(`reader.dra_version`). One thread asks which the server has, then runs a `ClusterWatch` of the three kinds at
that version (one paginated list and one watch each, cluster-wide). A server without the group (or none of
those versions) is asked again every `recheck` seconds: an upgrade of the control plane then turns the watch
on without a restart of the webhook. A failed discovery (403, network) is reported to the sink and retried
with backoff, as the node and pod watches are.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any, Protocol

from kubernetes.client import ApiClient

from vgpuctl.kube.reader import DRA_GROUP, DRA_KINDS, DRA_VERSIONS, RawClient, dra_version
from vgpuctl.kube.watch import ClusterWatch, WatchedResource, WatchOptions, WatchSink, failure_reason

log = logging.getLogger("vgpuctl.webhook.watch")

#: (the sink's kind, the item kind) of what is watched: the DRA kinds the reader collects but ResourceSlices, which
#: no admission rule reads.
WATCHED = tuple((plural, kind) for plural, kind, _ in DRA_KINDS if plural != "resourceslices")


class DraSink(WatchSink, Protocol):
    def served(self, version: str) -> None:
        """The server has resource.k8s.io at `version`; the watch of it starts."""

    def unavailable(self, reason: str) -> None:
        """The server has no version of resource.k8s.io vgpuctl reads: nothing to watch (asked again later)."""


def watched_resources(version: str) -> tuple[WatchedResource, ...]:
    api_version = f"{DRA_GROUP}/{version}"
    return tuple(WatchedResource(kind, f"/apis/{api_version}/{kind}", api_version, item)
                 for kind, item in WATCHED)


class DraWatch:
    """Discovers the served DRA version, then keeps `sink` current from a `ClusterWatch` of it."""

    def __init__(self, client_factory: Callable[[], ApiClient], sink: DraSink, *,
                 options: WatchOptions | None = None, recheck: float = 300.0) -> None:
        self._client_factory = client_factory
        self._sink = sink
        self.options = options or WatchOptions()
        self._recheck = recheck
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self.watch: ClusterWatch | None = None

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, daemon=True, name="vgpuctl-watch-dra")
            self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        with self._lock:
            watch = self.watch
        if watch is not None:
            watch.stop(timeout)
        if self._thread is not None:
            self._thread.join(timeout)

    def _discover(self) -> str | None:
        api = self._client_factory()
        try:
            return dra_version(RawClient(api, (self.options.connect_timeout, self.options.list_timeout)))
        finally:
            api.close()  # type: ignore[no-untyped-call]  # kubernetes is untyped

    def _run(self) -> None:
        delay = self.options.backoff_initial
        while not self._stop.is_set():
            try:
                version = self._discover()
            except Exception as exc:  # never let the thread die: report, back off, ask again
                if self._stop.is_set():
                    return
                self._sink.broken("discovery", failure_reason(exc))
                self._stop.wait(delay)
                delay = min(delay * 2, self.options.backoff_max)
                continue
            self._sink.connected("discovery")
            if version is None:
                self._sink.unavailable(f"the API server serves {DRA_GROUP} in none of {', '.join(DRA_VERSIONS)}")
                self._stop.wait(self._recheck)
                continue
            self._sink.served(version)
            watch = ClusterWatch(self._client_factory, self._sink, options=self.options,
                                 resources=watched_resources(version))
            with self._lock:
                if self._stop.is_set():
                    return
                self.watch = watch
            watch.start()
            return


def dra_watch_factory(client_factory: Callable[[], ApiClient], *,
                      options: WatchOptions | None = None) -> Callable[[Any], DraWatch]:
    """What `webhook serve --cluster-aware` passes: a DRA watch for the app's sink."""
    return lambda sink: DraWatch(client_factory, sink, options=options)
