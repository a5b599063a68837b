"""RFC 6902 JSON Patch helpers for the mutating defaults.

Defaults only ever add. RFC 6902 `add` on an existing object member replaces it, which is what the one
overwrite we do (`schedulerName: default-scheduler`) needs, so every op is an `add`. Parent objects that
are missing are added whole, because `add` cannot create intermediate members.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from vgpuctl.core.memo import store

Pointer = tuple[str | int, ...]
PatchOp = dict[str, Any]


def escape_token(token: str | int) -> str:
    """RFC 6901: `~` → `~0`, `/` → `~1` (annotation keys like `volcano.sh/vgpu-number`)."""
    text = token if type(token) is str else str(token)
    return text.replace("~", "~0").replace("/", "~1") if "~" in text or "/" in text else text


class _TokenTexts(dict[str | int, str]):
    """Each pointer token's escaped text, remembered per token: the same few names and indexes make up every
    patch path, and a lookup from C (`map`) costs far less than a Python call per token. Tokens come from
    user input (resource names), so the memo is cleared when it grows past a bound. (A bool is never a
    token: `True` would find the text of `1`.)"""

    def __missing__(self, token: str | int) -> str:
        return store(self, token, escape_token(token))


_token_text = _TokenTexts().__getitem__


def pointer(tokens: Iterable[str | int]) -> str:
    parts = list(map(_token_text, tokens))
    return "/" + "/".join(parts) if parts else ""


def add_ops(document: Any, additions: Sequence[tuple[Pointer, Any]]) -> list[PatchOp]:
    """Ops that add each `(path, value)` to `document`, creating missing parent objects.

    Additions under a parent that is itself missing are merged into one op that adds the parent, so
    the patch applies cleanly in order and stays short.
    """
    ops: list[PatchOp] = []
    created: dict[Pointer, dict[str, Any]] = {}  # missing parents we emitted, by path → their value
    for path, value in additions:
        # Find the deepest existing ancestor in the document (or one we created in this patch).
        node: Any = document
        depth = 0
        for i, token in enumerate(path[:-1]):
            next_token = path[i + 1]
            # The usual step, an object's member that is an object, is taken inline: a call per step costs more.
            child = node.get(token) if type(node) is dict and type(token) is str else None
            if type(child) is not dict or type(next_token) is not str:
                child = _child(node, token, next_token)
                if child is None:
                    break
            node = child
            depth += 1
        if depth == len(path) - 1:
            ops.append({"op": "add", "path": pointer(path), "value": value})
            continue
        # Build the missing part: path[depth] is the first missing member.
        missing_at: Pointer = path[: depth + 1]
        if missing_at in created:
            target = created[missing_at]
            for token in path[depth + 1 : -1]:
                target = target.setdefault(str(token), {})
            target[str(path[-1])] = value
            continue
        nested: Any = value
        for token in reversed(path[depth + 1 :]):
            nested = {str(token): nested}
        created[missing_at] = nested
        ops.append({"op": "add", "path": pointer(missing_at), "value": nested})
    return ops


def _child(node: Any, token: str | int, next_token: str | int) -> Any:
    """The member `token` of `node` if it can be indexed by `next_token` (a list for an int, an object
    for a name); None when it is missing or of the wrong type, so the caller replaces it whole."""
    child: Any = None
    if isinstance(token, int):
        if isinstance(node, list) and 0 <= token < len(node):
            child = node[token]
    elif type(node) is dict or isinstance(node, Mapping):  # dict first: skips the ABC check
        child = node.get(token)
    if isinstance(next_token, int):
        return child if isinstance(child, list) else None
    return child if type(child) is dict or isinstance(child, Mapping) else None
