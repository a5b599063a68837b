"""vGPU mutating defaults and wrappers: VGP014, VGP015, VGW002 and the `allowed` verdict (docs/contracts.md#findings,
§2.1, §2.5).

The defaults only add (RFC 6902 `add`); each is reported at `info` when applied and as an `error` on the
validating path. Every patch here is applied with `jsonpatch` and the result reviewed again.
"""

from __future__ import annotations

from typing import Any

import jsonpatch
import pytest

from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.podrules import review

from .conftest import ERROR, INFO, codes, container, cronjob, deployment, find, only, pod, vcjob

N, M, CORES = "volcano.sh/vgpu-number", "volcano.sh/vgpu-memory", "volcano.sh/vgpu-cores"
MODE, POLICY = "volcano.sh/vgpu-mode", "volcano.sh/vgpu-podgroup-policy"
USE_TYPE, NOUSE_TYPE = "nvidia.com/use-gputype", "nvidia.com/nouse-gputype"


def gpu_pod(limits: dict[str, Any], *, name: str = "trainer", **pod_kwargs: Any) -> dict[str, Any]:
    """A Volcano pod with one vGPU container `trainer` carrying `limits`."""
    return pod(container(name, limits=limits), **pod_kwargs)


# ---- VGP014 requests vs limits -------------------------------------------------------------------------
def test_vgp014_request_only_is_copied_to_limits() -> None:
    obj = pod(container("trainer", requests={N: 1, M: 1000}))
    r = review(obj)
    assert [(f.code, f.severity, f.subject) for f in find(r, "VGP014")] == [
        ("VGP014", INFO, "container/trainer"), ("VGP014", INFO, "container/trainer")]
    assert f"added limits {N}: 1 (copied from requests)" in find(r, "VGP014")[0].message
    assert r.patch == ({"op": "add", "path": "/spec/containers/0/resources/limits", "value": {N: "1", M: "1000"}},)
    again = review(jsonpatch.apply_patch(obj, list(r.patch)))
    assert again.patch == () and find(again, "VGP014") == [] and again.allowed is True


def test_vgp014_request_only_without_defaults_is_an_error() -> None:
    r = review(pod(container("trainer", requests={N: 1})), apply_defaults=False)
    f = only(r, "VGP014")
    assert (f.severity, f.subject) == (ERROR, "container/trainer") and "not in limits" in f.message
    assert r.allowed is False and r.patch == ()


def test_vgp014_request_differs_from_limit() -> None:
    r = review(pod(container("trainer", requests={N: 1}, limits={N: 2})))
    f = only(r, "VGP014")
    assert f.severity is ERROR and "request 1 differs from limit 2" in f.message
    assert r.allowed is False and r.patch == ()


@pytest.mark.parametrize(("requests", "limits"), [({N: 1}, {N: 1}), ({N: "1"}, {N: 1}), (None, {N: 1}),
                                                  ({"cpu": "1"}, {N: 1})])
def test_vgp014_equal_or_absent_requests(requests: dict[str, Any] | None, limits: dict[str, Any]) -> None:
    r = review(pod(container("trainer", requests=requests, limits=limits)), apply_defaults=False)
    assert find(r, "VGP014") == []


# ---- VGP015 schedulerName ------------------------------------------------------------------------------
@pytest.mark.parametrize(("scheduler", "was"), [(None, "was empty"), ("", "was empty"),
                                                ("default-scheduler", 'was "default-scheduler"')])
def test_vgp015_default_sets_the_scheduler(scheduler: str | None, was: str) -> None:
    r = review(gpu_pod({N: 1, M: 1000}, scheduler=scheduler))
    f = only(r, "VGP015")
    assert (f.severity, f.subject) == (INFO, "spec.schedulerName") and was in f.message
    assert r.patch == ({"op": "add", "path": "/spec/schedulerName", "value": "volcano"},)
    assert r.allowed is True


@pytest.mark.parametrize(("scheduler", "kwargs", "shown"), [
    ("hami-scheduler", {}, '"hami-scheduler", not a Volcano scheduler (volcano)'),
    ("hami-scheduler", {"apply_defaults": False}, '"hami-scheduler"'),
    (None, {"apply_defaults": False}, "schedulerName is empty"),
])
def test_vgp015_another_scheduler_is_rejected(scheduler: str | None, kwargs: dict[str, bool], shown: str) -> None:
    r = review(gpu_pod({N: 1, M: 1000}, scheduler=scheduler), **kwargs)
    f = only(r, "VGP015")
    assert (f.severity, f.subject) == (ERROR, "spec.schedulerName") and shown in f.message
    assert r.allowed is False and r.patch == ()


def test_vgp015_custom_scheduler_names() -> None:
    facts = ClusterFacts(scheduler_names=("volcano", "vc2"))
    assert find(review(gpu_pod({N: 1, M: 1000}, scheduler="vc2"), facts), "VGP015") == []
    assert find(review(gpu_pod({N: 1, M: 1000}, scheduler="vc2")), "VGP015") != []


def test_vgp015_pod_without_volcano_resources_is_not_ours() -> None:
    assert codes(review(pod(container("web", limits={"nvidia.com/gpu": 1}), scheduler="default-scheduler"))) == []


def test_vgp015_volcano_job_without_scheduler_name_inherits_volcano() -> None:
    r = review(vcjob(("worker", gpu_pod({N: 1, M: 1000}, scheduler=None))))
    assert find(r, "VGP015") == [] and r.patch == ()


def test_vgp015_volcano_job_level_scheduler_is_judged_once() -> None:
    tasks = [(t, gpu_pod({N: 1, M: 1000}, scheduler=None)) for t in ("ps", "worker")]
    r = review(vcjob(("launcher", pod(container("l"), scheduler=None)), *tasks, scheduler="default-scheduler"))
    f = only(r, "VGP015")
    assert (f.severity, f.subject) == (INFO, "spec.schedulerName") and 'task "ps"' in f.message
    assert r.patch == ({"op": "add", "path": "/spec/schedulerName", "value": "volcano"},)
    bad = review(vcjob(*tasks, scheduler="hami-scheduler"))
    assert [f.code for f in bad.findings if f.severity is ERROR] == ["VGP015"]


# ---- VGW002 workload wrappers --------------------------------------------------------------------------
BAD = {M: 1000, CORES: 101}  # VGP002 (defaulted: info + patch) and VGP004 (error)


@pytest.mark.parametrize(("wrap", "subject", "path"), [
    (lambda p: deployment(p), "template/container/x", "/spec/template/spec"),
    (lambda p: deployment(p, kind="StatefulSet"), "template/container/x", "/spec/template/spec"),
    (lambda p: cronjob(p), "jobTemplate/template/container/x", "/spec/jobTemplate/spec/template/spec"),
    (lambda p: vcjob(("worker", p)), "task/worker/container/x", "/spec/tasks/0/template/spec"),
])
def test_vgw002_wrapped_pod_reports_the_pod_rule(wrap: Any, subject: str, path: str) -> None:
    r = review(wrap(pod(container("x", limits=BAD), scheduler=None)))
    assert [(f.code, f.severity, f.subject) for f in r.findings if f.code in ("VGP002", "VGP004")] == [
        ("VGP002", INFO, subject), ("VGP004", ERROR, subject)]
    assert {"op": "add", "path": f"{path}/containers/0/resources/limits/volcano.sh~1vgpu-number",
            "value": "1"} in r.patch
    assert r.allowed is False


def test_vgw002_second_task_patch_path_and_clean_tasks() -> None:
    job = vcjob(("ps", pod(container("p"), scheduler=None)),
                ("worker", pod(container("x", limits={M: 1000}), scheduler=None)))
    r = review(job)
    assert [(f.code, f.subject) for f in r.findings] == [("VGP002", "task/worker/container/x")]
    assert [op["path"] for op in r.patch] == ["/spec/tasks/1/template/spec/containers/0/resources/limits/"
                                              "volcano.sh~1vgpu-number"]
    assert review(jsonpatch.apply_patch(job, list(r.patch))).patch == ()


# ---- allowed iff an error remains after the defaults ---------------------------------------------------
@pytest.mark.parametrize(("obj", "kwargs", "allowed"), [
    (gpu_pod({N: 1, M: 1000}), {}, True),
    (gpu_pod({M: 1000}, scheduler=None), {}, True),  # only infos: both defaults repair it
    (gpu_pod({M: 1000}, scheduler=None), {"apply_defaults": False}, False),
    (gpu_pod({N: 1, M: 1000}, annotations={POLICY: "pack", USE_TYPE: "A100", NOUSE_TYPE: "T4"}), {}, True),
    (gpu_pod({N: 1, M: 1000}, annotations={MODE: "MIG"}), {}, False),
    (gpu_pod({N: 0}), {}, False),
    (deployment(gpu_pod({N: 1, M: 1000}, annotations={POLICY: "pack"})), {}, True),
])
def test_allowed_iff_no_error_after_defaults(obj: dict[str, Any], kwargs: dict[str, bool], allowed: bool) -> None:
    r = review(obj, **kwargs)
    assert r.checked is True and r.allowed is allowed
    assert r.allowed is not any(f.severity is ERROR for f in r.findings)


def test_vgp015_existing_pod_on_another_scheduler_is_reported_not_patched() -> None:
    bound = pod(container("c", limits={"volcano.sh/vgpu-number": 1}), scheduler="default-scheduler")
    result = review(bound, existing=True)
    assert [(f.code, f.severity) for f in find(result, "VGP015")] == [("VGP015", ERROR)]
    assert result.patch == ()
    assert find(review(pod(container("c", limits={"volcano.sh/vgpu-number": 1})), existing=True), "VGP015") == []
