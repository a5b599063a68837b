"""The pure half of cluster-aware admission: per-node parts merged into facts, and the fits-now index.

The index may only skip a node when the exact simulator would refuse it too: a property test compares
`first_fit` with simulating every node, over random clusters and requests.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tests.unit.why.builders import A100, NVIDIA, gpu, pod, vgpu_node, vgpu_pod
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.rule_facts import combine, facts_from_snapshot
from vgpuctl.core.clusterview import assemble, build_node_parts, simulation_env
from vgpuctl.core.deviceconfig import DeviceConfig, parse_device_config
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.slim import slim_node, slim_pod
from vgpuctl.core.why.anyfit import Outcome, first_fit
from vgpuctl.core.why.request import parse_pod
from vgpuctl.core.why.simulate import simulate_node
from vgpuctl.snapshotfile import load_snapshot
from vgpuctl.webhook.cluster_state import NO_ROOM_CODE, no_room_finding

MIXED = Path(__file__).resolve().parents[1] / "fixtures" / "clusters" / "mixed.yaml"
H100 = "NVIDIA-NVIDIA H100 80GB HBM3"


def config(nvidia: dict[str, Any] | None = None) -> DeviceConfig:
    parsed = parse_device_config({"nvidia": nvidia or NVIDIA})
    assert parsed.config is not None
    return parsed.config


def view_of(objects: list[dict[str, Any]], device_config: DeviceConfig | None = None) -> Any:
    nodes = [slim_node(o) for o in objects if o["kind"] == "Node"]
    pods = [p for p in (slim_pod(o) for o in objects if o["kind"] == "Pod") if p is not None]
    by_node: dict[str, list[dict[str, Any]]] = {}
    for p in pods:
        by_node.setdefault(p["spec"]["nodeName"], []).append(p)
    cfg = device_config or config()
    parts = build_node_parts(nodes, by_node, simulation_env(cfg, None))
    return assemble(parts, ClusterFacts(device_config=cfg), cfg, None)


def used(name: str, node: str, *allocations: tuple[str, int, int]) -> dict[str, Any]:
    """A running pod holding (uuid, memory, cores) on `node`."""
    ids = "".join(f"{u},NVIDIA,{m},{c}:" for u, m, c in allocations)
    return pod(name, {"volcano.sh/vgpu-number": str(len(allocations))}, node=node, phase="Running",
               annotations={"volcano.sh/vgpu-ids-new": ids})


# ---- merging per-node parts gives what lint --snapshot derives from the whole snapshot ---------------

def test_merged_parts_equal_the_facts_of_the_whole_snapshot() -> None:
    data = load_snapshot(str(MIXED))
    snapshot = build_snapshot(data.objects)
    whole = facts_from_snapshot(snapshot)
    nodes = [o for o in data.objects if o.get("kind") == "Node"]
    pods = [o for o in data.objects if o.get("kind") == "Pod"]
    by_node: dict[str, list[Any]] = {}
    for p in pods:
        by_node.setdefault(p.get("spec", {}).get("nodeName") or "", []).append(p)
    parts = build_node_parts(nodes, by_node, simulation_env(snapshot.device_config, None))
    merged = combine((parts[n.name].facts for n in snapshot.nodes), ClusterFacts())
    for field in ("vgpu_nodes", "gpushare_nodes", "ascend_nodes", "npu_core_capacities", "cores_per_310p_chip",
                  "node_resources"):
        assert getattr(merged, field) == getattr(whole, field), field
    assert merged.max_gpus_per_node == whole.max_gpus_per_node and merged.max_gpus_per_node


def test_slim_objects_give_the_same_model_as_the_full_ones() -> None:
    data = load_snapshot(str(MIXED))
    full = build_snapshot(data.objects)
    kept = []
    for obj in data.objects:
        if obj.get("kind") == "Node":
            kept.append(slim_node(obj))
        elif obj.get("kind") == "Pod":
            slim = slim_pod(obj)
            if slim is not None:
                kept.append(slim)
        else:
            kept.append(obj)
    slim = build_snapshot(kept)
    assert [n.to_dict() for n in slim.nodes] == [n.to_dict() for n in full.nodes]


def test_slim_pod_drops_what_volcano_does_not_count() -> None:
    assert slim_pod(pod("free", {"cpu": "1"}, node="n1", phase="Running")) is None  # no device
    assert slim_pod(vgpu_pod("pending", 1)) is None  # not bound
    assert slim_pod(vgpu_pod("done", 1, node="n1", phase="Succeeded")) is None
    kept = slim_pod(vgpu_pod("run", 1, node="n1", phase="Running",
                             annotations={"kubectl.kubernetes.io/last-applied-configuration": "{...}"}))
    assert kept is not None and kept["spec"]["nodeName"] == "n1"
    assert "kubectl.kubernetes.io/last-applied-configuration" not in kept["metadata"]["annotations"]


def test_gpu_memory_factor_reaches_the_model() -> None:
    """With gpuMemoryFactor 4 a registered 10240 is 40960 MiB; a view built without the factor would call
    a 20000-unit request unfit on a GPU that holds 10240 units."""
    cfg = config({**NVIDIA, "gpuMemoryFactor": 4})
    view = view_of([vgpu_node("n1", gpu("GPU-a", memory=10240))], cfg)
    (state,) = view.index.nodes
    assert state.devices[0].memory_total == 40960
    assert view.facts.gpu_devices[0].memory == 10240  # facts stay in register units, like lint --snapshot
    answer = first_fit(parse_pod(vgpu_pod("p", 1, 8000), view.index.env), view.index)
    assert answer.outcome is Outcome.FITS
    answer = first_fit(parse_pod(vgpu_pod("p", 1, 10241), view.index.env), view.index)
    assert answer.outcome is Outcome.NO_FIT


# ---- fits now ------------------------------------------------------------------------------------

def busy_cluster() -> list[dict[str, Any]]:
    return [
        vgpu_node("a", gpu("GPU-a0"), gpu("GPU-a1")),
        vgpu_node("b", gpu("GPU-b0"), gpu("GPU-b1")),
        used("w1", "a", ("GPU-a0", 32768, 50)), used("w2", "a", ("GPU-a1", 32768, 50)),
        used("w3", "b", ("GPU-b0", 30000, 100)), used("w4", "b", ("GPU-b1", 10000, 20)),
    ]


def test_first_fit_finds_the_node_with_room() -> None:
    view = view_of(busy_cluster())
    answer = first_fit(parse_pod(vgpu_pod("p", 1, 20000), view.index.env), view.index)
    assert answer.outcome is Outcome.FITS and answer.node == "b"
    assert answer.simulated == 1  # most headroom first: b's GPU-b1 has 30960 free


def test_no_room_now_is_proven_and_explained() -> None:
    view = view_of(busy_cluster())
    request = vgpu_pod("p", 1, 32000)
    answer = first_fit(parse_pod(request, view.index.env), view.index)
    assert answer.outcome is Outcome.NO_FIT and answer.family_nodes == 2
    assert answer.closest is not None and answer.closest.node == "b"
    assert "free memory 30960 MiB < 32000 MiB" in answer.closest.message
    finding = no_room_finding(request, answer)
    assert finding is not None and finding.code == NO_ROOM_CODE and finding.severity.value == "warning"
    assert finding.subject == "pod/ml/p"
    assert finding.message.startswith("no node has room for this pod right now (2 device nodes); closest b: "
                                      "insufficient-memory: GPU 1: free memory 30960 MiB < 32000 MiB")


def test_exclusive_and_type_requests_use_their_own_orders() -> None:
    view = view_of(busy_cluster())
    env = view.index.env
    # vgpu-cores 100 needs an idle GPU: there is none
    assert first_fit(parse_pod(vgpu_pod("p", 1, 1000, cores=100), env), view.index).outcome is Outcome.NO_FIT
    # a type filter no GPU passes: ruled out per type group, nothing simulated but the message's node
    typed = vgpu_pod("p", 1, 1000, annotations={"nvidia.com/use-gputype": "H100"})
    answer = first_fit(parse_pod(typed, env), view.index)
    assert answer.outcome is Outcome.NO_FIT and answer.simulated == 1 and answer.scanned == 0
    assert answer.closest is not None and answer.closest.reason is not None
    assert answer.closest.reason.value == "type-excluded"


def test_budgets_make_the_answer_unknown_never_a_guess() -> None:
    objects = [vgpu_node(f"n{i}", gpu(f"GPU-{i}")) for i in range(5)]
    view = view_of(objects)
    # every node has room on paper; the exact filter refuses them all (the UUID filter matches nothing)
    request = vgpu_pod("p", 1, 1000, annotations={"volcano.sh/vgpu-use-gpuuuid": "GPU-nowhere"})
    parsed = parse_pod(request, view.index.env)
    assert first_fit(parsed, view.index, budget=3).outcome is Outcome.UNKNOWN
    assert first_fit(parsed, view.index, scan_budget=2).outcome is Outcome.UNKNOWN
    assert first_fit(parsed, view.index).outcome is Outcome.NO_FIT
    assert no_room_finding(request, first_fit(parsed, view.index, budget=3)) is None


def test_pods_without_devices_are_not_checked() -> None:
    view = view_of(busy_cluster())
    answer = first_fit(parse_pod(pod("cpu", {"cpu": "2"}), view.index.env), view.index)
    assert answer.outcome is Outcome.NO_DEVICE


def test_other_families_of_the_mixed_cluster() -> None:
    data = load_snapshot(str(MIXED))
    snapshot = build_snapshot(data.objects)
    objects = [o for o in data.objects if o.get("kind") in ("Node", "Pod")]
    view = view_of(objects, snapshot.device_config)
    env = view.index.env
    for obj in objects:
        if obj["kind"] != "Pod":
            continue
        what_if = {**obj, "spec": {k: v for k, v in obj["spec"].items() if k != "nodeName"}}
        request = parse_pod(what_if, env)
        exact = any(simulate_node(request, n, env).fits for n in view.index.nodes)
        answer = first_fit(request, view.index)
        if answer.outcome is not Outcome.NO_DEVICE:
            assert (answer.outcome is Outcome.FITS) == exact, obj["metadata"]["name"]


# ---- the index never rules out a node the simulator would take ------------------------------------

TYPES = (A100, H100)
usage = st.tuples(st.sampled_from([0, 4096, 20000, 40960]), st.sampled_from([0, 30, 100]))


@st.composite
def clusters(draw: st.DrawFn) -> list[dict[str, Any]]:
    objects: list[dict[str, Any]] = []
    for n in range(draw(st.integers(1, 4))):
        mode = draw(st.sampled_from(["hami-core", "hami-core", "mig"]))
        gpus = []
        for g in range(draw(st.integers(1, 3))):
            uuid = f"GPU-{n}-{g}"
            gpus.append(gpu(uuid, split=draw(st.sampled_from([1, 2, 10])), mode=mode,
                            type_=draw(st.sampled_from(TYPES))))
            for k in range(draw(st.integers(0, 2))):
                memory, cores = draw(usage)
                if mode == "mig":
                    objects.append(pod(f"m{n}{g}{k}", {"volcano.sh/vgpu-number": "1"}, node=f"n{n}",
                                       phase="Running", annotations={
                                           "volcano.sh/vgpu-ids-new": f"{uuid}[group2-{k}],NVIDIA,10240,0:"}))
                else:
                    objects.append(used(f"u{n}{g}{k}", f"n{n}", (uuid, memory, cores)))
        objects.append(vgpu_node(f"n{n}", *gpus))
    return objects


@st.composite
def requests(draw: st.DrawFn) -> dict[str, Any]:
    annotations = {}
    if draw(st.booleans()):
        annotations["volcano.sh/vgpu-mode"] = draw(st.sampled_from(["hami-core", "mig"]))
    if draw(st.booleans()):
        annotations[draw(st.sampled_from(["nvidia.com/use-gputype", "nvidia.com/nouse-gputype"]))] = \
            draw(st.sampled_from(["A100", "H100", "a100,h100", "V100"]))
    limits: dict[str, Any] = {"volcano.sh/vgpu-number": str(draw(st.integers(1, 3)))}
    memory = draw(st.sampled_from([None, 1000, 5000, 20000, 20960, 40000, 40960, 50000]))
    if memory is not None:
        limits["volcano.sh/vgpu-memory"] = str(memory)
    elif draw(st.booleans()):
        limits["volcano.sh/vgpu-memory-percentage"] = str(draw(st.sampled_from([1, 49, 50, 51, 100])))
    cores = draw(st.sampled_from([None, 0, 1, 50, 70, 100]))
    if cores is not None:
        limits["volcano.sh/vgpu-cores"] = str(cores)
    containers = [{"name": f"c{i}", "resources": {"limits": limits}} for i in range(draw(st.integers(1, 2)))]
    return pod("p", containers=containers, annotations=annotations)


@given(clusters(), requests())
def test_first_fit_agrees_with_simulating_every_node(objects: list[dict[str, Any]], request: dict[str, Any]) -> None:
    cfg = config({**NVIDIA, "resourceMemoryPercentageName": "volcano.sh/vgpu-memory-percentage"})
    view = view_of(objects, cfg)
    env = view.index.env
    parsed = parse_pod(request, env)
    exact = [n.name for n in view.index.nodes if simulate_node(parsed, n, env).fits]
    answer = first_fit(parsed, view.index, budget=1000, scan_budget=1000)
    assert answer.outcome is (Outcome.FITS if exact else Outcome.NO_FIT), (exact, answer)
    if exact:
        assert answer.node in exact
