"""Build a `ClusterSnapshot` from plain Kubernetes objects (a snapshot file or a live read).

One pass over the objects: partition by kind, find the device config Volcano really reads (through the
scheduler's `deviceshare` arguments), and hand each node the pods bound to it whose usage Volcano books
(`books_devices`: not Succeeded/Failed, from 1.15 not being deleted) and that carry an annotation usage is
booked from (`cluster/glance.py`: the other pods cost a glance). A node's registration is decoded into
devices, and those pods' usage added as Volcano's device ledger adds it (`_add_usage`,
docs/vgpu.md#vgpu-ledger), the first time the node's devices are read (`NodeState.deferred`): the result
is the same as decoding every node up front, but a command that looks at a few nodes, or at none of their
devices, does not pay for all of them. Decoding problems become node findings with the codec's finding
code; nothing here raises on malformed objects.

Well-formed annotations — what the device plugin and Volcano write — take a direct path (string splits for
the register, one regular expression for the allocations); anything else goes through the codecs, which
say what is wrong with it. Both give the same devices and usage: the codecs are the reference, and
`build_snapshot(..., shortcuts=False)` takes them for every annotation, so a build with the shortcuts can be
held to one without them (tests/unit/test_cluster_build_fast.py does, on generated annotations and fleets).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Final, Protocol

from vgpuctl.core import spec
from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.cluster.glance import allocation_annotated
from vgpuctl.core.cluster.model import ClusterSnapshot, DeviceState, NodeState, RegisterStatus, vgpu_devices
from vgpuctl.core.cluster.pod_index import PodIndex
from vgpuctl.core.codecs._common import CodecProblem, go_parse_bool
from vgpuctl.core.codecs.pod_alloc import MigSlot, decode_gpu_index, decode_gpu_unhealthy_ids, decode_vgpu_ids
from vgpuctl.core.codecs.vgpu_register import decode_vgpu_register
from vgpuctl.core.deviceconfig import (
    DeviceConfig,
    DeviceConfigDocumentError,
    NvidiaConfig,
    VnpusForm,
    default_device_config,
    parse_device_config,
    payload_from_document,
)
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.quantity import int_value as _int
from vgpuctl.core.scheduler_config import SchedulerConf, SchedulerConfError, deviceshare_args, parse_scheduler_conf
from vgpuctl.core.versions import (
    Version,
    accepts_vnpus_wrapper,
    books_a_pod_once_per_gpu,
    releasing_pods_book_no_device,
    requires_six_field_register,
    skips_malformed_vgpu_ids,
)

_EMPTY: Mapping[str, Any] = {}


class PodVisitor(Protocol):
    """Sees every pod in `build_snapshot`'s pass over the objects, with its `metadata`, `spec` and `status` as read
    (anything: the snapshot's objects are not checked): what a command derives from every pod, derived where the
    pods are read anyway. The cluster model knows nothing of what it derives (`why/usage.py NodeTallies`)."""

    def visit(self, pod: Mapping[str, Any], meta: Any, pod_spec: Any, status: Any) -> None: ...
# No real node has more; a garbage capacity must not make us build millions of devices.
MAX_DEVICES_PER_NODE = 1024
# The mode strings, read once: an enum's `.value` per GPU was measurable on 40,000 GPUs (nodes_scale.py).
_MIG: Final = spec.VgpuMode.MIG.value
_HAMI_CORE: Final = spec.VgpuMode.HAMI_CORE.value
_VGPU: Final = spec.Family.VGPU
_GPUSHARE: Final = spec.Family.GPUSHARE
_ASCEND_HAMI: Final = spec.Family.ASCEND_HAMI
_MINDCLUSTER: Final = spec.Family.ASCEND_MINDCLUSTER

# A register annotation entry as the device plugin writes it: `<uuid>,<count>,<devmem>,<type>,<health>,<mode>:`,
# six fields, a non-empty UUID, integers (ASCII digits, at most 18), a Go bool. With positive integers, an NVIDIA
# type and UUIDs seen once, an annotation made of nothing else raises no codec problem under either format rule
# (`fast_register`).
_MAX_DIGITS = 18
# `volcano.sh/vgpu-ids-new` as Volcano writes it: `<uuid>,<type>,<mem>,<cores>:` per device, containers joined
# by `;`; no MIG id (no brackets), int32-safe numbers. Anything else goes through the codec.
_VGPU_ID = r"[^,:;\[\]]+,[^,:;]*,[0-9]{1,9},[0-9]{1,9}:"
_VGPU_IDS_WHOLE = re.compile(f"(?:{_VGPU_ID}|;)*")
_VGPU_IDS_ENTRY = re.compile(r"([^,:;\[\]]+),[^,:;]*,([0-9]+),([0-9]+):")
_VGPU_IDS_ONE = re.compile(r"([^,:;\[\]]+),[^,:;]*,([0-9]{1,9}),([0-9]{1,9}):")  # one device, the usual case


# Phases in which a pod with `metadata.deletionTimestamp` is Releasing to Volcano (`api/helpers.go getTaskStatus`);
# Unknown (or no phase) stays Unknown and is booked like a running pod.
_RELEASING_PHASES: Final = frozenset({"Running", "Pending"})


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else _EMPTY


def books_devices(meta: Mapping[str, Any], status: Any, releasing_books_none: bool = True) -> bool:
    """Whether Volcano books the device usage of this bound pod: its task status is not Succeeded or Failed
    (`cache/event_handlers.go addTask` skips terminated tasks) nor, with `releasing_books_none` (Volcano ≥ 1.15,
    `versions.releasing_pods_book_no_device`), Releasing — Running or Pending with a `deletionTimestamp`
    (`api/helpers.go getTaskStatus`), whose resources `api/node_info.go AddTask` counts as used and releasing
    but never hands to the device ledger (`addResource`): the GPU it holds is free while the pod terminates."""
    phase = status.get("phase") if isinstance(status, dict) else None
    if phase in spec.DONE_POD_PHASES:
        return False
    return not releasing_books_none or meta.get("deletionTimestamp") is None or phase not in _RELEASING_PHASES


def _name(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = _m(obj.get("metadata"))
    ns, name = meta.get("namespace"), meta.get("name")
    return (ns if isinstance(ns, str) else "", name if isinstance(name, str) else "")


def _finding(problem: CodecProblem, subject: str, severity: Severity | None = None) -> Finding:
    from vgpuctl.core.catalogue import lookup

    return Finding(problem.code, severity or lookup(problem.code).severity, subject, problem.message,
                   hint_for(problem.code))


def build_snapshot(
    objects: Iterable[Mapping[str, Any]],
    server_version: str | None = None,
    *,
    volcano_version: Version | None = None,
    device_config: DeviceConfig | None = None,
    kinds: frozenset[str] | None = None,
    index_pods: bool = False,
    index_device_asks: bool = True,
    pod_visitor: PodVisitor | None = None,
    shortcuts: bool = True,
) -> ClusterSnapshot:
    """The model of `objects`. The device config is the one the scheduler ConfigMap among them names,
    unless `device_config` is given (the cluster-aware webhook has its own and no ConfigMaps). `kinds` are
    the kinds the snapshot listed, when known: RuntimeClasses, and each of the DRA kinds, count as collected
    when it names them or any is present. `index_pods` builds `ClusterSnapshot.pod_index` in the same pass over
    the pods (for the commands that read it: otherwise it is made on first use, in a pass of its own); without
    `index_device_asks` what only `asking_for_devices` and `claiming` read is left to their first use
    (`PodIndex`'s `device_asks`: `nodes` never asks). `pod_visitor` sees every pod in that pass too (`why`
    tallies what each node's pods request there: `why/usage.py NodeTallies`); the snapshot keeps it.
    Without `shortcuts` every register and `vgpu-ids-new` annotation is read by its codec (`decode_vgpu_register`,
    `decode_vgpu_ids`), none by the direct paths for well-formed values (`fast_register`,
    `well_formed_vgpu_allocations`): the reference path the shortcuts must agree
    with, slower and otherwise the same model."""
    nodes: list[Mapping[str, Any]] = []
    pods: list[Mapping[str, Any]] = []
    configmaps: dict[tuple[str, str], Mapping[str, Any]] = {}
    daemonsets: list[Mapping[str, Any]] = []
    deployments: list[Mapping[str, Any]] = []
    runtime_classes: list[Mapping[str, Any]] = []
    dra: dict[str, list[Mapping[str, Any]]] = {kind: [] for kind in DRA_KINDS}
    # node name → its pods whose usage Volcano books (`books_devices`) and that carry an annotation it books usage
    # from (`glance.allocation_annotated`: nothing else is booked): on issue 17's fleet that is 8 of a node's 30
    # pods, and decoding is that much shorter (benchmarks/nodes_scale.py).
    bound: dict[str, list[Mapping[str, Any]]] = {}
    # Read as the given Volcano reads them; unknown: as the newest does.
    releasing_free = volcano_version is None or releasing_pods_book_no_device(volcano_version)
    index = PodIndex(pods, device_asks=index_device_asks) if index_pods else None
    visit = pod_visitor.visit if pod_visitor is not None else None
    for obj in objects:
        if not isinstance(obj, dict):
            continue
        kind = obj.get("kind")
        if kind == "Pod":
            meta, pod_spec, status = obj.get("metadata"), obj.get("spec"), obj.get("status")
            # The index has glanced at the annotations' names: a pod without one in a device namespace is not
            # looked at again (every booked annotation is in one: `glance.BOOKED_ANNOTATIONS`).
            device_annotated = index.add(len(pods), obj, meta, pod_spec) if index is not None else True
            if visit is not None:
                visit(obj, meta, pod_spec, status)
            pods.append(obj)
            if (device_annotated and isinstance(meta, dict) and (annotations := meta.get("annotations"))
                    and isinstance(annotations, dict) and allocation_annotated(annotations)
                    and isinstance(pod_spec, dict)
                    and isinstance(node_name := pod_spec.get("nodeName"), str)
                    and books_devices(meta, status, releasing_free)):
                bound.setdefault(node_name, []).append(obj)
        elif kind == "Node":
            nodes.append(obj)
        elif kind == "ConfigMap":
            configmaps[_name(obj)] = obj
        elif kind == "DaemonSet":
            daemonsets.append(obj)
        elif kind == "Deployment":
            deployments.append(obj)
        elif kind == "RuntimeClass":
            runtime_classes.append(obj)
        elif kind in dra:
            dra[kind].append(obj)

    findings: list[Finding] = []
    scheduler_conf = _scheduler_conf(configmaps, findings)
    args = deviceshare_args(scheduler_conf.plugin(spec.PLUGIN_DEVICESHARE) if scheduler_conf else None)
    if device_config is not None:
        source = "given by the caller"
    else:
        device_config, source = _device_config(configmaps, args.geometries_cm_namespace, args.geometries_cm_name,
                                               volcano_version)
    six = volcano_version is None or requires_six_field_register(volcano_version)
    booking = Booking(
        factor=device_config.nvidia.memory_factor,
        skips_bad_ids=volcano_version is None or skips_malformed_vgpu_ids(volcano_version),
        once_per_gpu=volcano_version is None or books_a_pod_once_per_gpu(volcano_version),
        slices=SliceNames.of(device_config), nvidia=device_config.nvidia, shortcuts=shortcuts)

    names = [_node_name(obj) for obj in nodes]
    last = {name: i for i, name in enumerate(names)}  # two nodes of one name: the pods count on the last one
    states = [NodeState.deferred(name, obj, partial(_decode_node, six, booking,
                                                    bound.get(name, ()) if last[name] == i else ()))
              for i, (name, obj) in enumerate(zip(names, nodes, strict=True))]
    return ClusterSnapshot(
        nodes=states, pods=pods, configmaps=configmaps, daemonsets=daemonsets, deployments=deployments,
        server_version=server_version, scheduler_conf=scheduler_conf, deviceshare=args,
        device_config=device_config, device_config_source=source, findings=findings,
        runtime_classes=runtime_classes if runtime_classes or "RuntimeClass" in (kinds or ()) else None,
        pod_index_at_build=index, pod_visitor=pod_visitor,
        resource_slices=_collected(dra["ResourceSlice"], "ResourceSlice", kinds),
        device_classes=_collected(dra["DeviceClass"], "DeviceClass", kinds),
        resource_claims=_collected(dra["ResourceClaim"], "ResourceClaim", kinds),
        resource_claim_templates=_collected(dra["ResourceClaimTemplate"], "ResourceClaimTemplate", kinds),
    )


#: The DRA kinds (`ClusterSnapshot.resource_slices`, `device_classes`, `resource_claims`, `resource_claim_templates`).
DRA_KINDS: Final = ("ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate")


def _collected(objects: list[Mapping[str, Any]], kind: str,
               kinds: frozenset[str] | None) -> list[Mapping[str, Any]] | None:
    """The objects of a kind the snapshot may not have collected: a list when it names the kind (`vgpuctl.io/kinds`)
    or holds one, else None (not collected: a plain kubectl file without it, a server without DRA)."""
    return objects if objects or kind in (kinds or ()) else None


def _scheduler_conf(configmaps: Mapping[tuple[str, str], Mapping[str, Any]],
                    findings: list[Finding]) -> SchedulerConf | None:
    cm = configmaps.get((spec.SCHEDULER_NAMESPACE, spec.SCHEDULER_CONFIGMAP))
    if cm is None:
        return None
    text = _m(cm.get("data")).get(spec.SCHEDULER_CONF_KEY)
    subject = f"configmap/{spec.SCHEDULER_NAMESPACE}/{spec.SCHEDULER_CONFIGMAP}"
    if not isinstance(text, str):
        findings.append(Finding("VGC001", Severity.ERROR, subject, f"has no data key {spec.SCHEDULER_CONF_KEY!r}",
                                hint_for("VGC001")))
        return None
    try:
        return parse_scheduler_conf(text)
    except SchedulerConfError as exc:
        findings.append(Finding("VGC001", Severity.ERROR, subject, f"{spec.SCHEDULER_CONF_KEY}: {exc}",
                                hint_for("VGC001")))
        return None


def _device_config(configmaps: Mapping[tuple[str, str], Mapping[str, Any]], namespace: str,
                   name: str, volcano_version: Version | None) -> tuple[DeviceConfig, str]:
    cm = configmaps.get((namespace, name))
    if cm is None:
        return default_device_config(), f"built-in defaults (configmap {namespace}/{name} not found)"
    try:
        parsed = parse_device_config(payload_from_document(cm))
    except DeviceConfigDocumentError as exc:
        return default_device_config(), f"built-in defaults (configmap {namespace}/{name}: {exc})"
    if parsed.config is None:
        return default_device_config(), f"built-in defaults (configmap {namespace}/{name} does not parse)"
    if (volcano_version is not None and parsed.config.vnpus_form is VnpusForm.WRAPPER
            and not accepts_vnpus_wrapper(volcano_version)):
        return default_device_config(), (f"built-in defaults (configmap {namespace}/{name} uses the vnpus wrapper "
                                          f"form, which Volcano {volcano_version} cannot decode)")
    return parsed.config, f"configmap {namespace}/{name}"


def _node_name(obj: Mapping[str, Any]) -> str:
    name = _m(obj.get("metadata")).get("name")
    return name if isinstance(name, str) else ""


@dataclass(frozen=True, slots=True)
class SliceNames:
    """The slice names usage may be booked under, from the device config (and Volcano's fixed MindCluster
    templates): a pod's annotation names a slice, and `vgpuctl_device_slices_in_use` has a series per name,
    so a name nothing defines is booked as `spec.UNKNOWN_SLICE` — the series stay bounded whatever the
    annotations say."""

    vnpu: Mapping[str, Mapping[int, str]]  # commonWord → memory → the template booking exactly that memory
    mig: Mapping[str, int]  # MIG group name → instances in it (positions 0 … n-1)

    @classmethod
    def of(cls, config: DeviceConfig) -> SliceNames:
        mig: dict[str, int] = {}
        for geometry in config.nvidia.known_mig_geometries:
            for group in geometry.groups:
                mig[group.name] = max(mig.get(group.name, 0), sum(i.count for i in group.instances))
        return cls({v.common_word: {t.memory: t.name for t in v.templates} for v in config.vnpus}, mig)

    def mig_slice(self, mig: MigSlot) -> str:
        return f"{mig.group}-{mig.position}" if 0 <= mig.position < self.mig.get(mig.group, 0) else spec.UNKNOWN_SLICE


@dataclass(frozen=True, slots=True)
class Booking:
    """How the Volcano in question books the allocations of the pods bound to a node (one per build)."""

    factor: int  # gpuMemoryFactor
    skips_bad_ids: bool  # a malformed `vgpu-ids-new` device is skipped (≥ 1.16), not read as 0
    once_per_gpu: bool  # hami-core books a pod once per GPU (`versions.books_a_pod_once_per_gpu`)
    slices: SliceNames
    nvidia: NvidiaConfig  # the MIG geometries: whether Volcano runs a node in MIG mode
    # Well-formed annotations take the direct paths; False: the codecs read every one (`build_snapshot`)
    shortcuts: bool = True


def _decode_node(six_fields: bool, booking: Booking, pods: Sequence[Mapping[str, Any]], node: NodeState) -> None:
    """Fill in `node` (fresh, same name and object): its devices, then the usage of the pods bound to it, as
    `booking` says Volcano books it."""
    annotations = node.annotations
    subject = f"node/{node.name}"
    register = annotations.get(spec.NODE_VGPU_REGISTER)
    if register is not None:
        _vgpu(node, register, booking.factor, six_fields, subject, booking.shortcuts)
    _gpushare(node)
    _ascend(node, annotations, subject)
    _mindcluster(node)
    if pods and node.devices:
        _add_usage(node, pods, booking)


def _vgpu(node: NodeState, register: Any, factor: int, six_fields: bool, subject: str, shortcuts: bool) -> None:
    entries = fast_register(register) if shortcuts else None
    if entries is not None:
        node.remember_register(RegisterStatus(six_fields, True, None))
    else:
        decoded = decode_vgpu_register(register, volcano_six_fields=six_fields)
        node.remember_register(RegisterStatus(six_fields, decoded.node_usable,
                                              decoded.problems[0].message if decoded.problems else None))
        node.findings.extend(_finding(p, subject) for p in decoded.problems)
        entries = [(d.uuid, d.split, d.memory, d.type, d.health, d.mode) for d in decoded.devices]
    if not entries:
        return
    node.families.append(spec.Family.VGPU)
    node.devices.extend(vgpu_devices(entries, factor))
    node.mode = entries[-1][5]  # Volcano: the node takes the last device's mode


def fast_register(value: Any) -> list[tuple[str, int, int, str, bool, str]] | None:
    """The GPUs of a well-formed register annotation — (uuid, count, devmem, type, health, mode) as
    `decode_vgpu_register` gives them, which would report no problem — or None: use the codec."""
    # Read with str.split and str methods, not a regular expression: the expression was half of decoding a
    # node (benchmarks/nodes_scale.py); tests/unit/test_cluster_build_fast.py holds the two to the codec. A node's
    # GPUs differ in their UUID only, as a rule: what follows it is checked once per node, not once per GPU
    # (5,000 registers of 8 GPUs: 80 ms → 42 ms, benchmarks/why_scale.py --phases, decode devices).
    if not isinstance(value, str) or not value.endswith(":"):
        return None
    entries = []
    uuids: set[str] = set()
    known: dict[str, tuple[int, int, str, bool, str] | None] = {}  # what follows the UUID → its reading
    for piece in value[:-1].split(":"):
        uuid, _, rest = piece.partition(",")
        fields = known.get(rest)
        if fields is None:
            fields = known[rest] = _register_fields(rest)
            if fields is None:
                return None
        if not uuid:
            return None
        uuids.add(uuid)
        entries.append((uuid, *fields))
    return entries if len(uuids) == len(entries) else None  # a UUID twice: the codec's finding


def _register_fields(rest: str) -> tuple[int, int, str, bool, str] | None:
    """`<count>,<devmem>,<type>,<health>,<mode>` of a register entry (`fast_register`), or None: use the codec."""
    fields = rest.split(",")
    if len(fields) != 5:
        return None
    count, memory, type_, health, mode = fields
    healthy = go_parse_bool(health)
    if (healthy is None or "NVIDIA" not in type_  # ASCII digits, at most 18
            or not (count.isascii() and count.isdigit() and len(count) <= _MAX_DIGITS)
            or not (memory.isascii() and memory.isdigit() and len(memory) <= _MAX_DIGITS)):
        return None
    split, devmem = int(count), int(memory)
    if split <= 0 or devmem <= 0:
        return None
    return split, devmem, type_, healthy, _MIG if mode == _MIG else _HAMI_CORE


def _gpushare(node: NodeState) -> None:
    memory, number = _int(node.capacity.get(spec.GPU_MEMORY)), _int(node.capacity.get(spec.GPU_NUMBER))
    if not memory or not number or number <= 0:
        return
    node.families.append(spec.Family.GPUSHARE)
    unhealthy = set(decode_gpu_unhealthy_ids(node.annotations.get(spec.NODE_GPU_UNHEALTHY_IDS)).indexes)
    for index in range(min(number, MAX_DEVICES_PER_NODE)):
        node.devices.append(DeviceState(
            id=str(index), index=index, family=spec.Family.GPUSHARE, type="NVIDIA", mode="gpushare",
            health=index not in unhealthy, memory_total=memory // number, cores_total=0, slots_total=0,
        ))


def _ascend(node: NodeState, annotations: Mapping[str, Any], subject: str) -> None:
    for key, value in annotations.items():
        if not isinstance(key, str) or not key.startswith(spec.NODE_ASCEND_REGISTER_PREFIX):
            continue
        common_word = key[len(spec.NODE_ASCEND_REGISTER_PREFIX):]
        from vgpuctl.core.codecs.ascend import decode_ascend_register  # the Ascend codecs load for Ascend nodes

        decoded = decode_ascend_register(value, common_word)
        node.findings.extend(_finding(p, subject, Severity.ERROR) for p in decoded.problems)
        if not decoded.devices:
            continue
        if spec.Family.ASCEND_HAMI not in node.families:
            node.families.append(spec.Family.ASCEND_HAMI)
        for device in decoded.devices:
            node.devices.append(DeviceState(
                id=device.uuid, index=device.index, family=spec.Family.ASCEND_HAMI, type=common_word,
                mode="hami-core" if annotations.get(spec.NODE_HAMI_VNPU_CORE) == "true" else "template",
                health=device.health, memory_total=device.memory, cores_total=device.cores,
                slots_total=device.count,
            ))


def _mindcluster(node: NodeState) -> None:
    cores = _int(node.capacity.get(spec.NPU_CORE))
    if not cores or cores <= 0:
        return
    node.families.append(spec.Family.ASCEND_MINDCLUSTER)
    servertype = node.labels.get("servertype")
    per_chip = spec.DEFAULT_CORES_PER_310P_CHIP
    parts = servertype.split("-") if isinstance(servertype, str) else []
    if len(parts) > 1 and parts[1].isascii() and parts[1].isdigit() and 0 < int(parts[1]) <= 64:
        per_chip = int(parts[1])
    chip_type = node.labels.get("node.kubernetes.io/npu.chip.name")
    for index in range(min(cores // per_chip, MAX_DEVICES_PER_NODE)):
        node.devices.append(DeviceState(
            id=str(index), index=index, family=spec.Family.ASCEND_MINDCLUSTER,
            type=chip_type if isinstance(chip_type, str) else "Ascend310P", mode="mindcluster", health=True,
            memory_total=0, cores_total=per_chip, slots_total=0,
        ))


def _add_usage(node: NodeState, pods: Sequence[Mapping[str, Any]], booking: Booking) -> None:
    """Book the allocation annotations of `pods` (bound to `node`, booked by Volcano, in snapshot order).

    vGPU usage is booked as Volcano's device ledger books it (`GPUDevices.addResource` → the node's sharing
    factory's `AddPod`, `pkg/scheduler/api/devices/nvidia/vgpu/`): on a node Volcano runs in MIG mode, only
    entries with a MIG id (`<uuid>[<group>-<pos>]`) — `MIGFactory.AddPod` fails on a plain GPU id in
    `decodeMIGID` and books nothing of it — and a pod once per GPU, its first entry naming that GPU (`PodMap`
    holds the pod after it); in hami-core mode the same unless `booking.once_per_gpu` is off (1.13, 1.14)."""
    factor, skips_bad_ids, slices = booking.factor, booking.skips_bad_ids, booking.slices
    vgpus: dict[str, DeviceState] = {}
    cards: dict[int, DeviceState] = {}
    npus: dict[str, DeviceState] = {}
    chips: dict[int, DeviceState] | None = {} if spec.Family.ASCEND_MINDCLUSTER in node.families else None
    for d in node.devices:  # one pass, not one per family (benchmarks/nodes_scale.py)
        family = d.family
        if family is _VGPU:  # a repeated id or index: the last one, as a dict display keeps it
            vgpus[d.id] = d
        elif family is _GPUSHARE:
            cards[d.index] = d
        elif family is _ASCEND_HAMI:
            npus[d.id] = d
        elif family is _MINDCLUSTER and chips is not None:
            chips[d.index] = d
    mig_node = bool(vgpus) and volcano_mig_mode(node.devices, booking.nvidia)
    once = booking.once_per_gpu or mig_node
    shortcuts = booking.shortcuts
    for pod in pods:
        meta = pod["metadata"]  # the build binds only pods with annotations to their node
        annotations = meta["annotations"]
        if not isinstance(annotations, dict):
            continue  # nothing booked
        pod_name = f"{meta.get('namespace', '')}/{meta.get('name', '')}"
        ids = annotations.get(spec.ANN_VGPU_IDS_NEW) if vgpus else None
        if ids is not None:
            for uuid, mig, memory, cores in vgpu_allocations(ids, skips_bad_ids, shortcut=shortcuts):
                device = vgpus.get(uuid)
                if device is None:
                    continue  # a UUID not on this node: the doctor's VGX002
                known = pod_name in device.pods
                if (mig_node and mig is None) or (once and known):
                    continue  # MIG mode drops a plain id; a pod is booked once per GPU
                device.memory_used += memory * factor
                device.cores_used += cores
                device.slots_used += 1
                if mig is not None:
                    device.slices.append(slices.mig_slice(mig))
                if not known:
                    device.pods.append(pod_name)
        index = annotations.get(spec.ANN_GPU_INDEX) if cards else None
        if index is not None:
            _gpushare_usage(cards, pod_name, _m(pod.get("spec")), decode_gpu_index(index).indexes)
        if npus:
            from vgpuctl.core.codecs.ascend_pod import allocated_common_word

            for key, value in annotations.items():
                if allocated_common_word(key) is not None:
                    _ascend_usage(npus, pod_name, value, slices.vnpu)
        npu = annotations.get(spec.ANN_NPU_CORE) if chips is not None else None
        if npu is not None and chips is not None:
            _mindcluster_usage(chips, pod_name, npu)


def volcano_mig_mode(devices: Sequence[DeviceState], nvidia: NvidiaConfig) -> bool:
    """Whether Volcano runs the node's GPUs in MIG mode (`decodeNodeDevices`): the last GPU of the register
    annotation says `mig` and a `knownMigGeometries` model matches its type; else hami-core."""
    last = next((d for d in reversed(devices) if d.family is spec.Family.VGPU), None)
    return last is not None and last.mode == _MIG and nvidia.geometry_for(last.type) is not None


def vgpu_allocations(value: Any, skips_bad_entries: bool = True, *,
                     shortcut: bool = True) -> list[tuple[str, MigSlot | None, int, int]]:
    """(uuid, MIG slot, memory, cores) per device of a `vgpu-ids-new` value, in order, as `decode_vgpu_ids`
    reads them under that reading (its problems aside: the doctor reports those). Without `shortcut`, read by
    the codec even when well-formed (`well_formed_vgpu_allocations` is held to it)."""
    fast = well_formed_vgpu_allocations(value) if shortcut else None
    if fast is not None:
        return fast
    decoded = decode_vgpu_ids(value, skips_bad_entries=skips_bad_entries)
    return [(a.uuid, a.mig, a.memory, a.cores) for container in decoded.containers for a in container]


def well_formed_vgpu_allocations(value: Any) -> list[tuple[str, MigSlot | None, int, int]] | None:
    """`vgpu_allocations` of a value as Volcano writes it, on which `decode_vgpu_ids` reports no problem under
    either reading; None for anything else (use the codec)."""
    if isinstance(value, str) and len(value) <= spec.MAX_ALLOCATION_VALUE:
        one = _VGPU_IDS_ONE.fullmatch(value)
        if one is not None:
            return [(one[1], None, int(one[2]), int(one[3]))]
        if _VGPU_IDS_WHOLE.fullmatch(value) is not None:
            return [(uuid, None, int(memory), int(cores)) for uuid, memory, cores in _VGPU_IDS_ENTRY.findall(value)]
    return None


def _pod_total(spec_: Mapping[str, Any], resource: str) -> int:
    def limit(c: Any) -> int:
        return _int(_m(_m(_m(c).get("resources")).get("limits")).get(resource)) or 0

    containers = spec_.get("containers") if isinstance(spec_.get("containers"), list) else []
    inits = spec_.get("initContainers") if isinstance(spec_.get("initContainers"), list) else []
    return max(sum(limit(c) for c in containers or []), max((limit(c) for c in inits or []), default=0))


def _gpushare_usage(cards: Mapping[int, DeviceState], pod_name: str, spec_: Mapping[str, Any],
                    indexes: tuple[int, ...]) -> None:
    # Volcano's gpushare ledger (`AddResource`, `getUsedGPUMemory`): a pod is on its cards only when it asks for
    # gpu-memory or gpu-number, and a card's used memory is its pods' gpu-memory (a gpu-number pod's is 0)
    memory = _pod_total(spec_, spec.GPU_MEMORY)
    if memory <= 0 and _pod_total(spec_, spec.GPU_NUMBER) <= 0:
        return
    for i in indexes:
        card = cards.get(i)
        if card is None:
            continue
        card.memory_used += memory
        if pod_name not in card.pods:
            card.pods.append(pod_name)


def _ascend_usage(devices: Mapping[str, DeviceState], pod_name: str, value: Any,
                  templates: Mapping[str, Mapping[int, str]]) -> None:
    """Book as Volcano's `AscendDevices.addResource` does (`ascend/hami/device_info.go`, ≥ 1.15.1): it reads the
    whole value with `DecodeContainerDevices`, which splits on `:` only, so the first device of every container
    after the first reads as `;<id>`, names no device and is not booked; and a pod is booked once per device
    (`PodMap`), from its first entry naming it."""
    from vgpuctl.core.codecs.ascend_pod import decode_ascend_allocations

    booked: set[str] = set()
    for number, container in enumerate(decode_ascend_allocations(value).containers):
        for position, alloc in enumerate(container):
            device = devices.get(alloc.uuid)
            if device is None or (number > 0 and position == 0) or alloc.uuid in booked:
                continue
            booked.add(alloc.uuid)
            template = templates.get(alloc.common_word, {}).get(alloc.memory)
            if template is not None:  # hami-core mode books any memory: no template to name
                device.slices.append(template)
            device.memory_used += alloc.memory
            device.cores_used += alloc.cores
            device.slots_used += 1
            if pod_name not in device.pods:
                device.pods.append(pod_name)


def _mindcluster_usage(chips: Mapping[int, DeviceState], pod_name: str, value: Any) -> None:
    from vgpuctl.core.codecs.ascend_pod import decode_npu_core

    decoded = decode_npu_core(value)
    for chip_id in decoded.chips:
        chip = chips.get(chip_id)
        if chip is None:
            continue
        if decoded.template:
            chip.slices.append(decoded.template if decoded.template in spec.MINDCLUSTER_TEMPLATES
                               else spec.UNKNOWN_SLICE)
            digits = "".join(ch for ch in decoded.template[3:5] if ch.isdigit())  # vir02_1c → 2 cores
            chip.cores_used += int(digits) if digits else 0
        else:
            chip.cores_used = chip.cores_total
        if pod_name not in chip.pods:
            chip.pods.append(pod_name)
