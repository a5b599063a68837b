"""`diagnose`: every doctor check over one `ClusterSnapshot`, in ordered categories, as a DoctorReport."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.cluster import ClusterSnapshot
from vgpuctl.core.cluster.facts import facts_from_snapshot
from vgpuctl.core.deviceconfig import DeviceConfig
from vgpuctl.core.doctor import checks as _checks  # noqa: F401 - registers every check
from vgpuctl.core.doctor.components import components, kubernetes_version
from vgpuctl.core.doctor.framework import REGISTRY, Category, DoctorContext, run_checks
from vgpuctl.core.doctor.report import DoctorReport
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.versions import NEWEST_VOLCANO, Version

PRE_CATEGORIES = (Category.KUBERNETES, Category.VOLCANO, Category.NODES)


def diagnose(
    snapshot: ClusterSnapshot,
    *,
    now: datetime,
    volcano_version: Version | None = None,
    source: str = "snapshot",
    unreadable: frozenset[str] = frozenset(),
    read_problems: tuple[Finding, ...] = (),
    scheduler_names: tuple[str, ...] = spec.DEFAULT_SCHEDULER_NAMES,
    privileged_severity: Severity = Severity.ERROR,
    pre: bool = False,
    host: Any = None,
    device_config: DeviceConfig | None = None,
) -> DoctorReport:
    """Run every check that applies to `source` ("live", "snapshot" or "node"); `host` carries what
    `doctor --node` observed on the machine, `device_config` overrides the one found in the snapshot."""
    found = components(snapshot)
    detected = next((c for c in found if c.name == "vc-scheduler" and c.version), None)
    notes: list[str] = []
    if source == "node" and volcano_version is None and detected is None:
        version, version_source = None, "unknown"
    elif volcano_version is not None:
        version, version_source = volcano_version, "--volcano-version"
    elif detected is not None and detected.version is not None:
        version, version_source = detected.version, f"image {detected.image}"
    else:
        version, version_source = None, "unknown"
        notes.append(f"Volcano version unknown (no vc-scheduler image seen): version-dependent checks assume "
                     f"the newest release, {NEWEST_VOLCANO}; pass --volcano-version to be exact")
    facts = facts_from_snapshot(snapshot, scheduler_names=scheduler_names, volcano_version=version,
                                privileged_severity=privileged_severity)
    if device_config is not None:
        facts = replace(facts, device_config=device_config)
    elif source == "node" and not snapshot.device_config_source.startswith("configmap"):
        facts = replace(facts, device_config=None)  # no geometry given: host checks say so, never guess
    ctx = DoctorContext(snapshot=snapshot, facts=facts, volcano_version=version, version_source=version_source,
                        now=now, source=source, unreadable=unreadable, read_problems=read_problems, host=host)
    checks = [c for c in REGISTRY.values() if not pre or c.category in PRE_CATEGORIES]
    results = run_checks(ctx, checks)
    versions = {
        "kubernetes": kubernetes_version(snapshot),
        "volcano": str(version) if version else None,
        "devicePlugins": {c.name: str(c.version) if c.version else c.image
                          for c in found if c.kind == "DaemonSet"},
    }
    return DoctorReport(source, results, versions, notes)


__all__ = ["Category", "DoctorReport", "diagnose"]
