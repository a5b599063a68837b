"""`why` answers a request the rule core rejects with the rule core's findings, never a simulation.

Issue 15 §3: `why -f` said "fits" for `vgpu-number: -1`, `1e38` and full-width digits, and printed "free
memory 40960 MiB < 18446744072635809792 MiB" for `vgpu-memory: 3Gi` (Volcano's int32 then uint of 3 GiB).
`why` now asks `podrules.review` — with the `ClusterFacts` `facts_from_snapshot` gives, as `lint --snapshot`
does — first, and a rejected request is reported with those findings and exit 1.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.unit.why.builders import cluster, gpu, vgpu_node, vgpu_pod
from vgpuctl.core.cluster.rule_facts import facts_from_snapshot
from vgpuctl.core.findings import Severity
from vgpuctl.core.podrules import review
from vgpuctl.core.why.simulate import explain_in_snapshot

U0 = "GPU-00000000-0000-0000-0000-000000000000"


def _pod(limits: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
    target = vgpu_pod("p", **kwargs)
    target["spec"]["schedulerName"] = "volcano"
    target["spec"]["containers"][0]["resources"]["limits"] = limits
    return target


BAD = [
    {"volcano.sh/vgpu-number": "-1"},
    {"volcano.sh/vgpu-number": "1e38"},
    {"volcano.sh/vgpu-number": "３０００"},
    {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "3Gi"},
    {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-cores": "150"},
]


@pytest.mark.parametrize("limits", BAD)
def test_a_request_the_rule_core_rejects_is_answered_with_its_findings(limits: dict[str, Any]) -> None:
    snapshot, _ = cluster(vgpu_node("n1", gpu(U0)))
    target = _pod(limits)
    report = explain_in_snapshot(target, snapshot, what_if=True)
    lint = review(target, facts_from_snapshot(snapshot))  # what `lint --snapshot` decides
    assert not lint.allowed
    errors = [f for f in lint.findings if f.severity is Severity.ERROR]
    assert [f for f in report.findings if f.severity is Severity.ERROR] == errors
    assert report.rejected and not report.schedulable and report.verdict == "rejected"
    assert report.fits == [] and report.unfit == [] and report.closest == []
    dumped = json.dumps(report.to_dict())
    assert "18446744072635809792" not in dumped and errors[0].code in dumped


def test_a_valid_request_is_still_simulated_and_keeps_its_warnings() -> None:
    snapshot, _ = cluster(vgpu_node("n1", gpu(U0)))
    target = _pod({"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "8000"},
                  annotations={"volcano.sh/vgpu-podgroup-policy": "pack"})  # VGP012: a warning only
    report = explain_in_snapshot(target, snapshot, what_if=True)
    assert report.verdict == "fits" and report.schedulable and [p.node for p in report.fits] == ["n1"]
    assert [f.code for f in report.findings] == ["VGP012"]


def test_an_existing_pending_pod_volcano_never_places_says_so() -> None:
    """`why POD` judges an existing pod as the doctor does (`review(existing=True)`)."""
    pending = _pod({"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "3Gi"})
    snapshot, _ = cluster(vgpu_node("n1", gpu(U0)), pending)
    report = explain_in_snapshot(pending, snapshot)
    assert report.phase == "Pending" and report.verdict == "rejected" and not report.schedulable
    assert {f.code for f in report.findings} == {"VGP005"}
    assert "never places it" in report.hints[0]


def test_an_existing_pod_with_a_placement_neutral_error_is_simulated() -> None:
    """A privileged container (VGP016) voids isolation, but Volcano places the pod all the same."""
    pending = _pod({"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "8000"})
    pending["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    snapshot, _ = cluster(vgpu_node("n1", gpu(U0)), pending)
    existing = explain_in_snapshot(pending, snapshot)
    assert existing.verdict == "fits" and [f.code for f in existing.findings] == ["VGP016"]
    what_if = explain_in_snapshot(pending, snapshot, what_if=True)  # the webhook would deny it
    assert what_if.verdict == "rejected"
