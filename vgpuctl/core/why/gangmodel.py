"""The gang what-if's vocabulary (`gang.py` replays it; `whatif.py` runs it; `WhyReport.gang` carries it).

Apart from `model.py`, whose `WhyReport` names `GangReport` only as a type: `why` for a Pod (`-f pod.yaml`, or
a pod of the cluster) never imports this module, nor `gang.py` — 4 dataclasses and gang's 2, ~3.5 ms of its
start-up (python -X importtime -m vgpuctl why -f POD --snapshot FLEET -o json, benchmarks/scale.py).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core.spec import Family
from vgpuctl.core.why.model import Placement, UnfitGroup


@dataclass(frozen=True, slots=True)
class Replica:
    """One pod of a workload, as its controller would create it."""

    name: str  # ns/name as the controller names it
    task: str  # the Volcano Job task (`spec.tasks[].name`); "" for other workloads
    index: int  # the pod's index under its task (what `CompareTask` reads from the end of its name)
    priority: int  # what the priority plugin's task order compares (`TaskInfo.Priority`)
    position: int  # the task's position in the Job (the stand-in for creation order)
    pod: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class GangTask:
    """One `spec.tasks[]` entry of a Volcano Job, as its PodGroup and the gang plugin count it."""

    name: str
    replicas: int
    min_available: int  # the PodGroup's `minTaskMember[name]`
    min_source: str
    priority: int
    families: tuple[Family, ...] = ()
    best_effort: bool = False  # requests nothing: allocate skips it, the gang counts it, backfill places it


# `GangStop.rule`: which gang rule the placements miss (docs/volcano.md#gang-scheduling).
GANG_RULE_TASK_MIN = "task-minAvailable"  # a task has fewer replicas placed than its minAvailable
GANG_RULE_JOB_MIN = "minAvailable"  # the Job has fewer replicas placed than its minAvailable
GANG_RULE_FIRST_FAILURE = "stops-at-first-failure"  # Volcano < 1.10 gives a Job up at its first pod that fits nowhere
GANG_RULE_BACKFILL = "backfill"  # a replica that requests nothing, counted by the gang, is never placed


@dataclass(frozen=True, slots=True)
class GangStop:
    """What keeps a gang from starting: the task, its replica that fits no node and why there, and the rule."""

    task: str  # "" for a workload other than a Volcano Job
    replica: str | None  # ns/name of the task's first replica that fits no node (None: none failed)
    rule: str  # GANG_RULE_*
    message: str
    unfit: tuple[UnfitGroup, ...] = ()  # where and why `replica` fits no node, as `WhyReport.unfit`
    hints: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task or None, "replica": self.replica, "rule": self.rule, "message": self.message,
                "reason": self.unfit[0].reason.value if self.unfit else None,
                "unfit": [g.to_dict() for g in self.unfit], "hints": list(self.hints)}


@dataclass
class GangReport:
    """A workload's what-if: its replicas placed one by one in Volcano's order, each booking what it takes."""

    kind: str
    name: str
    replicas: int
    min_available: int
    min_source: str
    placed: list[tuple[Replica, Placement]] = field(default_factory=list)
    failed: list[Replica] = field(default_factory=list)
    first_failure: Replica | None = None
    first_failure_unfit: list[UnfitGroup] = field(default_factory=list)
    first_failure_hints: list[str] = field(default_factory=list)
    tasks: list[GangTask] = field(default_factory=list)  # a Volcano Job's tasks, in the Job's order (else empty)
    task_minimums: bool = False  # each task's minAvailable counts (the Job's minAvailable >= their sum)
    stop: GangStop | None = None  # why the gang does not start (None when it starts)
    started: bool | None = None  # the replay's answer (None: enough replicas fit at once)

    @property
    def fit(self) -> int:
        return len(self.placed)

    @property
    def starts(self) -> bool:
        return self.started if self.started is not None else self.fit >= self.min_available

    def fit_of(self, task: str) -> int:
        return sum(1 for r, _ in self.placed if r.task == task)

    def to_dict(self) -> dict[str, Any]:
        failure = None
        if self.first_failure is not None:
            failure = {"replica": self.first_failure.name, "task": self.first_failure.task or None,
                       "unfit": [g.to_dict() for g in self.first_failure_unfit],
                       "hints": list(self.first_failure_hints)}
        out = {
            "kind": self.kind, "name": self.name, "replicas": self.replicas,
            "minAvailable": self.min_available, "minAvailableSource": self.min_source,
            "fitAtOnce": self.fit, "starts": self.starts,
            "placements": [{"replica": r.name, "task": r.task or None, **p.to_dict()} for r, p in self.placed],
            "unplaced": [r.name for r in self.failed],
            "firstFailure": failure,
        }
        if self.tasks:  # a Volcano Job: each task as the gang plugin counts it, and what stops the Job
            out["tasks"] = [{"name": t.name, "replicas": t.replicas, "minAvailable": t.min_available,
                             "minAvailableSource": t.min_source, "priority": t.priority,
                             "families": [f.value for f in t.families], "bestEffort": t.best_effort,
                             "fitAtOnce": self.fit_of(t.name)} for t in self.tasks]
            out["taskMinimums"] = self.task_minimums
            out["stoppedBy"] = self.stop.to_dict() if self.stop is not None else None
        return out
