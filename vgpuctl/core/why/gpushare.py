"""Volcano's gpushare (`gpu-memory`) and gpu-number filters, replayed (docs/vgpu.md#gpushare, `gpushare/share.go`).

Memory: the whole pod's memory on one healthy card, lowest index first (first fit). Number: that many
cards with no pod at all. Cards listed in `volcano.sh/gpu-unhealthy-ids` do not exist for Volcano.
"""

from __future__ import annotations

from vgpuctl.core import spec
from vgpuctl.core.cluster.model import NodeState
from vgpuctl.core.why.model import DeviceChoice, Miss, NodeVerdict, Reason
from vgpuctl.core.why.request import PodRequest
from vgpuctl.core.why.scheduler_env import WhyEnv


def device_model_problem(node: NodeState, env: WhyEnv) -> str | None:
    if not (env.deviceshare.gpu_sharing or env.deviceshare.gpu_number):
        return f"neither {spec.ARG_GPU_SHARING_ENABLE} nor {spec.ARG_GPU_NUMBER_ENABLE} is on"
    if not any(d.family is spec.Family.GPUSHARE for d in node.devices):
        return f"no capacity {spec.GPU_MEMORY} / {spec.GPU_NUMBER} (not a gpushare node)"
    return None


def simulate(pod: PodRequest, node: NodeState, env: WhyEnv) -> NodeVerdict:
    family = spec.Family.GPUSHARE if pod.gpushare_memory > 0 else spec.Family.GPUNUMBER
    problem = device_model_problem(node, env)
    if problem is not None:
        return NodeVerdict.miss(node.name, family, Miss(Reason.NOT_DEVICE_NODE, problem, 0.0))
    cards = sorted((d for d in node.devices if d.family is spec.Family.GPUSHARE and d.health), key=lambda d: d.index)
    chosen: list[DeviceChoice] = []
    if env.deviceshare.gpu_sharing and pod.gpushare_memory > 0:
        need = pod.gpushare_memory
        best = None
        for card in cards:
            free = max(card.memory_total - card.memory_used, 0)
            if free >= need:
                chosen.append(DeviceChoice(card.id, need, None))
                break
            if best is None or free > best[1]:
                best = (card.index, free)
        if not chosen:
            if best is None:  # Volcano: the device exists, with no card left ("no enough gpu memory")
                return NodeVerdict.miss(node.name, family, Miss(
                    Reason.INSUFFICIENT_MEMORY, f"every card is listed in {spec.NODE_GPU_UNHEALTHY_IDS}: no card "
                                                "to place the pod on", 6.0),
                    f"repair the cards or remove them from {spec.NODE_GPU_UNHEALTHY_IDS}")
            return NodeVerdict.miss(node.name, family, Miss(
                Reason.INSUFFICIENT_MEMORY, f"GPU {best[0]}: free memory {best[1]} MiB < {need} MiB (the whole "
                                            "pod must fit on one card)", 6.0 + min(best[1] / need, 0.99)),
                f"lower {spec.GPU_MEMORY}")
    if env.deviceshare.gpu_number and pod.gpushare_number > 0:
        need = pod.gpushare_number
        idle = [c for c in cards if not c.pods]
        if len(idle) < need:
            return NodeVerdict.miss(node.name, family, Miss(
                Reason.SLOTS_EXHAUSTED, f"{len(idle)} of {len(cards)} cards idle < {need} requested "
                                        f"({spec.GPU_NUMBER} needs cards with no pod at all)",
                4.0 + min(len(idle) / need, 0.99)))
        chosen.extend(DeviceChoice(c.id, c.memory_total, None) for c in idle[:need])
    # Volcano's HasDeviceRequest: memory under GPUSharingEnable, number under GPUNumberEnable; a request of the
    # other kind is no device request, so Allocate never runs on it and takes no node lock (docs/vgpu.md#gpushare)
    asked = (env.deviceshare.gpu_sharing and pod.gpushare_memory > 0) or (
        env.deviceshare.gpu_number and pod.gpushare_number > 0)
    return NodeVerdict.fit(node.name, tuple(chosen), family if asked else None)
