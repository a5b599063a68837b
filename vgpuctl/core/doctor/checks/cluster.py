"""Cluster and component checks (`VGK`, docs/contracts.md#finding-families): Kubernetes, Volcano, device plugins, the
vgpuctl webhook.

Everything here is read from the five kinds a snapshot holds (Nodes, Pods, ConfigMaps, DaemonSets,
Deployments) and from the versions in image tags (docs/volcano.md#compatibility-matrix,
docs/device-plugins.md#vgpu-plugin-compatibility). What the doctor cannot see it does not
guess:

- VGK006 checks the webhook Deployment only (`vgpuctl-system/vgpuctl-webhook`, deploy/base): present but
  scaled to 0 or with no ready replica (error: the shipped ValidatingWebhookConfiguration has
  `failurePolicy: Fail`), or fewer ready replicas than wanted (warning). The webhook configurations, their
  `caBundle` and the TLS Secret are never in a snapshot (nor read live), so the `caBundle` match and the
  30-day certificate expiry are *not* checked here; the webhook's own readiness probe fails while its
  certificate is unreadable or expires within 7 days, which the replica check does see.
- VGK004 judges "not ready on the nodes that need it" from the plugin pods on each device node (a node
  that registers the family's devices, or carries the family's node label and matches the DaemonSet's
  nodeSelector), which needs pods; the DaemonSet-level part (missing, schedules nowhere, nothing ready)
  needs only DaemonSets. Crash-looping vGPU plugin pods on CPU nodes are expected (no nodeSelector) and
  not reported. The MindCluster plugin's absence is VGK007's.
- VGK005 applies the device-plugin matrix of `vgpuctl.core.versions` (docs/device-plugins.md#vgpu-plugin-compatibility /
docs/volcano.md#compatibility-matrix, the one install
  uses) to the image tag (`latest`/`main`/`master` count as a build from main): the vGPU plugin against
  the Volcano version, and the volcano-sh/devices plugin against gpu-number (its v1.0.0 release predates
  `--gpu-strategy`). Plugin v1.10–v1.12 with Volcano <= 1.11 is not flagged (not a documented pairing,
  but no evidence it breaks); the `vnpus` form each Ascend component accepts is VGM003, so for the Ascend
  HAMi plugin VGK005 judges only whether it releases the node lock Volcano >= 1.16 takes and leaves to it
  (with NodeLockEnable; `versions.ascend_lock_problem`); no version rule is known for MindCluster's plugin
  (VGK007 checks its flags).
- VGK003 and VGK005 use the detected or given Volcano version; when unknown the newest is assumed (the
  report says so), which has every feature, so VGK003's version half stays silent then.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.cluster.model import NodeState
from vgpuctl.core.doctor.components import Component, as_map, components, image_parts, kubernetes_version
from vgpuctl.core.doctor.framework import Category, DoctorContext, SkipCheck, check
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.versions import (
    NEWEST_VOLCANO,
    PluginRole,
    Version,
    VersionError,
    ascend_lock_problem,
    beyond_newest,
    has_ascend,
    has_device_config,
    has_deviceshare,
    has_vnpu_hami_core,
    parse_version,
    plugin_problem,
)

ERROR, WARNING = Severity.ERROR, Severity.WARNING
MIN_KUBERNETES = Version(1, 16, 0)
SCHEDULER_IMAGE = "vc-scheduler"
SCHEDULER_SUBJECT = f"deployment/{spec.SCHEDULER_NAMESPACE}/volcano-scheduler"
WEBHOOK_NAMESPACE = "vgpuctl-system"
WEBHOOK_NAME = "vgpuctl-webhook"
WEBHOOK_IMAGE = "vgpuctl"


def _f(code: str, severity: Severity, subject: str, message: str) -> Finding:
    return Finding(code, severity, subject, message, hint_for(code))


def _meta(obj: Mapping[str, Any]) -> tuple[str, str]:
    meta = as_map(obj.get("metadata"))
    return str(meta.get("namespace", "")), str(meta.get("name", ""))


def _subject(kind: str, obj: Mapping[str, Any]) -> str:
    ns, name = _meta(obj)
    return f"{kind}/{ns}/{name}"


def _images(obj: Mapping[str, Any], *, template: bool = True) -> Iterator[str]:
    """Image repository names (last path element, no tag) of a workload's template or a pod's containers."""
    pod_spec = as_map(as_map(as_map(obj.get("spec")).get("template")).get("spec")) if template \
        else as_map(obj.get("spec"))
    for kind in ("containers", "initContainers"):
        for c in pod_spec.get(kind) or []:
            if isinstance(c, dict) and isinstance(c.get("image"), str):
                yield image_parts(c["image"])[0]


def _with_image(objects: Iterable[Mapping[str, Any]], names: tuple[str, ...]) -> list[Mapping[str, Any]]:
    return [o for o in objects if any(i in names for i in _images(o))]


def _int(raw: Any, default: int = 0) -> int:
    return raw if isinstance(raw, int) and not isinstance(raw, bool) else default


def _volcano(ctx: DoctorContext) -> tuple[Version, str]:
    """The Volcano version rules use, and how it reads in a message."""
    if ctx.volcano_version is not None:
        return ctx.volcano_version, f"Volcano {ctx.volcano_version}"
    return NEWEST_VOLCANO, f"Volcano {NEWEST_VOLCANO} (assumed: version unknown)"


# ---- kubernetes -----------------------------------------------------------------------------------

@check("kubernetes.api", Category.KUBERNETES, "VGK001", "The Kubernetes API could be read")
def api(ctx: DoctorContext) -> Iterator[Finding]:
    """Every failed list of a live read; the checks that needed it are skipped by the framework (`reads`)."""
    yield from ctx.read_problems


@check("kubernetes.version", Category.KUBERNETES, "VGK002", "Kubernetes is 1.16 or later")
def kubernetes(ctx: DoctorContext) -> Iterator[Finding]:
    raw = kubernetes_version(ctx.snapshot)
    if raw is None:
        return  # unknown: never guessed
    try:
        version = parse_version(raw)
    except VersionError:
        return
    if version.core < MIN_KUBERNETES.core:
        yield _f("VGK002", ERROR, "cluster", f"Kubernetes {raw} is older than 1.16, the minimum the vGPU device "
                                             "plugin supports")


# ---- volcano --------------------------------------------------------------------------------------

def _is_scheduler_image(image: str) -> bool:
    return image_parts(image)[0] == SCHEDULER_IMAGE


@check("volcano.installed", Category.VOLCANO, "VGK003", "Volcano is installed", reads=("deployments",))
def installed(ctx: DoctorContext) -> Iterator[Finding]:
    if any(c.name == SCHEDULER_IMAGE for c in components(ctx.snapshot)):
        return
    if "pods" not in ctx.unreadable and ctx.snapshot.pod_index.running(_is_scheduler_image, init=True):
        return  # run some other way than a Deployment: installed all the same
    also = (" (although its ConfigMap volcano-system/volcano-scheduler-configmap exists)"
            if ctx.snapshot.scheduler_conf is not None else "")
    yield _f("VGK003", ERROR, SCHEDULER_SUBJECT,
             f"no vc-scheduler Deployment or pod found{also}: Volcano is not installed, so no pod requesting "
             "volcano.sh/ or huawei.com/ devices is ever scheduled")


@dataclass(frozen=True, slots=True)
class _Feature:
    what: str  # "vGPU (deviceshare.VGPUEnable)"
    needs: str  # "1.9"
    evidence: str  # "enabled in deviceshare" / "3 pod(s) set volcano.sh/vgpu-mode"


def _features_in_use(ctx: DoctorContext, version: Version) -> Iterator[_Feature]:
    families = ctx.snapshot.deviceshare.families
    if spec.Family.VGPU in families and not has_deviceshare(version):
        yield _Feature("vGPU (deviceshare.VGPUEnable)", "1.9", "enabled in the scheduler configuration")
    for family, arg in ((spec.Family.ASCEND_HAMI, spec.ARG_ASCEND_HAMI_ENABLE),
                        (spec.Family.ASCEND_MINDCLUSTER, spec.ARG_ASCEND_MINDCLUSTER_ENABLE)):
        if family in families and not has_ascend(version):
            yield _Feature(f"vNPU ({arg.split('.', 1)[1]})", "1.14", "enabled in the scheduler configuration")
    # Nodes and pods are counted only for a feature this version lacks: a recent Volcano has them all, and
    # the counts walk every GPU and every annotated pod (benchmarks/doctor_scale.py).
    lacks_mig, lacks_vnpu_core = not has_device_config(version), not has_vnpu_hami_core(version)
    if "nodes" not in ctx.unreadable:
        mig_mode = spec.VgpuMode.MIG.value
        mig = sum(1 for n in ctx.snapshot.nodes if any(d.mode == mig_mode for d in n.devices)) if lacks_mig else 0
        if mig:
            yield _Feature("dynamic MIG", "1.12", f"{mig} node(s) register GPUs in mig mode")
        vnpu_core = sum(1 for n in ctx.snapshot.nodes if n.annotations.get(spec.NODE_HAMI_VNPU_CORE) == "true") \
            if lacks_vnpu_core else 0
        if vnpu_core:
            yield _Feature("vNPU hami-core mode", "1.16", f"{vnpu_core} node(s) set {spec.NODE_HAMI_VNPU_CORE}=true")
    if "pods" in ctx.unreadable or not (lacks_mig or lacks_vnpu_core):
        return
    modes = vnpu = 0
    for pod, marks in ctx.snapshot.pod_index.annotated:
        mode, core = spec.ANN_VGPU_MODE in marks, marks.get(spec.ANN_VNPU_MODE) == spec.VNPU_MODE_HAMI_CORE
        if (mode or core) and as_map(pod.get("status")).get("phase") not in spec.DONE_POD_PHASES:
            modes += mode
            vnpu += core
    if modes and lacks_mig:
        yield _Feature(spec.ANN_VGPU_MODE, "1.12", f"{modes} pod(s) set it")
    if vnpu and lacks_vnpu_core:
        yield _Feature(f"{spec.ANN_VNPU_MODE}: {spec.VNPU_MODE_HAMI_CORE}", "1.16", f"{vnpu} pod(s) set it")


@check("volcano.version", Category.VOLCANO, "VGK003", "Volcano is recent enough for the features in use")
def volcano_version(ctx: DoctorContext) -> Iterator[Finding]:
    if ctx.volcano_version is None:
        return  # unknown: the newest is assumed, which has every feature
    beyond = beyond_newest(ctx.volcano_version)
    if beyond:  # every feature vgpuctl knows is there: nothing to judge, and the report says why
        raise SkipCheck(beyond)
    scheduler = next((c for c in components(ctx.snapshot) if c.name == SCHEDULER_IMAGE), None)
    subject = f"deployment/{scheduler.namespace}/{scheduler.object_name}" if scheduler else SCHEDULER_SUBJECT
    for feature in _features_in_use(ctx, ctx.volcano_version):
        yield _f("VGK003", ERROR, subject,
                 f"Volcano {ctx.volcano_version} is older than {feature.what} needs (>= {feature.needs}; "
                 f"{feature.evidence}): this Volcano silently ignores it")


# ---- device plugins -------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class _Plugin:
    label: str  # for messages
    images: tuple[str, ...]  # image repository names (last path element)
    namespace: str  # where the upstream manifests install it (the subject when it is missing)
    name: str
    families: frozenset[spec.Family]
    node_labels: tuple[tuple[str, str], ...] = ()  # a node with one of these needs the plugin (if selected)


VGPU_PLUGIN = _Plugin("vGPU", ("volcano-vgpu-device-plugin",), "kube-system", "volcano-device-plugin",
                      frozenset({spec.Family.VGPU}), (("nvidia.com/gpu.present", "true"),))
GPUSHARE_PLUGIN = _Plugin("GPU sharing", ("volcano-device-plugin",), "kube-system", "volcano-device-plugin",
                          frozenset({spec.Family.GPUSHARE, spec.Family.GPUNUMBER}))
ASCEND_HAMI_PLUGIN = _Plugin("Ascend HAMi", ("ascend-device-plugin",), "kube-system", "hami-ascend-device-plugin",
                             frozenset({spec.Family.ASCEND_HAMI}), (("ascend", "on"),))
MINDCLUSTER_PLUGIN = _Plugin("Ascend MindCluster", ("ascend-k8sdeviceplugin",), "kube-system",
                             "ascend-device-plugin-daemonset", frozenset({spec.Family.ASCEND_MINDCLUSTER}))
PLUGINS = (VGPU_PLUGIN, GPUSHARE_PLUGIN, ASCEND_HAMI_PLUGIN, MINDCLUSTER_PLUGIN)
NODED_IMAGE, CLUSTERD_IMAGE = "noded", "clusterd"
MINDCLUSTER_NAMESPACE = "mindx-dl"


def _enabled_plugins(ctx: DoctorContext) -> list[_Plugin]:
    families = ctx.snapshot.deviceshare.families
    return [p for p in PLUGINS if p.families & families]


def _enable_args(plugin: _Plugin, ctx: DoctorContext) -> str:
    on = sorted(f for f in plugin.families & ctx.snapshot.deviceshare.families)
    return " and ".join(spec.ENABLE_ARG_BY_FAMILY[f] for f in on)


def _node_selector(ds: Mapping[str, Any]) -> Mapping[str, Any]:
    return as_map(as_map(as_map(as_map(ds.get("spec")).get("template")).get("spec")).get("nodeSelector"))


def _selected(node: NodeState, selector: Mapping[str, Any]) -> bool:
    labels = node.labels
    return all(labels.get(k) == v for k, v in selector.items())


def _show_selector(selector: Mapping[str, Any]) -> str:
    return ",".join(f"{k}={v}" for k, v in selector.items())


@check("device-plugins.present", Category.DEVICE_PLUGINS, "VGK004",
       "Each enabled family has a device plugin DaemonSet with ready pods", reads=("daemonsets",))
def plugins_present(ctx: DoctorContext) -> Iterator[Finding]:
    for plugin in _enabled_plugins(ctx):
        daemonsets = _with_image(ctx.snapshot.daemonsets, plugin.images)
        if not daemonsets:
            if plugin is MINDCLUSTER_PLUGIN:
                continue  # VGK007 reports the MindCluster components
            yield _f("VGK004", ERROR, f"daemonset/{plugin.namespace}/{plugin.name}",
                     f"{_enable_args(plugin, ctx)} is on but no DaemonSet runs the {plugin.label} device plugin "
                     f"(image …/{plugin.images[0]}): no node registers or hands out these devices")
            continue
        for ds in daemonsets:
            yield from _daemonset_status(plugin, ds)


def _daemonset_status(plugin: _Plugin, ds: Mapping[str, Any]) -> Iterator[Finding]:
    status = as_map(ds.get("status"))
    if "desiredNumberScheduled" not in status:
        return  # status not observed (a hand-written snapshot): nothing to judge
    desired, ready = _int(status.get("desiredNumberScheduled")), _int(status.get("numberReady"))
    subject = _subject("daemonset", ds)
    if desired == 0:
        selector = _node_selector(ds)
        why = f"its nodeSelector {_show_selector(selector)} matches no node" if selector else \
            "its tolerations or affinity admit no node"
        yield _f("VGK004", ERROR, subject, f"the {plugin.label} device plugin DaemonSet schedules no pod ({why}): "
                                           "no node offers these devices")
    elif ready == 0:
        yield _f("VGK004", ERROR, subject, f"none of the {desired} {plugin.label} device plugin pods is ready: no "
                                           "node offers these devices")


def _owner_keys(pod: Mapping[str, Any]) -> Iterator[tuple[str, str]]:
    ns = as_map(pod.get("metadata")).get("namespace", "")
    for ref in as_map(pod.get("metadata")).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("kind") == "DaemonSet":
            yield (str(ns), str(ref.get("name", "")))


def _plugin_pods(ctx: DoctorContext, plugin: _Plugin, daemonsets: list[Mapping[str, Any]]
                 ) -> dict[str, list[Mapping[str, Any]]]:
    """The plugin's pods by node: owned by one of its DaemonSets, or (no owner recorded) running its image."""
    keys = {_meta(ds) for ds in daemonsets}
    namespaces = {k[0] for k in keys}
    by_node: dict[str, list[Mapping[str, Any]]] = {}
    for pod in ctx.snapshot.pod_index.in_namespaces(namespaces):
        owners = list(_owner_keys(pod))
        mine = any(k in keys for k in owners) if owners else \
            any(i in plugin.images for i in _images(pod, template=False))
        node = as_map(pod.get("spec")).get("nodeName")
        if mine and isinstance(node, str) and node:
            by_node.setdefault(node, []).append(pod)
    return by_node


def _node_ready(node: NodeState) -> bool:
    for cond in as_map(node.obj.get("status")).get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return True  # no conditions recorded (a hand-written snapshot): assume Ready


def _pod_ready(pod: Mapping[str, Any]) -> tuple[bool, str]:
    """Whether a pod is ready, and if not, the most telling reason (CrashLoopBackOff, Pending…)."""
    status = as_map(pod.get("status"))
    phase = status.get("phase")
    for cs in status.get("containerStatuses") or []:
        waiting = as_map(as_map(as_map(cs).get("state")).get("waiting"))
        if waiting.get("reason"):
            return False, str(waiting["reason"])
    if phase != "Running":
        return False, str(phase or "no phase")
    for cond in status.get("conditions") or []:
        if isinstance(cond, dict) and cond.get("type") == "Ready":
            return cond.get("status") == "True", "not Ready"
    return True, ""


def _needs_plugin(node: NodeState, plugin: _Plugin, selectors: list[Mapping[str, Any]]) -> bool:
    if any(f in plugin.families for f in node.families):
        return True  # it registers these devices: Volcano schedules onto it
    labelled = any(node.labels.get(k) == v for k, v in plugin.node_labels)
    return labelled and any(_selected(node, s) for s in selectors)


@check("device-plugins.nodes", Category.DEVICE_PLUGINS, "VGK004",
       "A ready device plugin pod runs on every device node", reads=("daemonsets", "pods", "nodes"),
       judges_nodes=True)
def plugins_on_nodes(ctx: DoctorContext) -> Iterator[Finding]:
    for plugin in _enabled_plugins(ctx):
        daemonsets = _with_image(ctx.snapshot.daemonsets, plugin.images)
        if not daemonsets:
            continue  # reported as missing by device-plugins.present / VGK007
        selectors = [_node_selector(ds) for ds in daemonsets]
        by_node = _plugin_pods(ctx, plugin, daemonsets)
        if not by_node:
            continue  # none of its pods in the snapshot (not captured, or none at all: the DaemonSet check's)
        for node in ctx.snapshot.nodes:
            if not _needs_plugin(node, plugin, selectors) or not _node_ready(node):
                continue
            pods = by_node.get(node.name, [])
            subject = f"node/{node.name}"
            if not pods:
                if not any(_selected(node, s) for s in selectors):
                    shown = " or ".join(_show_selector(s) for s in selectors)
                    why = f"the DaemonSet's nodeSelector {shown} does not match this node"
                else:
                    why = "the DaemonSet placed no pod here: check its tolerations against the node's taints"
                yield _f("VGK004", ERROR, subject, f"no {plugin.label} device plugin pod runs on this node ({why}): "
                                                   "pods Volcano places here fail at admission")
                continue
            verdicts = [_pod_ready(p) for p in pods]
            if any(ok for ok, _ in verdicts):
                continue
            reason = verdicts[0][1]
            nvml = (": usually NVML cannot load because nvidia is not the default container runtime"
                    if plugin is VGPU_PLUGIN and reason == "CrashLoopBackOff" else "")
            yield _f("VGK004", ERROR, subject, f"the {plugin.label} device plugin pod on this node is not ready "
                                               f"({reason}{nvml}): pods Volcano places here fail at admission")


def _plugin_role(component: Component, families: frozenset[spec.Family]) -> PluginRole | None:
    """The matrix row a plugin DaemonSet's image falls under (None: no version rule for it here)."""
    if component.name == VGPU_PLUGIN.images[0]:
        return PluginRole.VGPU
    if component.name == GPUSHARE_PLUGIN.images[0]:
        return PluginRole.GPUNUMBER if spec.Family.GPUNUMBER in families else PluginRole.GPUSHARE
    return None  # Ascend HAMi: see plugin_version; MindCluster: no known rule


@check("device-plugins.version", Category.DEVICE_PLUGINS, "VGK005",
       "Device plugin versions work with the Volcano version", reads=("daemonsets",))
def plugin_version(ctx: DoctorContext) -> Iterator[Finding]:
    version, volcano = _volcano(ctx)
    families = ctx.snapshot.deviceshare.families
    # Without the scheduler config NodeLockEnable is unknown: taken as on, as the node-lock check does.
    node_lock = ctx.snapshot.scheduler_conf is None or ctx.snapshot.deviceshare.node_lock
    for c in components(ctx.snapshot):
        if c.kind != "DaemonSet":
            continue
        tag = image_parts(c.image)[1]
        if c.name == ASCEND_HAMI_PLUGIN.images[0]:  # only its node-lock release: the vnpus form is VGM003's
            problem = ascend_lock_problem(tag, version, volcano) if node_lock else None
        else:
            role = _plugin_role(c, families)
            problem = plugin_problem(role, tag, version, volcano) if role is not None else None
        if problem:
            yield _f("VGK005", ERROR, f"daemonset/{c.namespace}/{c.object_name}", problem)


# ---- MindCluster (VGK007) -------------------------------------------------------------------------

_GO_TRUE = ("1", "t", "T", "TRUE", "true", "True")
_GO_FALSE = ("0", "f", "F", "FALSE", "false", "False")


def preset_virtual_device(obj: Mapping[str, Any]) -> bool | None:
    """The Ascend device plugin's `-presetVirtualDevice` as Go's flag package reads it (default true).

    Args may be separate items or one shell string (`"device-plugin -volcanoType=true …"`); the last
    occurrence wins. None when a value is not a Go bool (the plugin would not start).
    """
    value: bool | None = True
    pod_spec = as_map(as_map(as_map(obj.get("spec")).get("template")).get("spec"))
    for c in pod_spec.get("containers") or []:
        for field in ("command", "args"):
            for item in as_map(c).get(field) or []:
                for token in str(item).split():
                    name, eq, raw = token.lstrip("-").partition("=")
                    if not token.startswith("-") or name != "presetVirtualDevice":
                        continue
                    raw = raw.strip("\"'")
                    value = True if not eq or raw in _GO_TRUE else False if raw in _GO_FALSE else None
    return value


def _cluster_info_manager(ctx: DoctorContext) -> bool:
    """`init-params.useClusterInfoManager`: default true; when set, only the string "true" keeps it on."""
    conf = ctx.snapshot.scheduler_conf
    init = conf.configuration("init-params") if conf is not None else None
    args = as_map(init.get("arguments")) if init is not None else {}
    value = args.get("useClusterInfoManager")
    return value is None or value == "true"


@check("device-plugins.mindcluster", Category.DEVICE_PLUGINS, "VGK007",
       "MindCluster components run for dynamic vNPU", reads=("daemonsets", "deployments"))
def mindcluster(ctx: DoctorContext) -> Iterator[Finding]:
    if not ctx.snapshot.deviceshare.ascend_mindcluster:
        return
    workloads = [*ctx.snapshot.daemonsets, *ctx.snapshot.deployments]
    if not _with_image(workloads, (NODED_IMAGE,)):
        yield _f("VGK007", ERROR, f"daemonset/{MINDCLUSTER_NAMESPACE}/noded",
                 "AscendMindClusterVNPUEnable is on but MindCluster NodeD is not installed: Volcano takes node "
                 "health from NodeD, and 310P vNPU scheduling needs it")
    if _cluster_info_manager(ctx) and not _with_image(workloads, (CLUSTERD_IMAGE,)):
        yield _f("VGK007", ERROR, f"deployment/{MINDCLUSTER_NAMESPACE}/clusterd",
                 "AscendMindClusterVNPUEnable is on (with useClusterInfoManager, the default) but MindCluster "
                 "ClusterD is not installed: Volcano reads 310P device information from ClusterD's "
                 "cluster-info-device-* ConfigMaps, so no node offers vNPUs")
    plugins = _with_image(ctx.snapshot.daemonsets, MINDCLUSTER_PLUGIN.images)
    if not plugins:
        yield _f("VGK007", ERROR, f"daemonset/{MINDCLUSTER_PLUGIN.namespace}/{MINDCLUSTER_PLUGIN.name}",
                 "AscendMindClusterVNPUEnable is on but no DaemonSet runs the Ascend device plugin (image "
                 "…/ascend-k8sdeviceplugin) with -presetVirtualDevice=false: no 310P node offers vNPUs")
    for ds in plugins:
        preset = preset_virtual_device(ds)
        if preset is not False:
            shown = "is not a Go boolean" if preset is None else "is true (the default when absent)"
            yield _f("VGK007", ERROR, _subject("daemonset", ds),
                     f"the Ascend device plugin's -presetVirtualDevice {shown}: dynamic vNPU needs "
                     "-presetVirtualDevice=false (with -volcanoType=true), else it serves only pre-split vNPUs")


# ---- webhook (VGK006) -----------------------------------------------------------------------------

def _is_webhook(deployment: Mapping[str, Any]) -> bool:
    ns, name = _meta(deployment)
    return name == WEBHOOK_NAME or (ns == WEBHOOK_NAMESPACE and WEBHOOK_IMAGE in _images(deployment))


@check("webhook.ready", Category.WEBHOOK, "VGK006", "The vgpuctl webhook, if installed, has ready replicas",
       reads=("deployments",))
def webhook_ready(ctx: DoctorContext) -> Iterator[Finding]:
    """Only the Deployment is visible: the webhook configurations, caBundle and TLS Secret are not read."""
    for deployment in ctx.snapshot.deployments:
        if not _is_webhook(deployment):
            continue
        status = as_map(deployment.get("status"))
        if not status:
            continue  # status not observed: nothing to judge
        wanted = _int(as_map(deployment.get("spec")).get("replicas"), 1)
        ready = _int(status.get("readyReplicas"))  # the API omits it when 0
        subject = _subject("deployment", deployment)
        effect = ("with the shipped ValidatingWebhookConfiguration (failurePolicy: Fail) the API server rejects "
                  "every pod and Volcano Job creation that requests volcano.sh/ or huawei.com/ resources")
        if wanted == 0:
            yield _f("VGK006", ERROR, subject, f"the webhook is scaled to 0 replicas: {effect}")
        elif ready == 0:
            yield _f("VGK006", ERROR, subject,
                     f"none of the {wanted} webhook replicas is ready (its readiness probe also fails while the "
                     f"TLS certificate is unreadable or expires within 7 days): {effect}")
        elif ready < wanted:
            yield _f("VGK006", WARNING, subject,
                     f"only {ready} of {wanted} webhook replicas are ready: one more failure and {effect}")
