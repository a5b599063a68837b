"""Every doctor check, one module per area; importing this package registers them all."""

from vgpuctl.core.doctor.checks import (
    cluster,
    devconfig,
    host,
    nodes,
    nodes_npu,
    runtimeclasses,
    scheduler,
    stacks,
    workloads,
)

__all__ = ["cluster", "devconfig", "host", "nodes", "nodes_npu", "runtimeclasses", "scheduler", "stacks",
           "workloads"]
