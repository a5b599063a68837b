"""Volcano's Ascend HAMi vNPU filter, replayed (`ascend/hami/device_info.go` `selectDevices`,
docs/ascend.md#ascend-hami-pod-request … docs/ascend.md#ascend-hami-fit).

Per `vnpus` entry (commonWord) the pod asks for: the node needs non-zero allocatable `<resourceName>` and a
register annotation. Requests are read once, against the first device in score order (a request without
memory means that device's whole `devmem`), and in template mode trimmed up to a template (or the whole
card's `memoryAllocatable`, or 0 past `memoryCapacity`). Several devices with a partial-card memory are
refused outright. Then each container takes devices not already taken by an earlier container, each
passing: hami-core support, free vNPU slots, free memory, free cores (100 in hami-core mode), exclusive
cores, full cores. Ties in the score order are broken by device index (Volcano's order there is Go map
order, i.e. unspecified).
"""

from __future__ import annotations

from dataclasses import dataclass

from vgpuctl.core import spec
from vgpuctl.core.cluster.model import DeviceState, NodeState
from vgpuctl.core.deviceconfig import VnpuConfig, trim_vnpu_memory
from vgpuctl.core.quantity import QuantityError, parse_quantity
from vgpuctl.core.versions import leaves_ascend_lock_to_plugin
from vgpuctl.core.why.model import DeviceChoice, Miss, NodeVerdict, Reason
from vgpuctl.core.why.request import AscendRequest, PodRequest
from vgpuctl.core.why.scheduler_env import WhyEnv

FAMILY = spec.Family.ASCEND_HAMI


@dataclass(frozen=True, slots=True)
class Booking:
    memory: int  # MiB booked on each device
    template: str | None  # the template name the pod's runtime info gets (None: whole card / hami-core)


def hami_core_node(node: NodeState, env: WhyEnv) -> bool:
    """`hami-vnpu-core` on the node wins (only "true" is true); absent → the config's `hamiVnpuCore`."""
    value = node.annotations.get(spec.NODE_HAMI_VNPU_CORE)
    return value == "true" if value is not None else env.device_config.hami_vnpu_core


def device_model_problem(node: NodeState, vnpu: VnpuConfig, env: WhyEnv) -> str | None:
    if not env.deviceshare.ascend_hami:
        return f"{spec.ARG_ASCEND_HAMI_ENABLE} is off in the scheduler's deviceshare arguments"
    raw = node.allocatable.get(vnpu.resource_name)
    try:
        zero = raw is None or parse_quantity(raw).value == 0
    except QuantityError:
        zero = True
    if zero:
        return f"allocatable {vnpu.resource_name} is missing or 0"
    if not any(d.family is FAMILY and d.type == vnpu.common_word for d in node.devices):
        return f"no usable {spec.NODE_ASCEND_REGISTER_PREFIX}{vnpu.common_word} annotation"
    return None


def _score(device: DeviceState, policy: str) -> float:
    if device.memory_total == 0:
        return 0.0
    if policy == "binpack":
        return 100 * device.memory_used / device.memory_total
    if policy == "spread":
        return 100.0 if device.slots_used == 0 else 0.0
    return 0.0


def booking(vnpu: VnpuConfig, memory: int, hami_core: bool) -> Booking:
    """What a (per-device) memory request is booked as: hami-core takes it as is; template mode trims it."""
    if hami_core or memory <= 0:
        return Booking(memory, None)
    trim = trim_vnpu_memory(vnpu, memory)
    if trim.template is not None:
        return Booking(trim.memory, trim.template.name)
    if trim.memory == 0:  # past memoryCapacity: 0 fits anywhere and the annotation names the smallest template
        return Booking(0, vnpu.templates[0].name if vnpu.templates else None)
    return Booking(trim.memory, None)


def simulate(pod: PodRequest, node: NodeState, env: WhyEnv) -> NodeVerdict:
    chosen: list[DeviceChoice] = []
    by_vnpu: dict[str, list[AscendRequest]] = {}
    for req in pod.ascend:
        by_vnpu.setdefault(req.vnpu.common_word, []).append(req)
    for requests in by_vnpu.values():
        vnpu = requests[0].vnpu
        problem = device_model_problem(node, vnpu, env)
        if problem is not None:
            return NodeVerdict.miss(node.name, FAMILY, Miss(Reason.NOT_DEVICE_NODE, problem, 0.0))
        verdict = _one_type(pod, node, vnpu, requests, env)
        if isinstance(verdict, NodeVerdict):
            return verdict
        chosen.extend(verdict)
    if len(by_vnpu) > 1 and env.deviceshare.node_lock and (
            env.volcano_version is None or leaves_ascend_lock_to_plugin(env.volcano_version)):
        # predicates.go's allocate calls each device type's Allocate in turn; each takes the node lock
        # hami.io/mutex.lock (nodelock.LockNode), so the second finds the lock the first just took
        return NodeVerdict.miss(node.name, FAMILY, Miss(
            Reason.NODE_LOCKED, f"the pod asks for {len(by_vnpu)} Ascend HAMi types ({', '.join(by_vnpu)}); with "
                                f"{spec.ARG_NODE_LOCK_ENABLE} each type's Allocate takes the node lock "
                                f"{spec.LOCK_ASCEND_HAMI}, and the second fails on the lock the first just took",
            50.0, "ask for one Ascend type per pod, or turn NodeLockEnable off"))
    return NodeVerdict.fit(node.name, tuple(chosen), FAMILY)


def _one_type(pod: PodRequest, node: NodeState, vnpu: VnpuConfig, requests: list[AscendRequest],
              env: WhyEnv) -> NodeVerdict | list[DeviceChoice]:
    devices = sorted((d for d in node.devices if d.family is FAMILY and d.type == vnpu.common_word),
                     key=lambda d: (-_score(d, env.policy), d.index))
    supports = hami_core_node(node, env)
    hami_core = pod.ascend_hami_core
    first = devices[0]
    taken: set[str] = set()
    chosen: list[DeviceChoice] = []
    for req in requests:
        memory = req.memory if req.memory != 0 else first.memory_total  # 0 → 100 % of the first device
        book = booking(vnpu, memory, hami_core)
        if not hami_core and req.nums > 1 and booking(vnpu, book.memory, False).memory != vnpu.memory_allocatable:
            part = book.template or f"{book.memory} MiB"
            return NodeVerdict.miss(node.name, FAMILY, Miss(
                Reason.PARTIAL_MULTI_DEVICE,
                f'container "{req.container}": {req.nums} × {vnpu.common_word} with a partial card ({part}); '
                "vNPU does not support partial memory allocation when requesting multiple devices", 2.0,
                "omit the memory request (whole cards) or ask for one device", req.container))
        nums = req.nums
        best: Miss | None = None
        for device in devices:
            if device.id in taken:
                continue
            miss = _fit(device, book.memory, req.cores, hami_core, supports)
            if miss is not None:
                if best is None or miss.progress > best.progress:
                    best = miss
                continue
            chosen.append(DeviceChoice(device.id, book.memory, req.cores, template=book.template))
            taken.add(device.id)
            nums -= 1
            if nums <= 0:
                break
        if nums > 0:
            found = req.nums - nums
            if best is None:
                best = Miss(Reason.TOO_MANY_DEVICES, f"{len(devices)} {vnpu.common_word} device(s), all taken by "
                                                     "earlier containers of the pod", 2.0)
            count = f' (container "{req.container}" found {found} of {req.nums})' if req.nums > 1 else ""
            if best.reason is Reason.INSUFFICIENT_MEMORY and book.memory != memory:
                count += (f"; {memory} MiB is booked as {book.memory} MiB ("
                          + (f"template {book.template}" if book.template else
                             "no template covers it, so the whole chip's memoryAllocatable") + ")")
            return NodeVerdict.miss(node.name, FAMILY, Miss(best.reason, best.message + count,
                                                            best.progress + 0.009 * found / req.nums, best.hint,
                                                            req.container))
    return chosen


def _fit(device: DeviceState, memory: int, cores: int, hami_core: bool, supports: bool) -> Miss | None:
    """Volcano's `fit` for one device, in its order."""
    label = f"NPU {device.index} ({device.id})"
    if hami_core and not supports:
        return Miss(Reason.HAMI_CORE_UNSUPPORTED, f"{label}: the pod asks for {spec.ANN_VNPU_MODE}: hami-core, "
                                                  f"the node has no hami-core support ({spec.NODE_HAMI_VNPU_CORE})",
                    3.0, f"drop {spec.ANN_VNPU_MODE} or use nodes with {spec.NODE_HAMI_VNPU_CORE}: \"true\"")
    if device.slots_total <= device.slots_used:
        return Miss(Reason.SLOTS_EXHAUSTED, f"{label}: all {device.slots_total} vNPU slots in use", 4.0)
    free = device.memory_total - device.memory_used
    if free < memory:
        return Miss(Reason.INSUFFICIENT_MEMORY, f"{label}: free memory {free} MiB < {memory} MiB",
                    6.0 + min(max(free, 0) / memory, 0.99), "ask for less NPU memory")
    total = 100 if hami_core else device.cores_total
    if total - device.cores_used < cores:
        return Miss(Reason.INSUFFICIENT_CORES, f"{label}: free cores {total - device.cores_used} < {cores}",
                    7.0 + min(max(total - device.cores_used, 0) / cores, 0.99) if cores > 0 else 7.0)
    if total == 100 and cores == 100 and device.slots_used > 0:
        return Miss(Reason.EXCLUSIVE_IN_USE, f"{label}: 100 cores wants the device to itself, but "
                                             f"{device.slots_used} task(s) already use it", 8.0)
    if total != 0 and device.cores_used == total and cores == 0:
        return Miss(Reason.INSUFFICIENT_CORES, f"{label}: cores fully used ({total}/{total}) and the container "
                                               "asks for none", 8.5)
    return None
