"""Rules about the wrapper around pod templates (`VGW`, docs/contracts.md#finding-families)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.podrules.targets import PodTarget, as_mapping

_ABSENT = object()


def job_metadata(job: Mapping[str, Any], targets: list[PodTarget], labels: list[Mapping[str, Any]]) -> list[Finding]:
    """VGW001: the Volcano job controller copies neither annotations nor labels to the pods.

    `labels`: each target's labels as the mutating defaults leave them (a default can add the very label
    the Job carries), one per target."""
    metadata = as_mapping(job.get("metadata"))
    findings = []
    for field, keys in (("annotations", spec.DEVICE_POD_ANNOTATIONS), ("labels", spec.DEVICE_POD_LABELS)):
        own = as_mapping(metadata.get(field))
        for key in keys:
            if key not in own:
                continue
            # A task that lacks the key, or sets it differently, runs without the Job's value.
            written = labels if field == "labels" else [as_mapping(t.metadata.get(field)) for t in targets]
            missing = [t for t, meta in zip(targets, written, strict=True) if meta.get(key, _ABSENT) != own[key]]
            if not missing:
                continue
            tasks = ", ".join(t.where.strip() for t in missing)
            findings.append(Finding(
                "VGW001", Severity.WARNING, f"metadata.{field}[{key}]",
                f"Volcano Job: {field[:-1]} {key}={own[key]} is on the Job's metadata but not on {tasks}; "
                "it is not copied to the pods, so the scheduler never sees it",
                hint_for("VGW001"),
            ))
    return findings
