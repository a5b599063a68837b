"""Find the pods inside an object: a Pod, a Volcano Job's task templates, a workload's pod template.

Each pod-like thing becomes a `PodTarget` that knows where it sits in the object (for patch paths and
subjects), so one set of pod rules serves Pods, Volcano Jobs, Deployments, StatefulSets, DaemonSets,
ReplicaSets, Jobs and CronJobs alike (VGW002).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.patch import Pointer

_EMPTY: Mapping[str, Any] = {}


def as_mapping(value: Any) -> Mapping[str, Any]:
    if type(value) is dict:  # the common case, without isinstance's ABC check (benchmarks/review_throughput.py)
        return value
    return value if isinstance(value, Mapping) else _EMPTY


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


@dataclass(slots=True)  # not frozen: that costs ~4× to build; never assigned to (benchmarks/review_throughput.py)
class PodTarget:
    pointer: Pointer  # JSON pointer tokens of the pod-like object (has metadata and spec)
    metadata: Mapping[str, Any]
    spec: Mapping[str, Any]
    subject_prefix: str  # "" for a Pod, "template/" for workloads, "task/<name>/" for Volcano Jobs
    where: str  # "" for a Pod, "template " / 'task "worker" ' for messages
    volcano_job: Mapping[str, Any] | None = None  # the enclosing Volcano Job, if any


def is_volcano_job(obj: Mapping[str, Any]) -> bool:
    if obj.get("kind") != "Job":
        return False
    api = obj.get("apiVersion")
    return isinstance(api, str) and api.startswith(spec.VOLCANO_JOB_API_GROUP + "/")


def pod_targets(obj: Mapping[str, Any]) -> list[PodTarget] | None:
    """The pod-like parts of `obj`, or None when its kind is not one vgpuctl checks."""
    kind = obj.get("kind")
    if kind == "Pod":  # most objects: their dicts are taken without a call each (benchmarks/review_throughput.py)
        metadata, pod_spec = obj.get("metadata"), obj.get("spec")
        return [PodTarget((), metadata if type(metadata) is dict else as_mapping(metadata),
                          pod_spec if type(pod_spec) is dict else as_mapping(pod_spec), "", "")]
    if is_volcano_job(obj):
        targets = []
        for i, task in enumerate(as_list(as_mapping(obj.get("spec")).get("tasks"))):
            task_m = as_mapping(task)
            name = task_m.get("name")
            label = name if isinstance(name, str) and name else str(i)
            template = as_mapping(task_m.get("template"))
            targets.append(
                PodTarget(
                    ("spec", "tasks", i, "template"),
                    as_mapping(template.get("metadata")),
                    as_mapping(template.get("spec")),
                    f"task/{label}/",
                    f'task "{label}" ',
                    obj,
                )
            )
        return targets
    if kind == "CronJob":
        template = as_mapping(
            as_mapping(as_mapping(as_mapping(obj.get("spec")).get("jobTemplate")).get("spec")).get("template")
        )
        return [
            PodTarget(
                ("spec", "jobTemplate", "spec", "template"),
                as_mapping(template.get("metadata")),
                as_mapping(template.get("spec")),
                "jobTemplate/template/",
                "template ",
            )
        ]
    if kind in spec.WORKLOAD_KINDS:
        template = as_mapping(as_mapping(obj.get("spec")).get("template"))
        return [
            PodTarget(
                ("spec", "template"),
                as_mapping(template.get("metadata")),
                as_mapping(template.get("spec")),
                "template/",
                "template ",
            )
        ]
    return None
