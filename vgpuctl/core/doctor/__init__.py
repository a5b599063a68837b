"""`diagnose`: every doctor check over one `ClusterSnapshot`, in ordered categories, as a DoctorReport."""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.cluster.rule_facts import facts_from_snapshot
from vgpuctl.core.deviceconfig import DeviceConfig
from vgpuctl.core.doctor import checks as _checks  # noqa: F401 - registers every check
from vgpuctl.core.doctor.components import Component, components, kubernetes_version
from vgpuctl.core.doctor.framework import (
    REGISTRY,
    Category,
    CheckResult,
    DoctorContext,
    Status,
    node_checks,
    run_checks,
)
from vgpuctl.core.doctor.report import DoctorReport, findings_by_node
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.versions import NEWEST_VOLCANO, Version, beyond_newest

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
    ctx, notes = _context(snapshot, found, now=now, volcano_version=volcano_version, source=source,
                          unreadable=unreadable, read_problems=read_problems, scheduler_names=scheduler_names,
                          privileged_severity=privileged_severity, host=host, device_config=device_config)
    checks = [c for c in REGISTRY.values() if not pre or c.category in PRE_CATEGORIES]
    results = run_checks(ctx, checks)
    versions = {
        "kubernetes": kubernetes_version(snapshot),
        "volcano": str(ctx.volcano_version) if ctx.volcano_version else None,
        "devicePlugins": {c.name: str(c.version) if c.version else c.image
                          for c in found if c.kind == "DaemonSet"},
    }
    return DoctorReport(source, results, versions, notes)


@dataclass
class NodeVerdicts:
    """What the doctor's node checks say about each node: the findings `vgpuctl nodes` shows."""

    findings: dict[str, list[Finding]]  # node name → its findings, in the doctor's check order
    results: list[CheckResult]  # of every check run (the node checks and what they depend on)
    notes: list[str]  # as the doctor's (e.g. "Volcano version unknown: …")

    def of(self, name: str) -> list[Finding]:
        return self.findings.get(name, [])

    @property
    def broken_checks(self) -> list[CheckResult]:
        """Checks that failed without a finding (an internal error): the doctor fails on them too."""
        return [r for r in self.results if r.status is Status.FAIL and not r.findings]


def judge_nodes(
    snapshot: ClusterSnapshot,
    *,
    now: datetime,
    volcano_version: Version | None = None,
    source: str = "snapshot",
    unreadable: frozenset[str] = frozenset(),
    read_problems: tuple[Finding, ...] = (),
    codes: Collection[str] | None = None,
) -> NodeVerdicts:
    """Run the doctor's node-judging checks (`Check.judges_nodes`, and what they depend on; only those raising
    `codes`, when given) once over the snapshot's nodes, in the context `diagnose` builds, and file each finding
    under the node it names."""
    ctx, notes = _context(snapshot, components(snapshot), now=now, volcano_version=volcano_version,
                          source=source, unreadable=unreadable, read_problems=read_problems)
    checks, judging = node_checks(REGISTRY, codes)
    results = run_checks(ctx, checks)
    return NodeVerdicts(findings_by_node(r for r in results if r.check.id in judging), results, notes)


def _context(
    snapshot: ClusterSnapshot,
    found: list[Component],
    *,
    now: datetime,
    volcano_version: Version | None,
    source: str,
    unreadable: frozenset[str],
    read_problems: tuple[Finding, ...],
    scheduler_names: tuple[str, ...] = spec.DEFAULT_SCHEDULER_NAMES,
    privileged_severity: Severity = Severity.ERROR,
    host: Any = None,
    device_config: DeviceConfig | None = None,
) -> tuple[DoctorContext, list[str]]:
    """The context every check runs in (the Volcano version and where it came from, the facts), and the
    notes to say about it; one place, so `doctor` and `nodes` judge a node under the same assumptions."""
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
    if version is not None and (beyond := beyond_newest(version)):
        notes.append(beyond)

    def facts() -> ClusterFacts:  # computed when a check first reads it (the node checks never do)
        found = facts_from_snapshot(snapshot, scheduler_names=scheduler_names, volcano_version=version,
                                    privileged_severity=privileged_severity)
        if device_config is not None:
            return replace(found, device_config=device_config)
        if source == "node" and not snapshot.device_config_source.startswith("configmap"):
            return replace(found, device_config=None)  # no geometry given: host checks say so, never guess
        return found

    ctx = DoctorContext(snapshot=snapshot, facts=facts, volcano_version=version, version_source=version_source,
                        now=now, source=source, unreadable=unreadable, read_problems=read_problems, host=host)
    return ctx, notes


__all__ = ["Category", "DoctorReport", "NodeVerdicts", "diagnose", "judge_nodes"]
