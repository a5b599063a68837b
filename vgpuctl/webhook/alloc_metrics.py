"""Device allocation gauges on `/metrics`, from the published cluster view.

When to compute: the publisher thread turns each changed node's rows (`core.allocation.node_rows`, read
off the node's device state) into exposition lines when it derives that node's part, and publishes them
with the view in the same assignment. A scrape only joins the published lines of every node: no
decoding, no summing, no formatting, no lock, and never half of one view and half of the next.

Why not prometheus_client's collectors: its text exposition formats every sample on every scrape. On
the 5,000-node benchmark fleet (40,000 GPUs, 320,000 series) that was ~8.7 s of a request thread per
scrape, holding the GIL the admission requests need; joining pre-rendered lines takes milliseconds
(`benchmarks/alloc_metrics.py`). The lines are the text format prometheus_client writes (0.0.4), and
the tests read them back with its parser.

No counter or process state goes into these gauges: two replicas that have seen the same objects
export the same lines.
"""

from __future__ import annotations

import datetime as dt
import logging
from collections.abc import Mapping

from vgpuctl.core.allocation import METRICS, NodeRows, judge_watched, node_rows
from vgpuctl.core.clusterview import NodePart
from vgpuctl.core.deviceconfig import DeviceConfig, default_device_config
from vgpuctl.core.versions import Version

log = logging.getLogger("vgpuctl.webhook")

NodeText = Mapping[str, bytes]  # metric name → one node's exposition lines
_LABELS = {m.name: m.labels for m in METRICS}
_HEADERS = {m.name: f"# HELP {m.name} {m.help}\n# TYPE {m.name} gauge\n".encode() for m in METRICS}  # plain help


def _escape(value: str) -> str:
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return value


def node_text(rows: NodeRows) -> dict[str, bytes]:
    """One node's rows as exposition lines, by metric (made once per change of the node, not per scrape)."""
    out: dict[str, bytes] = {}
    rendered: dict[tuple[str, ...], str] = {}  # a device's label set serves all its metrics
    for name, found in rows.items():
        if not found:
            continue
        names = _LABELS[name]
        lines = []
        for values, value in found:
            labels = rendered.get(values)
            if labels is None:  # label sets of different metrics differ in length: one cache serves all
                labels = rendered[values] = ",".join(
                    f'{k}="{_escape(v)}"' for k, v in zip(names, values, strict=True))
            lines.append(f"{name}{{{labels}}} {value}\n")
        out[name] = "".join(lines).encode()
    return out


def exposition(nodes: Mapping[str, NodeText] | None) -> list[bytes]:
    """The allocation families of a view, every node's lines under each family's HELP and TYPE (nodes
    by name), as chunks to join once with the rest of the body. Before the first sync: the families,
    without samples."""
    nodes = nodes or {}
    ordered = [nodes[name] for name in sorted(nodes)]
    chunks: list[bytes] = []
    for metric in METRICS:
        chunks.append(_HEADERS[metric.name])
        chunks.extend(text[metric.name] for text in ordered if metric.name in text)
    return chunks


def allocation_of(parts: Mapping[str, NodePart], config: DeviceConfig | None, volcano_version: Version | None,
                  now: float) -> dict[str, NodeText]:
    """The samples of freshly derived node parts, with the doctor's node findings on them (judged together,
    as `vgpuctl nodes NAME…` judges the nodes it names). A failure of the node checks must not hold back
    the view the admission rules read: it is logged and the devices are exported without findings."""
    states = [p.state for p in parts.values()]
    pods = [pod for p in parts.values() for pod in p.pods.values()]
    when = dt.datetime.fromtimestamp(now, dt.UTC)
    try:
        verdicts = judge_watched(states, pods, config or default_device_config(), volcano_version=volcano_version,
                                 now=when)
    except Exception:
        log.exception("node checks failed on %d watched nodes; their allocation metrics carry no findings",
                      len(states))
        verdicts = {}
    return {name: node_text(node_rows(part.state, verdicts.get(name, ()))) for name, part in parts.items()}
