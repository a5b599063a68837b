"""The cluster-aware webhook's node-findings gauge carries the GPU-stack codes (VGN012, VGN020, VGN022) through the
doctor's shared node checks; VGN021 needs ResourceSlices, which the webhook does not watch, so it never reports
there (skipped, not "none")."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from tests.unit.doctor.conftest import GPU_A, NOW, vgpu_node
from tests.unit.doctor.nodes_builders import DRIVER_OK
from vgpuctl.core.allocation import judge_watched
from vgpuctl.core.clusterview import build_node_parts, simulation_env
from vgpuctl.core.deviceconfig import default_device_config
from vgpuctl.core.slim import slim_node
from vgpuctl.webhook.alloc_metrics import allocation_of

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "stacks"


def watched_nodes() -> list[dict[str, Any]]:
    """What the webhook keeps of the nodes it watches (`slim_node`): the time-slicing gpu-operator node, a node of
    gpushare and vGPU, and HAMi's register beside Volcano's on the same GPU."""
    ts = yaml.safe_load((FIXTURES / "gpu-operator-time-slicing-node.yaml").read_text())
    share = vgpu_node("share-1", labels=DRIVER_OK, capacity={"volcano.sh/gpu-memory": "40960",
                                                             "volcano.sh/gpu-number": "1"})
    hami = f'[{{"id":"{GPU_A}","count":10,"devmem":40960,"devcore":100,"type":"NVIDIA A100","health":true}}]'
    both = vgpu_node("hami-1", GPU_A, labels=DRIVER_OK, annotations={"hami.io/node-nvidia-register": hami})
    return [slim_node(copy.deepcopy(n)) for n in (ts, share, both)]


def test_the_node_findings_gauge_carries_the_stack_codes() -> None:
    env = simulation_env(None, None)
    parts = build_node_parts(watched_nodes(), {}, env)
    text = allocation_of(parts, None, None, NOW.timestamp())
    lines = b"".join(t.get("vgpuctl_node_findings", b"") for t in text.values()).decode()
    assert 'vgpuctl_node_findings{NodeName="gpu-ts-1",code="VGN020",severity="error"} 1' in lines
    assert 'vgpuctl_node_findings{NodeName="share-1",code="VGN022",severity="error"} 1' in lines
    assert 'vgpuctl_node_findings{NodeName="hami-1",code="VGN012",severity="error"} 1' in lines
    assert "VGN021" not in lines


def test_the_webhook_judges_them_with_the_doctors_node_checks() -> None:
    """`judge_watched` is `judge_nodes` over the watched objects: the same findings `vgpuctl nodes` shows."""
    nodes = watched_nodes()
    parts = build_node_parts(nodes, {}, simulation_env(None, None))
    verdicts = judge_watched([p.state for p in parts.values()], [], default_device_config(), volcano_version=None,
                             now=NOW)
    assert {(f.code, f.subject) for fs in verdicts.values() for f in fs if f.code in ("VGN012", "VGN020", "VGN022")} \
        == {("VGN020", "node/gpu-ts-1"), ("VGN022", "node/share-1"), ("VGN012", "node/hami-1")}
