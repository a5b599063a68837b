"""Kubernetes Lists: `kind: List` (what `kubectl get -o yaml` prints) and the typed lists one resource's list
call returns (`PodList`, `ConfigMapList`, …, whose items may carry no `kind` or `apiVersion`).

kubectl treats every kind ending in `List` that has `items` as a list (apimachinery's `meta.IsListType`);
`lint` and snapshot files both read lists through here, so a `PodList` is never an object of its own in one
and a list in the other. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def is_list(obj: Mapping[str, Any]) -> bool:
    """A List of any kind: `kind` ends in `List` and there is an `items` key (its value may still be wrong)."""
    kind = obj.get("kind")
    return isinstance(kind, str) and kind.endswith("List") and "items" in obj


def item_defaults(obj: Mapping[str, Any]) -> tuple[str | None, str | None]:
    """The kind and apiVersion a typed List (`NodeList`) gives the items that lack them; none for `List`."""
    kind = str(obj.get("kind", ""))[: -len("List")]
    api_version = obj.get("apiVersion")
    if not kind:
        return None, None
    return kind, api_version if isinstance(api_version, str) else None


def with_defaults(item: Mapping[str, Any], kind: str | None, api_version: str | None) -> Mapping[str, Any]:
    """`item` as an object of its own: the List's item kind and apiVersion first when it has no kind."""
    if kind is None or "kind" in item:
        return item
    head = {"apiVersion": api_version, "kind": kind} if api_version else {"kind": kind}
    return {**head, **item}
