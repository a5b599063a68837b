"""The doctor's machinery: checks in ordered categories, dependencies, skips with reasons, one report.

A check is a pure function from a `DoctorContext` to findings, registered with `@check`. It runs only
when the checks it depends on did not fail and the data it reads could be listed; otherwise it is
*skipped with the reason* (as linkerd's `linkerd check` and istio's `istioctl analyze` report). Its
status is derived from its findings: error → fail, warning → warn, else pass. Checks never raise into
the runner: an unexpected exception becomes a failed check with the exception named, so one bug never
hides the rest of the report.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.versions import Version


class Category(str, enum.Enum):
    """Doctor categories, in the order they are run and shown."""

    KUBERNETES = "kubernetes"
    VOLCANO = "volcano"
    SCHEDULER_CONFIG = "scheduler-config"
    DEVICE_CONFIG = "device-config"
    DEVICE_PLUGINS = "device-plugins"
    NODES = "nodes"
    WEBHOOK = "webhook"
    WORKLOADS = "workloads"
    HOST = "host"


CATEGORY_ORDER = {c: i for i, c in enumerate(Category)}
NODE_PREFIX = "node/"


class Status(str, enum.Enum):
    PASS = "pass"
    WARN = "warn"
    FAIL = "fail"
    SKIP = "skip"


class DoctorContext:
    """What every check reads. `facts` (the pod rules' view of the cluster, which only some checks need)
    may be given as a function: it is then computed the first time a check reads it, so running only the
    node checks (`vgpuctl nodes`) does not pay for aggregating them."""

    def __init__(
        self,
        snapshot: ClusterSnapshot,
        facts: ClusterFacts | Callable[[], ClusterFacts],
        volcano_version: Version | None,  # the version rules use (detected, given, or None when unknown)
        version_source: str,  # "--volcano-version", "image volcanosh/vc-scheduler:v1.15.1", "unknown"
        now: datetime,
        source: str = "snapshot",  # "live" | "snapshot" | "node"
        unreadable: frozenset[str] = frozenset(),  # resources whose list failed ("nodes", "pods", …)
        read_problems: tuple[Finding, ...] = (),
        host: Any = None,  # node-local observations for `doctor --node` (vgpuctl.core.host.HostFacts)
    ) -> None:
        self.snapshot = snapshot
        self._facts = facts
        self.volcano_version = volcano_version
        self.version_source = version_source
        self.now = now
        self.source = source
        self.unreadable = unreadable
        self.read_problems = read_problems
        self.host = host

    @property
    def facts(self) -> ClusterFacts:
        if not isinstance(self._facts, ClusterFacts):
            self._facts = self._facts()
        return self._facts


CheckFn = Callable[[DoctorContext], Iterable[Finding]]


class SkipCheck(Exception):  # noqa: N818 - it is a signal, not an error
    """Raised by a check that finds it has nothing to judge; the message is the reason shown."""


@dataclass(frozen=True)
class Check:
    id: str
    category: Category
    code: str
    description: str
    fn: CheckFn
    needs: tuple[str, ...] = ()  # check ids that must not have failed
    reads: tuple[str, ...] = ()  # resources it reads; an unreadable one skips it (VGK001)
    sources: tuple[str, ...] = ("live", "snapshot")  # where it applies
    judges_nodes: bool = False  # its findings are about single nodes (`node/<name>`): `nodes` runs it too


REGISTRY: dict[str, Check] = {}


def check(
    id: str,
    category: Category,
    code: str,
    description: str,
    *,
    needs: tuple[str, ...] = (),
    reads: tuple[str, ...] = (),
    sources: tuple[str, ...] = ("live", "snapshot"),
    judges_nodes: bool | None = None,
) -> Callable[[CheckFn], CheckFn]:
    """Register a check. Ids are stable (`<category>.<what>`); a duplicate id is a programming error.

    `judges_nodes` (default: the check is in the nodes category) marks a check whose findings name single
    nodes (subject `node/<name>`): `vgpuctl nodes` runs exactly these checks and shows each finding on its
    node, so the two commands give a node the same verdict. Such a check judges each node on its own (with
    the cluster-wide objects: pods, DaemonSets, configs), so `nodes NAME` runs it over the named nodes only.
    """
    on_nodes = category is Category.NODES if judges_nodes is None else judges_nodes

    def register(fn: CheckFn) -> CheckFn:
        if id in REGISTRY:
            raise ValueError(f"doctor check {id!r} registered twice")
        REGISTRY[id] = Check(id, category, code, description, fn, needs, reads, sources, on_nodes)
        return fn

    return register


@dataclass
class CheckResult:
    check: Check
    status: Status
    reason: str = ""
    findings: list[Finding] = field(default_factory=list)

    def to_dict(self) -> dict[str, str]:
        return {"category": self.check.category.value, "code": self.check.code,
                "description": self.check.description, "status": self.status.value, "reason": self.reason}


def status_of(findings: list[Finding]) -> Status:
    if any(f.severity is Severity.ERROR for f in findings):
        return Status.FAIL
    if any(f.severity is Severity.WARNING for f in findings):
        return Status.WARN
    return Status.PASS


def node_checks(registry: Mapping[str, Check],
                codes: Collection[str] | None = None) -> tuple[list[Check], frozenset[str]]:
    """The checks `vgpuctl nodes` runs: those that judge nodes (only those raising `codes`, when given: `why`'s
    stack notes), plus every check they depend on (so a dependency that fails skips them exactly as in the
    doctor); and the ids of the node-judging ones."""
    judging = frozenset(c.id for c in registry.values() if c.judges_nodes and (codes is None or c.code in codes))
    wanted: set[str] = set()
    todo = list(judging)
    while todo:
        check_id = todo.pop()
        if check_id not in wanted and check_id in registry:
            wanted.add(check_id)
            todo.extend(registry[check_id].needs)
    return [c for c in registry.values() if c.id in wanted], judging


def node_of(subject: str) -> str | None:
    """The node a finding's subject names (`node/<name>`, optionally with a `:path` after it), else None."""
    if not subject.startswith(NODE_PREFIX):
        return None
    name = subject[len(NODE_PREFIX):].split(":", 1)[0]
    return name or None


def run_checks(ctx: DoctorContext, checks: Iterable[Check]) -> list[CheckResult]:
    ordered = sorted(checks, key=lambda c: CATEGORY_ORDER[c.category])
    results: dict[str, CheckResult] = {}
    for c in ordered:
        if ctx.source not in c.sources:
            continue
        failed = [n for n in c.needs if n in results and results[n].status in (Status.FAIL, Status.SKIP)]
        unreadable = [r for r in c.reads if r in ctx.unreadable]
        if unreadable:
            result = CheckResult(c, Status.SKIP, f"could not list {', '.join(unreadable)} (VGK001)")
        elif failed:
            first = results[failed[0]]
            why = "was skipped" if first.status is Status.SKIP else "failed"
            result = CheckResult(c, Status.SKIP, f"depends on {first.check.description.rstrip('.')!r}, which {why}")
        else:
            try:
                findings = list(c.fn(ctx))
            except SkipCheck as skip:
                result = CheckResult(c, Status.SKIP, str(skip))
            except Exception as exc:  # a bug in one check must not hide the others
                result = CheckResult(c, Status.FAIL, f"internal error in this check: {type(exc).__name__}: {exc}")
            else:
                result = CheckResult(c, status_of(findings), "", findings)
        results[c.id] = result
    return list(results.values())
