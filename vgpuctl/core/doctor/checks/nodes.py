"""Node checks (`VGN`, docs/contracts.md#finding-families), vGPU side: what the device plugins wrote on each node and
what Volcano makes of it.

One finding per node and problem, subject `node/<name>`, the node's name never in the message, so the
report groups the same problem across a fleet into one line. The codec problems found while the snapshot
decoded the registrations (`NodeState.findings`) are surfaced by the check of their code, never decoded
again — except the register on Volcano < 1.12, which reads it differently (5 fields are fine there). The
gpushare, Ascend and driver checks are in `nodes_npu`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.cluster.model import DeviceState, NodeState
from vgpuctl.core.cluster.rule_facts import detect_ascend_plugin_tags
from vgpuctl.core.cluster.stacks import HAMI_FORMS, STACK_HAMI, stacks_of, vgpu_uuids
from vgpuctl.core.codecs.handshake import decode_handshake
from vgpuctl.core.codecs.locks import find_node_locks
from vgpuctl.core.codecs.vgpu_register import decode_vgpu_register
from vgpuctl.core.doctor.components import as_map, image_parts
from vgpuctl.core.doctor.framework import Category, DoctorContext, check
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.quantity import int_value
from vgpuctl.core.versions import (
    NEWEST_VOLCANO,
    Version,
    ascend_lock_problem,
    checks_vgpu_resources_generically,
    has_ascend,
    has_vnpu_hami_core,
    requires_handshake,
    requires_six_field_register,
    requires_vgpu_allocatable,
)

CAT = Category.NODES
ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO
VGPU_PLUGIN_IMAGE = "volcano-vgpu-device-plugin"
VGPU_RESOURCES = (spec.VGPU_NUMBER, spec.VGPU_CORES, spec.VGPU_MEMORY)
# Memory entries the plugin's ListAndWatch fits in kubelet's 4 MiB message
# (docs/device-plugins.md#vgpu-plugin-resources).
KUBELET_DEVICE_LIMIT = 60000
# Codes whose codec findings a check in these modules surfaces; anything else in node.findings goes to VGN003.
SURFACED = frozenset({"VGN002", "VGN003", "VGN014", "VGN015"})


def node_finding(code: str, severity: Severity, node: NodeState, message: str) -> Finding:
    return Finding(code, severity, f"node/{node.name}", message, hint_for(code))


def version(ctx: DoctorContext) -> Version:
    return ctx.volcano_version or NEWEST_VOLCANO


def quantity(raw: object) -> int | None:
    """An integer resource value; None when absent or unreadable (`int_value`).

    The plain digit strings kubelet writes take a direct path: the full quantity parse was two thirds of
    the node checks' time in `vgpuctl nodes` (benchmarks/nodes_scale.py, 5,000 nodes).
    """
    if isinstance(raw, str) and raw.isascii() and raw.isdigit() and len(raw) < 19:
        return int(raw)
    return int_value(raw)


def describe(resources: Mapping[str, Any], name: str) -> str | None:
    """`name is missing` / `is 0` / `is not a whole number`, or None when it is above 0."""
    if name not in resources:
        return f"{name} is missing"
    value = quantity(resources[name])
    if value is None:
        return f"{name} is {resources[name]!r}, not a whole number"
    return f"{name} is {value}" if value <= 0 else None


def enabled(ctx: DoctorContext, flag: str) -> bool:
    """A deviceshare switch (`vgpu`, `node_lock`, …); taken as on when the scheduler config is unknown."""
    return ctx.snapshot.scheduler_conf is None or bool(getattr(ctx.snapshot.deviceshare, flag))


def codec(node: NodeState, code: str) -> list[Finding]:
    return [f for f in node.findings if f.code == code]


def vgpu_devices(node: NodeState) -> list[DeviceState]:
    """The node's vGPU devices (callers only read the list)."""
    families = node.families
    if len(families) == 1 and families[0] is spec.Family.VGPU:  # all its devices: six checks ask (nodes_scale.py)
        return node.devices
    vgpu = spec.Family.VGPU
    return [d for d in node.devices if d.family is vgpu]


def registered(node: NodeState) -> bool:
    return spec.NODE_VGPU_REGISTER in node.annotations


def string_map(value: Any) -> Mapping[str, str]:
    return {k: v for k, v in as_map(value).items() if isinstance(k, str) and isinstance(v, str)}


def _plugin_nodes(ctx: DoctorContext) -> set[str]:
    """Nodes running a pod of the vGPU device plugin."""
    found: set[str] = set()
    for pod in ctx.snapshot.pod_index.running(lambda image: image_parts(image)[0] == VGPU_PLUGIN_IMAGE):
        node_name = as_map(pod.get("spec")).get("nodeName")
        if isinstance(node_name, str):
            found.add(node_name)
    return found


@check("nodes.vgpu-register", CAT, "VGN001", "Nodes running the vGPU device plugin register their GPUs",
       reads=("nodes", "pods"))
def vgpu_register(ctx: DoctorContext) -> Iterator[Finding]:
    plugin_nodes = _plugin_nodes(ctx)
    for node in ctx.snapshot.nodes:
        if registered(node):
            continue
        if node.name in plugin_nodes:
            why = "a volcano-vgpu-device-plugin pod runs here"
        elif any(r in node.allocatable for r in VGPU_RESOURCES):
            why = "allocatable has volcano.sh/vgpu-* resources"
        else:
            continue
        yield node_finding("VGN001", ERROR, node, f"{why} but there is no {spec.NODE_VGPU_REGISTER}: Volcano builds "
                                                  "no vGPU model for the node and every vGPU pod is unfit here")


def _register_findings(ctx: DoctorContext, node: NodeState) -> list[Finding]:
    """The register's VGN002/VGN003 findings as the running Volcano reads it.

    The snapshot decodes with the ≥ 1.12 reading unless it was built for an older version; for an older
    Volcano the annotation is decoded again with that reading (5 fields fine, fewer panic the scheduler).
    """
    if requires_six_field_register(version(ctx)):
        return codec(node, "VGN002") + codec(node, "VGN003")
    decoded = decode_vgpu_register(node.annotations.get(spec.NODE_VGPU_REGISTER), volcano_six_fields=False)
    return [node_finding(p.code, ERROR, node, p.message) for p in decoded.problems]


@check("nodes.register-fields", CAT, "VGN002", "Register entries have the 6 fields Volcano ≥ 1.12 needs",
       reads=("nodes",))
def register_fields(ctx: DoctorContext) -> Iterator[Finding]:
    if not requires_six_field_register(version(ctx)):
        return  # 5 fields are what Volcano < 1.12 reads; fewer are VGN003 there
    for node in ctx.snapshot.nodes:
        yield from (f for f in _register_findings(ctx, node) if f.code == "VGN002")


@check("nodes.register-entries", CAT, "VGN003", "Register entries are well formed", reads=("nodes",))
def register_entries(ctx: DoctorContext) -> Iterator[Finding]:
    for node in ctx.snapshot.nodes:
        yield from (f for f in _register_findings(ctx, node) if f.code == "VGN003")
        yield from (f for f in node.findings if f.code not in SURFACED)  # never lose a codec finding


@check("nodes.vgpu-allocatable", CAT, "VGN004", "vGPU nodes advertise vgpu-number, vgpu-cores and vgpu-memory",
       reads=("nodes",))
def vgpu_allocatable(ctx: DoctorContext) -> Iterator[Finding]:
    v = version(ctx)
    if requires_vgpu_allocatable(v):
        effect = f"Volcano {v} needs all three above 0 and ignores the node (no vGPU model)"
    elif checks_vgpu_resources_generically(v):
        effect = f"Volcano {v}'s generic resource check rejects every vGPU pod that asks for it here"
    else:
        return
    for node in ctx.snapshot.nodes:
        if not registered(node):
            continue
        wrong = [d for d in (describe(node.allocatable, r) for r in VGPU_RESOURCES) if d]
        if wrong:
            yield node_finding("VGN004", ERROR, node, f"allocatable {', '.join(wrong)}: {effect}")


@check("nodes.memory-factor", CAT, "VGN005", "gpuMemoryFactor keeps vgpu-memory within kubelet's limit",
       reads=("nodes",))
def memory_factor(ctx: DoctorContext) -> Iterator[Finding]:
    factor = ctx.snapshot.device_config.nvidia.memory_factor
    for node in ctx.snapshot.nodes:
        devices = vgpu_devices(node)
        units = sum(d.memory_total for d in devices) // factor
        if units <= KUBELET_DEVICE_LIMIT or quantity(node.allocatable.get(spec.VGPU_MEMORY)):
            continue
        need = math.ceil(sum(d.memory_total for d in devices) / KUBELET_DEVICE_LIMIT)
        yield node_finding("VGN005", ERROR, node, f"allocatable {spec.VGPU_MEMORY} is 0 or missing while the GPUs "
                                                  f"register {units} memory units, one kubelet device each (limit "
                                                  f"{KUBELET_DEVICE_LIMIT}): kubelet drops the plugin's device list; "
                                                  f"set nvidia.gpuMemoryFactor to at least {need}")


@check("nodes.handshake", CAT, "VGN006", "vGPU nodes answer the scheduler's handshake (Volcano ≤ 1.14.2, 1.15.0)",
       reads=("nodes",))
def handshake(ctx: DoctorContext) -> Iterator[Finding]:
    v = version(ctx)
    if not requires_handshake(v):
        return
    for node in ctx.snapshot.nodes:
        if not registered(node):
            continue
        raw = node.annotations.get(spec.NODE_VGPU_HANDSHAKE)
        shake = decode_handshake(raw)
        if raw is None:
            message = (f"no {spec.NODE_VGPU_HANDSHAKE}: Volcano {v} ignores the node; it needs a device plugin "
                       "that writes the handshake (v1.10.0–v1.12.0) or Volcano 1.14.3+ / 1.15.1+")
        elif shake.state == "deleted":
            message = (f"handshake is Deleted_…: Volcano {v} saw the device plugin stop answering and ignores the "
                       "node until the plugin reports again")
        elif shake.state == "requesting" and shake.problems:
            message = f"{shake.problems[0].message} (Volcano {v})"
        elif shake.expired(ctx.now):
            message = (f"handshake has been Requesting_ for more than 60 s: the device plugin is not answering, so "
                       f"Volcano {v} marks the node Deleted and ignores it")
        elif shake.state == "unknown" and shake.problems and not isinstance(raw, str):
            message = f"{shake.problems[0].message}; Volcano {v} ignores the node"
        else:
            continue  # a report, or a value Volcano takes as one
        yield node_finding("VGN006", ERROR, node, message)


@check("nodes.gpu-health", CAT, "VGN007", "Registered GPUs are healthy", reads=("nodes",))
def gpu_health(ctx: DoctorContext) -> Iterator[Finding]:
    for node in ctx.snapshot.nodes:
        sick = [d for d in vgpu_devices(node) if not d.health]
        if sick:
            yield node_finding("VGN007", WARNING, node, f"{len(sick)} GPU(s) registered with health=false: Volcano "
                                                        "never reads health, so new vGPU pods can still land on them")


@check("nodes.mig-model", CAT, "VGN008", "MIG GPUs match a knownMigGeometries model", reads=("nodes",))
def mig_model(ctx: DoctorContext) -> Iterator[Finding]:
    nvidia = ctx.snapshot.device_config.nvidia
    source = ctx.snapshot.device_config_source
    note = f" (Volcano runs on {source})" if source.startswith("built-in") else ""
    mig = spec.VgpuMode.MIG.value
    for node in ctx.snapshot.nodes:
        unmatched = {d.type for d in vgpu_devices(node) if d.mode == mig}
        for gpu_type in sorted(t for t in unmatched if nvidia.geometry_for(t) is None):
            yield node_finding("VGN008", ERROR, node, f"GPU type {gpu_type!r} is registered as mig but no "
                                                      f"nvidia.knownMigGeometries model is part of it{note}: Volcano "
                                                      "schedules it as hami-core while the plugin runs MIG")


@check("nodes.single-mode", CAT, "VGN009", "All GPUs of a node share one mode", reads=("nodes",))
def single_mode(ctx: DoctorContext) -> Iterator[Finding]:
    for node in ctx.snapshot.nodes:
        devices = vgpu_devices(node)
        modes = sorted({d.mode for d in devices})
        if len(modes) > 1:
            yield node_finding("VGN009", WARNING, node, f"GPUs register modes {', '.join(modes)}: Volcano takes the "
                                                        f"node's mode from the last GPU ({devices[-1].mode}) and "
                                                        "handles every GPU with it")


@check("nodes.mig-whole-gpu", CAT, "VGN010", "MIG nodes have an instance as large as the registered memory",
       reads=("nodes",))
def mig_whole_gpu(ctx: DoctorContext) -> Iterator[Finding]:
    nvidia = ctx.snapshot.device_config.nvidia
    mig = spec.VgpuMode.MIG.value
    for node in ctx.snapshot.nodes:
        seen: set[tuple[str, int, int]] = set()
        for d in vgpu_devices(node):
            geometry = nvidia.geometry_for(d.type) if d.mode == mig else None
            if geometry is None or geometry.largest_instance >= d.memory_total:
                continue
            key = (d.type, geometry.largest_instance, d.memory_total)
            if key not in seen:
                seen.add(key)
                yield node_finding("VGN010", WARNING, node, f"the largest MIG instance for {d.type!r} is "
                                                            f"{geometry.largest_instance} MiB, below the registered "
                                                            f"{d.memory_total} MiB: vGPU pods without "
                                                            f"{spec.VGPU_MEMORY} ask for the whole GPU and never fit")


def _allocating_nodes(ctx: DoctorContext) -> set[str]:
    found: set[str] = set()
    for pod, marks in ctx.snapshot.pod_index.annotated:
        if marks.get(spec.ANN_BIND_PHASE) != "allocating":
            continue
        for name in (as_map(pod.get("spec")).get("nodeName"), marks.get(spec.ANN_VGPU_NODE)):
            if isinstance(name, str):
                found.add(name)
    return found


@check("nodes.locks", CAT, "VGN011", "No node lock is held without an allocation in progress",
       reads=("nodes", "pods"))
def locks(ctx: DoctorContext) -> Iterator[Finding]:
    if not enabled(ctx, "node_lock"):
        return  # without NodeLockEnable Volcano neither takes nor honours the locks
    v = version(ctx)
    allocating = _allocating_nodes(ctx)
    ascend_tags = dict.fromkeys(detect_ascend_plugin_tags(ctx.snapshot))
    for node in ctx.snapshot.nodes:
        extra: tuple[str, ...] = ()
        if has_ascend(v) and not has_vnpu_hami_core(v):  # 1.14–1.15 lock Ascend HAMi nodes under the commonWord
            extra = tuple(k[len(spec.NODE_ASCEND_REGISTER_PREFIX):] for k in node.annotations
                          if isinstance(k, str) and k.startswith(spec.NODE_ASCEND_REGISTER_PREFIX))
        for lock in find_node_locks(node.annotations, now=ctx.now, extra_names=extra):
            if lock.problems:
                yield node_finding("VGN011", WARNING, node, lock.problems[0].message)
            elif lock.blocking and node.name not in allocating:
                # Volcano >= 1.16 leaves its Ascend lock to the plugin; some plugin builds never delete it
                causes = [ascend_lock_problem(tag, v, failures=True) for tag in ascend_tags] \
                    if lock.name == spec.LOCK_ASCEND_HAMI else []
                cause = next((f": probably because {c}" for c in causes if c), "")
                yield node_finding("VGN011", WARNING, node, f"lock {lock.name!r} is younger than 5 minutes but no pod "
                                                            f"on the node is in {spec.ANN_BIND_PHASE}: allocating; "
                                                            f"every device allocation here fails until it expires"
                                                            f"{cause}")


def _shown(uuids: list[str], limit: int = 4) -> str:
    """`GPU-a, GPU-b` (and how many more past `limit`)."""
    more = f" and {len(uuids) - limit} more" if len(uuids) > limit else ""
    return ", ".join(uuids[:limit]) + more


@check("nodes.hami-plugin", CAT, "VGN012", "No HAMi NVIDIA device plugin on Volcano vGPU nodes", reads=("nodes",))
def hami_plugin(ctx: DoctorContext) -> Iterator[Finding]:
    """Exact where both registers name GPUs (`cluster/stacks.py`): the UUIDs both register are offered twice."""
    for node in ctx.snapshot.nodes:
        if spec.NODE_HAMI_NVIDIA_REGISTER not in node.annotations:
            continue
        found = stacks_of(ctx.snapshot, node)
        hami = found.get(STACK_HAMI)
        form = HAMI_FORMS.get(found.hami_form or "")
        writer = f"HAMi's NVIDIA device plugin ({form})" if form else "HAMi's NVIDIA device plugin"
        if registered(node):
            ours = vgpu_uuids(node)
            theirs = set(hami.gpus or ()) if hami is not None else set()
            both = [u for u in ours if u in theirs]
            if both:
                yield node_finding("VGN012", ERROR, node, f"{spec.NODE_HAMI_NVIDIA_REGISTER} from {writer} and "
                                                          f"{spec.NODE_VGPU_REGISTER} both register {_shown(both)}: "
                                                          "two device plugins hand out the same GPUs independently "
                                                          "and over-book them")
            elif ours and theirs:
                yield node_finding("VGN012", WARNING, node, f"{spec.NODE_HAMI_NVIDIA_REGISTER} from {writer} next to "
                                                            f"{spec.NODE_VGPU_REGISTER}: they register different GPUs "
                                                            f"({len(theirs)} and {len(ours)}), so none is offered "
                                                            "twice, but HAMi's GPUs serve only the HAMi scheduler's "
                                                            "pods; HAMi advises one GPU plugin per node")
            else:
                yield node_finding("VGN012", ERROR, node, f"{spec.NODE_HAMI_NVIDIA_REGISTER} from {writer} next to "
                                                          f"{spec.NODE_VGPU_REGISTER}: two device plugins hand out the "
                                                          "same GPUs independently and over-book them")
        elif enabled(ctx, "vgpu"):
            yield node_finding("VGN012", WARNING, node, f"{spec.NODE_HAMI_NVIDIA_REGISTER} from {writer}, which only "
                                                        f"the HAMi scheduler reads: Volcano vGPU sees no GPU here (it "
                                                        f"needs {spec.NODE_VGPU_REGISTER} from {VGPU_PLUGIN_IMAGE})")


@check("nodes.vgpu-consistency", CAT, "VGN013", "Allocatable agrees with the register annotation", reads=("nodes",))
def vgpu_consistency(ctx: DoctorContext) -> Iterator[Finding]:
    nvidia = ctx.snapshot.device_config.nvidia
    for node in ctx.snapshot.nodes:
        devices = vgpu_devices(node)
        if not devices:
            continue
        expected = {
            spec.VGPU_NUMBER: (sum(d.slots_total for d in devices), "Σ split count"),
            spec.VGPU_MEMORY: (sum(d.memory_total for d in devices) // nvidia.memory_factor, "Σ devmem"),
        }
        scaling = nvidia.device_core_scaling
        if 0 < scaling < 1e6:  # unset (0) in the config Volcano reads: the plugin's own value is unknown
            expected[spec.VGPU_CORES] = (len(devices) * int(100 * scaling),
                                         f"{len(devices)} GPU(s) × 100 × deviceCoreScaling {scaling:g}")
        for resource, (want, how) in expected.items():
            have = quantity(node.allocatable.get(resource))
            if have and have != want:  # missing or 0 is VGN004/VGN005
                yield node_finding("VGN013", WARNING, node, f"allocatable {resource} is {have} but the register "
                                                            f"annotation gives {want} ({how}): pods can pass "
                                                            "Volcano's device filter and fail its resource check, or "
                                                            "the reverse")


# The gpushare, Ascend and driver checks (VGN014–VGN018) are in `nodes_npu`, the other GPU stacks' (VGN020–VGN022)
# in `stacks`: importing the checks package registers them.
