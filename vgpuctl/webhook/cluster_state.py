"""Cluster-aware admission: the watched cluster, kept as an immutable view the request path reads lock-free.

A watch (started by whoever builds the app: `vgpuctl webhook serve` passes `vgpuctl.kube.watch`, tests a
watch on a local API server) delivers nodes and bound pods to `ClusterState`, which keeps them (slimmed
to what the model reads) and marks the nodes whose picture changed. A publisher thread turns changes
into a new `ClusterView` — re-deriving only the changed nodes, at most every `min_interval` seconds, and
every node when the device config changed — and publishes it, with the changed nodes' allocation
metrics (`alloc_metrics`), in one assignment. A request reads
`state.view` once and uses that value throughout: no lock, no half-updated picture.

Readiness: not ready until the first view is published (nodes and pods both listed): until then the
cluster-aware rules are skipped, never guessed. A watch that breaks later keeps the last view in use,
is logged once, and shows in /readyz as stale (since when, why) without failing readiness: the view is
still the best knowledge there is, and readiness flapping with the API server's health would take the
webhook out of service exactly when the cluster is already in trouble.
"""

from __future__ import annotations

import datetime as dt
import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from vgpuctl.core.clusterview import (
    ClusterView,
    NodePart,
    assemble,
    build_node_parts,
    pod_key,
    same_node_facts,
    simulation_env,
)
from vgpuctl.core.deviceconfig import DeviceConfig
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.podrules import review
from vgpuctl.core.slim import slim_node, slim_pod
from vgpuctl.core.versions import Version
from vgpuctl.core.why.anyfit import FitAnswer, Outcome, first_fit
from vgpuctl.core.why.request import parse_pod
from vgpuctl.webhook import heap
from vgpuctl.webhook.alloc_metrics import NodeText, allocation_of, exposition

log = logging.getLogger("vgpuctl.webhook")

KINDS = ("nodes", "pods")
# How many listed objects `keep` sees between two `heap.freeze_young` calls: a 500-item list page's objects
# are promoted to the oldest generation before they are dropped, and would set off a full collection of all
# that is kept every few pages (benchmarks/cluster_aware.py: 3.2 s of a 150,000-pod list, 0.1 s frozen).
FREEZE_EVERY = 1000
NO_ROOM_CODE = "VGX004"  # no node has room right now (a warning, never a denial)
NO_ROOM_HINT = ("free devices or lower the request; `vgpuctl why -f POD.yaml` shows every node's reason and what "
                "would make it fit")


class WatchHandle(Protocol):
    def start(self) -> None: ...

    def stop(self, timeout: float = ...) -> None: ...


WatchFactory = Callable[["ClusterState"], WatchHandle]


def _iso(timestamp: float | None) -> str | None:
    if timestamp is None:
        return None
    return dt.datetime.fromtimestamp(timestamp, dt.UTC).isoformat(timespec="seconds")


# A pod touching every family, with no filter annotations: reviewing it once fills the new facts' caches
# (every GPU's memory, the largest GPU count, card memories...) in the publisher thread. Otherwise the
# first request after each publish pays for them: 16-20 ms on a 5,000-node view.
_WARM_POD: dict[str, Any] = {
    "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "vgpuctl-warm-up", "namespace": "default"},
    "spec": {"schedulerName": "volcano", "containers": [
        {"name": "vgpu", "resources": {"limits": {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "1"}}},
        {"name": "gpushare", "resources": {"limits": {"volcano.sh/gpu-memory": "1"}}},
        {"name": "ascend", "resources": {"limits": {"huawei.com/Ascend310P": "1"}}},
        {"name": "npu", "resources": {"limits": {"huawei.com/npu-core": "1"}}},
    ]},
}


def warm(facts: ClusterFacts) -> None:
    """Fill `facts`' derived values the way a request would, before any request sees them."""
    review(_WARM_POD, facts, apply_defaults=False)


class _DroppedLog:
    """One line for the first pod whose annotations were too long, then at most one a minute with the count
    since: a flood of junk pods must not become a flood of log lines."""

    def __init__(self, clock: Callable[[], float]) -> None:
        self._clock = clock
        self._last: float | None = None
        self._since = 0

    def record(self, pod: str, what: str) -> None:
        now = self._clock()
        if self._last is not None and now - self._last < 60:
            self._since += 1
            return
        more = f" (and {self._since} more pods since the last such line)" if self._since else ""
        self._last, self._since = now, 0
        log.warning("cluster watch: pod %s: left out %s, longer than any allocation Volcano writes%s",
                    pod, what, more)


@dataclass(frozen=True)
class Published:
    view: ClusterView
    at: float  # wall-clock time of the publication
    config: DeviceConfig | None  # the device config the view was derived with
    allocation: Mapping[str, NodeText]  # node name → its allocation metrics, of this view (alloc_metrics)


class ClusterMetrics:
    def __init__(self, registry: CollectorRegistry) -> None:
        self.synced = Gauge("vgpuctl_webhook_cluster_synced", "1 once the first list of nodes and pods is in use.",
                            registry=registry)
        self.stale = Gauge("vgpuctl_webhook_cluster_stale", "1 while a watch is broken (the last view stays in use).",
                           registry=registry)
        self.nodes = Gauge("vgpuctl_webhook_cluster_nodes", "Nodes in the view in use.", registry=registry)
        self.pods = Gauge("vgpuctl_webhook_cluster_pods", "Bound device pods counted in the view in use.",
                          registry=registry)
        self.published = Gauge("vgpuctl_webhook_cluster_view_timestamp_seconds",
                               "When the view in use was built (Unix time).", registry=registry)
        self.build = Histogram("vgpuctl_webhook_cluster_view_build_seconds", "Time to derive and publish a view.",
                               buckets=(0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 2.5, 5, 10), registry=registry)
        self.watch_errors = Counter("vgpuctl_webhook_cluster_watch_errors", "List/watch failures, by resource.",
                                    ["resource"], registry=registry)
        self.dropped_values = Counter(
            "vgpuctl_webhook_cluster_dropped_annotations", "Annotation values of watched pods left out of the view: "
            "longer than any allocation Volcano writes (VGX002 in the doctor).", registry=registry)
        self.fits_now = Counter("vgpuctl_webhook_fits_now_checks", "Fits-now checks of pods at CREATE, by outcome "
                                "(fits, no-fit: warned, unknown: budget exhausted, no-device).", ["outcome"],
                                registry=registry)
        for kind in KINDS:
            self.watch_errors.labels(kind)
        # label children cached, as WebhookMetrics does: `labels()` validates and locks on every call
        self._fits_now = {outcome: self.fits_now.labels(outcome.value) for outcome in Outcome}

    def fits_now_done(self, outcome: Outcome) -> None:
        self._fits_now[outcome].inc()


class ClusterState:
    """The watch's sink (`keep`, `replace`, `apply`, `connected`, `broken`) and the published view."""

    def __init__(
        self,
        *,
        base_facts: Callable[[], ClusterFacts],
        device_config: Callable[[], DeviceConfig | None],
        volcano_version: Version | None = None,
        registry: CollectorRegistry | None = None,
        min_interval: float = 1.0,
        poll_interval: float = 2.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self._base_facts = base_facts
        self._device_config = device_config
        self._volcano_version = volcano_version
        self._min_interval = min_interval
        self._poll_interval = poll_interval
        self._clock = clock
        self.metrics = ClusterMetrics(registry or CollectorRegistry())
        self._drop_log = _DroppedLog(clock)
        self.published: Published | None = None  # read by requests; replaced, never mutated
        self._reset()

    def _reset(self) -> None:
        self.published = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._nodes: dict[str, dict[str, Any]] = {}
        self._pods: dict[str, dict[str, Any]] = {}  # ns/name → slim pod
        self._pods_by_node: dict[str, dict[str, dict[str, Any]]] = {}
        self._dirty: set[str] = set()
        self._listed: set[str] = set()
        self._errors: dict[str, tuple[str, float]] = {}  # kind → (reason, since)
        self._parts: dict[str, NodePart] = {}
        self._allocation: dict[str, NodeText] = {}
        self._publisher: threading.Thread | None = None
        self._watch: WatchHandle | None = None
        self._pid = os.getpid()
        self._build_error: str | None = None
        self._seen = 0  # objects `keep` was given

    # ---- lifecycle --------------------------------------------------------------------------------
    def start(self, watch_factory: WatchFactory | None) -> None:
        """Start the publisher and the watch, once per process: after a fork, threads do not carry
        over, so a child starts its own (with fresh state: the parent's may be mid-update)."""
        if self._pid != os.getpid():
            self._reset()
        if self._publisher is not None:
            return
        self._publisher = threading.Thread(target=self._publish_loop, daemon=True, name="vgpuctl-cluster-view")
        self._publisher.start()
        if watch_factory is not None:
            self._watch = watch_factory(self)
            self._watch.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._watch is not None:
            self._watch.stop(timeout)
        if self._publisher is not None:
            self._publisher.join(timeout)

    # ---- the watch's sink -------------------------------------------------------------------------
    def keep(self, kind: str, obj: dict[str, Any]) -> dict[str, Any] | None:
        """A listed object slimmed to what the model reads (`core.slim`: bounded per pod); None for a pod
        that cannot change any device's usage.

        An object kept already at the same resourceVersion (a re-list after 410 Gone, where nearly nothing
        changed) is that same kept object: the old copy is not pinned by the node parts built from it while a
        new one sits in the index (issue 26: PSS 1.36× after two re-lists), and `replace` sees it unchanged."""
        self._seen += 1
        if self._seen % FREEZE_EVERY == 0:
            heap.freeze_young()
        if kind == "nodes":
            meta = obj.get("metadata")
            name = meta.get("name") if isinstance(meta, dict) else None
            known = self._nodes.get(name) if isinstance(name, str) else None
            return known if known is not None and _version(known) == _version(obj) else slim_node(obj)
        known = self._pods.get(pod_key(obj))
        return known if known is not None and _version(known) == _version(obj) else self._slim_pod(obj)

    def _slim_pod(self, obj: dict[str, Any]) -> dict[str, Any] | None:
        dropped: list[str] = []
        slim = slim_pod(obj, dropped)
        if dropped:
            self.metrics.dropped_values.inc(len(dropped))
            self._drop_log.record(pod_key(obj), ", ".join(dropped))
        return slim

    def replace(self, kind: str, items: list[dict[str, Any]]) -> None:
        """A fresh list, each item from `keep`."""
        if kind == "nodes":
            nodes: dict[str, dict[str, Any]] = {}
            for slim in items:
                name = slim["metadata"].get("name")
                if isinstance(name, str) and name:
                    nodes[name] = slim
            with self._lock:
                old = self._nodes
                changed = {n for n in old.keys() | nodes.keys() if _version(old.get(n)) != _version(nodes.get(n))}
                self._nodes = nodes
                self._dirty |= changed
                self._listed.add(kind)
        else:
            pods = {pod_key(p): p for p in items}
            with self._lock:
                old_pods = self._pods
                for key in old_pods.keys() | pods.keys():
                    before, after = old_pods.get(key), pods.get(key)
                    if _version(before) != _version(after):
                        self._dirty.update(_node_of(p) for p in (before, after) if p is not None)
                self._pods = pods
                by_node: dict[str, dict[str, dict[str, Any]]] = {}
                for key, pod in pods.items():
                    by_node.setdefault(_node_of(pod), {})[key] = pod
                self._pods_by_node = by_node
                self._listed.add(kind)
        log.debug("cluster watch: listed %d %s", len(items), kind)
        self._wake.set()

    def apply(self, kind: str, event: str, obj: dict[str, Any]) -> None:
        if kind == "nodes":
            slim = slim_node(obj)
            name = slim["metadata"].get("name")
            if not isinstance(name, str) or not name:
                return
            with self._lock:
                if event == "DELETED":
                    self._nodes.pop(name, None)
                else:
                    self._nodes[name] = slim
                self._dirty.add(name)
        else:
            key = pod_key(obj)
            new = None if event == "DELETED" else self._slim_pod(obj)
            with self._lock:
                old = self._pods.pop(key, None)
                if old is not None:
                    node = _node_of(old)
                    self._pods_by_node.get(node, {}).pop(key, None)
                    self._dirty.add(node)
                if new is not None:
                    self._pods[key] = new
                    node = _node_of(new)
                    self._pods_by_node.setdefault(node, {})[key] = new
                    self._dirty.add(node)
        self._wake.set()

    def connected(self, kind: str) -> None:
        with self._lock:
            error = self._errors.pop(kind, None)
        if error is not None:
            log.info("cluster watch of %s: streaming again (broken since %s: %s)", kind, _iso(error[1]), error[0])
        self._update_stale()

    def broken(self, kind: str, reason: str) -> None:
        with self._lock:
            first = kind not in self._errors
            since = self._errors[kind][1] if not first else self._clock()
            self._errors[kind] = (reason, since)
        self.metrics.watch_errors.labels(kind).inc()
        if first:  # once per outage, not once per retry
            kept = "keeping the last synced view" if self.published else "cluster-aware rules stay off until it syncs"
            log.warning("cluster watch of %s broke (%s): %s; retrying with backoff", kind, kept, reason)
        self._update_stale()

    def _update_stale(self) -> None:
        self.metrics.stale.set(1 if self._errors else 0)

    # ---- publishing -------------------------------------------------------------------------------
    def _publish_loop(self) -> None:
        last = 0.0
        while not self._stop.is_set():
            self._wake.wait(self._poll_interval)
            if self._stop.is_set():
                return
            if not all(k in self._listed for k in KINDS):
                self._wake.clear()
                continue
            config = self._device_config()
            stale_config = self.published is not None and self.published.config is not config
            if not self._wake.is_set() and not stale_config:
                continue
            pause = last + self._min_interval - time.monotonic()
            if pause > 0 and self.published is not None and self._stop.wait(pause):
                return
            self._wake.clear()
            started = time.monotonic()
            try:
                self._publish(config)
                self._build_error = None
            except Exception as exc:  # a bug must not end the thread: keep the last view and retry
                self._build_error = f"{type(exc).__name__}: {exc}"
                log.exception("cluster view could not be built; keeping the last one")
                self._stop.wait(self._min_interval)
                self._wake.set()  # retry even if the cluster stays quiet: the nodes were put back as dirty
            last = time.monotonic()
            self.metrics.build.observe(last - started)

    def _publish(self, config: DeviceConfig | None) -> None:
        previous = self.published
        full = previous is None or previous.config is not config
        with self._lock:
            dirty = set(self._nodes) | set(self._parts) if full else self._dirty
            self._dirty = set()
            nodes = [self._nodes[n] for n in dirty if n in self._nodes]
            pods_by_node = {n: list(self._pods_by_node.get(n, {}).values()) for n in dirty}
        try:
            fresh = build_node_parts(nodes, pods_by_node, simulation_env(config, self._volcano_version))
            parts = {} if full else dict(self._parts)
            for name in dirty:
                parts.pop(name, None)
            parts.update(fresh)
            base = self._base_facts()
            # Pods came and went on nodes that stay as they were: the facts (with what requests derived from
            # them) stay too, and `warm` has nothing left to fill in.
            kept = (previous.view.facts if previous is not None and not full and previous.view.base is base
                    and same_node_facts(self._parts, parts, dirty) else None)
            view = assemble(parts, base, config, self._volcano_version, facts=kept)
            allocation = {} if full else dict(self._allocation)
            for name in dirty:
                allocation.pop(name, None)
            allocation.update(allocation_of(fresh, config, self._volcano_version, self._clock()))
        except BaseException:
            with self._lock:
                self._dirty |= dirty  # not done: the next attempt redoes these nodes
            raise
        self._parts, self._allocation = parts, allocation
        warm(view.facts)
        self.published = Published(view, self._clock(), config, allocation)
        if previous is None:
            log.info("cluster view synced: %d nodes, %d bound device pods", view.nodes, view.pods)
        self.metrics.synced.set(1)
        self.metrics.nodes.set(view.nodes)
        self.metrics.pods.set(view.pods)
        self.metrics.published.set(self.published.at)
        if heap.frozen():
            # The server froze its heap after loading (server.py) so collections stay small; keep the
            # view out of the collector's scans too: a full collection of a 5,000-node view takes ~0.5 s
            # of the GIL. Young cycles are collected first; the old view is freed by reference counting.
            heap.freeze(1)

    # ---- what requests read -----------------------------------------------------------------------
    def allocation_text(self) -> list[bytes]:
        """The device allocation families of the view in use, for /metrics (`alloc_metrics`)."""
        published = self.published
        return exposition(published.allocation if published is not None else None)

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        published = self.published
        errors = dict(self._errors)
        check: dict[str, Any] = {"ok": published is not None, "synced": published is not None}
        if published is None:
            missing = [k for k in KINDS if k not in self._listed]
            reason = "; ".join(f"{k}: {r}" for k, (r, _) in errors.items()) or (
                f"waiting for the first list of {' and '.join(missing)}" if missing else "building the first view")
            if self._watch is None and self._publisher is not None and missing:
                reason = "no cluster watch was started (the app was built without one)"
            check["reason"] = reason
            return False, check
        view = published.view
        check.update({"nodes": view.nodes, "pods": view.pods, "lastSync": _iso(published.at), "stale": bool(errors)})
        if errors:
            check["staleSince"] = _iso(min(since for _, since in errors.values()))
            check["reason"] = "; ".join(f"watch of {k} broken: {r}" for k, (r, _) in errors.items())
        if self._build_error:
            check["buildError"] = self._build_error
        return True, check


def _version(obj: Mapping[str, Any] | None) -> Any:
    if obj is None:
        return None
    meta = obj.get("metadata")
    version = meta.get("resourceVersion") if isinstance(meta, Mapping) else None
    return version if version else id(obj)  # no version: always counts as changed


def _node_of(pod: Mapping[str, Any]) -> str:
    spec_ = pod.get("spec")
    name = spec_.get("nodeName") if isinstance(spec_, Mapping) else None
    return name if isinstance(name, str) else ""


# ---- the fits-now check ---------------------------------------------------------------------------

def fits_now(pod: Mapping[str, Any], view: ClusterView) -> FitAnswer:
    index = view.index
    return first_fit(parse_pod(pod, index.env), index)


def no_room_finding(pod: Mapping[str, Any], answer: FitAnswer) -> Finding | None:
    """The warning for a pod no node has room for right now (None unless that is proven)."""
    if answer.outcome is not Outcome.NO_FIT:
        return None
    meta = pod.get("metadata") if isinstance(pod.get("metadata"), Mapping) else {}
    assert isinstance(meta, Mapping)
    name = meta.get("name") or meta.get("generateName") or ""
    subject = f"pod/{meta.get('namespace') or ''}/{name}"
    nodes = answer.family_nodes
    message = f"no node has room for this pod right now ({nodes} device node{'s' if nodes != 1 else ''})"
    closest = answer.closest
    if closest is not None and closest.reason is not None:
        message += f"; closest {closest.node}: {closest.reason.value}: {closest.message}"
    message += "; it stays Pending until devices free up"
    return Finding(NO_ROOM_CODE, Severity.WARNING, subject, message, NO_ROOM_HINT)
