"""VGC014: pods with DRA claims while the running Volcano cannot allocate them, per version, as read at each tag of
volcano-sh/volcano (`pkg/scheduler/plugins/predicates/predicates.go`, go.mod; docs/stacks.md#dra-in-volcano):

- ≤ 1.11: no dynamicresources in the predicates plugin;
- 1.12, 1.13: `predicate.DynamicResourceAllocationEnable` (default false, an unquoted bool) and the gate, off by
  default in the vendored Kubernetes 1.32 / 1.33;
- 1.14: the argument and the gate, whose default follows the API server's version (on from 1.34);
- ≥ 1.15: the gate alone; the argument is not read (info when set).
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.unit.doctor.conftest import cluster, doctor, found, pod, result, scheduler_cm, vgpu_node, workload
from tests.unit.doctor.nodes_builders import DRIVER_OK
from vgpuctl.core.doctor.framework import Status
from vgpuctl.core.versions import (
    DraSupport,
    dra_gate_default,
    dra_support,
    parse_version,
    reads_dra_argument,
    vendored_kubernetes,
)

CONF = """actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
- plugins:
  - name: predicates
{predicates}  - name: deviceshare
    arguments:
      deviceshare.VGPUEnable: true
      deviceshare.ScheduleWeight: 10
"""
ARG_TRUE = "    arguments:\n      predicate.DynamicResourceAllocationEnable: true\n"
ARG_QUOTED = "    arguments:\n      predicate.DynamicResourceAllocationEnable: \"true\"\n"
GATE = "--feature-gates=DynamicResourceAllocation=true"


def claim_pod(name: str = "with-claim", phase: str = "Pending", **kw: Any) -> dict[str, Any]:
    return pod("ml", name, containers=[{"name": "c", "resources": {"claims": [{"name": "gpu"}]}}],
               resourceClaims=[{"name": "gpu", "resourceClaimTemplateName": "single-gpu"}], phase=phase, **kw)


def scheduler(version: str, *args: str) -> dict[str, Any]:
    return workload("Deployment", "volcano-system", "volcano-scheduler", f"volcanosh/vc-scheduler:v{version}",
                    args=["--scheduler-conf=/volcano.scheduler/volcano-scheduler.conf", *args])


def run(version: str, *, arg: str = "", gate: bool = False, kube: str | None = "v1.31.4",
        deployment: bool = True, pods: tuple[dict[str, Any], ...] | None = None) -> Any:
    objects = [scheduler_cm(CONF.format(predicates=arg)), vgpu_node("n1", labels=DRIVER_OK),
               *(pods if pods is not None else (claim_pod(),))]
    if deployment:
        objects.append(scheduler(version, *((GATE,) if gate else ())))
    return doctor(cluster(*objects, server_version=kube), version=version)


def errors(report: Any) -> list[str]:
    return [f.message for f in found(report, "VGC014") if f.severity.value == "error"]


@pytest.mark.parametrize(("version", "arg", "gate", "kube", "missing"), [
    # fails: what each release lacks
    ("1.11.2", ARG_TRUE, True, "v1.34.1", ["has no DRA"]),
    ("1.12.4", "", True, "v1.34.1", ["predicate.DynamicResourceAllocationEnable is not true"]),
    ("1.12.4", ARG_TRUE, False, "v1.34.1", ["beta and off by default in the Kubernetes 1.32"]),
    ("1.12.4", ARG_QUOTED, True, "v1.34.1", ["only as an unquoted bool"]),  # GetBool takes no string before 1.15
    ("1.13.3", ARG_TRUE, False, "v1.34.1", ["in the Kubernetes 1.33"]),
    ("1.14.4", ARG_TRUE, False, "v1.33.4", ["off by default on Kubernetes 1.33"]),
    ("1.14.4", "", False, "v1.34.1", ["predicate.DynamicResourceAllocationEnable is not true"]),
    ("1.15.1", "", False, "v1.33.4", ["off by default on Kubernetes 1.33"]),
    # passes
    ("1.12.4", ARG_TRUE, True, "v1.31.4", []),
    ("1.13.3", ARG_TRUE, True, "v1.31.4", []),
    ("1.14.4", ARG_TRUE, False, "v1.34.1", []),  # the gate follows the cluster: on from 1.34
    ("1.15.1", "", False, "v1.34.1", []),
    ("1.15.1", "", True, "v1.32.2", []),
    ("1.16.0", "", False, "v1.35.0", []),
])
def test_vgc014_per_version(version: str, arg: str, gate: bool, kube: str, missing: list[str]) -> None:
    report = run(version, arg=arg, gate=gate, kube=kube)
    messages = errors(report)
    if not missing:
        assert messages == [] and result(report, "VGC014").status is Status.PASS
        return
    (message,) = messages
    assert "1 pod(s) placed by Volcano have DRA resourceClaims (ml/with-claim)" in message
    assert all(m in message for m in missing), message


def test_vgc014_says_at_info_that_1_15_ignores_the_argument() -> None:
    report = run("1.15.1", arg=ARG_TRUE, kube="v1.34.1", pods=())
    (info,) = found(report, "VGC014")
    assert info.severity.value == "info" and "no longer reads it" in info.message
    assert found(run("1.14.4", arg=ARG_TRUE, kube="v1.34.1", pods=()), "VGC014") == []


def test_vgc014_needs_pods_volcano_places_with_claims() -> None:
    others = (claim_pod("default", scheduler="default-scheduler"), claim_pod("done", phase="Succeeded"),
              pod("ml", "plain"))
    report = run("1.12.4", pods=others)
    assert found(report, "VGC014") == [] and result(report, "VGC014").status is Status.PASS


def test_vgc014_is_skipped_when_the_gate_cannot_be_told() -> None:
    # 1.15 takes the gate's default from the API server; kubelets older than 1.34 do not bound it
    unknown = run("1.15.1", kube=None)
    row = result(unknown, "VGC014")
    assert row.status is Status.SKIP and "cluster's Kubernetes version" in row.reason
    # no vc-scheduler Deployment: its --feature-gates are unknown, so a default-off gate is not held against it
    hidden = run("1.12.4", arg=ARG_TRUE, deployment=False)
    assert result(hidden, "VGC014").status is Status.SKIP
    assert "--feature-gates are unknown" in result(hidden, "VGC014").reason
    # ... but a missing argument is provable all the same
    assert errors(run("1.12.4", deployment=False)) != []


def test_kubelets_from_1_34_prove_the_api_server_is_1_34_or_later() -> None:
    """No server version in the snapshot: a kubelet is never newer than its API server."""
    new_kubelet = vgpu_node("n1", labels=DRIVER_OK, kubelet="v1.34.2")
    objects = [scheduler_cm(CONF.format(predicates="")), new_kubelet, claim_pod(), scheduler("1.15.1")]
    assert result(doctor(cluster(*objects, server_version=None), version="1.15.1"), "VGC014").status is Status.PASS


def test_the_gate_is_read_from_the_scheduler_flags_in_either_form() -> None:
    two_words = [scheduler_cm(CONF.format(predicates=ARG_TRUE)), vgpu_node("n1", labels=DRIVER_OK), claim_pod(),
                 scheduler("1.12.4", "--feature-gates",
                           "PodDisruptionBudgetsSupport=false,DynamicResourceAllocation=true")]
    assert errors(doctor(cluster(*two_words), version="1.12.4")) == []
    off = [scheduler_cm(CONF.format(predicates="")), vgpu_node("n1", labels=DRIVER_OK), claim_pod(),
           scheduler("1.15.1", "--feature-gates=DynamicResourceAllocation=false")]
    (message,) = errors(doctor(cluster(*off, server_version="v1.34.1"), version="1.15.1"))
    assert "--feature-gates turns it off" in message


def test_the_version_rules() -> None:
    v = parse_version
    assert [reads_dra_argument(v(t)) for t in ("1.11.2", "1.12.0", "1.14.4", "1.15.0")] == [False, True, True, False]
    assert vendored_kubernetes(v("1.13.3")) == (1, 33) and vendored_kubernetes(v("1.17.0")) == (1, 36)
    assert dra_gate_default(v("1.12.4"), (1, 35)) is False  # the vendored 1.32, whatever the cluster
    assert dra_gate_default(v("1.14.0"), (1, 33)) is False and dra_gate_default(v("1.14.0"), (1, 34)) is True
    assert dra_gate_default(v("1.15.1"), None) is None
    support = dra_support(v("1.15.1"), predicates=False, argument=None, argument_set=True, gate=True, cluster=None)
    assert support == DraSupport(False, ("the predicates plugin, which runs DRA, is in no tier",), "",
                                 ignored_argument=True)
