"""Volcano's vGPU filter for one pod on one node, replayed (`checkNodeGPUSharingPredicateAndScore`,
docs/vgpu.md#vgpu-filter).

Order, as in `pkg/scheduler/api/devices/nvidia/vgpu/utils.go` at HEAD: node model (register annotation,
non-zero allocatable), mode, then per requesting container: GPU count, then the devices in policy order
(docs/vgpu.md#vgpu-device-order), each skipped on the first of: UUID filter, split count (GPUExclusiveRules cap it,
docs/vgpu.md#vgpu-exclusive-rules),
PodGroup spread (docs/vgpu.md#vgpu-podgroup-spread), free memory, cores, exclusive cores, full cores, type filter, and
for MIG the
group/instance match (docs/vgpu.md#vgpu-mig, `mig.go`). A device that passes is booked on a copy, so a later container
sees it; MIG booking, like Volcano's `TryAddPod`, does not update the in-use instance list.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Final

from vgpuctl.core import spec
from vgpuctl.core.cluster.model import DeviceState, NodeState
from vgpuctl.core.codecs.pod_alloc import decode_mig_id, decode_vgpu_ids
from vgpuctl.core.deviceconfig import MigGeometry, MigGroup, MigInstance
from vgpuctl.core.quantity import QuantityError, parse_quantity
from vgpuctl.core.why.model import DeviceChoice, Miss, NodeVerdict, Reason
from vgpuctl.core.why.request import PERCENT_UNSET, PodRequest, VgpuRequest, go_uint
from vgpuctl.core.why.scheduler_env import WhyEnv, mapping, matching_rules, pod_key

FAMILY = spec.Family.VGPU
_ALLOCATABLE = (spec.VGPU_NUMBER, spec.VGPU_CORES, spec.VGPU_MEMORY)  # hard-coded in Volcano, not configurable
_CHECKS = 9  # device checks per device, for progress
_MIG: Final = spec.VgpuMode.MIG.value  # read once, not an enum access per GPU (benchmarks/why_scale.py)
_HAMI_CORE: Final = spec.VgpuMode.HAMI_CORE.value


class _Gpu:
    """A device on the simulation's copy of the node: usage in register units (MiB ÷ gpuMemoryFactor).

    A plain slots class, not a dataclass: one per GPU of every node replayed (40,000 on snapshot_gen.fleet(5000)),
    and the generated constructor with its default factory cost twice this one (benchmarks/why_scale.py)."""

    __slots__ = ("geometry", "memory", "mig_group", "mig_used", "number", "state", "used_core", "used_mem",
                 "used_num")

    def __init__(self, state: DeviceState, factor: int) -> None:
        self.state = state
        self.number = state.slots_total
        self.used_num = state.slots_used
        self.used_mem = state.memory_used // factor
        self.used_core = state.cores_used
        self.memory = state.memory_total // factor
        self.geometry: MigGeometry | None = None
        self.mig_group = -1  # index of the group in use, -1 when none
        self.mig_used: dict[str, list[int]] = {}  # instance name → used resource indexes


def node_mode(node: NodeState, env: WhyEnv) -> str:
    """The node's mode as Volcano sets it: the last device's, with MIG falling back to hami-core when no
    `knownMigGeometries` model matches that device's type (docs/vgpu.md#vgpu-node-registration)."""
    gpus = [d for d in node.devices if d.family is FAMILY]
    if not gpus:
        return _HAMI_CORE
    last = gpus[-1]
    if last.mode == _MIG and env.device_config.nvidia.geometry_for(last.type) is not None:
        return _MIG
    return _HAMI_CORE


def _nonzero(raw: Any) -> bool:
    if isinstance(raw, str):
        return _nonzero_text(raw)  # every node of a fleet repeats the same few values
    try:
        return raw is not None and parse_quantity(raw).value != 0
    except QuantityError:
        return False


@lru_cache(maxsize=512)
def _nonzero_text(raw: str) -> bool:
    try:
        return parse_quantity(raw).value != 0
    except QuantityError:
        return False


def device_model_problem(node: NodeState, env: WhyEnv) -> str | None:
    """Why Volcano builds no vGPU device model for the node (`NewGPUDevices`), or None when it does."""
    if FAMILY not in env.families:
        return f"{spec.ARG_VGPU_ENABLE} is off in the scheduler's deviceshare arguments"
    register = node.annotations.get(spec.NODE_VGPU_REGISTER)
    if register is None:
        return f"no {spec.NODE_VGPU_REGISTER} annotation (the vGPU device plugin has not registered GPUs)"
    for name in _ALLOCATABLE:
        if not _nonzero(node.allocatable.get(name)):
            return f"allocatable {name} is missing or 0"
    status = node.register_status(env.six_field_register)  # the build's reading, not a second decode
    if not status.usable:
        first = status.first_problem if status.first_problem is not None else "no GPU decoded"
        return f"Volcano ignores the register annotation: {first}"
    return None


def simulate(pod: PodRequest, node: NodeState, env: WhyEnv) -> NodeVerdict:
    problem = device_model_problem(node, env)
    if problem is not None:
        return NodeVerdict.miss(node.name, FAMILY, Miss(Reason.NOT_DEVICE_NODE, problem, 0.0),
                                "add GPUs registered by the Volcano vGPU device plugin, or enable the family")
    mode = node_mode(node, env)
    wanted = pod.annotations.get(spec.ANN_VGPU_MODE)
    if wanted is not None and wanted != mode:
        valid = wanted in (m.value for m in spec.VgpuMode)
        why = "" if valid else f" ({wanted!r} is not exactly hami-core or mig, so it matches no node)"
        return NodeVerdict.miss(node.name, FAMILY, Miss(
            Reason.MODE_MISMATCH, f"pod wants {spec.ANN_VGPU_MODE} {wanted!s}, node mode is {mode}{why}", 1.0),
            f"set {spec.ANN_VGPU_MODE}: {mode} (exactly, lower case) or remove it to use such nodes")
    if not pod.vgpu:
        return NodeVerdict.fit(node.name, (), FAMILY)
    gpus = _gpus(node, env, mode)
    reserved = _exclusive_reserved(pod, node, env, mode)
    group_key = _podgroup_key(pod) if env.podgroup_policy else ""
    annotations = pod.annotations
    allow, deny = _uuid_lists(annotations) if env.uuid_filter and (
        spec.ANN_USE_GPUUUID in annotations or spec.ANN_NOUSE_GPUUUID in annotations) else ((), ())
    chosen: list[DeviceChoice] = []
    for request in pod.vgpu:
        ask = _Ask(pod, request, env, mode, reserved, group_key, allow, deny)
        if request.nums > len(gpus):
            return NodeVerdict.miss(node.name, FAMILY, Miss(
                Reason.TOO_MANY_DEVICES,
                f'container "{request.container}": {request.nums} GPUs requested, node has {len(gpus)}', 2.0,
                container=request.container), "request fewer GPUs per container")
        nums = request.nums
        uuid_matched = False
        best_missed: _Missed | None = None
        for i in _order(gpus, env.policy):
            gpu = gpus[i]
            outcome = _check(ask, gpu, i)
            if type(outcome) is tuple:
                if outcome[0] is not Reason.UUID_EXCLUDED:
                    uuid_matched = True
                if best_missed is None or outcome[1] > best_missed[1]:
                    best_missed = outcome
                continue
            assert isinstance(outcome, DeviceChoice)
            uuid_matched = True
            if nums > 0:
                nums -= 1
                chosen.append(outcome)
            if nums == 0:
                break
        if nums > 0:
            found = request.nums - nums
            if (allow or deny) and not uuid_matched:
                miss = Miss(Reason.UUID_EXCLUDED, f"no GPU on the node passes {spec.ANN_USE_GPUUUID}/"
                                                  f"{spec.ANN_NOUSE_GPUUUID}", 3.0)
            else:
                assert best_missed is not None
                miss = _described(best_missed)
            count = f' (container "{request.container}" found {found} of {request.nums} GPUs)' \
                if request.nums > 1 else ""
            return NodeVerdict.miss(node.name, FAMILY, Miss(miss.reason, miss.message + count,
                                                            miss.progress + 0.009 * found / max(request.nums, 1),
                                                            miss.hint, request.container))
    return NodeVerdict.fit(node.name, tuple(chosen), FAMILY)


def _gpus(node: NodeState, env: WhyEnv, mode: str) -> list[_Gpu]:
    factor = env.factor
    nvidia = env.device_config.nvidia
    gpus = []
    for d in node.devices:
        if d.family is not FAMILY:
            continue
        gpu = _Gpu(d, factor)
        if d.mode == _MIG:
            gpu.geometry = nvidia.geometry_for(d.type)
        if mode == _MIG:
            _mig_usage(gpu, factor)
        gpus.append(gpu)
    return gpus


def _mig_usage(gpu: _Gpu, factor: int) -> None:
    """Volcano's `addMigUsed` per booked slice: the group in use, used instances, booked = instance memory.

    On a MIG-mode node the model books only MIG ids (`MIGFactory.AddPod`, cluster/build.py `_add_usage`), each
    with the memory of its instance in the GPU's own geometry: nothing for a group the geometry lacks, nor on
    a GPU registered in another mode (its `MigTemplate` is empty)."""
    if gpu.geometry is None:
        gpu.used_mem = 0
        return
    booked = 0
    for text in gpu.state.slices:
        slot = decode_mig_id(f"x[{text}]").mig
        if slot is None:
            continue
        for gi, group in enumerate(gpu.geometry.groups):
            if group.name != slot.group:
                continue
            gpu.mig_group = gi
            found = _find_position(group, slot.position)
            if found is not None:
                instance, resource = found
                used = gpu.mig_used.setdefault(instance.name, [])
                if resource not in used:
                    used.append(resource)
                booked += instance.memory // factor
            break
    gpu.used_mem = booked


def _find_position(group: MigGroup, position: int) -> tuple[MigInstance, int] | None:
    total = 0
    for instance in group.instances:
        if position < total + instance.count:
            return instance, position - total
        total += instance.count
    return None


def _order(gpus: list[_Gpu], policy: str) -> list[int]:
    """`sortedDeviceIndicesByPolicy` (docs/vgpu.md#vgpu-device-order): binpack most used memory first, spread fewest
    tasks first,
    anything else descending index; ties by index."""
    # Python's sort is stable and the indexes come in order: ties keep it without a (key, index) tuple per GPU
    if policy == "binpack":
        return sorted(range(len(gpus)), key=lambda i: -gpus[i].used_mem)
    if policy == "spread":
        return sorted(range(len(gpus)), key=lambda i: gpus[i].used_num)
    return list(range(len(gpus) - 1, -1, -1))


def _uuid_lists(annotations: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    def parse(raw: Any) -> tuple[str, ...]:
        return tuple(t.strip() for t in raw.split(",") if t.strip()) if isinstance(raw, str) else ()

    return parse(annotations.get(spec.ANN_USE_GPUUUID)), parse(annotations.get(spec.ANN_NOUSE_GPUUUID))


def type_excluded(annotations: Mapping[str, Any], device_type: str) -> str | None:
    """Volcano's `checkType` + `checkGPUtype`: None when the type passes, else why not."""
    if "NVIDIA" not in device_type:
        return f"type {device_type!r} does not contain NVIDIA"
    upper = device_type.upper()

    def tokens(raw: str) -> list[str]:
        return raw.split(",") if "," in raw else [raw]

    use = annotations.get(spec.ANN_USE_GPUTYPE)
    if isinstance(use, str):
        if any(t.upper() in upper for t in tokens(use)):
            return None
        return f"type {device_type!r} is not in {spec.ANN_USE_GPUTYPE}: {use}"
    nouse = annotations.get(spec.ANN_NOUSE_GPUTYPE)
    if isinstance(nouse, str) and any(t.upper() in upper for t in tokens(nouse)):
        return f"type {device_type!r} is excluded by {spec.ANN_NOUSE_GPUTYPE}: {nouse}"
    return None


def _podgroup_key(pod: PodRequest) -> str:
    if pod.annotations.get(spec.ANN_PODGROUP_POLICY) != spec.PODGROUP_POLICY_SPREAD:
        return ""
    return _group_of(pod.key.split("/", 1)[0], pod.annotations)


def _group_of(namespace: str, annotations: Mapping[str, Any]) -> str:
    group = annotations.get(spec.ANN_GROUP_NAME_K8S) or annotations.get(spec.ANN_GROUP_NAME_VOLCANO)
    return f"{namespace}/{group}" if isinstance(group, str) and group else ""


def _same_group_pod(gpu: _Gpu, key: str, env: WhyEnv, mode: str) -> str | None:
    """A pod of PodGroup `key` already using this GPU with non-zero memory or cores (`deviceHasPodFromSameGroup`):
    its usage in the GPU's `PodMap` is that of the entry the ledger booked (the first naming the GPU; on a
    MIG-mode node the first with a MIG id, booked at its instance's memory)."""
    for name in gpu.state.pods:
        other = env.pod(name)
        if other is None:
            continue
        meta = mapping(other.get("metadata"))
        annotations = mapping(meta.get("annotations"))
        if _group_of(str(meta.get("namespace") or ""), annotations) != key:
            continue
        for alloc in decode_vgpu_ids(annotations.get(spec.ANN_VGPU_IDS_NEW),
                                     skips_bad_entries=env.skips_malformed_vgpu_ids).devices:
            if not gpu.state.id or gpu.state.id not in alloc.device_id or (mode == _MIG and alloc.mig is None):
                continue
            if alloc.cores or (_mig_memory(gpu, alloc.mig.group, alloc.mig.position) if alloc.mig is not None
                               and mode == _MIG else alloc.memory):
                return name
            break
    return None


def _mig_memory(gpu: _Gpu, group_name: str, position: int) -> int:
    """The memory (MiB) `addMigUsed` books for slot `position` of group `group_name` on this GPU (0: not in its
    geometry)."""
    for group in gpu.geometry.groups if gpu.geometry is not None else ():
        if group.name == group_name:
            found = _find_position(group, position)
            return found[0].memory if found is not None else 0
    return 0


def _exclusive_reserved(pod: PodRequest, node: NodeState, env: WhyEnv, mode: str) -> dict[str, str]:
    """GPU id → the pod that reserves it for a GPUExclusiveRules rule this pod also matches (hami-core only)."""
    rules = env.exclusive_rules
    if not rules or mode != _HAMI_CORE:
        return {}
    mine = matching_rules(pod.labels, rules)
    if not mine:
        return {}
    # `wrapGPUDevicesForExclusivity` (plugins/deviceshare/gpuexclusive.go) reserves, for each of the node's tasks
    # (pods not Succeeded/Failed: a pod being deleted too, though the ledger no longer books it), the GPUs in its
    # PodMap entries, else the GPUs its `vgpu-ids-new` names
    gpus = {d.id for d in node.devices if d.family is FAMILY}
    reserved: dict[str, str] = {}
    for other in env.pods_on(node.name):
        name = pod_key(other)
        meta = mapping(other.get("metadata"))
        if name == pod.key or not mine & matching_rules(mapping(meta.get("labels")), rules):
            continue
        for alloc in decode_vgpu_ids(mapping(meta.get("annotations")).get(spec.ANN_VGPU_IDS_NEW),
                                     skips_bad_entries=env.skips_malformed_vgpu_ids).devices:
            if alloc.device_id in gpus:
                reserved.setdefault(alloc.device_id, name)
    return reserved


# A device's miss as `_check` returns it: reason, progress, the message as a `str.format` template and its values,
# the hint's template (given the device index). Formatted by `_described` only for the miss that decides a node.
_Missed = tuple[Reason, float, str, tuple[Any, ...], str]
_UUID_EXCLUDED: Final = f"GPU {{}}: {{}} is excluded by {spec.ANN_USE_GPUUUID}/{spec.ANN_NOUSE_GPUUUID}"
_RESERVED: Final = f"GPU {{}}: reserved by {{}}, which matches the same {spec.ARG_GPU_EXCLUSIVE_RULES} rule"
_SAME_GROUP: Final = f"GPU {{}}: already used by {{}} of the same PodGroup ({spec.ANN_PODGROUP_POLICY}: spread)"
_MEMORY_HINT: Final = "ask for less memory per GPU, or free memory on GPU {}"
_EXCLUSIVE_IN_USE: Final = "GPU {}: vgpu-cores 100 wants the GPU to itself, but {} task(s) already use it"
_CORES_FULL: Final = "GPU {}: cores fully used (100/100) and the container sets no vgpu-cores"


def _described(missed: _Missed) -> Miss:
    reason, progress, template, values, hint = missed
    return Miss(reason, template.format(*values), progress, hint.format(values[0]))


def _said(message: str) -> _Missed:
    """A MIG miss (`_try_mig`), its message already made: `_Missed`'s template of a whole message."""
    return Reason.NO_MIG_SLICE, 10.0, "{}", (message,), ""


class _Ask:
    """One container's request on one node, as every GPU's `_check` reads it: what does not change from GPU to GPU
    read once (the memory of a request without a percentage, the cores), not per GPU; one argument instead of
    eleven per call (40,000 checks on snapshot_gen.fleet(5000): benchmarks/why_scale.py)."""

    __slots__ = ("allow", "cores", "deny", "env", "factor", "filtered", "group_key", "mode", "need", "percentage",
                 "pod", "reserved")

    def __init__(self, pod: PodRequest, req: VgpuRequest, env: WhyEnv, mode: str, reserved: Mapping[str, str],
                 group_key: str, allow: tuple[str, ...], deny: tuple[str, ...]) -> None:
        self.pod, self.env, self.mode, self.reserved, self.group_key = pod, env, mode, reserved, group_key
        self.allow, self.deny, self.filtered = allow, deny, bool(allow or deny)
        self.factor = env.factor
        self.percentage = req.percentage
        self.need = go_uint(req.memory) if req.percentage == PERCENT_UNSET else -1  # -1: from each GPU's memory
        self.cores = go_uint(req.cores)


def _check(ask: _Ask, gpu: _Gpu, i: int) -> _Missed | DeviceChoice:
    """One device for one container, in Volcano's order; books the device on success. A miss is said lazily
    (`_described`): of a node's GPUs only the one whose miss decides the node is put in words; 40,000 messages of
    which 5,000 could be shown cost 46 ms on snapshot_gen.fleet(5000) (benchmarks/why_scale.py)."""
    uuid = gpu.state.id
    if ask.filtered and (not uuid or (ask.allow and uuid not in ask.allow) or uuid in ask.deny):
        return Reason.UUID_EXCLUDED, 3.0, _UUID_EXCLUDED, (i, uuid), ""
    reserved = ask.reserved
    if reserved and uuid in reserved:
        return Reason.EXCLUSIVE_RULE, 4.0, _RESERVED, (i, reserved[uuid]), ""
    if gpu.number <= gpu.used_num:
        return Reason.SLOTS_EXHAUSTED, 4.0, "GPU {}: all {} slots in use", (i, gpu.number), ""
    if ask.group_key:
        other = _same_group_pod(gpu, ask.group_key, ask.env, ask.mode)
        if other is not None:
            return Reason.PODGROUP_SPREAD, 5.0, _SAME_GROUP, (i, other), ""
    need = ask.need
    if need < 0:  # a percentage of this GPU's memory
        percentage = ask.percentage
        need = go_uint(int(gpu.memory * percentage / 100)) if percentage >= 0 else go_uint(-1)
    free = gpu.memory - gpu.used_mem
    if free < need:
        ratio = max(free, 0) / need if need else 0.0
        return (Reason.INSUFFICIENT_MEMORY, 6.0 + min(ratio, 0.99), "GPU {}: free memory {} MiB < {} MiB",
                (i, free * ask.factor, need * ask.factor), _MEMORY_HINT)
    cores = ask.cores
    if gpu.used_core + cores > 100:
        ratio = max(100 - gpu.used_core, 0) / cores if cores else 0.0
        return (Reason.INSUFFICIENT_CORES, 7.0 + min(ratio, 0.99), "GPU {}: free cores {} < {}",
                (i, 100 - gpu.used_core, cores), "ask for fewer vgpu-cores")
    if cores == 100 and gpu.used_num > 0:
        return Reason.EXCLUSIVE_IN_USE, 8.0, _EXCLUSIVE_IN_USE, (i, gpu.used_num), ""
    if gpu.used_core == 100 and cores == 0:
        return Reason.INSUFFICIENT_CORES, 8.5, _CORES_FULL, (i,), ""
    excluded = type_excluded(ask.pod.annotations, gpu.state.type)
    if excluded is not None:
        return Reason.TYPE_EXCLUDED, 9.0, "GPU {}: {}", (i, excluded), ""
    if ask.mode == _MIG:
        return _try_mig(gpu, i, need, cores, ask.env)
    gpu.used_num += 1
    gpu.used_mem += need
    gpu.used_core += cores
    return DeviceChoice(uuid, need * ask.factor, cores)


def _try_mig(gpu: _Gpu, i: int, need: int, cores: int, env: WhyEnv) -> _Missed | DeviceChoice:
    """`MIGFactory.TryAddPod` → `findMatch` → `pickFromGroup` (docs/vgpu.md#vgpu-mig)."""
    request = need * env.factor
    geometry = gpu.geometry
    if geometry is None:
        return _said(f"GPU {i}: type {gpu.state.type!r} matches no knownMigGeometries model")
    picked: tuple[MigGroup, MigInstance, int] | None = None
    if gpu.mig_group >= 0:
        group = geometry.groups[gpu.mig_group]
        found = _pick(group, gpu.mig_used, request)
        if found is not None:
            picked = (group, *found)
        else:
            in_use = ", ".join(f"{n}×{len(u)}" for n, u in gpu.mig_used.items()) or "nothing"
            free = [f"{inst.name}×{inst.count - len(gpu.mig_used.get(inst.name, []))}" for inst in group.instances
                    if inst.name in gpu.mig_used and inst.count > len(gpu.mig_used[inst.name])]
            return _said(f"GPU {i}: MIG {group.name} is in use ({in_use}); only instance types already in use "
                         f"can be added ({', '.join(free) or 'none left'}), none with ≥ {request} MiB free")
    else:
        for group in geometry.groups:
            found = _pick(group, {}, request)
            if found is not None:
                picked = (group, *found)
                break
        if picked is None:
            return _said(f"GPU {i}: no MIG instance has ≥ {request} MiB (largest: {geometry.largest_instance} MiB)")
    group, instance, position = picked
    gpu.used_num += 1
    gpu.used_mem += instance.memory // env.factor
    gpu.used_core += cores
    return DeviceChoice(f"{gpu.state.id}[{group.name}-{position}]", (instance.memory // env.factor) * env.factor,
                        cores, slice=instance.name)


def _pick(group: MigGroup, usage: Mapping[str, list[int]], request: int) -> tuple[MigInstance, int] | None:
    """`pickFromGroup`: smallest instance ≥ request; with a usage list, only instance types already in it."""
    ordered = sorted(enumerate(group.instances), key=lambda p: p[1].memory)
    for index, instance in ordered:
        if not usage and instance.memory >= request:
            return instance, _position(group, instance.count, [], index)
        used = usage.get(instance.name)
        if used is not None and instance.count - len(used) > 0 and instance.memory >= request:
            return instance, _position(group, instance.count, used, index)
    return None


def _position(group: MigGroup, count: int, used: list[int], index: int) -> int:
    position = sum(group.instances[k].count for k in range(index))
    for slot in range(count):
        if slot not in used:
            return position + slot
    return position
