"""`judge_nodes`: the doctor's node-judging checks, run once, each finding filed under the node it names.

`vgpuctl nodes` shows these; tests/cli/test_nodes_doctor_agree.py holds the two commands against each other.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import yaml

from tests.unit.doctor.conftest import NOW, cluster, node, scheduler_cm, vgpu_node
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.doctor import NodeVerdicts, diagnose, judge_nodes
from vgpuctl.core.doctor.checks.nodes import quantity
from vgpuctl.core.doctor.framework import (
    REGISTRY,
    Category,
    Check,
    CheckResult,
    DoctorContext,
    Status,
    node_checks,
    node_of,
    run_checks,
)
from vgpuctl.core.doctor.report import findings_by_node
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.quantity import int_value

ROOT = Path(__file__).resolve().parents[3]
SNAPSHOTS = {  # → whether the doctor flags a node of it
    ROOT / "examples" / "clusters" / "broken.yaml": True,
    ROOT / "examples" / "clusters" / "healthy.yaml": False,
    ROOT / "tests" / "fixtures" / "clusters" / "mixed.yaml": True,
}


def _finding(code: str, subject: str, message: str = "m") -> Finding:
    return Finding(code, Severity.ERROR, subject, message)


def _check(check_id: str, fn: object = None, *, judges: bool = False, needs: tuple[str, ...] = ()) -> Check:
    def nothing(ctx: DoctorContext) -> Iterator[Finding]:
        return iter(())

    return Check(check_id, Category.NODES, "VGN001", check_id, fn or nothing, needs, (), ("snapshot",), judges)  # type: ignore[arg-type]


def test_node_of_reads_node_subjects_only() -> None:
    assert node_of("node/gpu-1") == "gpu-1"
    assert node_of("node/gpu-1:metadata.annotations") == "gpu-1"
    assert node_of("node/") is None
    assert node_of("pod/ml/node-1") is None and node_of("daemonset/kube-system/x") is None


def test_every_node_category_check_and_the_plugin_per_node_check_judge_nodes() -> None:
    checks, judging = node_checks(REGISTRY)
    assert {c.id for c in REGISTRY.values() if c.category is Category.NODES} < judging
    assert "device-plugins.nodes" in judging  # VGK004 per node
    assert "device-plugins.present" not in judging and "nodes.locks" in {c.id for c in checks}


def test_node_checks_bring_what_they_depend_on() -> None:
    registry = {c.id: c for c in (_check("a"), _check("b", needs=("a",)), _check("c", judges=True, needs=("b",)),
                                  _check("d"))}
    checks, judging = node_checks(registry)
    assert judging == {"c"} and [c.id for c in checks] == ["a", "b", "c"]


def test_findings_are_filed_per_node_even_when_the_doctor_groups_them() -> None:
    same = [_finding("VGN004", f"node/n{i}") for i in range(3)]
    results = [CheckResult(_check("x"), Status.FAIL, "", [*same, same[0], _finding("VGK004", "daemonset/a/b")]),
               CheckResult(_check("y"), Status.FAIL, "", [_finding("VGN008", "node/n1", "other")])]
    by_node = findings_by_node(results)
    assert by_node == {"n0": [same[0]], "n1": [same[1], _finding("VGN008", "node/n1", "other")], "n2": [same[2]]}


@pytest.mark.parametrize(("path", "flagged"), SNAPSHOTS.items(), ids=[p.name for p in SNAPSHOTS])
def test_only_node_judging_checks_name_nodes(path: Path, flagged: bool) -> None:
    """A check whose findings name a node must be marked `judges_nodes`, else `nodes` would not show them."""
    snap = build_snapshot(yaml.safe_load(path.read_text())["items"])
    report = diagnose(snap, now=NOW)
    named = {r.check.id for r in report.results for f in r.findings if node_of(f.subject)}
    assert bool(named) is flagged and all(REGISTRY[i].judges_nodes for i in named)
    verdicts = judge_nodes(snap, now=NOW)
    expected = findings_by_node(r for r in report.results if r.check.judges_nodes)
    assert verdicts.findings == expected


@pytest.mark.parametrize("path", SNAPSHOTS, ids=[p.name for p in SNAPSHOTS])
def test_a_node_judged_alone_gets_the_same_verdict(path: Path) -> None:
    """`nodes NAME` judges only the named nodes: every node check must judge a node on its own."""
    snap = build_snapshot(yaml.safe_load(path.read_text())["items"])
    whole = judge_nodes(snap, now=NOW)
    for one in snap.nodes:
        alone = judge_nodes(replace(snap, nodes=[one]), now=NOW)
        assert alone.findings == ({one.name: whole.of(one.name)} if whole.of(one.name) else {}), one.name


@pytest.mark.parametrize(("path", "flagged"), SNAPSHOTS.items(), ids=[p.name for p in SNAPSHOTS])
def test_the_decodes_own_findings_are_shown_once(path: Path, flagged: bool) -> None:
    """The codec problems met while decoding a node reach `nodes` through the doctor's checks, once each."""
    snap = build_snapshot(yaml.safe_load(path.read_text())["items"])
    verdicts = judge_nodes(snap, now=NOW)
    for one in snap.nodes:
        shown = verdicts.of(one.name)
        assert all(shown.count(f) == 1 for f in one.findings), one.name
    assert any(n.findings for n in snap.nodes) is flagged  # broken and mixed have malformed registers


def test_node_checks_never_aggregate_the_facts() -> None:
    def facts() -> ClusterFacts:
        raise AssertionError("the node checks read the pod rules' facts")

    snap = cluster(scheduler_cm(), vgpu_node("n1", allocatable={"volcano.sh/vgpu-memory": "0"}))
    ctx = DoctorContext(snap, facts, None, "unknown", NOW)
    results = run_checks(ctx, node_checks(REGISTRY)[0])
    assert not [r.reason for r in results if "internal error" in r.reason]
    assert any(f.code == "VGN004" for r in results for f in r.findings)
    calls: list[int] = []
    lazy = DoctorContext(snap, lambda: calls.append(1) or ClusterFacts(), None, "unknown", NOW)  # type: ignore[func-returns-value]
    assert lazy.facts is lazy.facts and calls == [1]


def test_a_check_that_breaks_is_reported_not_lost() -> None:
    def boom(ctx: DoctorContext) -> Iterator[Finding]:
        raise RuntimeError("bug")

    snap = build_snapshot([node("n1")])
    results = run_checks(DoctorContext(snap, ClusterFacts(), None, "unknown", NOW), [_check("x", boom, judges=True)])
    verdicts = NodeVerdicts(findings_by_node(results), results, [])
    assert [r.check.id for r in verdicts.broken_checks] == ["x"] and verdicts.of("n1") == []


@pytest.mark.parametrize("raw", ["0", "81920", "007", "99999999999999999", "9" * 19, "9" * 30, "-1", "1e3", "1Gi",
                                 "１２", "", " 1", "1.5", 12, 1.0, None, True])
def test_quantity_direct_path_agrees_with_the_full_parse(raw: object) -> None:
    assert quantity(raw) == int_value(raw)
