"""What is installed: versions of Kubernetes, Volcano and the device plugins, read from the objects.

Volcano's version comes from the `vc-scheduler` image tag, device plugins' from their DaemonSet images
(docs/volcano.md#vocabulary "Versions matter"); `--volcano-version` overrides, and when nothing says, the newest release
is assumed and the report says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.versions import Version, VersionError, parse_version

# DaemonSet image repository (last path element, without tag) → the component it is.
PLUGIN_IMAGES = {
    "volcano-vgpu-device-plugin": "volcano-vgpu-device-plugin",
    "ascend-device-plugin": "ascend-device-plugin",
    "hami": "hami",
    "k8s-device-plugin": "nvidia-device-plugin",
    "volcano-device-plugin": "volcano-device-plugin",
    "ascend-k8sdeviceplugin": "ascend-k8sdeviceplugin",  # Huawei MindCluster's plugin (vnpu-mindcluster)
}


@dataclass(frozen=True, slots=True)
class Component:
    name: str  # e.g. "volcano-vgpu-device-plugin"
    kind: str  # "DaemonSet" | "Deployment"
    namespace: str
    object_name: str
    image: str
    version: Version | None
    obj: Mapping[str, Any]


def image_parts(image: str) -> tuple[str, str]:
    """(repository's last element, tag) of `registry/org/name:tag@sha256:…`."""
    ref = image.split("@", 1)[0]
    last = ref.rsplit("/", 1)[-1]
    name, _, tag = last.partition(":")
    return name, tag


def as_map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _containers(obj: Mapping[str, Any]) -> Iterable[Mapping[str, Any]]:
    pod_spec = as_map(as_map(as_map(obj.get("spec")).get("template")).get("spec"))
    containers = pod_spec.get("containers")
    for c in containers if isinstance(containers, list) else []:
        if isinstance(c, dict) and isinstance(c.get("image"), str):
            yield c


def _version(tag: str) -> Version | None:
    try:
        return parse_version(tag)
    except VersionError:
        return None


def components(snapshot: ClusterSnapshot) -> list[Component]:
    found: list[Component] = []
    for kind, objects in (("Deployment", snapshot.deployments), ("DaemonSet", snapshot.daemonsets)):
        for obj in objects:
            meta = as_map(obj.get("metadata"))
            for c in _containers(obj):
                name, tag = image_parts(c["image"])
                component = "vc-scheduler" if name == "vc-scheduler" else PLUGIN_IMAGES.get(name)
                if component is None and name.startswith("vc-"):
                    component = name  # vc-controller-manager, vc-webhook-manager
                if component is None:
                    continue
                found.append(Component(component, kind, str(meta.get("namespace", "")), str(meta.get("name", "")),
                                       c["image"], _version(tag), obj))
    return found


def kubernetes_version(snapshot: ClusterSnapshot) -> str | None:
    """The API server's gitVersion if known, else the oldest kubelet version (the conservative one)."""
    if snapshot.server_version:
        return snapshot.server_version
    versions = [v for v in (n.kubelet_version for n in snapshot.nodes) if v]
    parsed = sorted(((_version(v), v) for v in versions), key=lambda p: p[0].core if p[0] else (99, 0, 0))
    return parsed[0][1] if parsed else None
