"""Snapshot files: a cluster's objects on disk (an adapter: file I/O only).

A snapshot is what `kubectl get <SNAPSHOT_KINDS> -A -o yaml` prints (`KUBECTL_SNAPSHOT`) — a `kind: List` —
or the same as JSON, or multi-document YAML, any of them gzip-compressed (docs/contracts.md#interfaces)
(without `runtimeclasses` or the DRA kinds too: the checks that need them then skip). Users
can make one without installing vgpuctl, and `doctor --snapshot` reads it exactly as the live reader's
output, so every cluster check is testable from files. `vgpuctl snapshot save` writes the same shape plus
the API server version in the List annotation `vgpuctl.io/server-version` and the kinds it listed in
`vgpuctl.io/kinds` (`Node,Pod,…,RuntimeClass`), so a check can tell "none exist" from "not collected".

Secrets are dropped on load and never written: a snapshot is meant to be attached to support cases.
Every other kind is kept; the cluster model picks the kinds it understands.

A snapshot is read up to `sources.SNAPSHOT_LIMIT` (256 MiB, `VGPUCTL_MAX_SNAPSHOT_SIZE`; after gzip
decompression too) and parsed by `vgpuctl.core.safeyaml` (aliases limited; nesting as deep as libyaml and
orjson allow). A file that holds no Node is not a snapshot (a Pod manifest given by mistake would otherwise be
"a cluster without Volcano"), unless `vgpuctl.io/kinds` says the Nodes were listed and there were none.
"""

from __future__ import annotations

import gc
import io
import os
import sys
import zlib
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import orjson
import yaml

from vgpuctl.core.kubelist import is_list, item_defaults, with_defaults
from vgpuctl.core.safeyaml import InputError, load_all
from vgpuctl.errors import UsageError
from vgpuctl.sources import SNAPSHOT_LIMIT, read_bytes, read_capped

SERVER_VERSION_ANNOTATION = "vgpuctl.io/server-version"
KINDS_ANNOTATION = "vgpuctl.io/kinds"
_GZIP_MAGIC = b"\x1f\x8b"
_DROPPED_KINDS = frozenset({"Secret"})
# Objects a `gc_paused` block must have made before they are frozen (a parsed 5,000-node snapshot: ~3 million).
FREEZE_THRESHOLD = 100_000

try:  # libyaml writes a 40,000-pod snapshot ~10x faster than the pure-Python emitter
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Dumper = yaml.SafeDumper
#: What a snapshot holds, as `kubectl get` names it: what the cluster model reads, the DRA kinds included.
SNAPSHOT_KINDS = ("nodes", "pods", "configmaps", "daemonsets", "deployments", "runtimeclasses", "resourceslices",
                  "deviceclasses", "resourceclaims", "resourceclaimtemplates")
KUBECTL_SNAPSHOT = f"kubectl get {','.join(SNAPSHOT_KINDS)} -A -o yaml"
_KUBECTL = KUBECTL_SNAPSHOT


@dataclass(frozen=True)
class SnapshotData:
    """The objects of a snapshot (plain dicts, each with apiVersion and kind) and the server version."""

    objects: list[dict[str, Any]]
    server_version: str | None = None
    kinds: frozenset[str] | None = None  # the kinds that were listed, when known (None: a plain kubectl file)


def _decompress(raw: bytes, name: str) -> bytes:
    if not raw.startswith(_GZIP_MAGIC):
        return raw  # a `.gz` name on a plain file is forgiven: the bytes decide
    import gzip  # local, as tempfile: a plain snapshot needs neither (~2.4 ms of start-up, benchmarks/scale.py)

    limit = SNAPSHOT_LIMIT.bytes()
    try:
        with gzip.GzipFile(fileobj=io.BytesIO(raw)) as unzipped:
            data = read_capped(unzipped, limit)
    except (OSError, EOFError, zlib.error) as exc:
        raise UsageError(f"{name}: not a valid gzip file: {exc}") from None
    if data is None:  # a gzip bomb stops here too
        raise SNAPSHOT_LIMIT.exceeded(name, limit, "decompresses to more than")
    return data


def _parse(raw: bytes, name: str) -> list[Any]:
    """The documents of a JSON or (multi-document) YAML text, empty documents dropped."""
    try:
        return load_all(raw, timestamps=False, max_depth=None)
    except InputError as exc:
        raise UsageError(f"{name}: {exc}") from None


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        keys = ", ".join(str(k) for k in list(value)[:4])
        return f"a mapping with keys {keys}{'…' if len(value) > 4 else ''}" if value else "an empty mapping"
    names = {list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return names.get(type(value), f"a value of type {type(value).__name__}")


def _objects(docs: list[Any], name: str) -> SnapshotData:
    objects: list[dict[str, Any]] = []
    server_version: str | None = None
    kinds: set[str] | None = None

    def add(obj: Any, where: str, kind: str | None = None, api_version: str | None = None) -> None:
        if not isinstance(obj, dict):
            raise UsageError(f"{name}: {where} is {_describe(obj)}, expected a Kubernetes object")
        obj = with_defaults(obj, kind, api_version)
        if not isinstance(obj.get("kind"), str):
            raise UsageError(f"{name}: {where} has no kind (found {_describe(obj)}), "
                               "expected Kubernetes objects with apiVersion and kind")
        if obj["kind"] not in _DROPPED_KINDS:
            objects.append(obj)

    for index, doc in enumerate(docs):
        where = f"document {index + 1}" if len(docs) > 1 else "the document"
        if isinstance(doc, list):  # a bare JSON array of objects
            for position, item in enumerate(doc):
                add(item, f"item {position + 1} of {where}")
        elif isinstance(doc, dict) and is_list(doc) and isinstance(doc["items"], list):
            annotations = (doc.get("metadata") or {}).get("annotations") or {}
            version = annotations.get(SERVER_VERSION_ANNOTATION)
            if isinstance(version, str) and version and server_version is None:
                server_version = version
            listed = annotations.get(KINDS_ANNOTATION)
            if isinstance(listed, str):
                kinds = (kinds or set()) | {k.strip() for k in listed.split(",") if k.strip()}
            kind, api_version = item_defaults(doc)
            items = doc["items"]
            if kind is None and _kept_as_they_are(items, objects):
                continue
            for position, item in enumerate(items):
                add(item, f"item {position + 1} of the {doc['kind']} in {where}", kind, api_version)
        elif isinstance(doc, dict) and "kind" in doc:
            add(doc, where)
        else:
            raise UsageError(f"{name}: {where} is {_describe(doc)}, expected a Kubernetes List ({_KUBECTL})")
    return SnapshotData(objects, server_version, frozenset(kinds) if kinds is not None else None)


def _kept_as_they_are(items: list[Any], objects: list[dict[str, Any]]) -> bool:
    """A plain `List` of well-formed objects (what kubectl and `snapshot save` write): its items but the dropped
    kinds added to `objects` in one sweep, True; False (and `objects` as it was) at the first item that is not
    an object with a string kind. `add` per item was a tenth of `doctor` (benchmarks/doctor_scale.py), a sweep to
    check and another to keep 0.12 s of 150,000 pods (benchmarks/scale.py)."""
    start = len(objects)
    dropped = _DROPPED_KINDS
    for item in items:
        if type(item) is not dict or type(kind := item.get("kind")) is not str:
            del objects[start:]
            return False
        if kind not in dropped:
            objects.append(item)
    return True


def _plural(count: int, kind: str) -> str:
    if count == 1:
        return f"1 {kind}"
    if kind.endswith(("s", "x", "ch", "sh")):
        return f"{count} {kind}es"
    if kind.endswith("y") and kind[-2:-1] not in "aeiou":
        return f"{count} {kind[:-1]}ies"
    return f"{count} {kind}s"


def _require_nodes(data: SnapshotData, name: str) -> None:
    """A snapshot holds Nodes, or says it listed them (`vgpuctl.io/kinds`) and there were none: a Pod manifest
    given by mistake is not "a cluster without Volcano". Nodes come first in kubectl's and vgpuctl's output."""
    if (data.kinds is not None and "Node" in data.kinds) or any(obj["kind"] == "Node" for obj in data.objects):
        return
    counts = sorted(Counter(obj["kind"] for obj in data.objects).items(), key=lambda kc: (-kc[1], kc[0]))
    if not counts:
        raise UsageError(f"{name} holds no Kubernetes object: not a cluster snapshot ({_KUBECTL} > cluster.yaml)")
    shown = [_plural(count, kind) for kind, count in counts[:3]]
    rest = sum(count for _, count in counts[3:])
    if rest:
        shown.append(f"{rest} other object{'s' if rest > 1 else ''}")
    raise UsageError(f"{name} holds {', '.join(shown)} and no Node: not a cluster snapshot "
                     f"({_KUBECTL} > cluster.yaml)")


@contextmanager
def gc_paused(freeze_threshold: int = FREEZE_THRESHOLD) -> Iterator[None]:
    """Keep Python's cycle collector off while a snapshot becomes objects, then leave those objects out of
    its later passes.

    A parsed snapshot is millions of dicts and lists (JSON has no cycles), yet each allocation counts
    towards a collection and each older-generation collection walks everything alive: with the collector
    on, parsing a 116 MB snapshot takes three times as long as the parse itself (2.4 s instead of 0.7 s).
    When the block made more than `freeze_threshold` objects (`FREEZE_THRESHOLD` unless given) they are moved
    to the collector's permanent generation (`gc.freeze`), so the rest of the command's collections skip them
    too; they are still freed by reference counting like any object. Nested blocks leave it to the outermost
    one, threshold included.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            if gc.get_count()[0] >= freeze_threshold:
                gc.freeze()
                global _froze_big_load
                _froze_big_load = True
            gc.enable()


_froze_big_load = False


def froze_a_big_load() -> bool:
    """Whether this process loaded a snapshot large enough to be frozen out of the collector."""
    return _froze_big_load


def load_snapshot(path: str, *, stdin: IO[bytes] | None = None) -> SnapshotData:
    """Read a snapshot file (`-` for stdin). Raises `UsageError` with a one-line message on bad input."""
    name = "<stdin>" if path == "-" else path
    raw = _decompress(read_bytes(path, SNAPSHOT_LIMIT, stdin=stdin), name)
    with gc_paused():
        docs = _parse(raw, name)
        del raw
        if not docs:
            raise UsageError(f"{name}: empty file, expected a Kubernetes List ({_KUBECTL})")
        data = _objects(docs, name)
        _require_nodes(data, name)
        return data


def snapshot_document(data: SnapshotData) -> dict[str, Any]:
    """The `kind: List` that `save_snapshot` writes, Secrets removed."""
    annotations: dict[str, str] = {}
    if data.server_version:
        annotations[SERVER_VERSION_ANNOTATION] = data.server_version
    if data.kinds is not None:
        annotations[KINDS_ANNOTATION] = ",".join(sorted(data.kinds))
    metadata: dict[str, Any] = {"annotations": annotations} if annotations else {}
    items = [obj for obj in data.objects if obj.get("kind") not in _DROPPED_KINDS]
    return {"apiVersion": "v1", "kind": "List", "metadata": metadata, "items": items}


def _encode(document: dict[str, Any], name: str) -> bytes:
    if name.removesuffix(".gz").endswith(".json"):
        body: bytes = orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)
    else:
        body = yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True,
                         default_flow_style=False, width=1 << 16, encoding="utf-8")
    if name.endswith(".gz"):
        import gzip

        body = gzip.compress(body, compresslevel=6, mtime=0)  # level 9 is 3x slower for ~2% smaller
    return body


def save_snapshot(path: str, data: SnapshotData, *, stdout: IO[bytes] | None = None) -> None:
    """Write `data` as a List: JSON if the name ends in .json, gzip if in .gz, YAML otherwise; `-` is stdout.

    The file is written to a temporary name and renamed, so a failed save never leaves half a snapshot,
    and it is created private (0600): pod specs may carry plain-text credentials in their env.
    """
    body = _encode(snapshot_document(data), path)
    if path == "-":
        (stdout or sys.stdout.buffer).write(body)
        return
    import tempfile

    target = Path(path)
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except FileNotFoundError:
        raise UsageError(f"{path}: cannot write: directory {target.parent} does not exist") from None
    except OSError as exc:
        raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(body)
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        raise UsageError(f"{path}: cannot write: {exc.strerror or exc}") from None
