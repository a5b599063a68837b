"""Causes no node can get past, said once at the top of the answer (docs/contracts.md#why-report `cause`).

Some reasons a device pod is Pending are not about any node: the scheduler config is missing or does not parse,
`deviceshare` is in no tier, the actions leave out `allocate`, or the deviceshare flag of a family the pod asks
for is off. Replayed node by node they repeat on every node (`not-device-node: deviceshare.VGPUEnable is off`)
and make a node with no devices the "closest"; `explain` asks here first and answers with the cause and its fix
instead. The conditions are the ones the device replays test first (`device_model_problem` of `vgpu.py`,
`gpushare.py`, `ascend.py`, `mindcluster.py`), so a cause is found exactly when every node would miss for it.
Where the doctor has a finding for the cause its code is given (VGC001, VGC002, VGC005, VGC013: `vgpuctl
explain`), with that code's hint.
"""

from __future__ import annotations

from collections.abc import Iterable

from vgpuctl.core import spec
from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.why.model import ClusterCause
from vgpuctl.core.why.scheduler_env import WhyEnv

_CONFIGMAP = f"ConfigMap {spec.SCHEDULER_NAMESPACE}/{spec.SCHEDULER_CONFIGMAP}"

# The deviceshare flag each family's replay needs (gpushare and gpu-number: either flag builds the card model).
_FLAGS: dict[spec.Family, tuple[str, ...]] = {
    spec.Family.GPUSHARE: (spec.ARG_GPU_SHARING_ENABLE, spec.ARG_GPU_NUMBER_ENABLE),
    spec.Family.GPUNUMBER: (spec.ARG_GPU_SHARING_ENABLE, spec.ARG_GPU_NUMBER_ENABLE),
    spec.Family.VGPU: (spec.ARG_VGPU_ENABLE,),
    spec.Family.ASCEND_MINDCLUSTER: (spec.ARG_ASCEND_MINDCLUSTER_ENABLE,),
    spec.Family.ASCEND_HAMI: (spec.ARG_ASCEND_HAMI_ENABLE,),
}


def scheduler_cause(snapshot: ClusterSnapshot) -> ClusterCause | None:
    """What in the scheduler config stops every device pod, whatever it asks for; None when nothing does."""
    unreadable = next((f for f in snapshot.findings if f.code == "VGC001"), None)
    if unreadable is not None:
        return ClusterCause(f"{unreadable.subject}: {unreadable.message}: Volcano cannot load this configuration, "
                            "so no device family is enabled and no device pod is placed", unreadable.hint, "VGC001")
    conf = snapshot.scheduler_conf
    if conf is None:
        return ClusterCause(f"{_CONFIGMAP} is not found: without it no device family is enabled, so Volcano "
                            "places no device pod", hint_for("VGC001"), "VGC001")
    if "allocate" not in conf.actions:
        return ClusterCause(f"the scheduler's actions are {', '.join(conf.actions) or 'empty'}: without allocate "
                            "Volcano binds no pod, devices or not", hint_for("VGC013"), "VGC013")
    if conf.plugin(spec.PLUGIN_DEVICESHARE) is None:
        return ClusterCause(f"the {spec.PLUGIN_DEVICESHARE} plugin is in no tier of {spec.SCHEDULER_CONF_KEY}: "
                            "Volcano never filters or allocates devices, so no device pod is placed",
                            hint_for("VGC002"), "VGC002")
    return None


def cluster_cause(families: Iterable[spec.Family], env: WhyEnv) -> ClusterCause | None:
    """The cause no node gets past for a pod asking for `families` (Volcano's registration order), or None."""
    if env.scheduler_cause is not None:
        return env.scheduler_cause
    args = env.deviceshare
    on = {spec.ARG_GPU_SHARING_ENABLE: args.gpu_sharing, spec.ARG_GPU_NUMBER_ENABLE: args.gpu_number,
          spec.ARG_VGPU_ENABLE: args.vgpu, spec.ARG_ASCEND_MINDCLUSTER_ENABLE: args.ascend_mindcluster,
          spec.ARG_ASCEND_HAMI_ENABLE: args.ascend_hami}
    for family in families:
        flags = _FLAGS[family]
        if any(on[f] for f in flags):
            continue
        issue = next((i for i in args.issues if i.key in flags), None)
        names = " nor ".join(flags)
        if issue is not None:  # a value GetBool cannot read: the doctor's VGC005
            return ClusterCause(f"{issue.key}: {issue.reason}, so the {family.value} family is off: Volcano builds "
                                f"no {family.value} device on any node and this pod fits none", hint_for("VGC005"),
                                "VGC005")
        return ClusterCause(
            f"{'neither ' if len(flags) > 1 else ''}{names} is {'on' if len(flags) > 1 else 'off'} in the "
            f"{spec.PLUGIN_DEVICESHARE} arguments (absent or false): Volcano builds no {family.value} device on any "
            "node, so this pod fits none",
            f"set {flags[0]}: true in the {spec.PLUGIN_DEVICESHARE} arguments of {spec.SCHEDULER_CONF_KEY} "
            f"({_CONFIGMAP}), then restart the scheduler; `vgpuctl install` does both")
    return None
