"""Where a cluster-reading command gets its cluster: `--snapshot FILE`, or live through kubeconfig.

Both paths end in the same `ClusterSnapshot`, so `nodes`, `doctor` and `lint --snapshot` never care
which one was used. Live reads show progress on stderr; API problems that only block part of the read
come back as VGK001 findings.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from vgpuctl.cli.kubeopts import cluster_errors, connect, refuse_live_options_with_snapshot
from vgpuctl.core.cluster.build import PodVisitor, build_snapshot
from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.findings import Finding
from vgpuctl.core.versions import Version


@dataclass
class LoadedCluster:
    snapshot: ClusterSnapshot
    source: str  # "live" | "snapshot"
    problems: list[Finding]

    @property
    def unreadable(self) -> frozenset[str]:
        """The resources whose list failed (`list/pods`, `list/configmaps/kube-system` → `pods`, `configmaps`),
        named as checks declare them in `reads`: `doctor` and `nodes` skip the same checks."""
        return frozenset(p.subject.split("/")[1] for p in self.problems if p.subject.startswith("list/"))


def load_cluster(snapshot_path: str | None, kubeconfig: str | None, context: str | None, *,
                 volcano_version: Version | None = None, index_pods: bool = False,
                 index_device_asks: bool = True, pod_visitor: PodVisitor | None = None) -> LoadedCluster:
    """The cluster from a snapshot file or the API server; `index_pods` for a command whose checks read
    `ClusterSnapshot.pod_index` (built in the same pass, `index_device_asks` all of it), `pod_visitor` to see
    every pod in that pass (see `build_snapshot`)."""
    # A large cluster is millions of small objects: the cycle collector stays off while they are made.
    from vgpuctl.snapshotfile import gc_paused

    refuse_live_options_with_snapshot(snapshot_path, kubeconfig, context)
    if snapshot_path:
        from vgpuctl.snapshotfile import load_snapshot

        with gc_paused():
            data = load_snapshot(snapshot_path)
            snapshot = build_snapshot(data.objects, data.server_version, volcano_version=volcano_version,
                                  kinds=data.kinds, index_pods=index_pods, index_device_asks=index_device_asks,
                                  pod_visitor=pod_visitor)
        return LoadedCluster(snapshot, "snapshot", [])
    from vgpuctl.kube.reader import read_cluster

    with gc_paused():
        with cluster_errors():
            client = connect(kubeconfig, context)
            progress = _Progress() if sys.stderr.isatty() else None
            read = read_cluster(client, progress=progress)
            if progress:
                progress.done()
        data = read.data
        snapshot = build_snapshot(data.objects, data.server_version, volcano_version=volcano_version,
                                  kinds=data.kinds, index_pods=index_pods, index_device_asks=index_device_asks,
                                  pod_visitor=pod_visitor)
    return LoadedCluster(snapshot, "live", read.problems)


class _Progress:
    """One self-overwriting stderr line: `reading cluster: nodes 1500 · pods 40000`."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def __call__(self, plural: str, n: int) -> None:
        self.counts[plural] = n
        text = " · ".join(f"{k} {v}" for k, v in self.counts.items())
        sys.stderr.write(f"\rreading cluster: {text}\x1b[K")
        sys.stderr.flush()

    def done(self) -> None:
        sys.stderr.write("\r\x1b[K")
        sys.stderr.flush()
