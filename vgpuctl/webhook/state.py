"""What a request reads besides its body: the settings, the device config, the TLS status, the metrics and,
when cluster-aware, the watched cluster. One `WebhookState` per serving process (`app.create_app`)."""

from __future__ import annotations

import datetime as dt
import logging
from dataclasses import dataclass, replace
from typing import Any

from vgpuctl.core.clusterview import ClusterView
from vgpuctl.core.deviceconfig import DeviceConfig
from vgpuctl.core.facts import BUILTIN_DEVICE_CONFIG_SUMMARY, ClusterFacts, DraFacts
from vgpuctl.webhook.cluster_state import ClusterState
from vgpuctl.webhook.config_watch import DeviceConfigWatcher
from vgpuctl.webhook.dra_state import DraState
from vgpuctl.webhook.metrics import WebhookMetrics
from vgpuctl.webhook.settings import Settings
from vgpuctl.webhook.tls import CertificateMonitor

log = logging.getLogger("vgpuctl.webhook")


@dataclass
class _FactsCache:
    config: DeviceConfig | None
    facts: ClusterFacts


@dataclass(frozen=True)
class _ClusterFactsCache:
    # The facts of the view they came from, not the view: holding a view would keep the previous one alive
    # (its pods, its index) until the next review. A view rebuilt for pod changes alone keeps its facts
    # (`clusterview.same_node_facts`), and so does this cache.
    source: ClusterFacts
    base: ClusterFacts
    dra: DraFacts | None
    facts: ClusterFacts


class WebhookState:
    """Everything a request reads besides its body: settings, the device config, TLS status, metrics."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self.metrics = WebhookMetrics()
        self._config_loaded = False
        self.watcher = self._device_config_watcher(settings)
        self.certificate = _certificate_monitor(settings)
        self._facts = _FactsCache(None, self._make_facts(None))
        self._cluster_facts: _ClusterFactsCache | None = None
        self.cluster = self._cluster_state(settings)
        self.dra = DraState(watch_errors=self.cluster.metrics.watch_errors) if self.cluster is not None else None

    def _device_config_watcher(self, settings: Settings) -> DeviceConfigWatcher | None:
        if not settings.device_config_path:
            # once per serving process: the rules judge every review against the same built-in config
            log.info("no device config mounted: judging against Volcano's built-in device config (%s)",
                     BUILTIN_DEVICE_CONFIG_SUMMARY)
            return None
        return DeviceConfigWatcher(settings.device_config_path, interval=settings.config_check_interval,
                                   on_reload=self._count_reload)

    def _cluster_state(self, settings: Settings) -> ClusterState | None:
        if not settings.cluster_aware:
            return None
        cluster = ClusterState(
            base_facts=self.facts, device_config=self.watcher.current if self.watcher else lambda: None,
            volcano_version=settings.volcano_version, registry=self.metrics.registry,
            poll_interval=max(settings.config_check_interval, 0.5))
        self.metrics.add_text(cluster.allocation_text)
        return cluster

    def _count_reload(self, ok: bool) -> None:
        self.metrics.config_reloads.labels("success" if ok else "failure").inc()
        self._config_loaded = self._config_loaded or ok
        self.metrics.config_loaded.set(1 if self._config_loaded else 0)

    def _make_facts(self, config: DeviceConfig | None) -> ClusterFacts:
        s = self.settings
        return ClusterFacts(device_config=config, volcano_version=s.volcano_version,
                            scheduler_names=s.scheduler_names, privileged_severity=s.privileged_severity)

    def facts(self) -> ClusterFacts:
        """One `ClusterFacts` per config version, so its cached derived facts are reused across reviews."""
        config = self.watcher.current() if self.watcher else None
        cached = self._facts
        if cached.config is not config:
            cached = _FactsCache(config, self._make_facts(config))
            self._facts = cached
        return cached.facts

    def cluster_view(self) -> tuple[ClusterFacts, ClusterView] | None:
        """The facts of the watched cluster and its view; None when not cluster-aware or not synced yet."""
        published = self.cluster.published if self.cluster is not None else None
        if published is None:
            return None
        view = published.view
        base = self.facts()
        dra = self.dra.facts() if self.dra is not None else None
        cached = self._cluster_facts
        if cached is None or cached.source is not view.facts or cached.base is not base or cached.dra is not dra:
            # The view was merged onto the base of its time; after a device-config reload (until the view
            # is rebuilt) the node facts stay and the config is the current one. The watched DRA objects
            # (VGP020) join them; their facts value changes only when a class changes or a kind is re-listed
            # (`DraState.facts`). One facts value per triple, so its derived facts (largest GPU count,
            # memories) are computed once, not per review.
            changes: dict[str, Any] = {}
            if view.base is not base:
                changes["device_config"] = base.device_config
            if dra is not None:
                changes["dra"] = dra
            facts = replace(view.facts, **changes) if changes else view.facts
            cached = self._cluster_facts = _ClusterFactsCache(view.facts, base, dra, facts)
        return cached.facts, view

    def readiness(self) -> tuple[bool, dict[str, Any]]:
        """`/readyz`: the serving certificate is valid, the device config loaded, the cluster watch synced."""
        checks: dict[str, Any] = {}
        ready = True
        if self.certificate is not None:
            status = self.certificate.status()
            checks["tls"] = {"ok": status.ok, "reason": status.reason,
                             "notAfter": status.not_after.isoformat() if status.not_after else None}
            if status.not_after is not None:
                self.metrics.cert_expiry.set(status.not_after.timestamp())
            ready = ready and status.ok
        if self.watcher is not None:
            state = self.watcher.check()
            ok = state.config is not None
            checks["deviceConfig"] = {"ok": ok, "path": self.watcher.path, "lastError": state.error}
            ready = ready and ok
        if self.cluster is not None:
            ok, checks["clusterWatch"] = self.cluster.readiness()
            ready = ready and ok
        if self.dra is not None:
            checks["draWatch"] = self.dra.readiness()  # informational: VGP020 is skipped while it is missing
        self.metrics.ready.set(1 if ready else 0)
        return ready, checks


def _certificate_monitor(settings: Settings) -> CertificateMonitor | None:
    if not (settings.cert_file and settings.key_file):
        return None
    return CertificateMonitor(settings.cert_file, settings.key_file,
                              margin=dt.timedelta(days=settings.expiry_margin_days))
