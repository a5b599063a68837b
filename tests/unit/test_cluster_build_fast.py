"""The cluster model's shortcuts give exactly what the plain way gives.

`build_snapshot` defers each node's decoding to the first read of its devices, and reads well-formed
register and `vgpu-ids-new` annotations by direct paths instead of the codecs. These tests pin both: the
shortcuts agree with the codecs on generated annotations (tricky ones included), a whole model built with
them equals one built through the codecs only (`build_snapshot(..., shortcuts=False)`, the reference path),
and nothing is decoded before it is needed.
"""

from __future__ import annotations

import copy
import random
import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given
from hypothesis import strategies as st

import vgpuctl.core.cluster.build as cluster_build
from benchmarks.snapshot_gen import generate
from vgpuctl.core import spec
from vgpuctl.core.cluster.build import build_snapshot, fast_register, vgpu_allocations
from vgpuctl.core.cluster.model import ClusterSnapshot, NodeState
from vgpuctl.core.codecs.pod_alloc import decode_vgpu_ids
from vgpuctl.core.codecs.vgpu_register import decode_vgpu_register
from vgpuctl.core.versions import Version, parse_version
from vgpuctl.core.why import vgpu as why_vgpu
from vgpuctl.core.why.simulate import env_from_snapshot, explain_in_snapshot

MIXED = Path(__file__).resolve().parents[1] / "fixtures" / "clusters" / "mixed.yaml"
A100 = "NVIDIA-NVIDIA A100-PCIE-40GB"

# The pieces an annotation is made of: mostly what the device plugin writes, sometimes what Go and Python
# read differently (signs, non-ASCII digits, 19+ digits, odd bools and modes, empty fields).
UUIDS = (["GPU-0", "GPU-1", "GPU-2", "GPU-3"], ["", " ", "GPU-[x]", "GPU-a;b", "GPU-\n", "GPU-ü", "GPU-0"])
INTS = (["10", "40960", "4", "007", "123456789012345678"],
        ["0", "-1", "+5", "٣", " 7", "1_0", "", "x", "1234567890123456789", "99999999999999999999", "2147483648"])
TYPES = ([A100, "NVIDIA"], ["Tesla-T4", "", "nvidia-a100", "NVIDIA;x", "NVIDIA[x]"])
HEALTHS = (["true", "false", "True", "t", "1", "F"], ["yes", "", "tru", "TRUE ", "on"])
MODES = (["hami-core", "mig"], ["MIG", "mps", "", "mig ", "x;y"])
COUNTS = ([6], [5, 7, 4, 1])
ENDS = ([":"], ["::", ""])
EDGES = ([""], [":", " ", "junk"])
KINDS = (["NVIDIA"], ["", "x", "a:b"])
ALLOC_UUIDS = (["GPU-0", "GPU-1"], ["", "GPU-0[group1-0]", "GPU-0[group-1-0]", "GPU-0]", "GPU-;"])
ALLOC_COUNTS = ([4], [3, 5, 1])


def _piece(pieces: tuple[list[Any], list[Any]]) -> st.SearchStrategy[Any]:
    usual, odd = pieces
    return st.one_of(st.sampled_from(usual), st.sampled_from(usual), st.sampled_from(usual), st.sampled_from(odd))


@st.composite
def register_entries(draw: st.DrawFn) -> str:
    fields = [draw(_piece(p)) for p in (UUIDS, INTS, INTS, TYPES, HEALTHS, MODES)] + ["extra"]
    return ",".join(fields[: draw(_piece(COUNTS))])


@st.composite
def registers(draw: st.DrawFn) -> str:
    entries = draw(st.lists(register_entries(), max_size=4))
    return draw(_piece(EDGES)) + "".join(e + draw(_piece(ENDS)) for e in entries) + draw(_piece(EDGES))


def _codec_register(value: Any) -> list[tuple[str, int, int, str, bool, str]]:
    return [(d.uuid, d.split, d.memory, d.type, d.health, d.mode) for d in decode_vgpu_register(value).devices]


@given(registers())
@example(f"GPU-0,10,40960,{A100},true,hami-core:GPU-1,10,40960,{A100},false,mig:")
def test_the_register_shortcut_is_the_codec_on_values_it_takes(value: str) -> None:
    fast = fast_register(value)
    if fast is None:
        return  # the codec decodes it: nothing to compare
    for six in (True, False):
        decoded = decode_vgpu_register(value, volcano_six_fields=six)
        assert decoded.problems == () and decoded.node_usable
        assert fast == _codec_register(value)


@given(st.text(alphabet="GPU-0,1:;NVIDIAtrue mig[]", max_size=80))
def test_the_register_shortcut_never_takes_what_the_codec_complains_about(value: str) -> None:
    fast = fast_register(value)
    if fast is not None:
        assert decode_vgpu_register(value).problems == ()
        assert fast == _codec_register(value)


def _draw(rng: random.Random, pieces: tuple[list[Any], list[Any]], odd: float = 0.1) -> Any:
    return rng.choice(pieces[1] if rng.random() < odd else pieces[0])


def test_the_shortcuts_agree_with_the_codecs_on_many_values_and_take_most_plugin_shaped_ones() -> None:
    """A seeded sweep beside the properties: both paths are reached often, and they agree."""
    rng = random.Random(8)
    taken = 0
    for _ in range(3000):
        entries = [",".join(([_draw(rng, p) for p in (UUIDS, INTS, INTS, TYPES, HEALTHS, MODES)] + ["x"])
                            [: _draw(rng, COUNTS)]) + _draw(rng, ENDS) for _ in range(rng.randint(1, 3))]
        value = _draw(rng, EDGES) + "".join(entries) + _draw(rng, EDGES)
        fast = fast_register(value)
        if fast is not None:
            taken += 1
            assert decode_vgpu_register(value).problems == () and fast == _codec_register(value), value
    assert 600 < taken < 2400
    taken = 0
    for _ in range(3000):
        containers = [[",".join(([_draw(rng, p) for p in (ALLOC_UUIDS, KINDS, INTS, INTS)] + ["x"])
                                [: _draw(rng, ALLOC_COUNTS)]) + _draw(rng, ENDS) for _ in range(rng.randint(0, 2))]
                      for _ in range(rng.randint(1, 3))]
        value = ";".join("".join(c) for c in containers)
        taken += cluster_build._VGPU_IDS_WHOLE.fullmatch(value) is not None
        for skips in (False, True):
            assert vgpu_allocations(value, skips) == _codec_allocations(value, skips), value
    assert 600 < taken < 2400


def test_the_register_shortcut_takes_what_the_device_plugin_writes() -> None:
    node = generate(1)["items"][0]
    value = node["metadata"]["annotations"][spec.NODE_VGPU_REGISTER]
    assert fast_register(value) == _codec_register(value)
    assert fast_register(f"GPU-0,10,40960,{A100},true,mig:") == [("GPU-0", 10, 40960, A100, True, "mig")]
    for unusual in (f"GPU-0,10,40960,{A100},true:",  # five fields: a finding under Volcano >= 1.12
                    f"GPU-0,10,40960,{A100},true,hami-core:GPU-0,10,40960,{A100},true,hami-core:",  # twice
                    f"GPU-0,0,40960,{A100},true,hami-core:", "GPU-0,10,40960,Tesla,true,hami-core:",
                    f"GPU-0,10,40960,{A100},true,hami-core", f",10,40960,{A100},true,hami-core:", "", None, 7):
        assert fast_register(unusual) is None


@st.composite
def allocation_devices(draw: st.DrawFn) -> str:
    fields = [draw(_piece(p)) for p in (ALLOC_UUIDS, KINDS, INTS, INTS)] + ["extra"]
    return ",".join(fields[: draw(_piece(ALLOC_COUNTS))])


@st.composite
def allocations(draw: st.DrawFn) -> str:
    containers = draw(st.lists(st.lists(allocation_devices(), max_size=3), max_size=3))
    return ";".join("".join(d + draw(_piece(ENDS)) for d in c) for c in containers)


def _codec_allocations(value: Any, skips: bool) -> list[tuple[Any, ...]]:
    decoded = decode_vgpu_ids(value, skips_bad_entries=skips)
    return [(a.uuid, a.mig, a.memory, a.cores) for c in decoded.containers for a in c]


@given(allocations())
@example("GPU-0,NVIDIA,4096,25:;GPU-1,NVIDIA,8192,50:GPU-0,NVIDIA,1,1:")
@example(";;GPU-0,NVIDIA,4096,25:;")
def test_the_allocation_shortcut_is_the_codec(value: str) -> None:
    for skips in (False, True):
        assert vgpu_allocations(value, skips) == _codec_allocations(value, skips)


def test_allocations_the_shortcut_leaves_to_the_codec() -> None:
    for value in (None, 7, "", "GPU-0[group1-0],NVIDIA,5120,0:", "GPU-0,NVIDIA,-1,0:", "GPU-0,NVIDIA,4096:"):
        for skips in (False, True):
            assert vgpu_allocations(value, skips) == _codec_allocations(value, skips)


def test_without_the_shortcut_the_codec_reads_allocations_it_would_take() -> None:
    """`vgpu_allocations(..., shortcut=False)` is the codec's reading even of a value the shortcut takes."""
    for value in ("GPU-0,NVIDIA,4096,25:", "GPU-0,NVIDIA,4096,25:;GPU-1,NVIDIA,8192,50:", "GPU-0,NVIDIA,lots,1:"):
        for skips in (False, True):
            assert vgpu_allocations(value, skips, shortcut=False) == _codec_allocations(value, skips)


def _fleet(nodes: int) -> list[dict[str, Any]]:
    """The benchmark's fleet, with a five-field register entry on node 1, node 2 a second copy of node 3
    (same name, same GPUs), and the last two pods finished and unreadable."""
    assert nodes >= 4
    items: list[dict[str, Any]] = generate(nodes)["items"]
    items[1]["metadata"]["annotations"][spec.NODE_VGPU_REGISTER] += f"GPU-bad,10,40960,{A100},true:"
    items[2]["metadata"] = copy.deepcopy(items[3]["metadata"])
    items[-1]["status"]["phase"] = "Succeeded"
    items[-2]["metadata"]["annotations"][spec.ANN_VGPU_IDS_NEW] = "garbage"
    return items


def _model(items: list[dict[str, Any]], version: Version | None = None, *,
           shortcuts: bool = True) -> list[dict[str, Any]]:
    built = build_snapshot(items, "v1.31.4", volcano_version=version, shortcuts=shortcuts)
    return [n.to_dict() for n in built.nodes]


@pytest.mark.parametrize("version", [None, Version(1, 11, 0)])
def test_a_fleet_model_is_the_same_with_and_without_the_shortcuts(version: Version | None) -> None:
    items = _fleet(12)
    fast = _model(items, version)
    assert fast == _model(items, version, shortcuts=False)
    assert [f["code"] for f in fast[1]["findings"]] == (["VGN002"] if version is None else [])
    assert all(not d["pods"] for d in fast[2]["devices"])  # two nodes of one name: the pods count on the last
    assert all(d["pods"] for d in fast[3]["devices"])
    assert sum(d["slotsUsed"] for n in fast for d in n["devices"]) == 8 * 11 - 2  # node 2's pods lost theirs


def test_the_mixed_fixture_is_the_same_with_and_without_the_shortcuts() -> None:
    items = yaml.safe_load(MIXED.read_text())["items"]
    for version in (None, Version(1, 11, 0)):
        assert _model(items, version) == _model(items, version, shortcuts=False)


def _scheduler(**args: Any) -> dict[str, Any]:
    conf = {"actions": "enqueue, allocate", "tiers": [{"plugins": [{"name": "deviceshare", "arguments": args}]}]}
    return {"kind": "ConfigMap", "metadata": {"name": spec.SCHEDULER_CONFIGMAP, "namespace": spec.SCHEDULER_NAMESPACE},
            "data": {spec.SCHEDULER_CONF_KEY: yaml.safe_dump(conf)}}


WHAT_IF = {"kind": "Pod", "metadata": {"name": "what-if", "namespace": "ml"},
           "spec": {"containers": [{"name": "c", "resources": {"limits": {
               "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "30000"}}}]}}


def test_nodes_are_decoded_on_first_read_only() -> None:
    snapshot = build_snapshot(_fleet(4))
    assert not any(n.decoded for n in snapshot.nodes)
    node = snapshot.nodes[0]
    assert node.name == "gpu-node-00000" and node.labels and node.allocatable  # the object: no decoding
    assert not node.decoded
    assert len(node.devices) == 8 and node.decoded
    assert not any(n.decoded for n in snapshot.nodes[1:])


def test_why_without_a_scheduler_config_answers_with_the_cause_once() -> None:
    """The nodes are decoded once for the rule facts `why` judges the request with (`facts_from_snapshot`,
    the same facts `lint --snapshot` uses); without a scheduler config no family is on, which `why` says once
    (`cause`, VGC001) instead of ruling every node out on the family flag."""
    snapshot = build_snapshot(_fleet(4))  # no scheduler ConfigMap: deviceshare.VGPUEnable is off
    report = explain_in_snapshot(WHAT_IF, snapshot, what_if=True)
    assert report.cause is not None and report.cause.code == "VGC001" and report.unfit == []


@pytest.mark.parametrize("shortcuts", [True, False])
def test_why_reads_each_register_once(shortcuts: bool) -> None:
    """The build's reading of each register serves the simulator: `register_status` under the rule `why` reads
    with is the status the build remembered — one object, however often and by whom it is asked — where a
    reading under another rule is a fresh decode, a new object each time."""
    items = [_scheduler(**{"deviceshare.VGPUEnable": True}), *_fleet(4)]
    snapshot = build_snapshot(items, shortcuts=shortcuts)
    report = explain_in_snapshot(WHAT_IF, snapshot, what_if=True)
    assert [p.node for p in report.fits] == ["gpu-node-00000", "gpu-node-00003", "gpu-node-00003"]
    assert [g.reason.value for g in report.unfit] == ["not-device-node"]  # the 5-field node: Volcano ignores it
    assert "6" in report.unfit[0].message
    env = env_from_snapshot(snapshot)
    six = env.six_field_register
    for node in snapshot.nodes:
        remembered = node.register_status(six)
        assert why_vgpu.device_model_problem(node, env) == (
            None if remembered.usable else f"Volcano ignores the register annotation: {remembered.first_problem}")
        assert node.register_status(six) is remembered  # the build's reading, not decoded again
    assert report.unfit[0].message.endswith(snapshot.nodes[1].register_status(six).first_problem or "?")
    assert snapshot.nodes[1].register_status(not six) is not snapshot.nodes[1].register_status(not six)


def test_a_register_read_under_the_other_format_rule_is_decoded_again() -> None:
    snapshot = build_snapshot(_fleet(4))
    node = snapshot.nodes[1]  # carries a five-field entry
    assert node.register_status(True).usable is False
    assert node.register_status(True).first_problem is not None
    assert node.register_status(False).usable is True
    assert NodeState("n", {}).register_status(True).usable is False  # no annotation at all


def test_a_node_made_directly_holds_what_it_is_given() -> None:
    node = NodeState("n", {}, devices=[], findings=[], families=[spec.Family.VGPU], mode="mig")
    assert node.decoded and node.families == [spec.Family.VGPU] and node.mode == "mig"
    node.mode = "hami-core"
    assert node.mode == "hami-core"
    assert node == NodeState("n", {}, families=[spec.Family.VGPU], mode="hami-core")
    assert "name='n'" in repr(node)


def test_concurrent_first_reads_see_one_whole_decode() -> None:
    snapshot: ClusterSnapshot = build_snapshot(_fleet(4))
    node = snapshot.nodes[0]
    seen: list[object] = []
    start = threading.Barrier(8)

    def read() -> None:
        start.wait()
        seen.append(node.devices)

    threads = [threading.Thread(target=read) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len({id(devices) for devices in seen}) == 1
    assert len(node.devices) == 8 and sum(d.slots_used for d in node.devices) == 8


def test_a_malformed_allocation_is_booked_as_the_volcano_version_reads_it() -> None:
    """A device whose memory `ParseUint` rejects: read as 0 (its slot and cores booked) before 1.16, skipped
    from 1.16 on (8b6d2c482); without a version, as the newest reads it. (Both entries name one GPU: 1.13 and
    1.14 book every entry, 1.15 only a pod's first on each GPU, d7ad76892.)"""
    register = f"GPU-0,10,40960,{A100},true,hami-core:"
    node = {"kind": "Node", "metadata": {"name": "n", "annotations": {spec.NODE_VGPU_REGISTER: register}}}
    pod = {"kind": "Pod", "metadata": {"name": "p", "namespace": "ns", "annotations": {
        spec.ANN_VGPU_IDS_NEW: "GPU-0,NVIDIA,4096,10:GPU-0,NVIDIA,lots,30:"}}, "spec": {"nodeName": "n"}}

    def booked(version: str | None) -> tuple[int, int, int]:
        parsed = parse_version(version) if version else None
        gpu = build_snapshot([node, pod], volcano_version=parsed).nodes[0].devices[0]
        return gpu.memory_used, gpu.cores_used, gpu.slots_used

    assert booked("1.14.4") == (4096, 40, 2)
    assert booked("1.15.1") == booked("1.16.0") == booked(None) == (4096, 10, 1)
