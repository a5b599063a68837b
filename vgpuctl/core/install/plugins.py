"""The device-plugin objects install deploys, written from the upstream manifests' facts (H§2.1, H§4.1).

Two plugins are rendered: Project-HAMi's volcano-vgpu-device-plugin (`--mode vgpu`) and
ascend-device-plugin (`--mode vnpu-hami`). The other modes' plugins (volcano-sh/devices for gpushare /
gpunumber, Huawei MindCluster's for the 310P) are not rendered: their manifests are not part of the
facts vgpuctl was written from, so install says to deploy them and the doctor checks them.

Differences from upstream, each deliberate: every object carries `app.kubernetes.io/managed-by:
vgpuctl`; the DaemonSets get a node selector (upstream's vGPU plugin runs on every node and crash-loops
on CPU nodes, H§2.11); the image version follows the compatibility matrix below (H§2.12, H§4.2).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.install.devconf import MANAGED_BY, MANAGER, configmap
from vgpuctl.core.install.modes import InstallError, Mode
from vgpuctl.core.install.selector import Selector
from vgpuctl.core.versions import (
    Version,
    VersionError,
    accepts_vnpus_wrapper,
    parse_version,
    requires_six_field_register,
)

NAMESPACE = "kube-system"
VGPU_IMAGE = "docker.io/projecthami/volcano-vgpu-device-plugin"
ASCEND_IMAGE = "docker.io/projecthami/ascend-device-plugin"
VGPU_NAME = "volcano-device-plugin"
ASCEND_NAME = "hami-ascend"
ASCEND_DAEMONSET = "hami-ascend-device-plugin"
ASCEND_NODE_LABEL = ("ascend", "on")
#: Where the vGPU plugin runs when --nodes is not given: the label NVIDIA GPU feature discovery (and the
#: GPU operator) put on GPU nodes.
DEFAULT_VGPU_NODES = "nvidia.com/gpu.present=true"
#: The first ascend-device-plugin release that reads the `vnpus` wrapper form (and only it), H§4.2.
ASCEND_WRAPPER_SINCE = Version(1, 3, 0)

PLUGIN_MODES = (Mode.VGPU, Mode.VNPU_HAMI)
UNRENDERED = {
    Mode.GPUSHARE: "the volcano-sh/devices device plugin (volcano.sh/gpu-memory)",
    Mode.GPUNUMBER: "the volcano-sh/devices device plugin (volcano.sh/gpu-number)",
    Mode.VNPU_MINDCLUSTER: "Huawei MindCluster's Ascend device plugin with -presetVirtualDevice=false",
}


@dataclass(frozen=True, slots=True)
class PluginChoice:
    mode: Mode
    version: str  # the image tag, e.g. v1.12.0
    reason: str


def choose_version(mode: Mode, volcano: Version, override: str | None) -> PluginChoice:
    """The plugin image tag for `volcano` (H§2.12 for vGPU, H§4.2 for Ascend), or the override — checked."""
    if mode is Mode.VGPU:
        if override:
            return PluginChoice(mode, override, "--device-plugin-version")
        # v1.10-v1.12 write the 6-field register and the handshake: they work with every Volcano >= 1.12
        # (newer schedulers ignore the handshake); the untagged main works only with 1.14.3+/1.15.1+.
        if requires_six_field_register(volcano):
            return PluginChoice(mode, "v1.12.0", f"the newest release that works with Volcano {volcano}")
        return PluginChoice(mode, "v1.9.0", f"Volcano {volcano} needs the 5-field register annotation")
    wrapper = accepts_vnpus_wrapper(volcano)
    if override:
        try:
            chosen = parse_version(override)
        except VersionError as exc:
            raise InstallError(f"--device-plugin-version: {exc}") from None
        if not wrapper and chosen.core >= ASCEND_WRAPPER_SINCE.core:
            raise InstallError(f"ascend-device-plugin {override} reads only the vnpus wrapper form, which Volcano "
                               f"{volcano} cannot read (it needs the list form): use v1.2.0 or upgrade Volcano to "
                               "v1.14.4+ / v1.15.1+")
        if wrapper and chosen.core < ASCEND_WRAPPER_SINCE.core:
            raise InstallError(f"ascend-device-plugin {override} reads only the vnpus list form; vgpuctl writes the "
                               f"wrapper form for Volcano {volcano}: use v1.3.0 or newer")
        return PluginChoice(mode, override, "--device-plugin-version")
    if wrapper:
        return PluginChoice(mode, "v1.4.0", f"reads the vnpus wrapper form, as Volcano {volcano} does")
    return PluginChoice(mode, "v1.2.0", f"the newest release reading the vnpus list form Volcano {volcano} needs")


def _meta(name: str, namespace: str | None, extra_labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {MANAGED_BY: MANAGER, **(extra_labels or {})}}
    if namespace:
        meta["namespace"] = namespace
    return meta


def _rbac(name: str, rules: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(name, NAMESPACE)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": _meta(name, None),
         "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": _meta(name, None),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
         "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": NAMESPACE}]},
    ]


def _host_path(name: str, path: str, kind: str | None = None) -> dict[str, Any]:
    source: dict[str, Any] = {"path": path}
    if kind:
        source["type"] = kind
    return {"name": name, "hostPath": source}


def _env_node_name() -> dict[str, Any]:
    return {"name": "NODE_NAME", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}


_PRIVILEGED = {"privileged": True, "allowPrivilegeEscalation": True,
               "capabilities": {"drop": ["ALL"], "add": ["SYS_ADMIN"]}}


def render_vgpu(version: str, selector: Selector) -> list[dict[str, Any]]:
    """volcano-vgpu-device-plugin: node config, RBAC, and the DaemonSet with its monitor (H§2.1)."""
    image = f"{VGPU_IMAGE}:{version}"
    labels = {"name": VGPU_NAME}
    env_common = [{"name": "NVIDIA_VISIBLE_DEVICES", "value": "all"},
                  {"name": "NVIDIA_MIG_MONITOR_DEVICES", "value": "all"}]
    plugin = {
        "name": "volcano-device-plugin", "image": image,
        "lifecycle": {"postStart": {"exec": {"command": ["/bin/sh", "-c", "cp -f /k8s-vgpu/lib/nvidia/* "
                                                                          "/usr/local/vgpu/"]}}},
        "env": [_env_node_name(), {"name": "HOOK_PATH", "value": "/usr/local/vgpu"}, *env_common,
                {"name": "NVIDIA_DRIVER_CAPABILITIES", "value": "utility"}],
        "securityContext": _PRIVILEGED,
        "volumeMounts": [{"name": "deviceconfig", "mountPath": "/config"},
                         {"name": "device-plugin", "mountPath": "/var/lib/kubelet/device-plugins"},
                         {"name": "lib", "mountPath": "/usr/local/vgpu"},
                         {"name": "hosttmp", "mountPath": "/tmp"}],
    }
    monitor = {
        "name": "monitor", "image": image, "command": ["/bin/sh", "-c", "volcano-vgpu-monitor"],
        "env": [*env_common, {"name": "HOOK_PATH", "value": "/tmp/vgpu"}, _env_node_name()],
        "securityContext": _PRIVILEGED,
        "volumeMounts": [{"name": "dockers", "mountPath": "/run/docker"},
                         {"name": "containerds", "mountPath": "/run/containerd"},
                         {"name": "sysinfo", "mountPath": "/sysinfo"},
                         {"name": "hostvar", "mountPath": "/hostvar"},
                         {"name": "hosttmp", "mountPath": "/tmp"}],
    }
    daemonset = {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": _meta(VGPU_NAME, NAMESPACE),
        "spec": {
            "selector": {"matchLabels": labels},
            "updateStrategy": {"type": "RollingUpdate"},
            "template": {
                "metadata": {"labels": {**labels, MANAGED_BY: MANAGER}},
                "spec": {
                    "serviceAccountName": VGPU_NAME,
                    "priorityClassName": "system-node-critical",
                    "affinity": selector.node_affinity(),
                    "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"},
                                    {"key": spec.GPU_MEMORY, "operator": "Exists", "effect": "NoSchedule"}],
                    "containers": [plugin, monitor],
                    "volumes": [
                        {"name": "deviceconfig", "configMap": {"name": spec.VGPU_NODE_CONFIGMAP}},
                        _host_path("device-plugin", "/var/lib/kubelet/device-plugins", "Directory"),
                        _host_path("lib", "/usr/local/vgpu", "DirectoryOrCreate"),
                        _host_path("hosttmp", "/tmp"),
                        _host_path("dockers", "/run/docker"),
                        _host_path("containerds", "/run/containerd"),
                        _host_path("sysinfo", "/sys"),
                        _host_path("hostvar", "/var"),
                    ],
                },
            },
        },
    }
    rules = [
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "list", "watch", "update", "patch"]},
        {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "update", "patch", "watch"]},
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list", "watch", "create", "update"]},
    ]
    node_config = configmap(spec.VGPU_NODE_CONFIGMAP, NAMESPACE, {"config.json": '{"nodeconfig": []}\n'},
                            labels={MANAGED_BY: MANAGER, "app.kubernetes.io/component": "volcano-vgpu-node-plugin"})
    return [node_config, *_rbac(VGPU_NAME, rules), daemonset]


def render_ascend(version: str, device_configmap: str) -> list[dict[str, Any]]:
    """ascend-device-plugin (HAMi mode): node config, RBAC, the DaemonSet on `ascend=on` nodes (H§4.1)."""
    labels = {"app.kubernetes.io/component": ASCEND_DAEMONSET, "hami.io/webhook": "ignore"}
    mounts = [
        ("device-plugin", "/var/lib/kubelet/device-plugins", False),
        ("pod-resource", "/var/lib/kubelet/pod-resources", False),
        ("hiai-driver", "/usr/local/Ascend/driver", True),
        ("npu-smi", "/usr/local/sbin", True),
        ("log-path", "/var/log/mindx-dl/devicePlugin", False),
        ("tmp", "/tmp", False),
        ("shared-region", "/usr/local/hami-shared-region", False),
        ("vnpu-core", "/usr/local/hami-vnpu-core", False),
    ]
    container = {
        "name": "device-plugin", "image": f"{ASCEND_IMAGE}:{version}", "imagePullPolicy": "IfNotPresent",
        "args": ["--config_file", "/device-config.yaml", "--v=4"],
        "env": [_env_node_name()],
        "ports": [{"name": "monitorport", "containerPort": 9395}],
        "resources": {"requests": {"cpu": "500m", "memory": "500Mi"}, "limits": {"cpu": "500m", "memory": "500Mi"}},
        "securityContext": {"privileged": True},
        "volumeMounts": [
            *({"name": n, "mountPath": p, **({"readOnly": True} if ro else {})} for n, p, ro in mounts),
            {"name": "device-config", "mountPath": "/device-config.yaml", "subPath": spec.DEVICE_CONFIG_KEY},
            {"name": "node-config", "mountPath": "/node-config.yaml", "subPath": "node-config.yaml"},
        ],
    }
    daemonset = {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": _meta(ASCEND_DAEMONSET, NAMESPACE, labels),
        "spec": {
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": {**labels, MANAGED_BY: MANAGER}},
                "spec": {
                    "serviceAccountName": ASCEND_NAME,
                    "priorityClassName": "system-node-critical",
                    "nodeSelector": {ASCEND_NODE_LABEL[0]: ASCEND_NODE_LABEL[1]},
                    "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"}],
                    "containers": [container],
                    "volumes": [
                        *(_host_path(n, p) for n, p, _ in mounts),
                        {"name": "device-config", "configMap": {"name": device_configmap}},
                        {"name": "node-config", "configMap": {"name": spec.ASCEND_NODE_CONFIGMAP}},
                    ],
                },
            },
        },
    }
    rules = [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "update", "watch", "patch"]},
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "update", "patch"]},
    ]
    node_config = configmap(spec.ASCEND_NODE_CONFIGMAP, NAMESPACE, {"node-config.yaml": "nodes: []\n"},
                            labels={MANAGED_BY: MANAGER, "app.kubernetes.io/component": "hami-scheduler"})
    return [node_config, *_rbac(ASCEND_NAME, rules), daemonset]
