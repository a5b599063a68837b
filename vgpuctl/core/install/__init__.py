"""`vgpuctl install` / `uninstall` planned as data: scheduler config edits, the device ConfigMap, the
device-plugin objects, and the ordered plan the writer (`vgpuctl.kube.writer`) applies. Pure."""

from vgpuctl.core.install.modes import InstallError, Mode
from vgpuctl.core.install.plan import (
    Action,
    ClusterState,
    InstallOptions,
    Method,
    Plan,
    Ref,
    Step,
    plan,
    refs_to_read,
)
from vgpuctl.core.install.removal import plan_removal

__all__ = ["Action", "ClusterState", "InstallError", "InstallOptions", "Method", "Mode", "Plan", "Ref", "Step",
           "plan", "plan_removal", "refs_to_read"]
