"""Existing pods (`VGX`, docs/contracts.md#finding-families): stuck allocations, allocation annotations that lie, and
the pod rules.

These checks walk every pod of the cluster (40,000 in a large one), so each starts with a cheap test
that lets the vast majority of pods through untouched: VGX001 looks at one annotation, VGX002 at the
allocation annotations, VGX003 reviews only pods that carry device resources, annotations or labels.
Messages keep pod names out (the pod is the subject) so the report groups a problem shared by many pods.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Hashable, Iterator, Mapping
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.cluster.build import well_formed_vgpu_allocations
from vgpuctl.core.cluster.model import NodeState
from vgpuctl.core.codecs.ascend_pod import allocated_common_word, decode_ascend_allocations, decode_npu_core
from vgpuctl.core.codecs.pod_alloc import decode_vgpu_ids
from vgpuctl.core.doctor.components import as_map
from vgpuctl.core.doctor.framework import Category, DoctorContext, check
from vgpuctl.core.facts import AscendNode, ClusterFacts, VgpuNode
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.podrules import review
from vgpuctl.core.podrules.context import names_for
from vgpuctl.core.podrules.hami_annotations import is_ignored as ignored_hami_annotation
from vgpuctl.core.versions import NEWEST_VOLCANO, skips_malformed_vgpu_ids

CAT = Category.WORKLOADS
WARNING, INFO = Severity.WARNING, Severity.INFO
ALLOCATING_FOR = 300  # seconds: a bind-phase allocating older than this was never served
_DEVICE_PREFIXES = ("volcano.sh/", "huawei.com/")
_CONTAINER_KINDS = ("containers", "initContainers", "ephemeralContainers")


def _f(code: str, subject: str, message: str) -> Finding:
    return Finding(code, WARNING, subject, message, hint_for(code))


def _pod_subject(meta: Mapping[str, Any]) -> str:
    return f"pod/{meta.get('namespace', '')}/{meta.get('name', '')}"


def _unix(raw: Any) -> float | None:
    if isinstance(raw, bool):
        return None
    if isinstance(raw, int | float):
        return float(raw)
    if isinstance(raw, str):
        try:
            return float(raw.strip())
        except ValueError:
            return None
    return None


# ---- VGX001 ---------------------------------------------------------------------------------------

@check("workloads.bind-phase", CAT, "VGX001", "No pod is stuck in device allocation", reads=("pods",))
def bind_phase(ctx: DoctorContext) -> Iterator[Finding]:
    now = ctx.now.timestamp()
    for pod, marks in ctx.snapshot.pod_index.annotated:
        phase = marks.get(spec.ANN_BIND_PHASE)
        if phase not in ("allocating", "failed"):
            continue
        meta = pod["metadata"]
        pod_phase = as_map(pod.get("status")).get("phase")
        node = marks.get(spec.ANN_VGPU_NODE) or as_map(pod.get("spec")).get("nodeName") or "?"
        if phase == "allocating" and pod_phase not in spec.DONE_POD_PHASES:
            since = _unix(marks.get(spec.ANN_BIND_TIME))
            if since is None:
                yield _f("VGX001", _pod_subject(meta),
                         f"is in {spec.ANN_BIND_PHASE} allocating on node {node} with no readable "
                         f"{spec.ANN_BIND_TIME}: it cannot be told how long the device plugin has not served it")
            elif now - since > ALLOCATING_FOR:
                yield _f("VGX001", _pod_subject(meta),
                         f"has been in {spec.ANN_BIND_PHASE} allocating for more than 5 minutes on node {node}: "
                         "the device plugin there never served it (not running, or it could not match the pod: "
                         "`device number not matched`)")
        elif phase == "failed" and pod_phase != "Succeeded":
            # Kept even on Failed pods: the plugin picks pending pods by node and device count without
            # looking at the phase, so a failed allocation's annotations can still mislead it.
            yield _f("VGX001", _pod_subject(meta),
                     f"{spec.ANN_BIND_PHASE} is failed on node {node}: the device plugin refused the allocation "
                     "(see its log there), and the stale allocation annotations can mislead later allocations")


# ---- VGX002 ---------------------------------------------------------------------------------------

def _node_devices(node: NodeState, family: spec.Family) -> set[str]:
    return {d.id for d in node.devices if d.family is family}


def _allocation_findings(annotations: Mapping[str, Any], ascend_keys: tuple[str, ...], node: NodeState | None,
                         node_name: str, subject: str, skips_bad_entries: bool, gpus: set[str]) -> Iterator[Finding]:
    """`ascend_keys`: the pod's `hami.io/<CW>-devices-allocated` annotation names (`_ascend_allocated`); `gpus`:
    the UUIDs of the vGPU devices `node` registers (`_node_devices`, computed once per node)."""
    ids = annotations.get(spec.ANN_VGPU_IDS_NEW)
    if ids is not None:
        # Well-formed (what Volcano writes) has no problem to report: skip the codec, which was a fifth of
        # `doctor` on 40,000 vGPU pods (benchmarks/doctor_scale.py).
        fast = well_formed_vgpu_allocations(ids)
        if fast is not None:
            uuids = {a[0] for a in fast}
        else:
            # What a malformed entry does depends on the Volcano version: a panic before 1.16, an entry
            # logged and skipped (its usage uncounted) from 1.16 on.
            decoded = decode_vgpu_ids(ids, skips_bad_entries=skips_bad_entries)
            for problem in decoded.problems:
                if problem.code == "VGX002":
                    yield _f("VGX002", subject, f"{spec.ANN_VGPU_IDS_NEW}: {problem.message}")
            uuids = {d.uuid for d in decoded.devices}
        if gpus:  # a node without readable vGPU devices is the nodes checks' business (VGN001–003)
            for uuid in sorted(u for u in uuids if u and u not in gpus):
                yield _f("VGX002", subject, f"{spec.ANN_VGPU_IDS_NEW} names GPU {uuid}, which node {node_name} does "
                                            "not register: Volcano books the usage on no GPU (or the wrong one)")
    for key in ascend_keys:
        allocations = decode_ascend_allocations(annotations[key])
        for problem in allocations.problems:
            if problem.code == "VGX002":
                yield _f("VGX002", subject, f"{key}: {problem.message}")
        npus = _node_devices(node, spec.Family.ASCEND_HAMI) if node is not None else set()
        if npus:
            for uuid in sorted({d.uuid for d in allocations.devices if d.uuid and d.uuid not in npus}):
                yield _f("VGX002", subject, f"{key} names NPU {uuid}, which node {node_name} does not register: "
                                            "Volcano books the usage on no NPU")
    npu_core = annotations.get(spec.ANN_NPU_CORE)
    if npu_core is not None:
        cores = decode_npu_core(npu_core)
        for problem in cores.problems:
            if problem.code == "VGX002":
                yield _f("VGX002", subject, f"{spec.ANN_NPU_CORE}: {problem.message}")
        chips = {d.index for d in node.devices if d.family is spec.Family.ASCEND_MINDCLUSTER} if node else set()
        if chips:
            for chip in sorted(set(cores.chips) - chips):
                yield _f("VGX002", subject, f"{spec.ANN_NPU_CORE} names chip {chip}, which node {node_name} does "
                                            "not have: Volcano books the usage on no chip")


# Per list of annotation names, not per pod: a fleet's pods repeat a few lists (benchmarks/doctor_scale.py).
@functools.lru_cache(maxsize=4096)
def _ascend_allocated(names: tuple[Any, ...]) -> tuple[str, ...]:
    """Of a pod's annotation names, in its order, those of Ascend HAMi allocations."""
    return tuple(k for k in names if allocated_common_word(k) is not None)


@check("workloads.allocations", CAT, "VGX002", "Pod allocation annotations match the pod's node",
       reads=("pods", "nodes"))
def allocations(ctx: DoctorContext) -> Iterator[Finding]:
    nodes = {n.name: n for n in ctx.snapshot.nodes}
    gpus: dict[str, set[str]] = {}  # node name → its GPU UUIDs, once per node (benchmarks/doctor_scale.py)
    skips = skips_malformed_vgpu_ids(ctx.volcano_version or NEWEST_VOLCANO)
    done = spec.DONE_POD_PHASES
    for pod, marks in ctx.snapshot.pod_index.annotated:
        ids, assigned = marks.get(spec.ANN_VGPU_IDS_NEW), marks.get(spec.ANN_VGPU_NODE)
        ascend = _ascend_allocated(tuple(marks))
        plain_vgpu = not ascend and spec.ANN_NPU_CORE not in marks
        if ids is None and assigned is None and plain_vgpu:
            continue
        pod_spec = pod.get("spec")
        bound = pod_spec.get("nodeName") if isinstance(pod_spec, dict) else None
        if not isinstance(bound, str) or not bound:
            continue  # not bound yet: nothing to compare the allocation with
        node_gpus = gpus.get(bound)
        if node_gpus is None:
            node = nodes.get(bound)
            node_gpus = gpus[bound] = _node_devices(node, spec.Family.VGPU) if node is not None else set()
        if plain_vgpu and ids is not None and (assigned is None or assigned == bound):
            # Most pods: a well-formed allocation (what Volcano writes) of GPUs the node registers: nothing to
            # report whatever the pod's phase, told without the codec or a finding's text (doctor_scale.py).
            fast = well_formed_vgpu_allocations(ids)
            if fast is not None and (not node_gpus or all(a[0] in node_gpus for a in fast)):
                continue
        status = pod.get("status")
        if isinstance(status, dict) and status.get("phase") in done:
            continue
        subject = _pod_subject(pod["metadata"])
        if assigned is not None and assigned != bound:
            yield _f("VGX002", subject,
                     f"{spec.ANN_VGPU_NODE} is {assigned!r} but the pod runs on node {bound}: the device plugin "
                     f"on {assigned!r} may hand this allocation to another pod")
        yield from _allocation_findings(marks, ascend, nodes.get(bound), bound, subject, skips, node_gpus)


# ---- VGX003 ---------------------------------------------------------------------------------------
#
# A 5,000-node fleet has 40,000 vGPU pods and 40,000 GPUs. Two things keep the review linear and fast:
#
# - compact facts: the pod rules scan the cluster's devices per pod (the largest eligible GPU, the GPU
#   types), so nodes with identical device lists are collapsed into one representative. Every fact the
#   rules read is preserved: the types, memories and modes of GPUs, the largest GPU count on a node, the
#   largest Ascend memory and device count per chip, whether any node runs vNPU hami-core. Only the
#   GPU UUID set shrinks, so pods that filter by UUID are reviewed with the full facts.
# - one review per pod shape: the verdict (relative subjects, messages that never name the pod) depends
#   only on the annotations and labels the pod rules read, the containers' names, order, resources and
#   privilege (VGP013 pairs allocation blocks with container positions),
#   schedulerName, whether runtimeClassName is set (VGH010), and the DRA claim entries with the namespace they
#   resolve in (VGP020), so it is computed once per distinct shape.
#   The sets below are exactly what vgpuctl.core.podrules reads (a test pins them against its source): the
#   PodGroup annotations only as present-or-not (VGP012), the HAMi-only ones VGP018 names as
#   present-or-not, the rest by value, plus whether the pod has annotations at all.

SHAPE_ANNOTATIONS = frozenset({*spec.DEVICE_POD_ANNOTATIONS, spec.ANN_GPU_INDEX, spec.ANN_PREDICATE_TIME})
SHAPE_PRESENCE_ANNOTATIONS = frozenset({spec.ANN_GROUP_NAME_K8S, spec.ANN_GROUP_NAME_VOLCANO})
SHAPE_LABELS = frozenset(spec.DEVICE_POD_LABELS)
_PRESENCE_KEYS = tuple(sorted(SHAPE_PRESENCE_ANNOTATIONS))
_UUID_FILTERS = (spec.ANN_USE_GPUUUID, spec.ANN_NOUSE_GPUUUID)


def compact_facts(facts: ClusterFacts) -> ClusterFacts:
    """The same facts with nodes of identical device lists collapsed (see above); `facts` if none repeat."""
    changes: dict[str, Any] = {}
    if facts.vgpu_nodes:
        gpus: dict[tuple[Any, ...], VgpuNode] = {}
        for n in facts.vgpu_nodes:
            key = tuple((d.type, d.memory, d.mode, d.split, d.health, d.registered_mode) for d in n.devices)
            gpus.setdefault(key, n)
        if len(gpus) < len(facts.vgpu_nodes):
            changes["vgpu_nodes"] = tuple(gpus.values())
    if facts.ascend_nodes:
        npus: dict[tuple[Any, ...], AscendNode] = {}
        for a in facts.ascend_nodes:
            signature = (a.hami_vnpu_core, tuple((d.common_word, d.memory, d.cores, d.count, d.health)
                                                 for d in a.devices))
            npus.setdefault(signature, a)
        if len(npus) < len(facts.ascend_nodes):
            changes["ascend_nodes"] = tuple(npus.values())
    return dataclasses.replace(facts, **changes) if changes else facts


def _shape(pod: Mapping[str, Any], meta: Mapping[str, Any]) -> Hashable | None:
    """What the pod rules read of an existing pod, as a key; None when it cannot be one. The key may hold an
    unhashable value where a string belongs: the look-up that hashes it says so (`pod_rules`)."""
    try:
        return _shape_key(pod, meta)
    except TypeError:  # an unhashable annotation name: review the pod on its own
        return None


def _shape_key(pod: Mapping[str, Any], meta: Mapping[str, Any]) -> Hashable | None:
    """The key, built in the maps' own order: two pods listing the same entries in another order get two
    reviews with the same verdict, which is cheaper on 40,000 pods than sorting every map of every pod
    (benchmarks/doctor_scale.py). None for a pod whose containers or resources are not the lists and
    mappings they should be: it is reviewed on its own."""
    pod_spec = pod.get("spec")
    if not isinstance(pod_spec, dict):
        pod_spec = {}
    containers: list[tuple[Any, ...]] = []
    for kind in _CONTAINER_KINDS:
        raw = pod_spec.get(kind)
        if raw is None:
            continue
        if not isinstance(raw, list):
            return None
        for c in raw:
            limits = requests = None
            res = c.get("resources") if isinstance(c, dict) else False
            if isinstance(res, dict):
                limits, requests = res.get("limits"), res.get("requests")
            elif res is not None:
                return None
            if not (limits is None or isinstance(limits, dict)) or not (requests is None or isinstance(requests, dict)):
                return None
            security = c.get("securityContext")
            containers.append((kind, c.get("name"), tuple(limits.items()) if limits else (),
                               tuple(requests.items()) if requests else (),
                               isinstance(security, dict) and security.get("privileged") is True))
    annotations, labels = as_map(meta.get("annotations")), as_map(meta.get("labels"))
    by_value, ignored = _annotation_names(tuple(annotations))
    claims = pod_spec.get("resourceClaims")
    # No comprehension where the usual pod has nothing to list, and no hash here: the look-up hashes the key once
    # (benchmarks/doctor_scale.py: 40,000 vGPU pods).
    key = (pod.get("kind"), tuple(containers), pod_spec.get("schedulerName"), bool(pod_spec.get("nodeName")),
           bool(pod_spec.get("runtimeClassName")), by_value,
           tuple([annotations[k] for k in by_value]) if by_value else (),
           tuple(map(bool, map(annotations.get, _PRESENCE_KEYS))), bool(annotations),
           tuple([(k, v) for k, v in labels.items() if k in SHAPE_LABELS])
           if labels and not SHAPE_LABELS.isdisjoint(labels) else (), ignored,
           _claims_key(claims, meta) if claims else None)
    return key


def _claims_key(claims: Any, meta: Mapping[str, Any]) -> Hashable:
    """A pod's DRA claim entries and its namespace, which the claims resolve in (VGP020)."""
    if not isinstance(claims, list):
        return repr(claims)
    entries = tuple((c.get("name"), c.get("resourceClaimName"), c.get("resourceClaimTemplateName"),
                     tuple(as_map(c.get("source")).items())) if isinstance(c, dict) else repr(c) for c in claims)
    return meta.get("namespace"), entries


# Per list of annotation names, not per pod: a fleet's pods repeat a few lists (benchmarks/doctor_scale.py).
@functools.lru_cache(maxsize=4096)
def _annotation_names(names: tuple[Any, ...]) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Of a pod's annotation names, in its order: those the rules read by value, and those VGP018 reports."""
    return (tuple(k for k in names if k in SHAPE_ANNOTATIONS),
            tuple(k for k in names if isinstance(k, str) and ignored_hami_annotation(k)))


@check("workloads.pod-rules", CAT, "VGX003", "Existing pods follow the pod rules", reads=("pods",))
def pod_rules(ctx: DoctorContext) -> Iterator[Finding]:
    """Each violation (error or warning) under the pod rule's own code and severity, the pod as subject."""
    resources = names_for(ctx.facts.device_config).vgpu_all
    compact = compact_facts(ctx.facts)
    verdicts: dict[Hashable, tuple[Finding, ...]] = {}
    done = spec.DONE_POD_PHASES
    def is_device(name: str) -> bool:
        return name.startswith(_DEVICE_PREFIXES) or name in resources

    for pod in ctx.snapshot.pod_index.asking_for_devices(is_device):
        meta = pod.get("metadata")
        if not isinstance(meta, dict):
            meta = {}
        status = pod.get("status")
        if isinstance(status, dict) and status.get("phase") in done:
            continue
        key = _shape(pod, meta)
        try:
            findings = verdicts.get(key) if key is not None else None
        except TypeError:  # unhashable values where strings belong: review the pod on its own
            key = findings = None
        if findings is None:
            annotations = as_map(meta.get("annotations"))
            facts = ctx.facts if any(k in annotations for k in _UUID_FILTERS) else compact
            # Violations only: the rules' info findings (what a request resolves to) are not problems.
            findings = tuple(f for f in review(pod, facts, existing=True).findings if f.severity is not INFO)
            if key is not None:
                verdicts[key] = findings
        subject = _pod_subject(meta) if findings else ""
        for f in findings:
            yield Finding(f.code, f.severity, f"{subject}/{f.subject}" if f.subject else subject, f.message, f.hint)
