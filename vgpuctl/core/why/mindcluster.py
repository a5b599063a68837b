"""Volcano's MindCluster 310P dynamic vNPU filter, replayed (`ascend310p/vnpu/device_manage.go`,
docs/ascend.md#mindcluster-pod).

Order: NodeD `PreSeparate` status, idle `huawei.com/npu-core` on the node, the request's resources (whole
cards, or a template from the core count, `vnpu-level` and `vnpu-dvpp`), downgrade of the AI CPUs
(`vir02` → `vir02_1c`, `vir04` → `vir04_3c`) when the node is short, the same-template rule (a node
running vNPU tasks of another template, or whole-card tasks, refuses the pod), then the chip Volcano's
Allocate would pick (least free first). Volcano's filter itself does not refuse a node whose chips are
too full after the downgrade — its Allocate does; `why` reports that as `insufficient-cores` too.

Approximations (the data lives in MindCluster's device-info ConfigMaps, not in the cluster model): chip
usage is rebuilt from the pods' `huawei.com/npu-core` annotations; each chip has 7 AI CPUs (Volcano's
310P node template); a chip running a `vnpu-dvpp: yes` template refuses other DVPP/null templates; the
virtual-group rule per chip is not modelled.
"""

from __future__ import annotations

from dataclasses import dataclass

from vgpuctl.core import spec
from vgpuctl.core.cluster.build import books_devices
from vgpuctl.core.cluster.model import NodeState
from vgpuctl.core.codecs.ascend_pod import decode_npu_core
from vgpuctl.core.podrules.mindcluster import template_for
from vgpuctl.core.versions import releasing_pods_book_no_device
from vgpuctl.core.why.model import DeviceChoice, Miss, NodeVerdict, Reason
from vgpuctl.core.why.request import PodRequest, quantity_value
from vgpuctl.core.why.scheduler_env import WhyEnv, mapping

FAMILY = spec.Family.ASCEND_MINDCLUSTER
AICPU_PER_CHIP = 7
NODED_STATUS = "nodedNodeHealtyStatus"  # sic, Volcano's key
PRESEPARATE = "PreSeparate"


@dataclass(frozen=True, slots=True)
class VResource:
    aicore: int
    aicpu: int
    dvpp: str = "null"


TEMPLATES: dict[str, VResource] = {
    "vir01": VResource(1, 1), "vir02": VResource(2, 2), "vir02_1c": VResource(2, 1), "vir04": VResource(4, 4),
    "vir04_3c": VResource(4, 3), "vir04_3c_ndvpp": VResource(4, 3, "no"), "vir04_4c_dvpp": VResource(4, 4, "yes"),
}


def template_name(res: VResource) -> str | None:
    return next((name for name, value in TEMPLATES.items() if value == res), None)


@dataclass(slots=True)
class _Chip:
    index: int
    free_core: int
    free_cpu: int
    segmented: bool = False
    dvpp_used: bool = False


def _chips(node: NodeState, env: WhyEnv) -> tuple[list[_Chip], set[str]]:
    """Chip usage and the templates in use (Volcano's ConCache; "" for whole cards), from bound pods."""
    chips = {d.index: _Chip(d.index, d.cores_total, AICPU_PER_CHIP)
             for d in node.devices if d.family is FAMILY}
    per_chip = next((d.cores_total for d in node.devices if d.family is FAMILY), spec.DEFAULT_CORES_PER_310P_CHIP)
    in_use: set[str] = set()
    # The chips' usage is the device ledger's: a pod being deleted books none from 1.15 (`books_devices`);
    # `_idle_cores` below is the generic resource check, which still counts it.
    releasing_none = env.volcano_version is None or releasing_pods_book_no_device(env.volcano_version)
    for pod in env.pods_on(node.name):
        meta = mapping(pod.get("metadata"))
        if not books_devices(meta, pod.get("status"), releasing_none):
            continue
        annotations = mapping(meta.get("annotations"))
        decoded = decode_npu_core(annotations.get(spec.ANN_NPU_CORE))
        if not decoded.chips:
            continue
        in_use.add(decoded.template or "")
        res = TEMPLATES.get(decoded.template or "")
        for chip_id in decoded.chips:
            chip = chips.get(chip_id)
            if chip is None:
                continue
            if res is None:  # whole card
                chip.free_core -= per_chip
                chip.free_cpu -= AICPU_PER_CHIP
            else:
                chip.free_core -= res.aicore
                chip.free_cpu -= res.aicpu
                chip.segmented = True
                chip.dvpp_used = chip.dvpp_used or res.dvpp == "yes"
    return sorted(chips.values(), key=lambda c: c.index), in_use


def _meets(chip: _Chip, res: VResource) -> bool:
    if chip.free_core < res.aicore or chip.free_cpu < res.aicpu:
        return False
    return not (chip.dvpp_used and res.dvpp in ("yes", "null"))


def _idle_cores(node: NodeState, env: WhyEnv) -> int:
    used = 0
    for pod in env.pods_on(node.name):
        for c in mapping(pod.get("spec")).get("containers") or []:
            resources = mapping(mapping(c).get("resources"))
            raw = mapping(resources.get("requests")).get(spec.NPU_CORE, mapping(resources.get("limits")).get(
                spec.NPU_CORE))
            used += quantity_value(raw)
    return quantity_value(node.allocatable.get(spec.NPU_CORE)) - used


def simulate(pod: PodRequest, node: NodeState, env: WhyEnv) -> NodeVerdict:
    req = pod.mindcluster
    assert req is not None
    if not env.deviceshare.ascend_mindcluster:
        return NodeVerdict.miss(node.name, FAMILY, Miss(
            Reason.NOT_DEVICE_NODE, f"{spec.ARG_ASCEND_MINDCLUSTER_ENABLE} is off in the deviceshare arguments", 0.0))
    chips, in_use = _chips(node, env)
    if not chips:
        return NodeVerdict.miss(node.name, FAMILY, Miss(
            Reason.NOT_DEVICE_NODE, f"no capacity {spec.NPU_CORE} (not a MindCluster 310P node)", 0.0))
    if node.annotations.get(NODED_STATUS) == PRESEPARATE:
        return NodeVerdict.miss(node.name, FAMILY, Miss(Reason.OTHER, f"NodeD reports the node {PRESEPARATE}", 1.0))
    idle = _idle_cores(node, env)
    if idle < req.cores:
        return NodeVerdict.miss(node.name, FAMILY, Miss(
            Reason.INSUFFICIENT_CORES, f"idle {spec.NPU_CORE} {idle} < {req.cores}",
            7.0 + min(max(idle, 0) / req.cores, 0.99) if req.cores else 7.0, "ask for fewer cores"))
    per_chip = _per_chip(node)
    whole = per_chip > 0 and req.cores % per_chip == 0
    if whole:
        res = VResource(req.cores, req.cores * AICPU_PER_CHIP // per_chip)
        return _whole(node, chips, in_use, res, per_chip)
    if req.dvpp not in spec.VNPU_DVPP_VALUES:
        return NodeVerdict.miss(node.name, FAMILY, Miss(Reason.OTHER, f"err dvpp value: {req.dvpp}", 1.0,
                                                        f"set label {spec.LABEL_VNPU_DVPP} to yes, no or null"))
    name = template_for(req.cores, req.dvpp, req.level, per_chip)
    if name is None:
        # No template: Volcano books nothing, and binds the pod with no chip (VGA002).
        if in_use:
            return NodeVerdict.miss(node.name, FAMILY, Miss(
                Reason.TEMPLATE_CONFLICT, f"{req.cores} cores has no template, and the node runs vNPU tasks "
                                          f"({_show(in_use)}); Volcano cannot match it", 9.0))
        return NodeVerdict.fit(node.name, (), FAMILY)
    res = TEMPLATES[name]
    if not _node_meets(chips, res):
        lower = _downgrade(res)
        if lower is not None:
            res = lower
    chosen = template_name(res)
    if in_use and in_use != {chosen}:
        return NodeVerdict.miss(node.name, FAMILY, Miss(
            Reason.TEMPLATE_CONFLICT, f"the node runs unfinished tasks of template {_show(in_use)}; a {chosen} "
                                      "task is refused until they finish (is using …, and not rewrite)", 9.0,
            "wait for those tasks, or use a node running the same template"))
    chip = next((c for c in sorted(chips, key=lambda c: (c.free_core, c.free_cpu)) if _meets(c, res)), None)
    if chip is None:
        most = max(chips, key=lambda c: (c.free_core, c.free_cpu))
        return NodeVerdict.miss(node.name, FAMILY, Miss(
            Reason.INSUFFICIENT_CORES, f"no chip has {res.aicore} AI cores and {res.aicpu} AI CPUs free for "
                                       f"{chosen} (most free: chip {most.index}, {most.free_core} cores / "
                                       f"{most.free_cpu} CPUs); Volcano's filter passes, its allocation fails",
            7.5 + min(most.free_core / max(res.aicore, 1), 0.99) / 2))
    return NodeVerdict.fit(node.name, (DeviceChoice(str(chip.index), None, res.aicore, template=chosen),), FAMILY)


def _per_chip(node: NodeState) -> int:
    return next((d.cores_total for d in node.devices if d.family is FAMILY), spec.DEFAULT_CORES_PER_310P_CHIP)


def _show(in_use: set[str]) -> str:
    return ", ".join(sorted(t or "whole card" for t in in_use))


def _node_meets(chips: list[_Chip], res: VResource) -> bool:
    total_core = sum(c.free_core for c in chips)
    total_cpu = sum(c.free_cpu for c in chips)
    return total_core >= res.aicore and total_cpu >= res.aicpu and any(_meets(c, res) for c in chips)


def _downgrade(res: VResource) -> VResource | None:
    if res.aicore == 2 and res.aicpu == 2:
        return VResource(2, 1, res.dvpp)
    if res.aicore == 4 and res.aicpu == 4 and res.dvpp != "yes":
        return VResource(4, 3, res.dvpp)
    return None


def _whole(node: NodeState, chips: list[_Chip], in_use: set[str], res: VResource, per_chip: int) -> NodeVerdict:
    if in_use:
        return NodeVerdict.miss(node.name, FAMILY, Miss(
            Reason.TEMPLATE_CONFLICT, f"the node runs vNPU tasks ({_show(in_use)}); Volcano refuses a whole-card "
                                      "request next to them", 9.0, "wait for those tasks to finish"))
    cards = res.aicore // per_chip
    free = [c for c in sorted(chips, key=lambda c: (c.free_core, c.free_cpu))
            if not c.segmented and c.free_core >= per_chip and c.free_cpu >= AICPU_PER_CHIP]
    if len(free) < cards or cards == 0:
        return NodeVerdict.miss(node.name, FAMILY, Miss(
            Reason.INSUFFICIENT_CORES, f"{len(free)} whole free chip(s) < {cards} requested", 7.0 + 0.5 * len(free)
            / max(cards, 1)))
    return NodeVerdict.fit(node.name, tuple(DeviceChoice(str(c.index), None, per_chip) for c in free[:cards]), FAMILY)
