"""Where `install` and `uninstall` read the cluster from: the API server, or — for a dry run only — a snapshot
file (`--snapshot`: what would install change in the cluster this support bundle came from?). Both read the
same objects through `core.install.gather`, so the plan and its diffs are the live dry run's."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from vgpuctl.cli.env import note
from vgpuctl.cli.kubeopts import cluster_errors, connect, refuse_live_options_with_snapshot
from vgpuctl.core.install.modes import Mode
from vgpuctl.core.install.plan import ClusterState, Ref
from vgpuctl.errors import UsageError

if TYPE_CHECKING:
    from kubernetes.client import ApiClient

#: The kinds a snapshot without `vgpuctl.io/kinds` holds: what the documented `kubectl get` lists.
KUBECTL_KINDS = frozenset({"Node", "Pod", "ConfigMap", "DaemonSet", "Deployment", "RuntimeClass", "ResourceSlice",
                           "DeviceClass", "ResourceClaim", "ResourceClaimTemplate"})


def read_install_state(snapshot: str | None, kubeconfig: str | None, context: str | None, *, dry_run: bool,
                       verb: str, modes: Sequence[Mode] = (), extra: Iterable[Ref] = (),
                       inventory: Iterable[str] = ()) -> tuple[ClusterState, ApiClient | None]:
    """The state to plan from, and the client to write with (None from a snapshot)."""
    if snapshot:
        if not dry_run:
            raise UsageError(f"--snapshot plans against a file, it cannot {verb}: add --dry-run (or drop --snapshot "
                             "to change the live cluster)")
        refuse_live_options_with_snapshot(snapshot, kubeconfig, context)
        from vgpuctl.core.install.gather import snapshot_state
        from vgpuctl.snapshotfile import load_snapshot

        data = load_snapshot(snapshot)
        # Secrets are never in a snapshot (dropped on load too), whatever it says it listed.
        collected = (data.kinds if data.kinds is not None else KUBECTL_KINDS) - {"Secret"}
        state, missing = snapshot_state(data.objects, collected, modes, extra=extra, inventory=inventory)
        if missing:
            note(f"the snapshot holds no {', '.join(sorted(missing))}: planned as if none existed (a live dry run "
                 "reads them)")
        return state, None
    from vgpuctl.kube.writer import read_state

    with cluster_errors():
        client = connect(kubeconfig, context)
        return read_state(client, modes, extra=extra, inventory=inventory), client
