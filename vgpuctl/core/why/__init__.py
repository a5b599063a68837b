"""`why`: replay Volcano's device filters to say why a pod is Pending, and where it would land
(docs/contracts.md#interfaces)."""

from vgpuctl.core.why.env import WhyEnv
from vgpuctl.core.why.model import REASONS, DeviceChoice, NodeVerdict, Reason, UnfitGroup, WhyReport
from vgpuctl.core.why.request import PodRequest, parse_pod
from vgpuctl.core.why.simulate import env_from_snapshot, explain, explain_in_snapshot, simulate_node

__all__ = ["REASONS", "DeviceChoice", "NodeVerdict", "PodRequest", "Reason", "UnfitGroup", "WhyEnv", "WhyReport",
           "env_from_snapshot", "explain", "explain_in_snapshot", "parse_pod", "simulate_node"]
