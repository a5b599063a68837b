"""`vgpuctl why`: replay Volcano's device filter to say why a pod is Pending — and where it would land."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any, Final

import typer

from vgpuctl.cli.clustersource import LoadedCluster, load_cluster
from vgpuctl.cli.env import fail, guarded, make_console, stdout
from vgpuctl.cli.kubeopts import context_option, kubeconfig_option
from vgpuctl.cli.options import output_option, read_volcano_version, snapshot_option, volcano_version_option
from vgpuctl.core.findings import ExitStatus
from vgpuctl.core.kubelist import is_list, item_defaults, with_defaults
from vgpuctl.core.podrules.targets import PodTarget, pod_targets
from vgpuctl.core.why.simulate import explain_in_snapshot
from vgpuctl.core.why.usage import NodeTallies
from vgpuctl.core.why.whatif import explain_what_if
from vgpuctl.errors import UsageError
from vgpuctl.render import OutputFormat, dump
from vgpuctl.snapshotfile import gc_paused
from vgpuctl.sources import read_manifests

EPILOG = """[bold]Examples[/bold]

  vgpuctl why notebook-bob -n ml              # why is it Pending, and which nodes come closest
  vgpuctl why ml/notebook-bob --snapshot cluster.yaml -o json
  vgpuctl why -f pod.yaml                     # what-if: where would this pod land right now?
  vgpuctl why -f job.yaml                     # a Volcano Job / Deployment: does its gang start?

Exit code: 0 the pod fits some node (is bound, or the workload's gang starts), 1 it fits none, the gang
does not start or the pod rules reject it, 2 usage error, 3 cluster unreachable.
"""


@guarded
def why_command(
    pod: str | None = typer.Argument(None, metavar="[POD]", help="Pod name (or NAMESPACE/NAME)."),
    namespace: str | None = typer.Option(None, "-n", "--namespace", metavar="NAMESPACE",
                                         help="Namespace of POD (default: default)."),
    file: str | None = typer.Option(None, "-f", "--filename", metavar="FILE",
                                    help="What-if: a pod (or workload) manifest not yet created; - for stdin."),
    snapshot: str | None = snapshot_option(help="Read a snapshot file (kubectl get … -o yaml) instead of the cluster."),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
    volcano_version: str | None = volcano_version_option(help="Volcano version (decides which checks exist)."),
    output: OutputFormat = output_option(),
) -> None:
    """Say why a pod is Pending (per node, grouped by reason, with the numbers) and where it would land."""
    if (pod is None) == (file is None):
        raise UsageError("give exactly one of POD or -f FILE")
    if pod is not None and "/" in pod and namespace and pod.split("/", 1)[0] != namespace:
        raise UsageError(f"{pod} names namespace {pod.split('/', 1)[0]}, -n {namespace}: give the namespace once")
    version = read_volcano_version(volcano_version)
    source: Mapping[str, Any] | None = None
    manifest: Mapping[str, Any] | None = None
    if file is not None:
        source, manifest = _manifest(file, namespace)
    # The collector stays off for the whole command, not only the load, as for `nodes` and `doctor`: the replay
    # decodes 40,000 GPUs and makes their verdicts, and collections walking them were a ninth of it
    # (benchmarks/why_scale.py).
    with gc_paused():
        # What each node's pods request, tallied in the build's pass over the pods (benchmarks/why_scale.py)
        loaded = load_cluster(snapshot, kubeconfig, context, volcano_version=version, pod_visitor=NodeTallies())
        _stop_without_nodes_or_pods(loaded)
        if manifest is None:
            assert pod is not None
            ns, name = pod.split("/", 1) if "/" in pod else (namespace or "default", pod)
            found = next((p for p in loaded.snapshot.pods if _key(p) == (ns, name)), None)
            if found is None:
                raise UsageError(f"no pod {ns}/{name} in the {'snapshot' if snapshot else 'cluster'}")
            manifest = found
        now = datetime.now(UTC)
        if source is not None:
            report = explain_what_if(source, manifest, loaded.snapshot, namespace=namespace or "default",
                                     volcano_version=version, now=now)
        else:
            report = explain_in_snapshot(manifest, loaded.snapshot, volcano_version=version, now=now)
    if loaded.unreadable:
        report.notes.append(_partial_read_note(loaded.unreadable))
    out = stdout()
    if output is OutputFormat.TABLE:
        from vgpuctl.render.why import render_why  # rich: not for -o json (benchmarks/why_scale.py)

        render_why(report, make_console(out))
    else:
        out.write(dump(report.to_dict(), output))
    raise typer.Exit(int(ExitStatus.OK if report.schedulable else ExitStatus.FINDINGS))


def _stop_without_nodes_or_pods(loaded: LoadedCluster) -> None:
    """The replay needs every node, every pod bound to one and the scheduler's ConfigMaps: a live read that could
    not list them (RBAC, a failing API server) would show full nodes as empty, a pod as missing, or the scheduler
    config as absent ("not found", and no family enabled). Stop (exit 3) and say which list failed, as the reader
    put it."""
    missing = loaded.unreadable & _NEEDED
    if not missing:
        return
    failed = [p.message for p in loaded.problems if p.subject.split("/")[1:2] and p.subject.split("/")[1] in missing]
    raise fail(f"why needs every node and pod and the scheduler's ConfigMaps, and the cluster read was incomplete: "
               f"{'; '.join(failed)}", ExitStatus.INCOMPLETE)


_NEEDED: Final = frozenset({"nodes", "pods", "configmaps"})


def _partial_read_note(unreadable: frozenset[str]) -> str:
    """The report's note for lists that failed but leave the replay standing (`vgpuctl doctor` reports each)."""
    return (f"not read from the cluster: {', '.join(sorted(unreadable))} (the API server refused or failed the "
            "list; `vgpuctl doctor` says why): the replay went without them")


def _key(pod: Mapping[str, Any]) -> tuple[str, str]:
    raw = pod.get("metadata")
    meta: Mapping[str, Any] = raw if isinstance(raw, dict) else {}
    return str(meta.get("namespace") or "default"), str(meta.get("name") or "")


def _manifest(path: str, namespace: str | None) -> tuple[Mapping[str, Any], dict[str, Any]]:
    """The one object with a pod (or pod templates: a workload, a Volcano Job and its tasks) in the file — a
    List's items count as objects — and its first pod as a Pod. Several such objects: a usage error naming
    them (why answers for one pod or one workload, never for the first that happens to come)."""
    found: list[tuple[Mapping[str, Any], PodTarget]] = []
    for doc in read_manifests([path]):
        if doc.error:
            raise UsageError(f"{doc.source}: {doc.error}")
        if not isinstance(doc.obj, Mapping):
            continue
        items = doc.obj.get("items") if is_list(doc.obj) else [doc.obj]
        kind, api_version = item_defaults(doc.obj) if is_list(doc.obj) else (None, None)
        for item in items if isinstance(items, list) else ():
            targets = pod_targets(item) if isinstance(item, Mapping) else None
            if isinstance(item, Mapping) and targets:
                found.append((with_defaults(item, kind, api_version), targets[0]))
    if not found:
        raise UsageError(f"{path}: no Pod or pod template found")
    if len(found) > 1:
        named = ", ".join(_named(obj) for obj, _ in found[:3]) + (", …" if len(found) > 3 else "")
        raise UsageError(f"{path} holds {len(found)} objects with pods ({named}): why -f answers for one Pod, "
                         "workload or Volcano Job; give a file with one")
    obj, target = found[0]
    own = _named(obj, namespace=True)
    if namespace and own and own != namespace:  # as kubectl apply -f -n refuses it
        raise UsageError(f"{path}: the namespace of {_named(obj)} is {own}, -n {namespace}: give the namespace once")
    meta = dict(target.metadata)
    raw = obj.get("metadata")
    top: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    meta.setdefault("name", top.get("name") or "what-if")
    meta.setdefault("namespace", namespace or top.get("namespace") or "default")
    return obj, {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": dict(target.spec)}


def _named(obj: Mapping[str, Any], *, namespace: bool = False) -> str:
    """`Kind name`, or with `namespace` the object's own namespace ("" when it names none)."""
    raw = obj.get("metadata")
    meta: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    if namespace:
        return str(meta.get("namespace") or "")
    return f"{obj.get('kind')} {meta.get('name') or meta.get('generateName') or '?'}"


def register(app: typer.Typer) -> None:
    app.command("why", epilog=EPILOG)(why_command)
