"""DRA in a cluster (docs/stacks.md#dra): what the rules know of its DeviceClasses, claims and templates
(`DraFacts`), and whether the running Volcano allocates claims at all (`scheduler_dra`, VGC014).

The facts come from a snapshot (`facts_from_snapshot`) and from `lint`'s own input files (`dra_facts_from_objects`):
a pod names claims and templates, never classes, so a claim's class is known only when its object is. Namespaces
left out of a manifest are read as `default`, as kubectl applies them without `-n`.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final

from vgpuctl.core import spec
from vgpuctl.core.cluster.model import ClusterSnapshot
from vgpuctl.core.codecs._common import go_parse_bool
from vgpuctl.core.codecs.dra import claim_classes, decode_device_class, template_classes
from vgpuctl.core.facts import DraFacts
from vgpuctl.core.kubelist import is_list
from vgpuctl.core.scheduler_config import get_bool, get_bool_strict
from vgpuctl.core.versions import (
    NEWEST_VOLCANO,
    DraSupport,
    Version,
    VersionError,
    dra_support,
    parse_version,
    reads_dra_argument,
)

DEFAULT_NAMESPACE: Final = spec.DEFAULT_NAMESPACE
DRA_KINDS: Final = frozenset({"ResourceSlice", "DeviceClass", "ResourceClaim", "ResourceClaimTemplate"})
_GATES: Final = re.compile(re.escape(spec.FEATURE_GATES_FLAG) + r"(?:=|\s+)(\S+)")
_EMPTY: Mapping[str, Any] = {}


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else _EMPTY


def namespace_of(meta: Mapping[str, Any]) -> str:
    ns = meta.get("namespace")
    return ns if isinstance(ns, str) and ns else DEFAULT_NAMESPACE


def _key(obj: Mapping[str, Any]) -> tuple[str, str] | None:
    meta = _m(obj.get("metadata"))
    name = meta.get("name")
    return (namespace_of(meta), name) if isinstance(name, str) and name else None


def dra_facts(classes: Iterable[Any] | None, claims: Iterable[Any] | None,
              templates: Iterable[Any] | None) -> DraFacts | None:
    """The facts of these objects; None when none of the three kinds was collected."""
    if classes is None and claims is None and templates is None:
        return None
    gpu: set[str] = set()
    other: set[str] = set()
    for obj in classes or ():
        decoded = decode_device_class(obj) if isinstance(obj, dict) else None
        if decoded is not None:
            (gpu if decoded.selects_gpus else other).add(decoded.name)
    claim_map = {k: claim_classes(o) for o in claims or () if isinstance(o, dict) and (k := _key(o)) is not None}
    template_map = {k: template_classes(o) for o in templates or ()
                    if isinstance(o, dict) and (k := _key(o)) is not None}
    return DraFacts(frozenset(gpu), frozenset(other), claim_map, template_map)


def dra_facts_of(snapshot: ClusterSnapshot) -> DraFacts | None:
    return dra_facts(snapshot.device_classes, snapshot.resource_claims, snapshot.resource_claim_templates)


def dra_objects(documents: Iterable[Any]) -> list[Mapping[str, Any]]:
    """The DeviceClasses, ResourceClaims and ResourceClaimTemplates among decoded documents and their Lists' items
    (what `lint` reads beside the pods)."""
    found: list[Mapping[str, Any]] = []
    for doc in documents:
        if not isinstance(doc, dict):
            continue
        items = doc.get("items") if is_list(doc) else [doc]
        if isinstance(items, list):
            found.extend(o for o in items if isinstance(o, dict) and o.get("kind") in DRA_KINDS)
    return found


def dra_facts_from_objects(objects: Iterable[Mapping[str, Any]]) -> DraFacts | None:
    """The facts of the DRA objects among `objects`; None when there is none."""
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    for obj in objects:
        kind = obj.get("kind")
        if isinstance(kind, str):
            by_kind.setdefault(kind, []).append(obj)
    if not any(k in by_kind for k in ("DeviceClass", "ResourceClaim", "ResourceClaimTemplate")):
        return None
    return dra_facts(by_kind.get("DeviceClass", []), by_kind.get("ResourceClaim", []),
                     by_kind.get("ResourceClaimTemplate", []))


# ---- the scheduler (VGC014) -------------------------------------------------------------------------

def _scheduler_containers(snapshot: ClusterSnapshot) -> list[Mapping[str, Any]]:
    found = []
    for obj in snapshot.deployments:
        pod_spec = _m(_m(_m(obj.get("spec")).get("template")).get("spec"))
        containers = pod_spec.get("containers")
        for c in containers if isinstance(containers, list) else ():
            image = _m(c).get("image")
            if isinstance(image, str) and image.split("@", 1)[0].rsplit("/", 1)[-1].partition(":")[0] == "vc-scheduler":
                found.append(_m(c))
    return found


def feature_gates(snapshot: ClusterSnapshot) -> dict[str, bool | None] | None:
    """The `--feature-gates` of the vc-scheduler Deployment's container (a gate set to what Go's ParseBool does not
    read: None); None when no vc-scheduler Deployment is in the snapshot (its flags are unknown)."""
    containers = _scheduler_containers(snapshot)
    if not containers:
        return None
    gates: dict[str, bool | None] = {}
    for c in containers:
        words = [w for part in ("command", "args") for w in (c.get(part) or []) if isinstance(w, str)]
        for text in words:
            for value in _GATES.findall(text):
                for pair in value.split(","):
                    name, _, setting = pair.partition("=")
                    if name.strip():
                        gates[name.strip()] = go_parse_bool(setting.strip())
        # `--feature-gates` and its value as two words
        for first, second in itertools.pairwise(words):
            if first == spec.FEATURE_GATES_FLAG:
                for pair in second.split(","):
                    name, _, setting = pair.partition("=")
                    if name.strip():
                        gates[name.strip()] = go_parse_bool(setting.strip())
    return gates


def api_server_version(snapshot: ClusterSnapshot) -> tuple[int, int] | None:
    """The API server's (major, minor): the snapshot's server version; else the newest kubelet's, a lower bound that
    decides only from 1.34 on (an API server is never older than its kubelets); else None."""
    if snapshot.server_version:
        try:
            v = parse_version(snapshot.server_version)
            return (v.major, v.minor)
        except VersionError:
            pass
    newest: tuple[int, int] | None = None
    for node in snapshot.nodes:
        text = node.kubelet_version
        if text:
            try:
                v = parse_version(text)
            except VersionError:
                continue
            if newest is None or (v.major, v.minor) > newest:
                newest = (v.major, v.minor)
    return newest if newest is not None and newest >= (1, 34) else None


def scheduler_dra(snapshot: ClusterSnapshot, version: Version | None) -> DraSupport | None:
    """Whether the Volcano of `snapshot` allocates DRA claims (`versions.dra_support`); None without a readable
    scheduler configuration. `version` None: the newest release, as the doctor assumes."""
    conf = snapshot.scheduler_conf
    if conf is None:
        return None
    v = version or NEWEST_VOLCANO
    predicates = conf.plugin(spec.PLUGIN_PREDICATES)
    args = predicates.arguments if predicates is not None else {}
    argument_set = spec.ARG_PREDICATE_DRA in args
    read = get_bool_strict if reads_dra_argument(v) else get_bool
    argument = read(args[spec.ARG_PREDICATE_DRA])[0] if argument_set else None
    gates = feature_gates(snapshot)
    gate = gates.get(spec.GATE_DRA) if gates is not None else None
    return dra_support(v, predicates=predicates is not None, argument=argument, argument_set=argument_set,
                       gate=gate, gates_known=gates is not None, cluster=api_server_version(snapshot))


def claiming_pods(snapshot: ClusterSnapshot, scheduler_names: tuple[str, ...]) -> list[Mapping[str, Any]]:
    """The pods with `spec.resourceClaims` that a Volcano scheduler places and that are not Succeeded/Failed."""
    found = []
    for pod in snapshot.pod_index.claiming():
        pod_spec = _m(pod.get("spec"))
        if pod_spec.get("schedulerName") not in scheduler_names:
            continue
        if _m(pod.get("status")).get("phase") in spec.DONE_POD_PHASES:
            continue
        found.append(pod)
    return found


__all__ = ["DEFAULT_NAMESPACE", "DRA_KINDS", "api_server_version", "claiming_pods", "dra_facts",
           "dra_facts_from_objects", "dra_facts_of", "dra_objects", "feature_gates", "namespace_of", "scheduler_dra"]
