"""The cluster model books device usage as Volcano's device ledger does (issue 24 part 3), so `nodes`, the
doctor, `why` and the cluster-aware webhook, which all read it, agree with Volcano's code.

Settled by volcano-sh/volcano (ed72c7c8, the differential oracle in `../shared/oracle/` runs that code):

- `api/helpers.go getTaskStatus`: a Running or Pending pod with `deletionTimestamp` is Releasing, and
  `api/node_info.go AddTask` books a Releasing task's resources as used and releasing but never calls
  `addResource`, so its devices are free; an Unknown pod (or one with no phase) is booked;
- `devices/nvidia/vgpu/hamicore.go` / `mig.go` `AddPod`: a pod is booked once per GPU (`PodMap` holds it
  after its first entry naming that GPU);
- `mig.go MIGFactory.AddPod`: on a node Volcano runs in MIG mode (`decodeNodeDevices`: the last GPU's mode,
  with a known model), an entry without a MIG id fails in `decodeMIGID` and books nothing.
"""

from __future__ import annotations

from typing import Any

from tests.unit.why.builders import NVIDIA, gpu, pod, vgpu_node
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.model import DeviceState
from vgpuctl.core.clusterview import assemble, build_node_parts, simulation_env
from vgpuctl.core.deviceconfig import parse_device_config
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.slim import slim_node, slim_pod
from vgpuctl.core.versions import parse_version
from vgpuctl.core.why.anyfit import Outcome, first_fit
from vgpuctl.core.why.request import parse_pod

U0, U1 = "GPU-00000000-0000-0000-0000-000000000000", "GPU-11111111-1111-1111-1111-111111111111"
DELETED = "2026-01-01T00:00:00Z"
_PARSED = parse_device_config({"nvidia": NVIDIA})
assert _PARSED.config is not None
CONFIG = _PARSED.config


def holding(name: str, node: str, ids: str, *, phase: str = "Running", deleting: bool = False,
            containers: int = 1) -> dict[str, Any]:
    """A pod bound to `node` with `vgpu-ids-new` `ids`, `containers` vGPU containers, being deleted when asked."""
    held = pod(name, node=node, phase=phase, annotations={"volcano.sh/vgpu-ids-new": ids},
               containers=[{"name": f"c{i}", "resources": {"limits": {"volcano.sh/vgpu-number": "1"}}}
                           for i in range(containers)])
    if deleting:
        held["metadata"]["deletionTimestamp"] = DELETED
    return held


def gpus_of(*objects: dict[str, Any], node: str = "n1") -> list[DeviceState]:
    found = build_snapshot(list(objects), device_config=CONFIG).node(node)
    assert found is not None
    return found.devices


def usage(device: DeviceState) -> tuple[int, int, int, list[str], list[str]]:
    return device.memory_used, device.cores_used, device.slots_used, device.pods, device.slices


# ---- pods being deleted --------------------------------------------------------------------------------

def test_a_pod_being_deleted_books_no_device() -> None:
    node = vgpu_node("n1", gpu(U0), gpu(U1))
    (first, second) = gpus_of(node, holding("going", "n1", f"{U0},NVIDIA,30000,50:", deleting=True),
                              holding("pending-going", "n1", f"{U1},NVIDIA,1000,0:", phase="Pending", deleting=True))
    assert usage(first) == usage(second) == (0, 0, 0, [], [])


def test_a_pod_being_deleted_in_phase_unknown_is_still_booked() -> None:
    (device,) = gpus_of(vgpu_node("n1", gpu(U0)),
                        holding("lost", "n1", f"{U0},NVIDIA,30000,50:", phase="Unknown", deleting=True))
    assert usage(device) == (30000, 50, 1, ["ml/lost"], [])


def test_the_webhook_keeps_the_deletion_timestamp_and_finds_the_room() -> None:
    """The cluster-aware webhook's view (slim pods, node by node) books what the model books: the GPU a pod
    being deleted holds has room for a pod that needs all of it."""
    node = vgpu_node("n1", gpu(U0, split=1))
    going = holding("going", "n1", f"{U0},NVIDIA,40960,100:", deleting=True)
    kept = slim_pod(going)
    assert kept is not None and kept["metadata"]["deletionTimestamp"] == DELETED
    env = simulation_env(CONFIG, None)
    parts = build_node_parts([slim_node(node)], {"n1": [kept]}, env)
    assert usage(parts["n1"].state.devices[0]) == (0, 0, 0, [], [])
    view = assemble(parts, ClusterFacts(device_config=CONFIG), CONFIG, None)
    want = pod("want", {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-cores": "100"})
    assert first_fit(parse_pod(want, view.index.env), view.index).outcome is Outcome.FITS


# ---- a pod is booked once per GPU -------------------------------------------------------------------------

def test_a_pod_is_booked_once_per_gpu_its_first_entry() -> None:
    """Two containers of one pod on the same GPU: Volcano's ledger books the first entry only (the oracle:
    a 15000 MiB pod fits beside 20000 + 20000 MiB on a 40960 MiB GPU)."""
    (device,) = gpus_of(vgpu_node("n1", gpu(U0)),
                        holding("twice", "n1", f"{U0},NVIDIA,20000,10:;{U0},NVIDIA,20000,30:", containers=2))
    assert usage(device) == (20000, 10, 1, ["ml/twice"], [])


# ---- MIG mode drops plain ids ------------------------------------------------------------------------------

def test_a_plain_id_on_a_mig_node_is_dropped_and_a_mig_id_booked() -> None:
    node = vgpu_node("n1", gpu(U0, split=7, mode="mig"))
    (device,) = gpus_of(node, holding("before-mig", "n1", f"{U0},NVIDIA,30000,0:"),
                        holding("sliced", "n1", f"{U0}[group1-0],NVIDIA,5120,0:"))
    assert usage(device) == (5120, 0, 1, ["ml/sliced"], ["group1-0"])


def test_a_plain_id_is_booked_where_volcano_runs_hami_core() -> None:
    """The node's mode is its last GPU's: a MIG GPU before a hami-core one, or a MIG GPU of a model no
    knownMigGeometries entry names, leaves the node in hami-core mode, whose AddPod books any id."""
    mixed = vgpu_node("n1", gpu(U0, split=7, mode="mig"), gpu(U1))
    (first, _) = gpus_of(mixed, holding("p", "n1", f"{U0},NVIDIA,30000,0:"))
    assert usage(first) == (30000, 0, 1, ["ml/p"], [])
    unknown = vgpu_node("n1", gpu(U0, split=7, mode="mig", type_="NVIDIA-NVIDIA H100 80GB HBM3"))
    (device,) = gpus_of(unknown, holding("p", "n1", f"{U0},NVIDIA,30000,0:"))
    assert usage(device) == (30000, 0, 1, ["ml/p"], [])


# ---- as the Volcano in question books them ------------------------------------------------------------------

def test_the_booking_follows_the_volcano_version() -> None:
    """Releasing pods kept their devices booked before 1.15 (d7ad76892 dropped `addResource` for them), and
    hami-core booked every entry of a pod in 1.13 and 1.14 (6970f1984; once per GPU in 1.12 and from 1.15);
    MIG's `AddPod` always books a pod once per GPU."""
    def booked(version: str, *objects: dict[str, Any]) -> list[tuple[int, int, int, list[str], list[str]]]:
        nodes = build_snapshot(list(objects), device_config=CONFIG, volcano_version=parse_version(version)).nodes
        return [usage(d) for d in nodes[0].devices]

    node = vgpu_node("n1", gpu(U0))
    going = holding("going", "n1", f"{U0},NVIDIA,30000,50:", deleting=True)
    assert booked("1.14.4", node, going) == [(30000, 50, 1, ["ml/going"], [])]
    assert booked("1.15.0", node, going) == [(0, 0, 0, [], [])]
    twice = holding("twice", "n1", f"{U0},NVIDIA,20000,10:;{U0},NVIDIA,20000,30:", containers=2)
    assert booked("1.12.4", node, twice) == booked("1.15.0", node, twice) == [(20000, 10, 1, ["ml/twice"], [])]
    assert booked("1.13.0", node, twice) == booked("1.14.4", node, twice) == [(40000, 40, 2, ["ml/twice"], [])]
    mig = vgpu_node("n1", gpu(U0, split=7, mode="mig"))
    sliced = holding("sliced", "n1", f"{U0}[group1-0],NVIDIA,5120,0:;{U0}[group1-1],NVIDIA,5120,0:", containers=2)
    assert booked("1.14.4", mig, sliced) == [(5120, 0, 1, ["ml/sliced"], ["group1-0"])]
