"""What install and uninstall read before they plan, whoever reads it: `kube/writer.read_state` asks the API
server, `install --dry-run --snapshot` a snapshot file. One list of what to read, two ways to read it, so a
dry run against a support bundle plans what a live dry run would have planned from the same objects.

Pure: the readers are passed in (`get` one object, `list_kind` the objects of a kind).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.doctor.components import image_parts
from vgpuctl.core.install.modes import Mode
from vgpuctl.core.install.plan import SCHEDULER_CM, ClusterState, Ref, refs_to_read

#: What uninstall lists in a namespace vgpuctl created before deleting it: anything here that is not
#: vgpuctl's (nor made by a controller) keeps the namespace alive.
INVENTORY = (("v1", "ConfigMap"), ("v1", "Secret"), ("v1", "ServiceAccount"), ("v1", "Service"), ("v1", "Pod"),
             ("apps/v1", "Deployment"), ("apps/v1", "StatefulSet"), ("apps/v1", "DaemonSet"))

#: One object, or None when it does not exist.
Get = Callable[[Ref], Mapping[str, Any] | None]
#: The objects of (apiVersion, kind) in a namespace (None: cluster-scoped, or every namespace).
ListKind = Callable[[str, str, str | None], list[dict[str, Any]]]


def scheduler_deployment(deployments: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    for deployment in deployments:
        containers = (((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")
        if any(image_parts(str(c.get("image", "")))[0] == "vc-scheduler" for c in containers or []):
            return {"apiVersion": "apps/v1", "kind": "Deployment", **deployment}
    return None


def gather_state(get: Get, list_kind: ListKind, modes: Sequence[Mode] = (), *, extra: Iterable[Ref] = (),
                 inventory: Iterable[str] = ()) -> ClusterState:
    """Every object install/uninstall may touch (and the `extra` ones), the nodes, the scheduler Deployment,
    and for each namespace in `inventory` what it holds of the `INVENTORY` kinds."""
    scheduler_cm = get(SCHEDULER_CM)
    objects: dict[Ref, Mapping[str, Any]] = {SCHEDULER_CM: scheduler_cm} if scheduler_cm else {}
    for ref in [*refs_to_read(scheduler_cm, tuple(modes)), *extra]:
        if ref not in objects and (obj := get(ref)) is not None:
            objects[ref] = obj
    for namespace in inventory:
        namespace_ref = Ref("v1", "Namespace", None, namespace)
        if namespace_ref not in objects:
            if (found := get(namespace_ref)) is None:
                continue
            objects[namespace_ref] = found
        for api_version, kind in INVENTORY:
            for item in list_kind(api_version, kind, namespace):
                obj = {"apiVersion": api_version, "kind": kind, **item}
                objects.setdefault(Ref(api_version, kind, namespace, str(item["metadata"]["name"])), obj)
    nodes = list_kind("v1", "Node", None)
    deployment = scheduler_deployment(list_kind("apps/v1", "Deployment", spec.SCHEDULER_NAMESPACE))
    return ClusterState(objects, nodes, deployment)


def snapshot_state(objects: Sequence[Mapping[str, Any]], collected: Collection[str], modes: Sequence[Mode] = (),
                   *, extra: Iterable[Ref] = (), inventory: Iterable[str] = ()) -> tuple[ClusterState, list[str]]:
    """`gather_state` over a snapshot's objects, and the kinds it needed that the snapshot does not hold (it
    holds `collected`): those are taken as absent, as a live read would find nothing of them either only if
    there is nothing — the caller says so."""
    index: dict[Ref, Mapping[str, Any]] = {}
    for obj in objects:
        meta = obj.get("metadata") or {}
        index[Ref(str(obj.get("apiVersion")), str(obj.get("kind")), meta.get("namespace"), str(meta.get("name")))] = obj
    missing: dict[str, None] = {}

    def known(kind: str) -> bool:
        if kind not in collected:
            missing[kind] = None
            return False
        return True

    def get(ref: Ref) -> Mapping[str, Any] | None:
        return index.get(ref) if known(ref.kind) else None

    def list_kind(api_version: str, kind: str, namespace: str | None) -> list[dict[str, Any]]:
        if not known(kind):
            return []
        return [dict(obj) for ref, obj in index.items() if ref.kind == kind and ref.api_version == api_version
                and (namespace is None or ref.namespace == namespace)]

    state = gather_state(get, list_kind, modes, extra=extra, inventory=inventory)
    return state, list(missing)
