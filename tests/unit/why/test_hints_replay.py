"""Every number `why` suggests must itself fit when replayed (issue 16 §1).

Upstream evidence (volcano-sh/volcano, master at ed72c7c81, `pkg/scheduler/api/devices/ascend/hami/
device_info.go`): `ResourceReqs` passes every template-mode memory request through `trimMemory`, which
returns the smallest template whose memory covers it, else `MemoryAllocatable` when it is at most
`MemoryCapacity`, else 0. Volcano's built-in Ascend310P entry (`config.GetDefaultDevicesConfig`) has the
templates vir01 3072, vir02 6144, vir04 12288 MiB, `memoryCapacity` 24576 and `memoryAllocatable` 21527,
so a request of 12289..24576 MiB books the whole chip (21527). `fit` then compares the booked memory with
the device's free memory (`Devmem - Usedmem`). On a chip with 6144 MiB in use, 15383 MiB are free: the old
hint "ask for ≤ 15383 MiB" books 21527 again and fits nowhere; 12288 (vir04) is the largest that fits.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.unit.why.builders import NVIDIA, device_config, pod, scheduler, vgpu_node
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.rule_facts import facts_from_snapshot
from vgpuctl.core.podrules import review
from vgpuctl.core.why.model import WhyReport
from vgpuctl.core.why.request import parse_pod
from vgpuctl.core.why.scheduler_env import WhyEnv
from vgpuctl.core.why.simulate import env_from_snapshot, explain_in_snapshot, simulate_node

A310P = {"commonWord": "Ascend310P", "chipName": "310P3", "resourceName": "huawei.com/Ascend310P",
         "resourceMemoryName": "huawei.com/Ascend310P-memory", "memoryAllocatable": 21527,
         "memoryCapacity": 24576, "aiCore": 8, "aiCPU": 7,
         "templates": [{"name": "vir01", "memory": 3072, "aiCore": 1, "aiCPU": 1},
                       {"name": "vir02", "memory": 6144, "aiCore": 2, "aiCPU": 2},
                       {"name": "vir04", "memory": 12288, "aiCore": 4, "aiCPU": 4}]}
HAMI_ARGS = {"deviceshare.AscendHAMiVNPUEnable": True}
VGPU_ARGS = {"deviceshare.VGPUEnable": True}
CONFIG = {"nvidia": NVIDIA, "vnpus": [A310P]}


def npu_node(name: str, devices: int, hami_core: bool = False) -> dict[str, Any]:
    register = [{"id": f"{name}-npu{i}", "index": i, "count": 4, "devmem": 21527, "devcore": 8,
                 "type": "Ascend310P", "numa": 0, "health": True} for i in range(devices)]
    return {"kind": "Node", "metadata": {"name": name, "annotations": {
        "hami.io/node-register-Ascend310P": json.dumps(register), "hami-vnpu-core": str(hami_core).lower()}},
        "status": {"allocatable": {"huawei.com/Ascend310P": str(4 * devices)}}}


def npu_user(name: str, node: str, device: str, memory: int) -> dict[str, Any]:
    return pod(name, {"huawei.com/Ascend310P": "1"}, node=node, phase="Running", annotations={
        "hami.io/Ascend310P-devices-allocated": f"{device},Ascend310P,{memory},0:;"})


def npu_pod(memory: int, count: int = 1, hami_core: bool = False, cores: int | None = None) -> dict[str, Any]:
    limits = {"huawei.com/Ascend310P": str(count), "huawei.com/Ascend310P-memory": str(memory)}
    if cores is not None:
        limits["huawei.com/Ascend310P-core"] = str(cores)
    return pod("p", limits, annotations={"huawei.com/vnpu-mode": "hami-core"} if hami_core else None)


def _snapshot(objects: list[dict[str, Any]], args: dict[str, Any]) -> Any:
    return build_snapshot([scheduler(args), device_config(CONFIG), *objects])


def replay(target: dict[str, Any], report: WhyReport, snapshot: Any, env: WhyEnv) -> None:
    """Apply each suggestion to the pod object by hand and run the filter again on the node it names."""
    facts = facts_from_snapshot(snapshot)
    for suggestion in report.suggestions:
        edited = copy.deepcopy(target)
        for edit in suggestion.edits:
            if edit.container is None:
                annotations = edited["metadata"].setdefault("annotations", {})
                if edit.value is None:
                    annotations.pop(edit.key, None)
                else:
                    annotations[edit.key] = edit.value
                continue
            container = next(c for c in edited["spec"]["containers"] if c["name"] == edit.container)
            limits = container["resources"]["limits"]
            if edit.value is None:
                limits.pop(edit.key, None)
            else:
                limits[edit.key] = edit.value
        node = snapshot.node(suggestion.node)
        assert node is not None
        verdict = simulate_node(parse_pod(edited, env), node, env)
        assert verdict.fits, (suggestion.text, verdict.message)
        assert review(edited, facts).allowed, suggestion.text
        assert suggestion.text in " ".join(report.hints)
    assert not any("≤" in hint for hint in report.hints)  # no number is offered without a replay


def test_a_310p_request_no_template_covers_is_told_the_largest_template() -> None:
    objects = [npu_node("n1", 1), npu_user("u", "n1", "n1-npu0", 6144)]
    snapshot = _snapshot(objects, HAMI_ARGS)
    target = npu_pod(16000)
    report = explain_in_snapshot(target, snapshot, what_if=True)
    assert report.verdict == "no-fit"
    assert "free memory 15383 MiB < 21527 MiB" in report.unfit[0].message
    assert "no template covers it" in report.unfit[0].message
    [suggestion] = report.suggestions
    assert [(e.key, e.value) for e in suggestion.edits] == [("huawei.com/Ascend310P-memory", "12288")]
    assert "vir04" in suggestion.text and "≤ 15383" not in " ".join(report.hints)
    replay(target, report, snapshot, env_from_snapshot(snapshot))


def test_in_hami_core_mode_the_free_memory_is_the_answer() -> None:
    objects = [npu_node("n1", 1, hami_core=True), npu_user("u", "n1", "n1-npu0", 6144)]
    snapshot = _snapshot(objects, HAMI_ARGS)
    target = npu_pod(16000, hami_core=True, cores=10)
    report = explain_in_snapshot(target, snapshot, what_if=True)
    assert [e.value for e in report.suggestions[0].edits] == ["15383"]
    replay(target, report, snapshot, env_from_snapshot(snapshot))


# ---- properties: generated clusters and requests -------------------------------------------------------

_SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
MEMORIES = (16384, 24576, 40960)


@st.composite
def vgpu_cluster(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    for n in range(draw(st.integers(1, 3))):
        name = f"g{n}"
        gpus = []
        for i in range(draw(st.integers(1, 3))):
            uuid = f"GPU-{n}{i}000000-0000-0000-0000-000000000000"
            memory = draw(st.sampled_from(MEMORIES))
            gpus.append(f"{uuid},{draw(st.integers(2, 6))},{memory},NVIDIA-NVIDIA A100-PCIE-40GB,true,hami-core:")
            for k in range(draw(st.integers(0, 3))):
                used = draw(st.integers(0, memory // 2048)) * 1024
                cores = draw(st.integers(0, 60))
                objects.append(pod(f"u{n}{i}{k}", {"volcano.sh/vgpu-number": "1"}, node=name, phase="Running",
                                   annotations={"volcano.sh/vgpu-ids-new": f"{uuid},NVIDIA,{used},{cores}:"}))
        objects.append(vgpu_node(name, *gpus))
    limits = {"volcano.sh/vgpu-number": str(draw(st.integers(1, 3)))}
    if draw(st.booleans()):
        limits["volcano.sh/vgpu-memory"] = str(draw(st.one_of(st.integers(8192, 40960), st.integers(1, 8191))))
    if draw(st.booleans()):
        limits["volcano.sh/vgpu-cores"] = str(draw(st.integers(0, 100)))
    args = {**VGPU_ARGS, "deviceshare.SchedulePolicy": draw(st.sampled_from(["binpack", "spread", ""]))}
    return objects, pod("p", limits), args


@given(vgpu_cluster())
@_SETTINGS
def test_every_vgpu_suggestion_fits_when_replayed(case: tuple[list[dict[str, Any]], dict[str, Any],
                                                               dict[str, Any]]) -> None:
    objects, target, args = case
    snapshot = _snapshot(objects, args)
    report = explain_in_snapshot(target, snapshot, what_if=True)
    replay(target, report, snapshot, env_from_snapshot(snapshot))


@st.composite
def ascend_cluster(draw: st.DrawFn) -> tuple[list[dict[str, Any]], dict[str, Any], dict[str, Any]]:
    hami_core = draw(st.booleans())
    objects: list[dict[str, Any]] = []
    for n in range(draw(st.integers(1, 2))):
        name = f"a{n}"
        devices = draw(st.integers(1, 2))
        objects.append(npu_node(name, devices, hami_core=draw(st.booleans()) if hami_core else False))
        for i in range(devices):
            for k in range(draw(st.integers(1, 2))):
                memory = draw(st.sampled_from([3072, 6144, 12288]) if not hami_core
                              else st.integers(1, 16000))
                objects.append(npu_user(f"u{n}{i}{k}", name, f"{name}-npu{i}", memory))
    # Half the requests in 12289..24576: the range `trimMemory` raises to the whole chip.
    target = npu_pod(draw(st.one_of(st.integers(12289, 24576), st.integers(1, 12288))), hami_core=hami_core,
                     cores=draw(st.integers(0, 100)) if hami_core else None)
    return objects, target, {**HAMI_ARGS, "deviceshare.SchedulePolicy": draw(st.sampled_from(["binpack", "spread"]))}


@given(ascend_cluster())
@_SETTINGS
def test_every_ascend_suggestion_fits_when_replayed(case: tuple[list[dict[str, Any]], dict[str, Any],
                                                                 dict[str, Any]]) -> None:
    objects, target, args = case
    snapshot = _snapshot(objects, args)
    report = explain_in_snapshot(target, snapshot, what_if=True)
    replay(target, report, snapshot, env_from_snapshot(snapshot))
