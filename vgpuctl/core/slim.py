"""What the cluster-aware webhook keeps of a watched Node or bound Pod: only what the model reads, bounded.

Every pod in the cluster can reach the watch (any pod author can set annotations, or a `spec.nodeName` of
their choosing), and the webhook keeps what it is sent in every replica, for as long as the pod lives, and
again at every re-list. So a pod is kept only when it can change a device's usage, and then only the
fields the model reads, each bounded:

- annotations: the allocation ones (`glance.BOOKED_ANNOTATIONS`, and `hami.io/<CW>-devices-allocated` for at
  most `MAX_ASCEND_KEYS` common words) and the PodGroup names the spread policy compares; at most
  `spec.MAX_ALLOCATION_VALUE` characters in all — a longer value is dropped and said (`dropped`), as the
  codecs refuse to read it (VGX002);
- containers and init containers: at most `MAX_CONTAINERS` of each, with their name and the resources the
  model sums (device resources, cpu, memory, ephemeral-storage), at most `MAX_RESOURCES` per map, names of
  at most `MAX_NAME` characters and quantities of at most `MAX_QUANTITY`;
- `metadata.deletionTimestamp` (a pod being deleted is Releasing to Volcano: its devices are no longer
  booked, `cluster/build.py books_devices`);
- no labels, no other annotations, no status but the phase.

Bound per pod, whatever it carries: 32 Ki characters of annotation values and 2 × 8 containers ×
2 maps × 8 resources of ≤ 96 + 32 characters — about 100 KiB of Python objects at worst; ~1 KiB for a real
GPU pod (`benchmarks/cluster_memory.py` measures both). A node is kept whole but for images, conditions
and addresses: nodes are written by kubelets and administrators, not pod authors.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from vgpuctl.core import spec
from vgpuctl.core.cluster.glance import BOOKED_ANNOTATIONS, allocation_annotated, asks_beyond_core
from vgpuctl.core.codecs.ascend_pod import allocated_common_word

GROUP_ANNOTATIONS: Final = (spec.ANN_GROUP_NAME_K8S, spec.ANN_GROUP_NAME_VOLCANO)  # the spread policy's group
MAX_ASCEND_KEYS: Final = 4
MAX_CONTAINERS: Final = 8
MAX_RESOURCES: Final = 8
MAX_NAME: Final = 96
MAX_QUANTITY: Final = 32
_RESOURCE_PREFIXES: Final = ("volcano.sh/", "huawei.com/")
_CORE_RESOURCES: Final = frozenset({"cpu", "memory", "ephemeral-storage"})
_EMPTY: Mapping[str, Any] = {}


def _m(value: Any) -> Mapping[str, Any]:
    # a dict, not any Mapping: what a watch delivers is parsed JSON, and the ABC check was a tenth of slimming
    # 150,000 pods (benchmarks/cluster_aware.py)
    return value if isinstance(value, dict) else _EMPTY


def slim_node(obj: Mapping[str, Any]) -> dict[str, Any]:
    """The parts of a Node the cluster model reads (name, labels, annotations, taints, cordon, capacity,
    allocatable).

    A watched Node carries images, conditions and addresses too; 5,000 of them would cost the webhook
    hundreds of MiB for nothing."""
    meta = _m(obj.get("metadata"))
    status = _m(obj.get("status"))
    spec_ = _m(obj.get("spec"))
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {k: meta[k] for k in ("name", "resourceVersion", "labels", "annotations") if k in meta},
        # taints and cordon: `why/nodefit.py` keeps a pod off a node for them, in the fits-now check too
        "spec": {k: spec_[k] for k in ("taints", "unschedulable") if k in spec_},
        "status": {k: status[k] for k in ("capacity", "allocatable") if k in status},
    }


def _resources(raw: Any) -> dict[str, Any]:
    kept: dict[str, Any] = {}
    for kind in ("limits", "requests"):
        source = _m(_m(raw).get(kind))
        chosen: dict[str, str] = {}
        for name, value in source.items():
            if len(chosen) >= MAX_RESOURCES:
                break
            if (isinstance(name, str) and len(name) <= MAX_NAME and isinstance(value, str | int | float)
                    and len(str(value)) <= MAX_QUANTITY
                    and (name in _CORE_RESOURCES or name.startswith(_RESOURCE_PREFIXES))):
                chosen[name] = str(value) if not isinstance(value, str) else value
        if chosen:
            kept[kind] = chosen
    return kept


def _containers(raw: Any) -> list[dict[str, Any]]:
    if not isinstance(raw, list):
        return []
    kept = []
    for c in raw[:MAX_CONTAINERS]:
        if isinstance(c, dict):
            name = c.get("name")
            kept.append({"name": name if isinstance(name, str) and len(name) <= MAX_NAME else "",
                         "resources": _resources(c.get("resources"))})
    return kept


def _may_matter(annotations: Mapping[str, Any], spec_: Mapping[str, Any]) -> bool:
    """A glance, before anything is built (`cluster/glance.py`, shared with the build and the pod index): an
    annotation name the device ledger books from, or a resource name beyond cpu/memory/ephemeral-storage in a
    container. Three quarters of a cluster's pods ask no device and carry no device annotation; they cost this
    and nothing more (benchmarks/cluster_aware.py)."""
    return allocation_annotated(annotations) or asks_beyond_core(spec_, MAX_CONTAINERS)


def _device_resources(containers: list[dict[str, Any]]) -> bool:
    return any(name.startswith(_RESOURCE_PREFIXES) for c in containers for kind in c["resources"].values()
               for name in kind)


def _annotations(raw: Mapping[str, Any], dropped: list[str] | None) -> dict[str, str]:
    """The annotations the model reads, within the budget: values over it are left out (and named)."""
    wanted: list[tuple[str, str]] = []
    ascend = 0
    for key, value in raw.items():
        if not isinstance(key, str) or not isinstance(value, str):
            continue
        if key in BOOKED_ANNOTATIONS or key in GROUP_ANNOTATIONS:
            wanted.append((key, value))
        elif key.startswith("hami.io/") and allocated_common_word(key) is not None and ascend < MAX_ASCEND_KEYS:
            ascend += 1
            wanted.append((key, value))
    kept: dict[str, str] = {}
    budget = spec.MAX_ALLOCATION_VALUE
    for key, value in sorted(wanted, key=lambda kv: len(kv[1])):  # the short ones first: they are Volcano's
        if len(value) > budget:
            if dropped is not None:
                dropped.append(f"{key} ({len(value)} characters)")
            continue
        budget -= len(value)
        kept[key] = value
    return kept


def slim_pod(obj: Mapping[str, Any], dropped: list[str] | None = None) -> dict[str, Any] | None:
    """A bound pod reduced to what usage and the simulator read, or None when it can change no device's
    usage (no allocation annotation, no device resource). None also for a pod that is not bound or is
    Succeeded/Failed: Volcano counts neither. Annotation values over the budget are named in `dropped`."""
    spec_ = _m(obj.get("spec"))
    node = spec_.get("nodeName")
    phase = _m(obj.get("status")).get("phase")
    if not isinstance(node, str) or not node or len(node) > 253 or phase in spec.DONE_POD_PHASES:
        return None  # (no node has a longer name)
    meta = _m(obj.get("metadata"))
    raw = _m(meta.get("annotations"))
    if not _may_matter(raw, spec_):
        return None
    too_long: list[str] = []
    annotations = _annotations(raw, too_long) if raw else {}
    if dropped is not None:
        dropped.extend(too_long)
    containers = _containers(spec_.get("containers"))
    inits = _containers(spec_.get("initContainers"))
    allocated = any(k not in GROUP_ANNOTATIONS for k in annotations)
    if not allocated and not _device_resources(containers) and not _device_resources(inits):
        return None
    identity = {k: meta[k] for k in ("name", "namespace", "uid", "resourceVersion")
                if isinstance(meta.get(k), str) and len(meta[k]) <= 253}
    deleting = meta.get("deletionTimestamp")
    if deleting is not None:  # only its presence is read; an RFC 3339 time is ~20 characters
        identity["deletionTimestamp"] = deleting if isinstance(deleting, str) and len(deleting) <= 64 else "set"
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {**identity, "annotations": annotations},
        "spec": {"nodeName": node, "containers": containers, "initContainers": inits},
        "status": {"phase": phase} if isinstance(phase, str) and len(phase) <= 32 else {},
    }
