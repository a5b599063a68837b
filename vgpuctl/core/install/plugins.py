"""The device-plugin objects install deploys, one plugin per mode, written from the upstream manifests' facts.

- `--mode vgpu`: Project-HAMi volcano-vgpu-device-plugin (docs/device-plugins.md#vgpu-plugin-objects).
- `--mode vnpu-hami`: Project-HAMi ascend-device-plugin (docs/device-plugins.md#ascend-plugin-objects), with its
`ascend` RuntimeClass from v1.3.0 on
  (`ascend-runtimeclass.yaml`; one that exists and is not vgpuctl's is left alone, and kept by uninstall).
- `--mode gpushare` / `gpunumber`: volcano-sh/devices, `volcano-device-plugin.yml` (master): objects, RBAC,
  the one hostPath; the strategy is `GPU_STRATEGY` (`main.go`, `doc/config.md`; an env var rather than
  `--gpu-strategy`, which the v1.0.0 release's flag parser would exit on).
- `--mode vnpu-mindcluster`: Ascend/mind-cluster `component/ascend-device-plugin/build/
  ascendplugin-310P-volcano.yaml` (v7.2.RC1–v26.0.x) with `-volcanoType=true -presetVirtualDevice=false`
  as Volcano's `docs/user-guide/how_to_use_vnpu.md` asks; flags from `main.go`. `-useAscendDocker` is
  left out: `setUseAscendDocker` overrides it from the environment (v6.0.0 on) and v26.1.0 removed the
  flag (Go's flag package exits on an unknown one). NodeD and ClusterD, which Volcano also needs, are not
  deployed.

Differences from upstream, each deliberate: every object carries `app.kubernetes.io/managed-by:
vgpuctl`; the NVIDIA DaemonSets get node affinity (`--nodes`, else `nvidia.com/gpu.present=true`:
upstream's run on every node and crash-loop on CPU nodes, docs/device-plugins.md#vgpu-plugin-prerequisites); images come
from a registry (the
MindCluster manifest expects a locally loaded image, `imagePullPolicy: Never`) and their tags follow the
compatibility matrix in `vgpuctl.core.versions`; the MindCluster log directory is created when absent.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.geometry.export import configmap_object as configmap
from vgpuctl.core.install.devconf import MANAGED_BY, MANAGER
from vgpuctl.core.install.modes import InstallError, Mode, parse_nodes
from vgpuctl.core.selector import Requirement, Selector, node_labels
from vgpuctl.core.versions import (
    PluginRole,
    Version,
    VersionError,
    ascend_plugin_ships_runtimeclass,
    parse_version,
    plugin_problem,
    recommended_plugin,
)

NAMESPACE = "kube-system"
VGPU_IMAGE = "docker.io/projecthami/volcano-vgpu-device-plugin"
ASCEND_IMAGE = "docker.io/projecthami/ascend-device-plugin"
GPUSHARE_IMAGE = "docker.io/volcanosh/volcano-device-plugin"
MINDCLUSTER_IMAGE = "swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-k8sdeviceplugin"
VGPU_NAME = "volcano-device-plugin"
#: volcano-sh/devices names its objects like the vGPU plugin's: the two never run together (modes.py).
GPUSHARE_NAME = VGPU_NAME
ASCEND_NAME = "hami-ascend"
ASCEND_DAEMONSET = "hami-ascend-device-plugin"
ASCEND_NODE_LABEL = ("ascend", "on")
#: ascend-device-plugin's RuntimeClass (`ascend-runtimeclass.yaml`, added in v1.3.0, commit 880b827; the same
#: in v1.4.0): its `docs/volcano.md` (v1.4.0) asks for `runtimeClassName: ascend` on every Ascend pod.
ASCEND_RUNTIME_CLASS = "ascend"
#: The upstream 310P manifest's names, so an existing upstream install is found (and kept, not duplicated).
MINDCLUSTER_SERVICE_ACCOUNT = "ascend-device-plugin-sa-310p"
MINDCLUSTER_ROLE = "pods-node-ascend-device-plugin-role-310p"
MINDCLUSTER_BINDING = "pods-node-ascend-device-plugin-rolebinding-310p"
MINDCLUSTER_DAEMONSET = "ascend-device-plugin3-daemonset-310p"
#: The node label MindCluster's 310P plugin lands on; Volcano's 310P vNPU reads it too
# (docs/ascend.md#mindcluster-node).
MINDCLUSTER_NODE_LABEL = ("accelerator", "huawei-Ascend310P")
#: Where the NVIDIA plugins run when --nodes is not given: the label NVIDIA GPU feature discovery (and the
#: GPU operator) put on GPU nodes.
DEFAULT_GPU_NODES = "nvidia.com/gpu.present=true"

ROLE_BY_MODE = {mode: PluginRole(mode.value) for mode in Mode}


@dataclass(frozen=True, slots=True)
class PluginChoice:
    mode: Mode
    version: str  # the image tag, e.g. v1.12.0
    reason: str


def choose_version(mode: Mode, volcano: Version, override: str | None) -> PluginChoice:
    """The plugin image tag for `volcano` (`versions.recommended_plugin`), or the override — checked."""
    role = ROLE_BY_MODE[mode]
    if not override:
        release = recommended_plugin(role, volcano)
        return PluginChoice(mode, release.tag, release.reason)
    if mode is Mode.VNPU_HAMI:
        try:
            parse_version(override)
        except VersionError as exc:
            raise InstallError(f"--device-plugin-version: {exc}") from None
    problem = plugin_problem(role, override, volcano)
    if problem:
        raise InstallError(problem)
    return PluginChoice(mode, override, "--device-plugin-version")


def _meta(name: str, namespace: str | None, extra_labels: Mapping[str, str] | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": name, "labels": {MANAGED_BY: MANAGER, **(extra_labels or {})}}
    if namespace:
        meta["namespace"] = namespace
    return meta


def _rbac(name: str, rules: list[dict[str, Any]], *, role: str | None = None,
          binding: str | None = None) -> list[dict[str, Any]]:
    """ServiceAccount `name`, its ClusterRole and binding (named `name` too unless given)."""
    role, binding = role or name, binding or name
    return [
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta(name, NAMESPACE)},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": _meta(role, None),
         "rules": rules},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": _meta(binding, None),
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": role},
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


_CRITICAL = {"key": "CriticalAddonsOnly", "operator": "Exists"}


def _daemonset(name: str, labels: dict[str, str], service_account: str, pod_spec: dict[str, Any], *,
               labelled: bool = False, rolling: bool = True) -> dict[str, Any]:
    """A node-critical device-plugin DaemonSet in kube-system; `labelled`: its own metadata carries the
    pod labels too (as upstream's Ascend manifest does)."""
    daemonset_spec: dict[str, Any] = {"selector": {"matchLabels": labels}}
    if rolling:
        daemonset_spec["updateStrategy"] = {"type": "RollingUpdate"}
    daemonset_spec["template"] = {
        "metadata": {"labels": {**labels, MANAGED_BY: MANAGER}},
        "spec": {"serviceAccountName": service_account, "priorityClassName": "system-node-critical", **pod_spec},
    }
    return {"apiVersion": "apps/v1", "kind": "DaemonSet",
            "metadata": _meta(name, NAMESPACE, labels if labelled else None), "spec": daemonset_spec}


def render_vgpu(version: str, selector: Selector) -> list[dict[str, Any]]:
    """volcano-vgpu-device-plugin: node config, RBAC, and the DaemonSet with its monitor
    (docs/device-plugins.md#vgpu-plugin-objects)."""
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
    daemonset = _daemonset(VGPU_NAME, labels, VGPU_NAME, {
        "affinity": selector.node_affinity(),
        "tolerations": [_CRITICAL, {"key": spec.GPU_MEMORY, "operator": "Exists", "effect": "NoSchedule"}],
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
    })
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
    """ascend-device-plugin (HAMi mode): node config, RBAC, the DaemonSet on `ascend=on` nodes
    (docs/device-plugins.md#ascend-plugin-objects)."""
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
    daemonset = _daemonset(ASCEND_DAEMONSET, labels, ASCEND_NAME, {
        "nodeSelector": {ASCEND_NODE_LABEL[0]: ASCEND_NODE_LABEL[1]},
        "tolerations": [_CRITICAL],
        "containers": [container],
        "volumes": [
            *(_host_path(n, p) for n, p, _ in mounts),
            {"name": "device-config", "configMap": {"name": device_configmap}},
            {"name": "node-config", "configMap": {"name": spec.ASCEND_NODE_CONFIGMAP}},
        ],
    }, labelled=True, rolling=False)
    rules = [
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "update", "watch", "patch"]},
        {"apiGroups": [""], "resources": ["nodes"], "verbs": ["get", "update", "patch"]},
    ]
    node_config = configmap(spec.ASCEND_NODE_CONFIGMAP, NAMESPACE, {"node-config.yaml": "nodes: []\n"},
                            labels={MANAGED_BY: MANAGER, "app.kubernetes.io/component": "hami-scheduler"})
    # A tag that is no release may be any build: the class is harmless if unused.
    runtime = [ascend_runtime_class()] if ascend_plugin_ships_runtimeclass(version) is not False else []
    return [node_config, *_rbac(ASCEND_NAME, rules), *runtime, daemonset]


def ascend_runtime_class() -> dict[str, Any]:
    """The `ascend` RuntimeClass of ascend-device-plugin's `ascend-runtimeclass.yaml` (v1.3.0, v1.4.0):
    handler `ascend`, the containerd/CRI-O runtime Ascend's ascend-docker-runtime installs on the nodes."""
    return {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": _meta(ASCEND_RUNTIME_CLASS, None),
            "handler": ASCEND_RUNTIME_CLASS}


def _rule(resource: str, *verbs: str) -> dict[str, Any]:
    return {"apiGroups": [""], "resources": [resource], "verbs": list(verbs)}


def render_gpushare(version: str, selector: Selector, *, number: bool) -> list[dict[str, Any]]:
    """volcano-sh/devices: RBAC and the DaemonSet, strategy `number` or `share` (volcano-device-plugin.yml)."""
    labels = {"name": GPUSHARE_NAME}
    container = {
        "name": "volcano-device-plugin", "image": f"{GPUSHARE_IMAGE}:{version}",
        "env": [_env_node_name(), {"name": "GPU_STRATEGY", "value": "number" if number else "share"}],
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "device-plugin", "mountPath": "/var/lib/kubelet/device-plugins"}],
    }
    daemonset = _daemonset(GPUSHARE_NAME, labels, GPUSHARE_NAME, {
        "affinity": selector.node_affinity(),
        "tolerations": [_CRITICAL, *({"key": key, "operator": "Exists", "effect": "NoSchedule"}
                                    for key in (spec.GPU_MEMORY, spec.GPU_NUMBER))],
        "containers": [container],
        "volumes": [_host_path("device-plugin", "/var/lib/kubelet/device-plugins")],
    })
    # The plugin lists the pods of its node, updates their annotations, patches the node status (gpu-number)
    # and takes/releases the node lock with node updates (pkg/plugin/nvidia, pkg/util/nodelock.go).
    rules = [_rule("nodes", "get", "list", "watch", "update", "patch"), _rule("nodes/status", "patch"),
             _rule("pods", "get", "list", "update", "patch")]
    return [*_rbac(GPUSHARE_NAME, rules), daemonset]


MINDCLUSTER_LOG_DIR = "/var/log/mindx-dl/devicePlugin"


def render_mindcluster(version: str, nodes: Selector | None) -> list[dict[str, Any]]:
    """MindCluster's Ascend device plugin for Volcano 310P dynamic vNPU: RBAC and the DaemonSet on 310P nodes."""
    labels = {"name": "ascend-device-plugin-ds"}
    mounts = [  # name, host path, read-only, hostPath type
        ("device-plugin", "/var/lib/kubelet/device-plugins", False, None),
        ("pod-resource", "/var/lib/kubelet/pod-resources", False, None),
        ("hiai-driver", "/usr/local/Ascend/driver", True, None),
        ("log-path", MINDCLUSTER_LOG_DIR, False, "DirectoryOrCreate"),
        ("tmp", "/tmp", False, None),
        ("vnpucfg", "/etc/vnpu.cfg", False, "File"),
        ("localtime", "/etc/localtime", True, None),
    ]
    container = {
        "name": "device-plugin-01", "image": f"{MINDCLUSTER_IMAGE}:{version}", "imagePullPolicy": "IfNotPresent",
        "command": ["/usr/local/bin/device-plugin"],
        "args": ["-volcanoType=true", "-presetVirtualDevice=false", f"-logFile={MINDCLUSTER_LOG_DIR}/devicePlugin.log",
                 "-logLevel=0"],
        "env": [_env_node_name(), {"name": "HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.hostIP"}}}],
        "resources": {"requests": {"cpu": "500m", "memory": "500Mi"}, "limits": {"cpu": "500m", "memory": "500Mi"}},
        "securityContext": {"privileged": True, "readOnlyRootFilesystem": False},
        "volumeMounts": [{"name": n, "mountPath": p, **({"readOnly": True} if ro else {})} for n, p, ro, _ in mounts],
    }
    # Atlas 200I SoC boards (servertype=soc) need MindCluster's 1usoc variant, which is not rendered.
    not_soc = Requirement("servertype", "NotIn", ("soc",))
    affinity = Selector(nodes.text if nodes else "", (not_soc, *(nodes.requirements if nodes else ()))).node_affinity()
    daemonset = _daemonset(MINDCLUSTER_DAEMONSET, labels, MINDCLUSTER_SERVICE_ACCOUNT, {
        "nodeSelector": {MINDCLUSTER_NODE_LABEL[0]: MINDCLUSTER_NODE_LABEL[1]},
        "affinity": affinity,
        "tolerations": [_CRITICAL,
                        {"key": "huawei.com/Ascend310P", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "device-plugin", "operator": "Equal", "value": "v2", "effect": "NoSchedule"}],
        "containers": [container],
        "volumes": [_host_path(n, p, kind) for n, p, _, kind in mounts],
    })
    # It reads and annotates pods, labels and patches its node, writes mindx-dl-deviceinfo-<node> ConfigMaps
    # and events, and reads the kubelet's pod list through nodes/proxy.
    rules = [_rule("pods", "get", "list", "update", "watch", "patch"), _rule("nodes", "get", "patch"),
             _rule("nodes/proxy", "get"), _rule("nodes/status", "get", "patch", "update"),
             _rule("configmaps", "get", "create", "update", "list", "watch"), _rule("events", "create")]
    return [*_rbac(MINDCLUSTER_SERVICE_ACCOUNT, rules, role=MINDCLUSTER_ROLE, binding=MINDCLUSTER_BINDING),
            daemonset]


@dataclass(frozen=True, slots=True)
class RenderedPlugin:
    objects: list[dict[str, Any]]
    notes: tuple[str, ...] = ()
    #: Label the --nodes nodes `ascend=on` (vnpu-hami: its DaemonSet selects that label).
    label_nodes: bool = False


def _mindcluster_notes(nodes: Selector | None, cluster_nodes: Sequence[Mapping[str, Any]]) -> tuple[str, ...]:
    key, value = MINDCLUSTER_NODE_LABEL
    where = f"nodes labelled {key}={value}" + (f" that match {nodes.text!r}" if nodes else "")
    notes = [f"the MindCluster plugin runs on {where} (Volcano's 310P vNPU reads that label, with servertype and "
             "node.kubernetes.io/npu.chip.name, which the plugin writes); vgpuctl does not deploy MindCluster "
             "NodeD and ClusterD, which Volcano also needs (vgpuctl doctor: VGK007)"]
    if nodes is None:
        return tuple(notes)
    unlabelled = sorted(str((n.get("metadata") or {}).get("name")) for n in cluster_nodes
                        if nodes.matches(node_labels(n)) and node_labels(n).get(key) != value)
    if unlabelled:
        shown = ", ".join(unlabelled[:5]) + (f" and {len(unlabelled) - 5} more" if len(unlabelled) > 5 else "")
        notes.append(f"--nodes {nodes.text!r} selects {len(unlabelled)} node(s) without {key}={value} "
                     f"({shown}): the MindCluster plugin will not run there until they carry it")
    return tuple(notes)


def render_plugin(choice: PluginChoice, nodes: str | None, device_configmap: str,
                  cluster_nodes: Sequence[Mapping[str, Any]] = ()) -> RenderedPlugin:
    """The objects of `choice.mode`'s plugin, on the nodes `--nodes` selects (or the mode's default)."""
    mode = choice.mode
    if mode in (Mode.VGPU, Mode.GPUSHARE, Mode.GPUNUMBER):
        selector = parse_nodes(nodes or DEFAULT_GPU_NODES)
        objects = render_vgpu(choice.version, selector) if mode is Mode.VGPU else \
            render_gpushare(choice.version, selector, number=mode is Mode.GPUNUMBER)
        label = "vGPU" if mode is Mode.VGPU else mode.value
        notes = () if nodes else (f"the {label} plugin runs on nodes labelled {DEFAULT_GPU_NODES} (pass --nodes to "
                                  "choose)",)
        return RenderedPlugin(objects, notes)
    if mode is Mode.VNPU_HAMI:
        notes = () if nodes else (f"the Ascend plugin runs on nodes labelled {'='.join(ASCEND_NODE_LABEL)}; pass "
                                  "--nodes SELECTOR to have vgpuctl label them",)
        return RenderedPlugin(render_ascend(choice.version, device_configmap), notes, label_nodes=bool(nodes))
    chosen = parse_nodes(nodes) if nodes else None
    return RenderedPlugin(render_mindcluster(choice.version, chosen), _mindcluster_notes(chosen, cluster_nodes))


def every_plugin_object() -> list[dict[str, Any]]:
    """Every object any mode may render (placeholder versions): what install and uninstall must read."""
    selector = parse_nodes("x")
    return [*render_vgpu("v0", selector), *render_ascend("latest", spec.DEVICE_CONFIGMAP),
            *render_gpushare("v0", selector, number=False), *render_mindcluster("v0", None)]
