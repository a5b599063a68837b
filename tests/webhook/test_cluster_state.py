"""The cluster state's bookkeeping at scale (issue 26): what a re-list keeps, what a publish re-derives, and that a
view built change by change is the view built from scratch.

The state is fed through its watch sink (`keep`, `replace`, `apply`) as `kube/watch.py` feeds it, and publishes
from its own thread; nothing of it is replaced or patched.
"""

from __future__ import annotations

import copy
import random
import subprocess
import sys
import textwrap
import time
from typing import Any

import pytest

from tests.unit.why.builders import NVIDIA, gpu, vgpu_node
from vgpuctl.core.clusterview import ClusterView, assemble, build_node_parts, simulation_env
from vgpuctl.core.deviceconfig import DeviceConfig, parse_device_config
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.slim import slim_node, slim_pod
from vgpuctl.webhook.alloc_metrics import allocation_of
from vgpuctl.webhook.cluster_state import ClusterState, Published

CONFIG = parse_device_config({"nvidia": NVIDIA}).config
assert CONFIG is not None
BASE = ClusterFacts(device_config=CONFIG)
NOW = 1_800_000_000.0


def node(i: int, gpus: int = 2, version: int = 1, memory: int = 40960) -> dict[str, Any]:
    obj = vgpu_node(f"n{i}", *(gpu(f"GPU-{i}-{k}", memory=memory) for k in range(gpus)))
    obj["metadata"]["resourceVersion"] = f"n{i}-{version}"
    return obj


def gpu_pod(name: str, node_index: int, k: int, memory: int = 4096, version: int = 1) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ml", "resourceVersion": f"{name}-{version}",
                         "annotations": {"volcano.sh/vgpu-ids-new": f"GPU-{node_index}-{k},NVIDIA,{memory},10:"}},
            "spec": {"nodeName": f"n{node_index}", "containers": [{"name": "c", "resources": {"limits": {
                "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": str(memory)}}}]},
            "status": {"phase": "Running"}}


def plain_pod(name: str, node_index: int) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "web", "resourceVersion": f"{name}-1"},
            "spec": {"nodeName": f"n{node_index}", "containers": [{"name": "c", "resources": {
                "requests": {"cpu": "1"}}}]},
            "status": {"phase": "Running"}}


def make_state() -> ClusterState:
    return ClusterState(base_facts=lambda: BASE, device_config=lambda: CONFIG, min_interval=0.0, poll_interval=0.05,
                        clock=lambda: NOW)


def listed(state: ClusterState, kind: str, objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """What a list of `objects` hands the state: each item through `keep` (a fresh copy, as parsed from a page)."""
    kept = [state.keep(kind, copy.deepcopy(o)) for o in objects]
    state.replace(kind, [k for k in kept if k is not None])
    return [k for k in kept if k is not None]


def next_view(state: ClusterState, after: Published | None) -> Published:
    deadline = time.monotonic() + 20
    while state.published is None or state.published is after:
        assert time.monotonic() < deadline, "no view was published"
        time.sleep(0.01)  # polling the publisher thread
    published = state.published
    assert published is not None
    return published


@pytest.fixture
def state() -> Any:
    made = make_state()
    made.start(None)
    yield made
    made.stop()


def test_a_relist_with_unchanged_versions_keeps_the_same_objects(state: ClusterState) -> None:
    nodes = [node(i) for i in range(3)]
    pods = [gpu_pod(f"p{i}", i, 0) for i in range(3)] + [plain_pod("web", 0)]
    first_nodes = listed(state, "nodes", nodes)
    first_pods = listed(state, "pods", pods)
    view = next_view(state, None)

    pods[1] = gpu_pod("p1", 1, 1, version=2)  # moved to the node's other GPU: a new version
    again_nodes = listed(state, "nodes", nodes)
    again_pods = listed(state, "pods", pods)
    assert all(a is b for a, b in zip(again_nodes, first_nodes, strict=True))
    assert again_pods[0] is first_pods[0] and again_pods[2] is first_pods[2]
    assert again_pods[1] is not first_pods[1]
    assert again_pods[1]["metadata"]["resourceVersion"] == "p1-2"

    after = next_view(state, view)
    env = after.view.index.env
    # the view counts the very objects the state keeps: no second copy of an unchanged pod
    assert env.by_node["n0"]["ml/p0"] is first_pods[0]  # type: ignore[attr-defined]
    assert env.by_node["n1"]["ml/p1"] is again_pods[1]  # type: ignore[attr-defined]
    # only the node whose pod changed was derived again
    before_states = {s.name: s for s in view.view.index.nodes}
    for s in after.view.index.nodes:
        assert (s is before_states[s.name]) == (s.name != "n1"), s.name


def test_a_listed_object_without_a_version_is_always_slimmed_again(state: ClusterState) -> None:
    obj = gpu_pod("p0", 0, 0)
    del obj["metadata"]["resourceVersion"]
    first = state.keep("pods", copy.deepcopy(obj))
    assert first is not None
    state.replace("pods", [first])
    assert state.keep("pods", copy.deepcopy(obj)) is not first


def test_pod_events_keep_the_facts_and_a_node_change_makes_new_ones(state: ClusterState) -> None:
    listed(state, "nodes", [node(i) for i in range(4)])
    listed(state, "pods", [gpu_pod(f"p{i}", i, 0) for i in range(4)])
    first = next_view(state, None)

    state.apply("pods", "DELETED", gpu_pod("p2", 2, 0, version=2))
    state.apply("pods", "ADDED", gpu_pod("q", 3, 1))
    second = next_view(state, first)
    assert second.view.pods == first.view.pods
    assert second.view.facts is first.view.facts  # pods never change a node's facts: kept, with their memos
    unchanged = {s.name: s for s in first.view.index.nodes}
    assert [s.name for s in second.view.index.nodes if s is not unchanged[s.name]] == ["n2", "n3"]

    state.apply("nodes", "MODIFIED", node(1, gpus=4, version=2))
    third = next_view(state, second)
    assert third.view.facts is not second.view.facts
    assert third.view.facts.max_gpus_per_node == 4 and second.view.facts.max_gpus_per_node == 2


def from_scratch(nodes: dict[str, dict[str, Any]], pods: dict[str, dict[str, Any]],
                 config: DeviceConfig) -> tuple[ClusterView, dict[str, Any]]:
    slim_nodes = [slim_node(n) for n in nodes.values()]
    by_node: dict[str, list[dict[str, Any]]] = {}
    for p in pods.values():
        kept = slim_pod(p)
        if kept is not None:
            by_node.setdefault(kept["spec"]["nodeName"], []).append(kept)
    parts = build_node_parts(slim_nodes, by_node, simulation_env(config, None))
    return assemble(parts, BASE, config, None), allocation_of(parts, config, None, NOW)


def shape(view: ClusterView) -> dict[str, Any]:
    facts = view.facts
    return {"nodes": view.nodes, "pods": view.pods, "vgpu": facts.vgpu_nodes, "resources": facts.node_resources,
            "max": facts.max_gpus_per_node, "summaries": view.index.summaries,
            "by_node": {n: sorted(p) for n, p in view.index.env.by_node.items()}}  # type: ignore[attr-defined]


@pytest.mark.parametrize("seed", range(4))
def test_a_view_built_event_by_event_equals_one_built_from_scratch(seed: int) -> None:
    rng = random.Random(seed)
    state = make_state()
    state.start(None)
    try:
        nodes = {f"n{i}": node(i, gpus=rng.choice((1, 2, 4))) for i in range(8)}
        pods: dict[str, dict[str, Any]] = {}
        for i in range(20):
            n = rng.randrange(8)
            pods[f"ml/p{i}"] = gpu_pod(f"p{i}", n, 0, memory=rng.choice((1024, 4096)))
        pods["web/w"] = plain_pod("w", 0)
        listed(state, "nodes", list(nodes.values()))
        listed(state, "pods", list(pods.values()))
        published = next_view(state, None)
        for step in range(40):
            what = rng.random()
            if what < 0.45 and pods:  # a pod goes
                key = rng.choice(sorted(pods))
                state.apply("pods", "DELETED", pods.pop(key))
            elif what < 0.85:  # a pod comes, or changes
                i = rng.randrange(30)
                pods[f"ml/p{i}"] = made = gpu_pod(f"p{i}", rng.randrange(8), rng.randrange(2), version=step + 2)
                state.apply("pods", "MODIFIED", made)
            elif what < 0.95:  # a node changes, comes back, or goes
                i = rng.randrange(9)
                if f"n{i}" in nodes and rng.random() < 0.3:
                    state.apply("nodes", "DELETED", nodes.pop(f"n{i}"))
                else:
                    nodes[f"n{i}"] = made = node(i, gpus=rng.choice((1, 2, 4)), version=step + 2)
                    state.apply("nodes", "MODIFIED", made)
            else:  # 410 Gone: both lists again
                listed(state, "nodes", list(nodes.values()))
                listed(state, "pods", list(pods.values()))
            if step % 7 == 6:
                published = next_view(state, published)
        state.apply("pods", "MODIFIED", pods.setdefault("web/w", plain_pod("w", 0)))  # wakes the publisher
        deadline = time.monotonic() + 20
        view, allocation = from_scratch(nodes, pods, CONFIG)
        while shape(state.published.view) != shape(view):  # type: ignore[union-attr]
            assert time.monotonic() < deadline, "the view never caught up with the events"
            time.sleep(0.01)  # polling the publisher thread
        published = state.published  # type: ignore[assignment]
        assert dict(published.allocation) == allocation
    finally:
        state.stop()


def test_the_pod_index_of_a_view_is_merged_from_its_nodes_when_first_asked() -> None:
    a, b = slim_pod(gpu_pod("a", 0, 0)), slim_pod(gpu_pod("b", 1, 0))
    assert a is not None and b is not None
    env = simulation_env(CONFIG, None, by_node={"n0": {"ml/a": a}, "n1": {"ml/b": b}})
    assert env.by_key is None  # nothing merged while nobody asks
    assert env.pod("ml/b") is b and env.pod("ml/a") is a and env.pod("ml/c") is None
    assert env.by_key == {"ml/a": a, "ml/b": b}


def test_a_long_list_is_frozen_as_it_is_kept_once_the_heap_was() -> None:
    # A fresh interpreter: freezing in the test process would leak into every other test.
    script = textwrap.dedent("""
        import gc
        from vgpuctl.core.facts import ClusterFacts
        from vgpuctl.webhook import heap
        from vgpuctl.webhook.cluster_state import FREEZE_EVERY, ClusterState

        state = ClusterState(base_facts=ClusterFacts, device_config=lambda: None)
        plain = {"metadata": {"name": "w", "namespace": "web"}, "spec": {"nodeName": "n0", "containers": []}}
        for _ in range(FREEZE_EVERY):
            state.keep("pods", plain)
        assert gc.get_freeze_count() == 0, "nothing is frozen unless the server froze its heap"
        heap.freeze()
        frozen = gc.get_freeze_count()
        alive = [[i] for i in range(5000)]
        for _ in range(FREEZE_EVERY):
            state.keep("pods", plain)
        assert gc.get_freeze_count() >= frozen + len(alive), (frozen, gc.get_freeze_count())
        print("ok")
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"
