"""A glance at a pod: whether anything vgpuctl does with pods needs more than that.

Three quarters of a cluster's pods ask no device and carry no device annotation (web servers, DaemonSets,
batch jobs), and on a 150,000-pod fleet building anything for each of them was the largest item in a profile
of `nodes` (issue 26, benchmarks/scale.py). The build (`cluster/build.py`), the pod index
(`cluster/pod_index.py`) and what the cluster-aware webhook keeps of a watched pod (`core/slim.py`) all ask
these same questions first, and look further only when the answer is yes. A glance may say yes to a pod that
turns out not to matter (the full path then decides as before); it never says no to one that does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

from vgpuctl.core import spec

#: The annotation namespaces every device annotation vgpuctl reads lives in (`spec.ANN_*`, the Ascend
#: `hami.io/<CW>-devices-allocated`): a pod with no annotation name under them carries no device annotation.
DEVICE_ANNOTATION_PREFIXES: Final = ("volcano.sh/", "hami.io/", "huawei.com/", "nvidia.com/")
#: The annotations Volcano's device ledger books usage from (`cluster/build.py _add_usage`); with
#: `hami.io/` (the Ascend allocations) the whole set.
BOOKED_ANNOTATIONS: Final = frozenset({spec.ANN_VGPU_IDS_NEW, spec.ANN_GPU_INDEX, spec.ANN_NPU_CORE})
_ASCEND_PREFIX: Final = "hami.io/"
#: Resource names every pod may ask without asking a device (the kubelet's own; no device resource is named so).
CORE_RESOURCES: Final = frozenset({"cpu", "memory", "ephemeral-storage", "pods"})


def device_annotated(annotations: Mapping[Any, Any]) -> bool:
    """Whether an annotation name lies in a device namespace (`DEVICE_ANNOTATION_PREFIXES`)."""
    for key in annotations:  # noqa: SIM110 - a loop, not any(): no generator per pod (benchmarks/nodes_scale.py)
        if isinstance(key, str) and key.startswith(DEVICE_ANNOTATION_PREFIXES):
            return True
    return False


def allocation_annotated(annotations: Mapping[Any, Any]) -> bool:
    """Whether an annotation name is one the device ledger may book usage from (`BOOKED_ANNOTATIONS`, or an
    Ascend allocation under `hami.io/`)."""
    for key in annotations:
        if key in BOOKED_ANNOTATIONS or (isinstance(key, str) and key.startswith(_ASCEND_PREFIX)):
            return True
    return False


def beyond_core(names: Any) -> bool:
    """Whether a container's `limits` or `requests` map names a resource outside `CORE_RESOURCES` (a device
    resource, or something else: the caller looks closer). Anything but a map names nothing."""
    return isinstance(names, dict) and not CORE_RESOURCES.issuperset(names)


def asks_beyond_core(pod_spec: Mapping[str, Any], at_most: int | None = None) -> bool:
    """Whether a container or init container of the pod spec (of the first `at_most` of each, when given) names a
    resource outside `CORE_RESOURCES`."""
    for kind in ("containers", "initContainers"):
        containers = pod_spec.get(kind)
        if not isinstance(containers, list):
            continue
        for c in containers if at_most is None else containers[:at_most]:
            resources = c.get("resources") if isinstance(c, dict) else None
            if resources and isinstance(resources, dict) and (
                    beyond_core(resources.get("limits")) or beyond_core(resources.get("requests"))):
                return True
    return False
