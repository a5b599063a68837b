"""Cluster-aware admission's DRA knowledge: the watched DeviceClasses, ResourceClaims and ResourceClaimTemplates,
as the `DraFacts` VGP020 reads (docs/stacks.md#pods-mixing-stacks).

A pod names claims and templates, never classes, so whether its claim asks a GPU is known only from those
objects. The watch (`vgpuctl.kube.dra_watch`, started by `webhook serve --cluster-aware`) delivers them here,
each kept as the little VGP020 needs: a class's name and whether it selects a GPU driver; a claim's or
template's namespace, name and the class names it asks. Bounds: names over 253 characters (no valid object
has one) drop the object, at most `MAX_CLASSES` class names per claim; so ≤ ~17 KiB per object whatever it
holds (~200 bytes for a real one).

`facts()` is what requests read. Its claim and template maps are read-only views of the maps the watch
updates, so the `DraFacts` value — and the cluster facts built on it, with their derived caches — stays the
same through claim churn (one pod, one claim); a new value only when a class changes or a kind is listed
again. Until a kind is listed it is unknown, and VGP020 treats its objects as unknown: skipped, never guessed.
None of this gates readiness: the rules it feeds are skipped while it is missing.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

from prometheus_client import Counter

from vgpuctl.core.cluster.dra import namespace_of
from vgpuctl.core.codecs.dra import claim_classes, decode_device_class, template_classes
from vgpuctl.core.facts import DraFacts

log = logging.getLogger("vgpuctl.webhook")

CLASSES: Final = "deviceclasses"
CLAIMS: Final = "resourceclaims"
TEMPLATES: Final = "resourceclaimtemplates"
KINDS: Final = (CLASSES, CLAIMS, TEMPLATES)
MAX_NAME: Final = 253  # a DNS subdomain: the longest valid object or class name
MAX_CLASSES: Final = 64  # class names kept per claim (Kubernetes allows 32 requests, each with subrequests)

Key = tuple[str, str]


def _name(value: Any) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= MAX_NAME else None


def _entry(kind: str, obj: Mapping[str, Any]) -> dict[str, Any] | None:
    """What is kept of one object: {"key": …, "value": …}; None for an object without a usable name."""
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = _name(meta.get("name"))
    if name is None:
        return None
    if kind == CLASSES:
        decoded = decode_device_class(obj)
        return {"key": name, "value": bool(decoded and decoded.selects_gpus)}
    namespace = namespace_of(meta)
    if _name(namespace) is None:
        return None
    asked = claim_classes(obj) if kind == CLAIMS else template_classes(obj)
    classes = tuple(c for c in asked if _name(c) is not None)[:MAX_CLASSES]
    return {"key": (namespace, name), "value": classes}


class DraState:
    """The DRA watch's sink (`keep`, `replace`, `apply`, `connected`, `broken`, `served`, `unavailable`) and the
    `DraFacts` of what it delivered."""

    def __init__(self, *, watch_errors: Counter | None = None) -> None:
        self._watch_errors = watch_errors
        self._lock = threading.Lock()
        self._classes: dict[str, bool] = {}  # name → selects a GPU driver
        self._claims: dict[Key, tuple[str, ...]] = {}
        self._templates: dict[Key, tuple[str, ...]] = {}
        self._listed: set[str] = set()
        self._facts: DraFacts | None = None
        self._version: str | None = None  # the resource.k8s.io version watched
        self._unavailable: str | None = None
        self._errors: dict[str, str] = {}
        self._watch: Any = None

    # ---- lifecycle --------------------------------------------------------------------------------
    def start(self, watch_factory: Callable[[DraState], Any] | None) -> None:
        if watch_factory is not None and self._watch is None:
            self._watch = watch_factory(self)
            self._watch.start()

    def stop(self, timeout: float = 5.0) -> None:
        if self._watch is not None:
            self._watch.stop(timeout)

    # ---- what the discovery says ------------------------------------------------------------------
    def served(self, version: str) -> None:
        with self._lock:
            self._version, self._unavailable = version, None
        log.info("cluster watch: DeviceClasses, ResourceClaims and templates from resource.k8s.io/%s", version)

    def unavailable(self, reason: str) -> None:
        with self._lock:
            first = self._unavailable is None
            self._unavailable = reason
        if first:
            log.info("cluster watch: no DRA objects to watch (%s); VGP020 is skipped", reason)

    # ---- the watch's sink -------------------------------------------------------------------------
    def keep(self, kind: str, obj: dict[str, Any]) -> dict[str, Any] | None:
        return _entry(kind, obj)

    def replace(self, kind: str, items: list[dict[str, Any]]) -> None:
        fresh = {item["key"]: item["value"] for item in items}
        with self._lock:
            if kind == CLASSES:
                self._classes = fresh
            elif kind == CLAIMS:
                self._claims = fresh
            elif kind == TEMPLATES:
                self._templates = fresh
            else:
                return
            self._listed.add(kind)
            self._facts = None  # new maps: a new facts value on the next read
        log.debug("cluster watch: listed %d %s", len(items), kind)

    def apply(self, kind: str, event: str, obj: dict[str, Any]) -> None:
        entry = _entry(kind, obj)
        if entry is None:
            return
        key, value = entry["key"], entry["value"]
        with self._lock:
            target: dict[Any, Any] = (self._classes if kind == CLASSES else self._claims if kind == CLAIMS
                                      else self._templates)
            if event == "DELETED":
                target.pop(key, None)
            else:
                target[key] = value
            if kind == CLASSES:
                self._facts = None  # the class sets are frozen in the facts: rebuild them (classes are few)

    def connected(self, kind: str) -> None:
        with self._lock:
            error = self._errors.pop(kind, None)
        if error is not None:
            log.info("cluster watch of %s: streaming again (was: %s)", kind, error)

    def broken(self, kind: str, reason: str) -> None:
        with self._lock:
            first = kind not in self._errors
            self._errors[kind] = reason
        if self._watch_errors is not None:
            self._watch_errors.labels(kind).inc()
        if first:
            log.warning("cluster watch of %s broke: %s; retrying with backoff (VGP020 judges with what was "
                        "last seen)", kind, reason)

    # ---- what requests read -----------------------------------------------------------------------
    def facts(self) -> DraFacts | None:
        """The DRA facts (None until a kind is listed). The same value until a class changes or a kind is listed
        again: claims and templates are live read-only views."""
        facts = self._facts
        if facts is not None or not self._listed:
            return facts
        with self._lock:
            if self._facts is None:
                gpu = frozenset(n for n, selects in self._classes.items() if selects)
                other = frozenset(n for n, selects in self._classes.items() if not selects)
                self._facts = DraFacts(gpu, other, MappingProxyType(self._claims),
                                       MappingProxyType(self._templates))
            return self._facts

    def readiness(self) -> dict[str, Any]:
        """The DRA part of /readyz: informational, it never makes the webhook unready."""
        with self._lock:
            check: dict[str, Any] = {"ok": True, "version": self._version, "listed": sorted(self._listed)}
            if self._unavailable is not None:
                check["reason"] = self._unavailable
            elif self._errors:
                check["reason"] = "; ".join(f"watch of {k} broken: {r}" for k, r in sorted(self._errors.items()))
            elif self._watch is None:
                check["reason"] = "no DRA watch was started"
            elif len(self._listed) < len(KINDS):
                check["reason"] = "waiting for the first list of " + ", ".join(
                    k for k in KINDS if k not in self._listed)
            check["objects"] = {CLASSES: len(self._classes), CLAIMS: len(self._claims),
                                TEMPLATES: len(self._templates)}
        return check
