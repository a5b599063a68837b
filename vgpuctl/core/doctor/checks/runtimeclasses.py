"""The `ascend` RuntimeClass the ascend-device-plugin requires (`VGK008`).

Project-HAMi/ascend-device-plugin ships `ascend-runtimeclass.yaml` (RuntimeClass `ascend`, handler `ascend`)
from v1.3.0, whose README deploys it, and from v1.4.0 its `docs/volcano.md` requires `runtimeClassName:
ascend` on every Ascend pod: the plugin's Allocate only sets `ASCEND_VISIBLE_DEVICES`
(`internal/server/allocate.go`) and the Ascend container runtime behind the handler mounts the devices.
Without the RuntimeClass the API server's RuntimeClass admission rejects every pod naming it.

Which plugins require it is the same verdict the pod rule VGH010 uses
(`ClusterFacts.ascend_runtimeclass_required`, from the DaemonSets' image tags). RuntimeClasses are in a
snapshot only when it listed them (`vgpuctl snapshot save`, or `kubectl get …,runtimeclasses`); a snapshot
that did not (no RuntimeClass object and no `vgpuctl.io/kinds` annotation naming them) skips the check
rather than report a RuntimeClass missing that was never looked for.
"""

from __future__ import annotations

from collections.abc import Iterator

from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.doctor.components import as_map
from vgpuctl.core.doctor.framework import Category, DoctorContext, SkipCheck, check
from vgpuctl.core.findings import Finding, Severity

ASCEND_RUNTIMECLASS = "ascend"


@check("device-plugins.ascend-runtimeclass", Category.DEVICE_PLUGINS, "VGK008",
       "The ascend RuntimeClass exists when the ascend-device-plugin requires it",
       reads=("daemonsets", "runtimeclasses"))
def ascend_runtimeclass(ctx: DoctorContext) -> Iterator[Finding]:
    if ctx.facts.ascend_runtimeclass_required is not True:
        return  # no ascend-device-plugin, only releases before v1.3.0, or tags that say nothing
    classes = ctx.snapshot.runtime_classes
    if classes is None:
        raise SkipCheck("the API server serves no node.k8s.io/v1 RuntimeClasses: whether RuntimeClass ascend "
                        "exists is unknown" if ctx.source == "live" else
                        "the snapshot holds no RuntimeClass list (add runtimeclasses to the kubectl get, or use "
                        "`vgpuctl snapshot save`): whether RuntimeClass ascend exists is unknown")
    if any(as_map(rc.get("metadata")).get("name") == ASCEND_RUNTIMECLASS for rc in classes):
        return
    tags = ", ".join(dict.fromkeys(t for t in ctx.facts.ascend_plugin_tags or () if t))
    yield Finding("VGK008", Severity.ERROR, f"runtimeclass/{ASCEND_RUNTIMECLASS}",
                  f"no RuntimeClass {ASCEND_RUNTIMECLASS!r}, which the ascend-device-plugin in use ({tags}) requires "
                  f"on every Ascend pod (runtimeClassName: {ASCEND_RUNTIMECLASS}): the API server rejects pods "
                  "that name it, and pods that do not get no NPU mounted", hint_for("VGK008"))
