"""The cluster model: one faithful picture of a cluster, whether read live or from a snapshot file."""

from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.model import ClusterSnapshot, DeviceState, NodeState

__all__ = ["ClusterSnapshot", "DeviceState", "NodeState", "build_snapshot"]
