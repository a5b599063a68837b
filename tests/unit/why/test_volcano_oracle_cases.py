"""Cases where Volcano's own deviceshare vGPU code disagreed with vgpuctl (issue 24 part 3).

Each case is a minimal disagreement the differential oracle found (`../shared/oracle/`: Volcano's
`pkg/scheduler/api/devices/nvidia/vgpu` code run on a snapshot, against `vgpuctl why -f`), rebuilt here with the
project's own builders. In each, Volcano's code settles the fact and vgpuctl was the side in the wrong:

1. a bound pod being deleted (Running or Pending with `deletionTimestamp`) has task status Releasing
   (`api/helpers.go getTaskStatus`), and `api/node_info.go AddTask` never hands a Releasing task to the device
   ledger (`addResource`): the GPU it holds is free to Volcano;
2. `vgpu-mode: mig` without memory asks for 100 % of the registered memory, which `mig.go pickFromGroup`
   places on a GPU with an instance that large (A100-40GB `7g.40gb`, 40960 ≥ 40960): VGP009 refused it;
3. a memory percentage overrides the memory (`utils.go checkNodeGPUSharingPredicateAndScore`): VGP005 refused
   a memory larger than every GPU that Volcano never reads;
4. on a node Volcano runs in MIG mode, an allocation recorded under a plain GPU id is dropped
   (`MIGFactory.AddPod` fails in `decodeMIGID`): vgpuctl booked it.
"""

from __future__ import annotations

from typing import Any

from tests.unit.why.builders import A100_GEOMETRY, NVIDIA, cluster, gpu, pod, vgpu_node, vgpu_pod
from vgpuctl.core.cluster.rule_facts import facts_from_snapshot
from vgpuctl.core.podrules import review
from vgpuctl.core.why.model import Reason
from vgpuctl.core.why.request import parse_pod
from vgpuctl.core.why.simulate import explain_in_snapshot, simulate_node

U0, U1, U2 = (f"GPU-{i}{i}{i}{i}{i}{i}{i}{i}-0000-0000-0000-000000000000" for i in range(3))
A100_80 = "NVIDIA-NVIDIA A100-PCIE-80GB"
H100 = "NVIDIA-NVIDIA H100 80GB HBM3"
A100_80_GEOMETRY = {
    "models": ["A100-PCIE-80GB"],
    "allowedGeometries": [
        {"group": "group1", "geometries": [{"name": "1g.10gb", "memory": 9728, "count": 7}]},
        {"group": "group2", "geometries": [{"name": "2g.20gb", "memory": 19968, "count": 3},
                                           {"name": "1g.10gb", "memory": 9728, "count": 1}]},
        {"group": "group3", "geometries": [{"name": "3g.40gb", "memory": 40192, "count": 2}]},
        {"group": "group4", "geometries": [{"name": "7g.80gb", "memory": 80896, "count": 1}]},
    ],
}
CONFIG = {"nvidia": {**NVIDIA, "resourceMemoryPercentageName": "volcano.sh/vgpu-memory-percentage",
                     "knownMigGeometries": [A100_GEOMETRY, A100_80_GEOMETRY]}}
DELETED = "2026-01-01T00:00:00Z"


def holding(name: str, node: str, ids: str, *, phase: str = "Running", deleting: bool = False) -> dict[str, Any]:
    """A pod bound to `node` holding `ids` (volcano.sh/vgpu-ids-new), being deleted when `deleting`."""
    held = vgpu_pod(name, node=node, phase=phase, annotations={"volcano.sh/vgpu-ids-new": ids})
    if deleting:
        held["metadata"]["deletionTimestamp"] = DELETED
    return held


def big_node(name: str, *gpus: str) -> dict[str, Any]:
    node = vgpu_node(name, *gpus)
    node["status"]["allocatable"].update({"volcano.sh/vgpu-memory": "245760", "volcano.sh/vgpu-number": "16",
                                          "volcano.sh/vgpu-memory-percentage": "10000"})
    return node


def whatif(target: dict[str, Any], *objects: dict[str, Any]) -> Any:
    """`why -f` on the cluster of `objects`: the rules with the snapshot's facts, then the replay."""
    snapshot, _ = cluster(*objects, config=CONFIG)
    return explain_in_snapshot(target, snapshot, what_if=True)


# ---- 1. terminating pods are not in Volcano's device ledger ----------------------------------------------------

def test_a_terminating_pod_frees_its_gpu_for_the_fit() -> None:
    """Oracle case releasing-pod-counted-fit: three 8000 MiB GPUs fit only if the 73031 MiB of the pod
    being deleted on GPU 2 are free, as they are to Volcano."""
    objects = [big_node("n0", gpu(U0, 81920, 2, type_=A100_80), gpu(U1, 81920, 10, type_=A100_80),
                        gpu(U2, 81920, 4, type_=A100_80)),
               holding("going", "n0", f"{U2},NVIDIA,73031,0:", deleting=True),
               holding("staying", "n0", f"{U2},NVIDIA,8286,20:")]
    report = whatif(vgpu_pod("want", count=3, memory=8000), *objects)
    assert [p.node for p in report.fits] == ["n0"] and report.schedulable
    assert sorted(d.id for d in report.fits[0].devices) == [U0, U1, U2]


def test_a_terminating_pod_leaves_its_gpu_first_in_the_device_order() -> None:
    """Oracle case releasing-pod-counted-devices: with the default order (descending index) Volcano takes
    GPU 1, whose only slot the pod being deleted no longer holds."""
    objects = [big_node("n0", gpu(U0, 81559, 1, type_=H100), gpu(U1, 81559, 1, type_=H100)),
               holding("going", "n0", f"{U1},NVIDIA,78029,100:", deleting=True)]
    report = whatif(vgpu_pod("want", memory=8000), *objects)
    assert [d.id for d in report.fits[0].devices] == [U1]


def test_only_running_or_pending_pods_with_a_deletion_timestamp_are_releasing() -> None:
    """getTaskStatus: Running/Pending + deletionTimestamp → Releasing (not booked); Unknown or no phase stays
    Unknown, which AddTask books like a running pod."""
    for phase, booked in (("Running", False), ("Pending", False), ("Unknown", True), ("", True)):
        held = holding("h", "n0", f"{U0},NVIDIA,40000,0:", phase=phase, deleting=True)
        if not phase:
            del held["status"]
        snapshot, env = cluster(vgpu_node("n0", gpu(U0, split=1)), held, config=CONFIG)
        node = snapshot.node("n0")
        assert node is not None
        assert (node.devices[0].memory_used, node.devices[0].pods) == ((40000, ["ml/h"]) if booked else (0, [])), phase
        verdict = simulate_node(parse_pod(vgpu_pod("want", memory=8000), env), node, env)
        assert verdict.fits is not booked, phase


# ---- 2. VGP009: a MIG request for the whole card fits where an instance is that large --------------------------

def test_a_whole_card_mig_request_fits_an_a100_40gb() -> None:
    """Oracle case vgp009-a100-40gb: the A100-40GB registers 40960 MiB and its 7g.40gb has 40960."""
    target = vgpu_pod("want", annotations={"volcano.sh/vgpu-mode": "mig"})
    report = whatif(target, vgpu_node("n0", gpu(U0, 40960, 7, mode="mig")))
    assert not report.rejected and [d.id for d in report.fits[0].devices] == [f"{U0}[group4-0]"]
    assert not [f for f in report.findings if f.code == "VGP009"]


def test_a_whole_card_mig_request_is_still_the_trap_on_an_a100_80gb() -> None:
    """The A100-80GB registers 81920 MiB and its largest instance, 7g.80gb, has 80896: never placed."""
    target = vgpu_pod("want", annotations={"volcano.sh/vgpu-mode": "mig"})
    report = whatif(target, vgpu_node("n0", gpu(U0, 81920, 7, mode="mig", type_=A100_80)))
    assert report.rejected
    (finding,) = [f for f in report.findings if f.code == "VGP009"]
    assert "81920" in finding.message and "80896" in finding.message and "full-card trap" in finding.message


# ---- 3. VGP005: a percentage overrides the memory --------------------------------------------------------------

def test_a_memory_larger_than_every_gpu_is_not_read_when_a_percentage_is_set() -> None:
    """Oracle case vgp005-percentage-overrides-memory: 30000 MiB + 25 % on a 15360 MiB T4 books 3840 MiB."""
    node = vgpu_node("n0", gpu(U0, 15360, type_="NVIDIA-Tesla T4"))
    node["status"]["allocatable"]["volcano.sh/vgpu-memory-percentage"] = "100"
    target = vgpu_pod("want", memory=30000)
    target["spec"]["containers"][0]["resources"]["limits"]["volcano.sh/vgpu-memory-percentage"] = "25"
    report = whatif(target, node)
    assert not report.rejected and report.fits[0].devices[0].memory == 3840
    assert [f.code for f in report.findings] == ["VGP006"]  # the warning that the memory is ignored


# ---- 4. plain-id usage on a MIG node is dropped by Volcano -----------------------------------------------------

def test_a_plain_gpu_id_on_a_mig_node_books_nothing() -> None:
    """Oracle case mig-usage-disagreement: 76887 MiB recorded under the plain UUID of an A100-80GB in MIG mode
    (allocated before the node switched to MIG) is not in Volcano's ledger; 10347 MiB gets a 2g.20gb."""
    objects = [vgpu_node("n1", gpu(U0, 81920, 10, mode="mig", type_=A100_80)),
               holding("old", "n1", f"{U0},NVIDIA,76887,0:")]
    report = whatif(pod("want", {"volcano.sh/vgpu-memory": "10347"}), *objects)  # memory only: one GPU
    assert [d.id for d in report.fits[0].devices] == [f"{U0}[group2-0]"]
    snapshot, _ = cluster(*objects, config=CONFIG)
    node = snapshot.node("n1")
    assert node is not None and (node.devices[0].memory_used, node.devices[0].slots_used) == (0, 0)


def test_lint_with_the_snapshot_admits_the_whole_card_mig_request_why_places() -> None:
    """`lint --snapshot` (the rules with the snapshot's facts) gives the verdict `why` gives."""
    node = vgpu_node("n0", gpu(U0, 40960, 7, mode="mig"))
    snapshot, _ = cluster(node, config=CONFIG)
    target = vgpu_pod("want", annotations={"volcano.sh/vgpu-mode": "mig"})
    assert review(target, facts_from_snapshot(snapshot)).allowed
    assert explain_in_snapshot(target, snapshot, what_if=True).schedulable


# ---- found by hand-made oracle cases: PodGroup spread reads the ledger's entry ---------------------------------

A30 = "NVIDIA-NVIDIA A30"
A30_GEOMETRY = {"models": ["A30"], "allowedGeometries": [
    {"group": "group1", "geometries": [{"name": "1g.6gb", "memory": 6144, "count": 4}]},
    {"group": "group2", "geometries": [{"name": "2g.12gb", "memory": 12288, "count": 2}]},
    {"group": "group3", "geometries": [{"name": "4g.24gb", "memory": 24576, "count": 1}]}]}
SPREAD = {"volcano.sh/vgpu-podgroup-policy": "spread", "scheduling.k8s.io/group-name": "pg-a"}


def mate(ids: str) -> dict[str, Any]:
    """A running pod of PodGroup pg-a holding `ids`, one vGPU container per `;`-separated block."""
    blocks = ids.count(";") + 1
    return pod("mate", node="n0", phase="Running",
               annotations={"volcano.sh/vgpu-ids-new": ids, "scheduling.k8s.io/group-name": "pg-a"},
               containers=[{"name": f"c{i}", "resources": {"limits": {"volcano.sh/vgpu-number": "1"}}}
                           for i in range(blocks)])


def test_spread_reads_the_entry_the_ledger_booked() -> None:
    """`deviceHasPodFromSameGroup` reads the GPU's `PodMap`: the pod's first entry on it (0 MiB, 0 cores here:
    no conflict), on a MIG node its first MIG id at its instance's memory (none for a group the A30 lacks), never
    a plain id there. Each case: the oracle places the pod, vgpuctl said podgroup-spread."""
    config = {"nvidia": {**NVIDIA, "knownMigGeometries": [A30_GEOMETRY]}}
    hami = vgpu_node("n0", gpu(U0))
    a30 = vgpu_node("n0", gpu(U0, 24576, 4, mode="mig", type_=A30))
    for node, ids in ((hami, f"{U0},NVIDIA,0,0:;{U0},NVIDIA,1000,0:"), (a30, f"{U0}[group4-0],NVIDIA,5000,0:"),
                      (a30, f"{U0},NVIDIA,5000,0:")):
        snapshot, env = cluster(node, mate(ids), config=config)
        found = snapshot.node("n0")
        assert found is not None
        verdict = simulate_node(parse_pod(vgpu_pod("want", memory=1000, annotations=SPREAD), env), found, env)
        assert verdict.fits, ids
    snapshot, env = cluster(a30, mate(f"{U0}[group1-0],NVIDIA,5000,0:"), config=config)
    found = snapshot.node("n0")
    assert found is not None
    verdict = simulate_node(parse_pod(vgpu_pod("want", memory=1000, annotations=SPREAD), env), found, env)
    assert verdict.reason is Reason.PODGROUP_SPREAD
