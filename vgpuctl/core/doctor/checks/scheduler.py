"""Scheduler configuration checks (`VGC`, docs/contracts.md#finding-families): what `deviceshare` really turns on, and
why not.

Every rule reproduces Volcano's own reading (scheduler_config: Go ParseBool, int-only weights, ignored unknown
keys), so a message can say exactly what the scheduler will do with the setting as written.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping
from datetime import datetime
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.cluster.dra import claiming_pods, scheduler_dra
from vgpuctl.core.doctor.components import as_map
from vgpuctl.core.doctor.framework import Category, DoctorContext, SkipCheck, check
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.scheduler_config import BOOL_ARGS, INT_ARGS
from vgpuctl.core.versions import (
    NEWEST_VOLCANO,
    Version,
    has_ascend,
    has_device_config,
    has_deviceshare,
    has_podgroup_policy,
)

CAT = Category.SCHEDULER_CONFIG
SUBJECT = f"configmap/{spec.SCHEDULER_NAMESPACE}/{spec.SCHEDULER_CONFIGMAP}"
ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


def _f(code: str, severity: Severity, message: str, subject: str = SUBJECT) -> Finding:
    return Finding(code, severity, subject, message, hint_for(code))


def _version(ctx: DoctorContext) -> Version:
    return ctx.volcano_version or NEWEST_VOLCANO


def _deviceshare_on(ctx: DoctorContext) -> bool:
    conf = ctx.snapshot.scheduler_conf
    return conf is not None and conf.plugin(spec.PLUGIN_DEVICESHARE) is not None


@check("scheduler-config.loadable", CAT, "VGC001", "The scheduler ConfigMap exists and parses", reads=("configmaps",))
def loadable(ctx: DoctorContext) -> Iterator[Finding]:
    built = [f for f in ctx.snapshot.findings if f.code == "VGC001"]
    if built:
        yield from (_f("VGC001", ERROR, f"{f.message}; the scheduler cannot start with this configuration")
                    for f in built)
    elif ctx.snapshot.scheduler_conf is None:
        yield _f("VGC001", ERROR, f"ConfigMap {spec.SCHEDULER_NAMESPACE}/{spec.SCHEDULER_CONFIGMAP} not found; "
                                  "without it no device family can be enabled")


@check("scheduler-config.allocate", CAT, "VGC013", "The scheduler runs the allocate action",
       needs=("scheduler-config.loadable",))
def allocate(ctx: DoctorContext) -> Iterator[Finding]:
    conf = ctx.snapshot.scheduler_conf
    if conf is not None and "allocate" not in conf.actions:
        yield _f("VGC013", ERROR, f"actions are {', '.join(conf.actions) or 'empty'}: without allocate no pod is "
                                  "ever bound, devices or not")


@check("scheduler-config.deviceshare", CAT, "VGC002", "deviceshare is enabled where device nodes exist",
       needs=("scheduler-config.loadable",), reads=("nodes",))
def deviceshare_present(ctx: DoctorContext) -> Iterator[Finding]:
    if _deviceshare_on(ctx):
        return
    device_nodes = [n for n in ctx.snapshot.nodes if n.families]
    if device_nodes:
        families = sorted({f.value for n in device_nodes for f in n.families})
        yield _f("VGC002", ERROR, f"{len(device_nodes)} node(s) register {', '.join(families)} devices but the "
                                  "deviceshare plugin is in no tier: Volcano never filters or allocates them")


@check("scheduler-config.predicates", CAT, "VGC003", "predicates is enabled alongside deviceshare",
       needs=("scheduler-config.loadable",))
def predicates(ctx: DoctorContext) -> Iterator[Finding]:
    conf = ctx.snapshot.scheduler_conf
    if conf is not None and _deviceshare_on(ctx) and conf.plugin(spec.PLUGIN_PREDICATES) is None:
        yield _f("VGC003", ERROR, "deviceshare is enabled but predicates is not: device allocation annotations are "
                                  "written by the predicates plugin, so pods bind without devices")


@check("scheduler-config.combinations", CAT, "VGC004", "No fatal combination of device families",
       needs=("scheduler-config.loadable",))
def combinations(ctx: DoctorContext) -> Iterator[Finding]:
    args = ctx.snapshot.deviceshare
    if args.gpu_sharing and args.gpu_number:
        yield _f("VGC004", ERROR, "GPUSharingEnable and GPUNumberEnable are both true: the scheduler exits at "
                                  "session open (\"can not define true in both gpu sharing and gpu number\")")
    if (args.gpu_sharing or args.gpu_number) and args.vgpu:
        yield _f("VGC004", ERROR, "VGPUEnable is combined with GPUSharingEnable/GPUNumberEnable: the scheduler "
                                  "exits at session open (\"gpu-share and vgpu can't be used together\")")


@check("scheduler-config.booleans", CAT, "VGC005", "deviceshare booleans are values Volcano can read",
       needs=("scheduler-config.loadable",))
def booleans(ctx: DoctorContext) -> Iterator[Finding]:
    for issue in ctx.snapshot.deviceshare.issues:
        if issue.key in BOOL_ARGS:
            yield _f("VGC005", ERROR, f"{issue.key}: {issue.reason}")


@check("scheduler-config.weight", CAT, "VGC006", "ScheduleWeight turns device-based node scoring on",
       needs=("scheduler-config.loadable",))
def weight(ctx: DoctorContext) -> Iterator[Finding]:
    if not _deviceshare_on(ctx):
        return
    # A weight Volcano cannot read is reported whatever the enable flags say: with an unreadable
    # `VGPUEnable: "yes"` (VGC005) no family is on yet, and the user would otherwise meet this second
    # mistake only after fixing the first.
    issues = [i for i in ctx.snapshot.deviceshare.issues if i.key in INT_ARGS]
    if issues:
        yield _f("VGC006", WARNING, f"{issues[0].key}: {issues[0].reason}; device-based node scoring is off")
    elif ctx.snapshot.deviceshare.families and ctx.snapshot.deviceshare.schedule_weight <= 0:
        yield _f("VGC006", WARNING, f"{spec.ARG_SCHEDULE_WEIGHT} is absent or 0: device-based node scoring is off, "
                                    "so SchedulePolicy only orders devices inside a node")


@check("scheduler-config.policy", CAT, "VGC007", "SchedulePolicy is binpack or spread",
       needs=("scheduler-config.loadable",))
def policy(ctx: DoctorContext) -> Iterator[Finding]:
    conf = ctx.snapshot.scheduler_conf
    plugin = conf.plugin(spec.PLUGIN_DEVICESHARE) if conf else None
    if plugin is None or spec.ARG_SCHEDULE_POLICY not in plugin.arguments:
        return
    value = plugin.arguments[spec.ARG_SCHEDULE_POLICY]
    if value not in ("binpack", "spread"):
        yield _f("VGC007", WARNING, f"{spec.ARG_SCHEDULE_POLICY}: {value!r} is not exactly binpack or spread "
                                    "(case-sensitive): Volcano applies no policy")


@check("scheduler-config.known-keys", CAT, "VGC008", "Every deviceshare key is one Volcano knows",
       needs=("scheduler-config.loadable",))
def known_keys(ctx: DoctorContext) -> Iterator[Finding]:
    for key in ctx.snapshot.deviceshare.unknown_keys:
        close = difflib.get_close_matches(key, spec.DEVICESHARE_ARGS, n=1, cutoff=0.75)
        mean = f" (did you mean {close[0]}?)" if close else ""
        yield _f("VGC008", WARNING, f"{key} is not a deviceshare argument{mean}; Volcano ignores it silently")


@check("scheduler-config.exclusive-rules", CAT, "VGC009", "GPUExclusiveRules is a list of label maps",
       needs=("scheduler-config.loadable",))
def exclusive_rules(ctx: DoctorContext) -> Iterator[Finding]:
    rules = ctx.snapshot.deviceshare.exclusive_rules
    if rules is None:
        return
    if not isinstance(rules, list):
        yield _f("VGC009", WARNING, f"{spec.ARG_GPU_EXCLUSIVE_RULES} is not a list of maps; Volcano ignores it")
        return
    for i, rule in enumerate(rules):
        if not isinstance(rule, Mapping) or not rule:
            yield _f("VGC009", WARNING, f"{spec.ARG_GPU_EXCLUSIVE_RULES}[{i}] is not a non-empty map; it is dropped")
            continue
        bad = [k for k, v in rule.items() if not isinstance(v, str)]
        if bad:
            yield _f("VGC009", WARNING, f"{spec.ARG_GPU_EXCLUSIVE_RULES}[{i}]: values of {', '.join(map(str, bad))} "
                                        "are not strings (quote numbers and booleans); those labels are dropped")


def _version_gaps(args: Mapping[str, Any], version: Version) -> Iterator[str]:
    if not has_deviceshare(version):
        yield "deviceshare.* arguments (Volcano < 1.9 reads predicate.*Enable on the predicates plugin)"
        return
    if not has_device_config(version):
        for key in (spec.ARG_KNOWN_GEOMETRIES_CM_NAME, spec.ARG_KNOWN_GEOMETRIES_CM_NAMESPACE):
            if key in args:
                yield f"{key} (needs ≥ 1.12)"
    if not has_ascend(version):
        for key in (spec.ARG_ASCEND_HAMI_ENABLE, spec.ARG_ASCEND_MINDCLUSTER_ENABLE):
            if key in args:
                yield f"{key} (needs ≥ 1.14)"
    if not has_podgroup_policy(version) and spec.ARG_GPU_EXCLUSIVE_RULES in args:
        yield f"{spec.ARG_GPU_EXCLUSIVE_RULES} (needs ≥ 1.15)"


@check("scheduler-config.version", CAT, "VGC010", "Arguments exist in the running Volcano version",
       needs=("scheduler-config.loadable",))
def version_keys(ctx: DoctorContext) -> Iterator[Finding]:
    conf = ctx.snapshot.scheduler_conf
    version = _version(ctx)
    plugin = conf.plugin(spec.PLUGIN_DEVICESHARE) if conf else None
    if plugin is not None:
        for gap in _version_gaps(plugin.arguments, version):
            yield _f("VGC010", ERROR, f"Volcano {version} has no {gap}; it is ignored")
    old = conf.plugin(spec.PLUGIN_PREDICATES) if conf else None
    if old is not None and has_deviceshare(version):
        for key in old.arguments:
            if isinstance(key, str) and key.startswith("predicate.") and key.endswith("Enable") and \
                    ("GPU" in key or "VGPU" in key):
                yield _f("VGC010", ERROR, f"predicates argument {key} is the Volcano 1.8 form; Volcano {version} "
                                          "reads deviceshare.* instead, so the family stays off")


def _started(pod: Mapping[str, Any]) -> datetime | None:
    return _time(as_map(pod.get("status")).get("startTime"))


def _time(raw: Any) -> datetime | None:
    if not isinstance(raw, str):
        return None
    try:
        return datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError:
        return None


def _changed(obj: Mapping[str, Any]) -> datetime | None:
    meta = as_map(obj.get("metadata"))
    times = [_time(meta.get("creationTimestamp"))]
    times += [_time(m.get("time")) for m in meta.get("managedFields") or [] if isinstance(m, dict)]
    known = [t for t in times if t is not None]
    return max(known) if known else None


@check("scheduler-config.restart", CAT, "VGC011", "The scheduler started after the device config last changed",
       needs=("scheduler-config.loadable",), reads=("pods", "configmaps"))
def restart(ctx: DoctorContext) -> Iterator[Finding]:
    schedulers = ctx.snapshot.pod_index.running(_is_scheduler_image)
    starts = [t for t in (_started(p) for p in schedulers) if t is not None]
    if not starts:
        return
    started = min(starts)
    args = ctx.snapshot.deviceshare
    for key in ((args.geometries_cm_namespace, args.geometries_cm_name),
                (spec.SCHEDULER_NAMESPACE, spec.SCHEDULER_CONFIGMAP)):
        cm = ctx.snapshot.configmaps.get(key)
        changed = _changed(cm) if cm is not None else None
        if changed is not None and changed > started:
            yield _f("VGC011", WARNING, f"ConfigMap {key[0]}/{key[1]} changed at {changed.isoformat()}, after the "
                                        f"scheduler started ({started.isoformat()}); the device config and device "
                                        "registration are read once per process, so restart the scheduler",
                     f"configmap/{key[0]}/{key[1]}")


def _is_scheduler_image(image: str) -> bool:
    """A container image of Volcano's scheduler (its pods are found through `ClusterSnapshot.pod_index`)."""
    return "vc-scheduler" in image


@check("scheduler-config.mindcluster-preset", CAT, "VGC012", "MindCluster dynamic vNPU has presetVirtualDevice false",
       needs=("scheduler-config.loadable",))
def mindcluster_preset(ctx: DoctorContext) -> Iterator[Finding]:
    conf = ctx.snapshot.scheduler_conf
    if conf is None or not ctx.snapshot.deviceshare.ascend_mindcluster:
        return
    init = conf.configuration("init-params")
    args = as_map(init.get("arguments")) if init is not None else {}
    value = args.get("presetVirtualDevice")
    if value != "false":
        shown = "absent" if value is None else repr(value)
        yield _f("VGC012", ERROR, f"AscendMindClusterVNPUEnable is on but configurations[init-params]."
                                  f"presetVirtualDevice is {shown}, not \"false\": dynamic vNPU needs it explicitly")


@check("scheduler-config.dra", CAT, "VGC014", "Volcano allocates the DRA claims of the pods it places",
       needs=("scheduler-config.loadable",), reads=("pods",))
def dra(ctx: DoctorContext) -> Iterator[Finding]:
    """The predicates argument, the feature gate and the version (`versions.dra_support`,
    docs/stacks.md#dra-in-volcano); the pods are those with `spec.resourceClaims` (the pod index's, never a walk of
    every pod)."""
    support = scheduler_dra(ctx.snapshot, ctx.volcano_version)
    if support is None:
        return
    version = _version(ctx)
    if support.ignored_argument:
        yield _f("VGC014", INFO, f"{spec.ARG_PREDICATE_DRA} is set on the predicates plugin, but Volcano {version} no "
                                 f"longer reads it: the scheduler's {spec.GATE_DRA} feature gate alone turns DRA on")
    if not ctx.snapshot.pod_index.claiming():
        return  # most clusters: the facts (and the scheduler names in them) are not needed
    pods = claiming_pods(ctx.snapshot, ctx.facts.scheduler_names)
    if not pods:
        return
    names = [f"{as_map(p.get('metadata')).get('namespace', '')}/{as_map(p.get('metadata')).get('name', '')}"
             for p in pods]
    shown = ", ".join(names[:3]) + (f" and {len(names) - 3} more" if len(names) > 3 else "")
    if support.allocates is False:
        yield _f("VGC014", ERROR, f"{len(pods)} pod(s) placed by Volcano have DRA resourceClaims ({shown}), but "
                                  f"Volcano {version} cannot allocate them: {'; '.join(support.missing)}; it binds "
                                  "them without their claims and the kubelet cannot start them")
    elif support.allocates is None:
        raise SkipCheck(f"{len(pods)} pod(s) have DRA resourceClaims, but whether Volcano {version} allocates them "
                        f"cannot be told: {support.unknown}")
