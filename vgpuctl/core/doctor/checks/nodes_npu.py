"""Node checks (`VGN`, docs/contracts.md#finding-families), gpushare, Ascend and driver: capacities, registers and
labels Volcano needs.

Same conventions as `nodes` (subject `node/<name>`, no node name in messages, codec findings surfaced by
the check of their code); imported by `nodes` so importing the checks package registers these as well.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.cluster.model import NodeState
from vgpuctl.core.codecs.ascend import decode_hami_vnpu_core
from vgpuctl.core.codecs.pod_alloc import decode_gpu_unhealthy_ids
from vgpuctl.core.doctor.checks.nodes import (
    CAT,
    ERROR,
    INFO,
    VGPU_RESOURCES,
    WARNING,
    codec,
    describe,
    node_finding,
    quantity,
    registered,
    string_map,
    version,
)
from vgpuctl.core.doctor.components import as_map, image_parts
from vgpuctl.core.doctor.framework import DoctorContext, check
from vgpuctl.core.findings import Finding
from vgpuctl.core.versions import has_vnpu_hami_core

ASCEND_PLUGIN_IMAGE = "ascend-device-plugin"
DEFAULT_ASCEND_SELECTOR = {"ascend": "on"}
MINDCLUSTER_LABELS = ("accelerator", "servertype", "node.kubernetes.io/npu.chip.name")
CORES_PER_310P_CHIP = (8, 10)  # the built-in 310P node templates (docs/ascend.md#mindcluster-node)
OLDEST_BAD_DRIVER = 440
DRIVER_LABELS = ("nvidia.com/cuda.driver-version.full", "nvidia.com/cuda.driver.major",
                 "nvidia.com/cuda.driver-version.major")


@check("nodes.gpushare", CAT, "VGN014", "gpushare nodes have gpu-memory and gpu-number capacity", reads=("nodes",))
def gpushare(ctx: DoctorContext) -> Iterator[Finding]:
    for node in ctx.snapshot.nodes:
        unhealthy = node.annotations.get(spec.NODE_GPU_UNHEALTHY_IDS)
        if spec.GPU_MEMORY not in node.capacity and spec.GPU_NUMBER not in node.capacity and unhealthy is None:
            continue
        wrong = [d for d in (describe(node.capacity, r) for r in (spec.GPU_MEMORY, spec.GPU_NUMBER)) if d]
        if wrong:
            yield node_finding("VGN014", ERROR, node, f"capacity {', '.join(wrong)}: Volcano's gpushare builds no "
                                                      "GPU model for the node and no gpu-memory/gpu-number pod fits")
        known = codec(node, "VGN014")
        decoded = decode_gpu_unhealthy_ids(unhealthy)
        yield from known or (node_finding("VGN014", ERROR, node, p.message) for p in decoded.problems)
        cards = quantity(node.capacity.get(spec.GPU_NUMBER)) or 0
        outside = sorted({i for i in decoded.indexes if not 0 <= i < cards})
        if outside and cards > 0:
            yield node_finding("VGN014", ERROR, node, f"{spec.NODE_GPU_UNHEALTHY_IDS} names card(s) "
                                                      f"{', '.join(map(str, outside))}, outside 0..{cards - 1}: "
                                                      "nothing is taken out of service for them")


def _mindcluster(node: NodeState) -> bool:
    return spec.NPU_CORE in node.capacity


def _ascend_hami_annotated(node: NodeState) -> bool:
    prefixes = (spec.NODE_ASCEND_REGISTER_PREFIX, spec.NODE_ASCEND_HANDSHAKE_PREFIX)
    return spec.NODE_HAMI_VNPU_CORE in node.annotations or any(
        isinstance(k, str) and k.startswith(prefixes) for k in node.annotations)


def _advertised(ctx: DoctorContext, node: NodeState) -> list[tuple[str, str, int]]:
    """(commonWord, resource, count) for every configured vNPU type this node advertises above 0."""
    out = []
    for vnpu in ctx.snapshot.device_config.vnpus:
        count = quantity(node.allocatable.get(vnpu.resource_name)) if vnpu.resource_name else None
        if count and count > 0:
            out.append((vnpu.common_word, vnpu.resource_name, count))
    return out


@check("nodes.ascend-hami-register", CAT, "VGN015", "Ascend HAMi nodes register their NPUs", reads=("nodes",))
def ascend_hami_register(ctx: DoctorContext) -> Iterator[Finding]:
    hami_on = ctx.snapshot.deviceshare.ascend_hami  # explicit: allocatable alone is a guess
    reads_flag = has_vnpu_hami_core(version(ctx))
    for node in ctx.snapshot.nodes:
        yield from codec(node, "VGN015")
        if hami_on and not _mindcluster(node):
            for common_word, resource, count in _advertised(ctx, node):
                key = spec.NODE_ASCEND_REGISTER_PREFIX + common_word
                if key not in node.annotations:
                    yield node_finding("VGN015", ERROR, node, f"allocatable {resource} is {count} but there is no "
                                                              f"{key}: Volcano ignores {common_word} on this node")
        if reads_flag:
            flag = decode_hami_vnpu_core(node.annotations.get(spec.NODE_HAMI_VNPU_CORE))
            yield from (node_finding("VGN015", WARNING, node, p.message) for p in flag.problems)


def _cores_per_chip(servertype: str) -> int | None:
    parts = servertype.split("-")
    return int(parts[1]) if len(parts) > 1 and parts[1].isascii() and parts[1].isdigit() and len(parts[1]) < 6 else None


@check("nodes.mindcluster", CAT, "VGN016", "MindCluster 310P nodes carry the labels and whole chips Volcano needs",
       reads=("nodes",))
def mindcluster(ctx: DoctorContext) -> Iterator[Finding]:
    for node in ctx.snapshot.nodes:
        if not _mindcluster(node):
            continue
        labels = string_map(node.labels)
        missing = [label for label in MINDCLUSTER_LABELS if not labels.get(label)]
        if missing:
            yield node_finding("VGN016", ERROR, node, f"missing label(s) {', '.join(missing)}: Volcano's MindCluster "
                                                      "vNPU cannot tell the chip and skips the node")
        wrong = describe(node.capacity, spec.NPU_CORE)
        cores = quantity(node.capacity.get(spec.NPU_CORE)) or 0
        if wrong:
            yield node_finding("VGN016", ERROR, node, f"capacity {wrong}: no AI core to hand out, the node is not "
                                                      "usable for vNPU")
            continue
        servertype = labels.get("servertype")
        if not servertype:
            continue
        per_chip = _cores_per_chip(servertype)
        if per_chip is None:
            yield node_finding("VGN016", ERROR, node, f"servertype {servertype!r} has no cores-per-chip number as its "
                                                      "second field (e.g. Ascend310P-8): Volcano cannot size the chips")
        elif per_chip not in CORES_PER_310P_CHIP:
            yield node_finding("VGN016", ERROR, node, f"servertype {servertype!r} gives {per_chip} cores per chip; "
                                                      "Volcano's 310P node templates know only 8 and 10")
        elif cores % per_chip:
            yield node_finding("VGN016", ERROR, node, f"capacity {spec.NPU_CORE} {cores} is not a multiple of the "
                                                      f"{per_chip} cores per chip of servertype {servertype!r}: "
                                                      "Volcano rejects the node's chip layout")


def _driver(labels: Mapping[str, Any]) -> tuple[str, str, int | None] | None:
    """(label, value, major) from the first readable driver label, else the first unreadable one, else None."""
    seen: list[tuple[str, str, int | None]] = []
    for key in DRIVER_LABELS:
        value = labels.get(key)
        if isinstance(value, str) and value:
            major = value.split(".", 1)[0]
            seen.append((key, value, int(major) if major.isascii() and major.isdigit() and len(major) < 10 else None))
    return next((s for s in seen if s[2] is not None), seen[0] if seen else None)


def _nvidia_node(node: NodeState) -> bool:
    return (spec.Family.VGPU in node.families or spec.Family.GPUSHARE in node.families or registered(node)
            or spec.NODE_HAMI_NVIDIA_REGISTER in node.annotations
            or any(r in node.allocatable for r in VGPU_RESOURCES))


@check("nodes.nvidia-driver", CAT, "VGN017", "NVIDIA nodes run a driver newer than 440", reads=("nodes",))
def nvidia_driver(ctx: DoctorContext) -> Iterator[Finding]:
    for node in ctx.snapshot.nodes:
        if not _nvidia_node(node):
            continue
        driver = _driver(node.labels)
        if driver is None or driver[2] is None:
            seen = f"label {driver[0]}={driver[1]!r} is unreadable" if driver else "no gpu-feature-discovery label"
            yield node_finding("VGN017", INFO, node, f"NVIDIA driver version unknown ({seen}); run `vgpuctl doctor "
                                                     f"--node` on the node, or deploy gpu-feature-discovery for "
                                                     f"{DRIVER_LABELS[0]}")
        elif driver[2] <= OLDEST_BAD_DRIVER:
            yield node_finding("VGN017", ERROR, node, f"NVIDIA driver {driver[1]} ({driver[0]}) is {OLDEST_BAD_DRIVER} "
                                                      "or older: the vGPU device plugin needs a newer driver")


def _ascend_selector(ctx: DoctorContext) -> tuple[Mapping[str, str], str]:
    """The Ascend HAMi plugin DaemonSet's nodeSelector (and its name), else the shipped `ascend: "on"`."""
    for ds in ctx.snapshot.daemonsets:
        pod_spec = as_map(as_map(as_map(ds.get("spec")).get("template")).get("spec"))
        containers: Any = pod_spec.get("containers")
        if isinstance(containers, list) and any(
                isinstance(c, dict) and isinstance(c.get("image"), str) and
                image_parts(c["image"])[0] == ASCEND_PLUGIN_IMAGE for c in containers):
            selector = string_map(pod_spec.get("nodeSelector"))
            meta = as_map(ds.get("metadata"))
            return selector, f"DaemonSet {meta.get('namespace', '')}/{meta.get('name', '')}"
    return DEFAULT_ASCEND_SELECTOR, "the Ascend HAMi device plugin's DaemonSet"


@check("nodes.ascend-label", CAT, "VGN018", "Ascend HAMi nodes carry the device plugin's node label",
       reads=("nodes",))
def ascend_label(ctx: DoctorContext) -> Iterator[Finding]:
    selector, owner = _ascend_selector(ctx)
    if not selector:
        return
    hami_on = ctx.snapshot.deviceshare.ascend_hami  # explicit: allocatable alone is a guess
    for node in ctx.snapshot.nodes:
        if not (_ascend_hami_annotated(node) or (hami_on and not _mindcluster(node) and _advertised(ctx, node))):
            continue
        labels = string_map(node.labels)
        missing = [f"{k}={v}" for k, v in selector.items() if labels.get(k) != v]
        if missing:
            yield node_finding("VGN018", ERROR, node, f"no label {', '.join(missing)}: {owner} runs only on nodes "
                                                      "with it, so the Ascend device plugin does not run here and the "
                                                      "node's NPUs are not (or no longer) registered")
