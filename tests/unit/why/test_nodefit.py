"""`why` replays Volcano's node-level checks, in Volcano's order (issue 24 §1, docs/volcano.md#allocate-predicate).

Upstream evidence (volcano-sh/volcano; tags v1.9.0 … v1.16.0-alpha.1, master ed72c7c81):
- `pkg/scheduler/actions/allocate/allocate.go (alloc *Action) predicate`: first
  `task.InitResreq.LessEqualWithResourcesName(node.FutureIdle(), api.Zero)` ("Insufficient cpu", …), then
  `ssn.PredicateForAllocateAction`, the plugins' predicates in tier/plugin order (`PredicateFn`);
- `pkg/scheduler/api/pod_info.go GetPodResourceRequest` (requests; init containers as a maximum, sidecars added;
  `pods: 1`); `api/node_info.go AddTask` / `FutureIdle` (Releasing pods give their resources back);
  `api/helpers.go getTaskStatus` (a `deletionTimestamp` while Running/Pending: Releasing);
- `api/node_info.go setNodeState`: the Ready condition leaves a node out before v1.11 (e697acac5), not after;
- `pkg/scheduler/plugins/predicates/predicates.go`: the pod count, NodeUnschedulable, NodeAffinity (if
  `predicate.NodeAffinityEnable`), TaintToleration (if `predicate.TaintTolerationEnable`), each default true.
"""

from __future__ import annotations

from typing import Any

import yaml

from tests.unit.why.builders import NVIDIA, device_config, gpu, pod, vgpu_node, vgpu_pod
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.clusterview import simulation_env
from vgpuctl.core.versions import Version, judges_readiness_by_taints
from vgpuctl.core.why.anyfit import Outcome, build_index, first_fit, summarize
from vgpuctl.core.why.model import Reason, WhyReport
from vgpuctl.core.why.request import parse_pod
from vgpuctl.core.why.scheduler_env import WhyEnv
from vgpuctl.core.why.simulate import env_from_snapshot, explain_in_snapshot
from vgpuctl.core.why.usage import NodeTallies, NodeUsage, node_usage, pod_resources
from vgpuctl.core.why.whatif import explain_what_if

U0, U1 = (f"GPU-{i}{i}{i}{i}{i}{i}{i}{i}-0000-0000-0000-000000000000" for i in range(2))
VGPU = {"deviceshare.VGPUEnable": True}
PREDICATES_FIRST = [{"name": "predicates"}, {"name": "deviceshare", "arguments": VGPU}]


def scheduler(plugins: list[dict[str, Any]]) -> dict[str, Any]:
    conf = {"actions": "enqueue, allocate", "tiers": [{"plugins": plugins}]}
    return {"kind": "ConfigMap", "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
            "data": {"volcano-scheduler.conf": yaml.safe_dump(conf)}}


def gpu_id(name: str) -> str:
    return f"GPU-{name}"[:12] + U0[12:]


def node(name: str, *, cpu: str = "64", memory: str = "512Gi", pods: str = "110", labels: dict[str, str] | None = None,
         taints: list[dict[str, str]] | None = None, unschedulable: bool = False,
         ready: str | None = None) -> dict[str, Any]:
    """A one-GPU vGPU node as a kubelet reports it: cpu, memory and pods next to the vGPU resources."""
    obj = vgpu_node(name, gpu(gpu_id(name)))
    obj["metadata"]["labels"] = labels or {}
    obj["status"]["allocatable"].update({"cpu": cpu, "memory": memory, "pods": pods})
    spec: dict[str, Any] = {}
    if taints is not None:
        spec["taints"] = taints
    if unschedulable:
        spec["unschedulable"] = True
    obj["spec"] = spec
    if ready is not None:
        obj["status"]["conditions"] = [{"type": "Ready", "status": ready}]
    return obj


def cpu_pod(name: str, cpu: str, *, on: str, phase: str = "Running", deleting: bool = False,
            scheduler_name: str = "default-scheduler") -> dict[str, Any]:
    """A pod without devices, bound to `on`, requesting `cpu`."""
    obj = pod(name, containers=[{"name": "c", "resources": {"requests": {"cpu": cpu}}}], node=on, phase=phase)
    obj["spec"]["schedulerName"] = scheduler_name
    if deleting:
        obj["metadata"]["deletionTimestamp"] = "2026-11-02T08:00:00Z"
    return obj


def gpu_pod(name: str = "p", *, cpu: str | None = None, memory: str | None = None, limits_only: bool = False,
            **spec: Any) -> dict[str, Any]:
    """A what-if vGPU pod (one GPU, 1000 MiB) asking for `cpu`/`memory` (requests, or limits only)."""
    limits: dict[str, Any] = {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "1000"}
    requests: dict[str, Any] = {}
    for key, value in (("cpu", cpu), ("memory", memory)):
        if value is not None:
            (limits if limits_only else requests)[key] = value
    resources: dict[str, Any] = {"limits": limits, **({"requests": requests} if requests else {})}
    obj = pod(name, containers=[{"name": "c", "resources": resources}])
    obj["spec"].update(spec)
    return obj


def snapshot(*objects: dict[str, Any], plugins: list[dict[str, Any]] | None = None) -> ClusterSnapshot:
    return build_snapshot([scheduler(plugins if plugins is not None else PREDICATES_FIRST),
                           device_config({"nvidia": NVIDIA}), *objects])


def why(target: dict[str, Any], *objects: dict[str, Any], version: Version | None = None,
        plugins: list[dict[str, Any]] | None = None) -> WhyReport:
    return explain_in_snapshot(target, snapshot(*objects, plugins=plugins), what_if=True, volcano_version=version)


def reasons(report: WhyReport) -> dict[str, Reason | None]:
    return {v.node: v.reason for v in report.closest}


# ---- the example ----------------------------------------------------------------------------------------

def test_a_selector_nobody_has_and_500_cpu_on_64_cpu_nodes_fit_nowhere() -> None:
    """Issue 24: this used to be "fits 4 nodes". The allocate action's resource check comes first in Volcano, so
    each node is refused for cpu; the message gives the numbers and the node selector it would fail next."""
    nodes = [node(f"n{i}") for i in range(4)]
    report = why(gpu_pod(cpu="500", memory="4Ti", nodeSelector={"zone": "nowhere"}), *nodes)
    assert report.verdict == "no-fit" and not report.schedulable and report.fits == []
    [group] = report.unfit
    assert group.reason is Reason.INSUFFICIENT_RESOURCE and group.count == 4
    assert "Insufficient cpu: the pod requests 500; the node has 64 allocatable, 64 idle" in group.message
    assert "short of memory too" in group.message
    assert "then also node-selector (nodeSelector zone=nowhere)" in group.message
    assert "its devices would fit" in group.message
    assert report.to_dict()["unfit"][0]["reason"] == "insufficient-resource"


def test_the_selector_alone_decides_where_the_cpu_fits() -> None:
    report = why(gpu_pod(cpu="8", nodeSelector={"zone": "a"}), node("n1", labels={"zone": "a"}),
                 node("n2", labels={"zone": "b"}), node("n3"))
    assert [p.node for p in report.fits] == ["n1"]
    [group] = report.unfit
    assert group.reason is Reason.NODE_SELECTOR and group.nodes == ("n2", "n3")
    assert "nodeSelector zone=a, it has zone=b" in group.message


# ---- the resource check -------------------------------------------------------------------------------------------

def test_pods_already_on_the_node_use_its_cpu_whoever_scheduled_them() -> None:
    """A pod of the default scheduler counts as much as Volcano's; a finished one does not."""
    objects = [node("n1"), cpu_pod("web", "50", on="n1"), cpu_pod("batch", "10", on="n1", scheduler_name="volcano"),
               cpu_pod("done", "64", on="n1", phase="Succeeded")]
    report = why(gpu_pod(cpu="8"), *objects)
    assert report.verdict == "no-fit"
    assert reasons(report) == {"n1": Reason.INSUFFICIENT_RESOURCE}
    assert "the node has 64 allocatable, 4 idle (60 requested by its pods)" in report.unfit[0].message
    assert why(gpu_pod(cpu="4"), *objects).verdict == "fits"


def test_the_pods_on_a_node_are_summed_alike_however_many_share_a_shape() -> None:
    """Replicas asking alike are summed once per shape (benchmarks/why_scale.py): the node's usage is still the
    sum of every pod's request, a quantity that is not a string (1, 1.0 and True are equal keys, not equal
    requests) and a pod with init containers included."""
    def asking(name: str, *requests: dict[str, Any], init: str | None = None) -> dict[str, Any]:
        obj = pod(name, containers=[{"name": f"c{i}", "resources": {"requests": r}} for i, r in enumerate(requests)],
                  node="n1", phase="Running")
        if init is not None:
            obj["spec"]["initContainers"] = [{"name": "i", "restartPolicy": init,
                                              "resources": {"requests": {"cpu": "3"}}}]
        return obj

    pods = [*(cpu_pod(f"web-{i}", "500m", on="n1") for i in range(3)), asking("int", {"cpu": 1}),
            asking("bool", {"cpu": True}), asking("float", {"cpu": 1.0}), asking("text", {"cpu": "1"}),
            asking("int-again", {"cpu": 1}), asking("bool-again", {"cpu": True}), asking("list", {"cpu": ["2"]}),
            asking("map", {"cpu": {"a": "2"}}, {"memory": "1Gi"}), asking("init", {"cpu": "1"}, init="Never"),
            asking("sidecar", {"cpu": "1"}, init="Always"), asking("init-again", {"cpu": "1"}, init="Never"),
            asking("two", {"cpu": "1"}, {"memory": "1Gi"}), asking("two-again", {"cpu": "1"}, {"memory": "1Gi"}),
            asking("swapped", {"memory": "1Gi"}, {"cpu": "1"}), asking("none", {})]
    # One container, read without `_request_shape`'s call: no resources, limits only, parts that are not maps.
    for i, resources in enumerate(({"limits": {"cpu": "7"}}, None, [], {"requests": ["cpu"]}, {"requests": None},
                                   {"requests": {"cpu": "2", "memory": 1}}, {"requests": {"cpu": "2", "memory": "1"}})):
        container = {"name": "c"} if resources is None else {"name": "c", "resources": resources}
        one = pod(f"one-{i}", containers=[container], node="n1", phase="Running")
        pods += [one, one]
    usage = node_usage("n1", env_from_snapshot(snapshot(node("n1"), *pods)))
    expected: dict[str, int] = {}
    for p in pods:
        for name, amount in pod_resources(p["spec"]).items():
            expected[name] = expected.get(name, 0) + amount
    assert usage.used == expected and usage.pods == len(pods)
    assert expected["cpu"] == (1500 + 1000 + 0 + 1000 + 1000 + 1000 + 0 + 3000 + 4000 + 3000 + 3 * 1000
                               + 2 * (2000 + 2000))
    assert expected["pods"] == len(pods)
    # The same tally made in the snapshot build's pass over the pods, as `why` makes it (`NodeTallies`)
    objects = [node("n1"), node("n2"), *pods, cpu_pod("elsewhere", "3", on="n2"),
               cpu_pod("gone", "3", on="n2", phase="Failed"), cpu_pod("leaving", "5", on="n2", deleting=True)]
    tallies = NodeTallies()
    built = build_snapshot(objects, pod_visitor=tallies)
    assert built.pod_visitor is tallies and tallies.seen == len(objects) - 2
    seeded, own = env_from_snapshot(built), env_from_snapshot(build_snapshot(objects))
    assert seeded._usage is not None and own._usage is None  # filled by the build's tally, not a pass of its own
    for name in ("n1", "n2", "n3"):
        assert node_usage(name, seeded) == node_usage(name, own)
    assert node_usage("n2", seeded) == NodeUsage({"pods": 1, "cpu": 3000}, 2, 1, 0)
    # An env with look-ups of its own (the cluster-aware webhook's) tallies a node from its `pods_on`, alike
    bound = {"n1": {f"x/{i}": p for i, p in enumerate(pods)}, "n2": {"x/a": objects[-3], "x/b": objects[-1]}}
    watched = simulation_env(None, None, by_node=bound)
    for name in ("n1", "n2", "n3"):
        assert node_usage(name, watched) == node_usage(name, own)


def test_pods_being_deleted_give_their_resources_back() -> None:
    """A Running pod with a deletionTimestamp is Releasing: FutureIdle = Idle + Releasing."""
    report = why(gpu_pod(cpu="60"), node("n1"), cpu_pod("old", "60", on="n1", deleting=True))
    assert report.verdict == "fits"
    assert why(gpu_pod(cpu="60"), node("n1"), cpu_pod("old", "60", on="n1")).verdict == "no-fit"


def test_the_pod_count_counts_pods_being_deleted() -> None:
    """The allocate action gives a Releasing pod's pod slot back, the predicates plugin's pod count does not."""
    objects = [node("n1", pods="2"), cpu_pod("a", "1", on="n1"), cpu_pod("b", "1", on="n1", deleting=True)]
    report = why(gpu_pod(cpu="1"), *objects)
    assert reasons(report) == {"n1": Reason.INSUFFICIENT_RESOURCE}
    assert "pod number exceeded: 2 pods on the node (1 being deleted" in report.unfit[0].message
    full = why(gpu_pod(cpu="1"), node("n1", pods="1"), cpu_pod("a", "1", on="n1"))
    assert "Insufficient pods: the pod requests 1; the node has 1 allocatable, 0 idle" in full.unfit[0].message


def test_a_manifest_with_only_limits_requests_them_as_the_api_server_defaults_it() -> None:
    report = why(gpu_pod(cpu="100", limits_only=True), node("n1"))
    assert reasons(report) == {"n1": Reason.INSUFFICIENT_RESOURCE}
    assert "Insufficient cpu: the pod requests 100" in report.unfit[0].message
    assert any("requests taken from the limits for cpu" in n for n in report.notes)


def test_a_stored_pod_on_the_node_counts_its_requests_only() -> None:
    """A bound pod is as the API server stored it: without a request it uses no cpu, whatever its limit."""
    stored = pod("old", containers=[{"name": "c", "resources": {"limits": {"cpu": "60"}}}], node="n1",
                 phase="Running")
    assert why(gpu_pod(cpu="60"), node("n1"), stored).verdict == "fits"
    stored["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "60"}
    assert why(gpu_pod(cpu="60"), node("n1"), stored).verdict == "no-fit"


def test_init_containers_count_as_a_maximum_and_sidecars_add_up() -> None:
    spec = {"containers": [{"name": "app", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}}],
            "initContainers": [
                {"name": "setup", "resources": {"requests": {"cpu": "3"}}},
                {"name": "proxy", "restartPolicy": "Always", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
                {"name": "late", "resources": {"requests": {"cpu": "1"}}}],
            "overhead": {"cpu": "250m"}}
    # app + sidecar = 3 cpu, 2Gi; init max = max(setup 3, proxy 1, late 1 + proxy 1) = 3; + overhead
    assert pod_resources(spec) == {"cpu": 3250, "memory": 2 << 30, "pods": 1}
    target = gpu_pod(cpu="2")
    target["spec"]["initContainers"] = [{"name": "setup", "resources": {"requests": {"cpu": "70"}}}]
    report = why(target, node("n1"))
    assert "Insufficient cpu: the pod requests 70;" in report.unfit[0].message


def test_a_resource_the_node_does_not_advertise_is_insufficient() -> None:
    # (not nvidia.com/gpu: beside vgpu-* that is another GPU stack, which the pod rules reject first, VGP019)
    report = why(pod("p", {"volcano.sh/vgpu-number": "1", "example.com/fpga": "1"}), node("n1"))
    assert reasons(report) == {"n1": Reason.INSUFFICIENT_RESOURCE}
    assert "Insufficient example.com/fpga: the pod requests 1, the node does not advertise it" in \
        report.unfit[0].message


# ---- the predicates plugin's filters ---------------------------------------------------------------------------

GPU_TAINT = {"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}


def test_an_untolerated_taint_is_named_and_a_toleration_is_suggested() -> None:
    report = why(gpu_pod(), node("n1", taints=[GPU_TAINT]))
    assert reasons(report) == {"n1": Reason.TAINT}
    assert "untolerated taint nvidia.com/gpu=present:NoSchedule" in report.unfit[0].message
    assert any("{key: nvidia.com/gpu, operator: Equal, value: present, effect: NoSchedule}" in h
               for h in report.hints)


def test_tolerations_follow_kubernetes_rules() -> None:
    tainted = node("n1", taints=[GPU_TAINT, {"key": "soft", "effect": "PreferNoSchedule"}])
    for tolerations in ([{"key": "nvidia.com/gpu", "operator": "Equal", "value": "present", "effect": "NoSchedule"}],
                        [{"key": "nvidia.com/gpu", "operator": "Exists"}],  # any value, any effect
                        [{"key": "nvidia.com/gpu", "value": "present"}],  # no operator: Equal
                        [{"operator": "Exists"}]):  # empty key with Exists: every taint
        assert why(gpu_pod(tolerations=tolerations), tainted).verdict == "fits", tolerations
    for tolerations in ([{"key": "nvidia.com/gpu", "operator": "Equal", "value": "absent"}],
                        [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoExecute"}]):
        assert why(gpu_pod(tolerations=tolerations), tainted).verdict == "no-fit", tolerations


def test_a_cordoned_node_is_unschedulable_unless_tolerated() -> None:
    report = why(gpu_pod(), node("n1", unschedulable=True))
    assert reasons(report) == {"n1": Reason.NODE_UNSCHEDULABLE}
    assert "cordoned" in report.unfit[0].message
    tolerant = gpu_pod(tolerations=[{"key": "node.kubernetes.io/unschedulable", "operator": "Exists",
                                     "effect": "NoSchedule"}])
    assert why(tolerant, node("n1", unschedulable=True)).verdict == "fits"


def test_checks_come_in_volcanos_order() -> None:
    """Cordoned, unlabelled and tainted: NodeUnschedulable decides, the others are named after it."""
    report = why(gpu_pod(nodeSelector={"zone": "a"}), node("n1", unschedulable=True, taints=[GPU_TAINT]))
    assert reasons(report) == {"n1": Reason.NODE_UNSCHEDULABLE}
    assert "then also node-selector (nodeSelector zone=a), taint (taint nvidia.com/gpu=present:NoSchedule)" in \
        report.unfit[0].message


def test_not_ready_leaves_a_node_out_before_volcano_111_and_taints_decide_after() -> None:
    down = node("n1", ready="False")
    old = why(gpu_pod(), down, version=Version(1, 10, 2))
    assert reasons(old) == {"n1": Reason.NODE_NOT_READY}
    assert why(gpu_pod(), down, version=Version(1, 15, 1)).verdict == "fits"  # conditions are not read any more
    tainted = node("n1", ready="False", taints=[{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}])
    assert reasons(why(gpu_pod(), tainted, version=Version(1, 15, 1))) == {"n1": Reason.TAINT}
    assert not judges_readiness_by_taints(Version(1, 10, 2)) and judges_readiness_by_taints(Version(1, 11, 0))


def test_required_node_affinity_terms_are_ored_and_expressions_anded() -> None:
    labels = {"zone": "a", "gpu": "a100", "gen": "3"}

    def fits(*terms: dict[str, Any]) -> bool:
        affinity = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms":
                                                                                          list(terms)}}}
        return why(gpu_pod(affinity=affinity), node("n1", labels=labels)).verdict == "fits"

    def expr(key: str, op: str, *values: str) -> dict[str, Any]:
        return {"matchExpressions": [{"key": key, "operator": op, **({"values": list(values)} if values else {})}]}

    assert fits(expr("zone", "In", "a", "b"))
    assert not fits(expr("zone", "NotIn", "a"))
    assert fits(expr("missing", "NotIn", "x")) and fits(expr("missing", "DoesNotExist"))
    assert fits(expr("gpu", "Exists")) and not fits(expr("gpu", "DoesNotExist"))
    assert fits(expr("gen", "Gt", "2")) and not fits(expr("gen", "Lt", "3")) and not fits(expr("zone", "Gt", "1"))
    assert fits(expr("zone", "In", "b"), expr("gpu", "In", "a100"))  # ORed
    assert not fits({"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]},
                                          {"key": "gpu", "operator": "In", "values": ["h100"]}]})  # ANDed
    assert fits({"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["n1"]}]})
    assert not fits({"matchFields": [{"key": "metadata.name", "operator": "NotIn", "values": ["n1"]}]})
    assert not fits({})  # an empty term matches nothing
    assert not fits(expr("zone", "In"))  # no values: Kubernetes cannot parse it, the term matches nothing


def test_predicate_switches_turn_filters_off() -> None:
    off = [{"name": "predicates", "arguments": {"predicate.NodeAffinityEnable": False,
                                                "predicate.TaintTolerationEnable": "false"}},
           {"name": "deviceshare", "arguments": VGPU}]
    target = gpu_pod(nodeSelector={"zone": "a"})
    assert why(target, node("n1", taints=[GPU_TAINT]), plugins=off).verdict == "fits"
    assert why(target, node("n1", taints=[GPU_TAINT])).verdict == "no-fit"


def test_without_a_predicates_plugin_no_filter_runs_but_the_resource_check_does() -> None:
    plugins = [{"name": "deviceshare", "arguments": VGPU}]
    blocked = node("n1", taints=[GPU_TAINT], unschedulable=True)
    report = why(gpu_pod(nodeSelector={"zone": "a"}), blocked, plugins=plugins)
    assert report.verdict == "fits"
    assert any("no predicates plugin" in n for n in report.notes)
    short = why(gpu_pod(cpu="100"), blocked, plugins=plugins)
    assert reasons(short) == {"n1": Reason.INSUFFICIENT_RESOURCE}


def test_deviceshare_listed_first_decides_before_the_predicates() -> None:
    first = [{"name": "deviceshare", "arguments": VGPU}, {"name": "predicates"}]
    holder = vgpu_pod("holder", memory=40000, node="n1", phase="Running",
                      annotations={"volcano.sh/vgpu-ids-new": f"{gpu_id('n1')},NVIDIA,40000,0:"})
    big = vgpu_pod("p", memory=20000)  # more than the GPU has left
    both = why(big, node("n1", taints=[GPU_TAINT]), holder, plugins=first)
    assert reasons(both) == {"n1": Reason.INSUFFICIENT_MEMORY}
    assert reasons(why(big, node("n1", taints=[GPU_TAINT]), holder)) == {"n1": Reason.TAINT}
    after = why(gpu_pod(), node("n1", taints=[GPU_TAINT]), plugins=first)
    assert reasons(after) == {"n1": Reason.TAINT}


# ---- closeness, suggestions, notes ---------------------------------------------------------------------------

def test_the_closest_tainted_node_is_the_one_whose_devices_fit() -> None:
    """A node-level miss ranks below every device miss, and among one check's misses a node whose devices fit
    ranks first: the group's example is where a toleration is all that is missing."""
    busy = vgpu_pod("holder", memory=40000, node="a-full", phase="Running",
                    annotations={"volcano.sh/vgpu-ids-new": f"{gpu_id('a-full')},NVIDIA,40000,0:"})
    report = why(vgpu_pod("p", memory=20000), node("a-full", taints=[GPU_TAINT]), node("b-free", taints=[GPU_TAINT]),
                 busy)
    [group] = report.unfit
    assert group.reason is Reason.TAINT and group.nodes == ("b-free", "a-full")
    assert "its devices would fit" in group.message
    assert report.closest[0].node == "b-free" and report.closest[0].progress < 0


def test_a_smaller_cpu_request_is_suggested_once_replayed() -> None:
    report = why(gpu_pod(cpu="70"), node("n1"), cpu_pod("web", "4", on="n1"))
    [suggestion] = report.suggestions
    assert suggestion.reason is Reason.INSUFFICIENT_RESOURCE and suggestion.node == "n1"
    assert [e.to_dict() for e in suggestion.edits] == [{"container": "c", "key": "cpu", "value": "60"}]
    assert "its request" in suggestion.text
    limits = why(gpu_pod(memory="600Gi", limits_only=True), node("n1"))
    assert [e.value for s in limits.suggestions for e in s.edits] == ["524288Mi"]


def test_the_pods_own_unreplayed_needs_are_noted() -> None:
    target = gpu_pod(volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}])
    target["spec"]["containers"][0]["ports"] = [{"containerPort": 80, "hostPort": 8080}]
    notes = why(target, node("n1")).notes
    assert any("not replayed" in n and "host port 8080 (NodePorts)" in n and "persistentVolumeClaim" in n
               for n in notes)
    assert why(gpu_pod(), node("n1")).notes == []


def test_pods_with_required_anti_affinity_on_a_fitting_node_are_noted() -> None:
    guard = cpu_pod("guard", "1", on="n1")
    guard["spec"]["affinity"] = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [
        {"labelSelector": {"matchLabels": {"app": "x"}}, "topologyKey": "kubernetes.io/hostname"}]}}
    notes = why(gpu_pod(), node("n1"), guard).notes
    assert any("InterPodAffinity" in n and "1 of the fitting nodes" in n for n in notes)


def test_nodes_that_report_no_cpu_memory_or_pods_are_not_judged_on_them() -> None:
    """A node object without cpu/memory/pods was not written by a kubelet: those resources are not read as 0."""
    report = why(gpu_pod(cpu="8"), vgpu_node("n1", gpu(U0)))
    assert report.verdict == "fits"
    assert any("report no cpu, memory or pods" in n for n in report.notes)


# ---- the gang what-if ---------------------------------------------------------------------------------------------

def test_replicas_placed_earlier_use_cpu_on_their_node() -> None:
    """Three replicas of 40 cpu on two 64-cpu nodes with a GPU each to spare: one per node, the third short of cpu."""
    two_gpus = [vgpu_node(n, gpu(gpu_id(n)), gpu(gpu_id(n)[:-1] + "1")) for n in ("n1", "n2")]
    for obj in two_gpus:
        obj["status"]["allocatable"].update({"cpu": "64", "memory": "512Gi", "pods": "110"})
    workload = {"apiVersion": "apps/v1", "kind": "Deployment",
                "metadata": {"name": "web", "namespace": "ml",
                             "annotations": {"scheduling.volcano.sh/group-min-member": "3"}},
                "spec": {"replicas": 3, "template": {"metadata": {}, "spec": {
                    "schedulerName": "volcano", "containers": [{"name": "c", "resources": {"limits": {
                        "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "1000", "cpu": "40"}}}]}}}}
    snap = snapshot(*two_gpus)
    first = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web-0", "namespace": "ml"},
             "spec": workload["spec"]["template"]["spec"]}
    gang = explain_what_if(workload, first, snap, namespace="ml").gang
    assert gang is not None and gang.fit == 2 and not gang.starts
    assert sorted(p.node for _, p in gang.placed) == ["n1", "n2"]
    [group] = gang.first_failure_unfit
    assert group.reason is Reason.INSUFFICIENT_RESOURCE
    assert "Insufficient cpu: the pod requests 40; the node has 64 allocatable, 24 idle (40 requested by its pods)" \
        in group.message


# ---- the cluster-aware webhook's fits-now check ----------------------------------------------------------------

def _index(env: WhyEnv, snap: ClusterSnapshot) -> Any:
    return build_index(((n, summarize(n, env)) for n in snap.nodes), env)


def test_fits_now_proves_no_room_from_the_pods_it_knows() -> None:
    """With only some pods known (`all_pods` false, as the webhook keeps device pods only), their requests are a
    lower bound of what the node uses: a miss is still proven, and the message says "at least"."""
    snap = snapshot(node("n1"), cpu_pod("gpu-user", "60", on="n1"))
    env = env_from_snapshot(snap)
    env.all_pods = False
    answer = first_fit(parse_pod(gpu_pod(cpu="8"), env), _index(env, snap))
    assert answer.outcome is Outcome.NO_FIT and answer.closest is not None
    assert answer.closest.reason is Reason.INSUFFICIENT_RESOURCE and "at least 60 requested" in answer.closest.message
    assert first_fit(parse_pod(gpu_pod(cpu="4"), env), _index(env, snap)).outcome is Outcome.FITS
