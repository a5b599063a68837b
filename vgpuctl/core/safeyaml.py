"""YAML and JSON from users and the cluster: the one loader every input of vgpuctl goes through.

Pure: text (or bytes) in, plain values out. libyaml's parser (PyYAML's C loader, ~10x the pure-Python one)
with PyYAML's safe constructors, and two limits a hostile or mistaken document meets here, not in whatever
walks the result later:

* **Aliases.** An anchor (`&a`) and its aliases (`*a`) let a few hundred bytes stand for billions of nodes
  (a "billion laughs"). PyYAML builds such a document at once, one shared object per anchor, but every walk
  of the result (a line map, a JSON dump, a rule) expands it. A document is refused by the rule of
  gopkg.in/yaml.v2 (>= 2.2.8) and yaml.v3, the readers of Volcano and kubectl ("document contains excessive
  aliasing"): of the D nodes a decoder visits, A through an alias, refused when A > 100, D > 1,000 and A/D
  exceeds 99 % (D <= 400,000), falling linearly to 10 % at D >= 4,000,000. A real manifest with a few
  anchors is far below it; an alias to the node that holds it (an endless document) is refused too.
  Counting needs one pass over the nodes, made only when the text holds a `*` where libyaml could read an
  alias (`_MAY_ALIAS`): kubectl's output (no anchors, and `*` only inside scalars) costs nothing.
* **Depth.** libyaml refuses nesting deeper than 1,000 levels and orjson 1,024, but the Python that reads
  the result (repr in a finding, json.dumps, deepcopy) runs out of stack before that. `max_depth` (default
  `MAX_DEPTH`) refuses deeper documents; snapshots pass None (a walk of 75 MB would double their parse) and
  keep the parsers' limits.

A refused document is an `InputError` with `refused` set: `documents` yields it in the document's place
and reads on (the next document is fine to read), as it does for a document PyYAML parses but cannot build
values from (`!foo`, a date `2020-13-45`); a syntax error is raised (nothing after it can be read).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import orjson
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

MAX_DEPTH = 256
_ALIAS_FLOOR, _DECODED_FLOOR = 100, 1000  # yaml.v2: aliasCount > 100 && decodeCount > 1000
_RATIO_LOW, _RATIO_HIGH = 400_000, 4_000_000
# Where libyaml can read an alias: `*` and one of its anchor characters (scan_anchor: IS_ALPHA), at the
# start of the text or after a blank, a line break (NEL, LS, PS: their last UTF-8 byte), a byte-order mark,
# or one of the flow indicators `[ { , :` (after `- `, `? `, `: ` or a tag there is a blank). `*` inside a
# plain or quoted scalar (`.*pod`, `'*/5 * * * *'`, `/tmp/*`) is not one, so it costs no pass over the nodes.
# The `*` comes first so that the search runs at memchr speed (1 GB/s, not 30 MB/s); the look-behind after
# it also matches at the start of the text.
_MAY_ALIAS = re.compile(r"\*(?<![^\s\[{,:\ufeff]\*)[-0-9A-Za-z_]")
_MAY_ALIAS_BYTES = re.compile(rb"\*(?<![^\s\[{,:\x85\xa8\xa9\xbf]\*)[-0-9A-Za-z_]")
_COLLECTIONS = frozenset({dict, list, tuple})
_JSON_START = re.compile(r"\s*[{\[]")
_JSON_START_BYTES = re.compile(rb"\s*[{\[]")
_UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")  # libyaml reads these as UTF-16, where `*a` is not the bytes `*a`

try:  # libyaml: ~10x the pure-Python parser, and a nesting limit of its own
    _Base: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - PyYAML built without libyaml
    _Base = yaml.SafeLoader


_MERGE = "tag:yaml.org,2002:merge"


class _UniqueKeys(_Base):  # type: ignore[misc]
    """A mapping that names a key twice is refused, as kubectl and the API server refuse such a manifest
    (`key "x" already set in map`); PyYAML would keep the last value (`vgpu-memory: 3Gi` then `3072`).
    Merge keys (`<<`) may override what they merge, as YAML says. Only for manifests (`documents`): the YAML
    Volcano itself reads (the device config, `volcano-scheduler.conf`) goes through gopkg.in/yaml.v2's
    `Unmarshal`, which keeps the last value, so `load` reads it that way too."""

    def construct_mapping(self, node: Node, deep: bool = False) -> Any:
        if isinstance(node, MappingNode):
            seen: set[str] = set()
            for key_node, _ in node.value:
                if key_node.__class__ is ScalarNode and key_node.tag != _MERGE:
                    if key_node.value in seen:
                        raise yaml.constructor.ConstructorError(
                            None, None, f"duplicate key {key_node.value!r}: kubectl and the API server refuse "
                            "the object", key_node.start_mark)
                    seen.add(key_node.value)
        return super().construct_mapping(node, deep)


class _Loader(_Base):  # type: ignore[misc]
    """PyYAML's safe types, timestamps included (what `yaml.safe_load` gives)."""


class _TextTimes(_Base):  # type: ignore[misc]
    """Safe types without the timestamp type: Kubernetes times are strings, as they are in JSON.

    kubectl quotes its timestamps, but hand-edited snapshots often do not, and a `datetime` in one file and
    a `str` in another would make the cluster model depend on how the file was written.
    """


_TextTimes.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in _Base.yaml_implicit_resolvers.items()
}


class _UniqueLoader(_UniqueKeys, _Loader):
    pass


class _UniqueTextTimes(_UniqueKeys, _TextTimes):
    pass


def _loader_class(timestamps: bool, unique_keys: bool) -> Any:
    if unique_keys:
        return _UniqueLoader if timestamps else _UniqueTextTimes
    return _Loader if timestamps else _TextTimes


class InputError(yaml.YAMLError):
    """Why a text, or one document of it, cannot be used. `str()` is one line, with the position when known;
    `reason` is the same without it, and `line` (1-based) for a caller that shifts lines into a larger file.
    `refused` marks valid YAML/JSON over a limit (the documents after it can still be read)."""

    def __init__(self, kind: str, detail: str, line: int | None = None, column: int | None = None,
                 *, refused: bool = False) -> None:
        self.reason = f"{kind}: {detail}"
        self.line = line
        self.refused = refused
        where = f" at line {line}, column {column}" if line is not None and column is not None else (
            f" at line {line}" if line is not None else "")
        super().__init__(f"{kind}{where}: {detail}")


def _syntax(exc: yaml.YAMLError) -> InputError:
    mark = getattr(exc, "problem_mark", None)
    detail = getattr(exc, "problem", None) or getattr(exc, "reason", None) or str(exc).splitlines()[0]
    if mark is None:
        return InputError("not valid YAML", str(detail))
    return InputError("not valid YAML", str(detail), mark.line + 1, mark.column + 1)


def _count(n: int) -> str:
    return f"{n:,}" if n < 10**12 else "over a trillion"


def _allowed_ratio(decoded: int) -> float:
    """yaml.v2/v3 `allowedAliasRatio`: 99 % up to 400,000 nodes decoded, down to 10 % at 4,000,000."""
    if decoded <= _RATIO_LOW:
        return 0.99
    if decoded >= _RATIO_HIGH:
        return 0.10
    return 0.99 - 0.89 * (decoded - _RATIO_LOW) / (_RATIO_HIGH - _RATIO_LOW)


def _node_children(node: Node) -> list[Node] | None:
    """A collection node's children (a mapping's keys and values), None for a scalar."""
    value = node.value
    if isinstance(value, str):
        return None
    if isinstance(node, MappingNode):
        return [part for pair in value for part in pair]
    return list(value)


def _expansion(root: Node) -> tuple[int, int] | None:
    """(nodes written, nodes a decoder visits) of a composed document, aliases expanded; None when an alias
    refers to a node that contains it. One post-order pass over the collections, each expanded size counted
    once; scalars are counted where they are met, so an alias to a scalar counts as written (it adds one
    node, not an expansion: yaml.v2 would count it as one node through an alias)."""
    if isinstance(root, ScalarNode):
        return 1, 1
    size: dict[Node, int] = {}  # collections only; 0 while the node's children are being counted
    scalars = 0
    stack = [root]
    while stack:
        node = stack[-1]
        known = size.get(node)
        if known:
            stack.pop()
            continue
        children = _node_children(node) or []
        if known is None:
            size[node] = 0
            pending = False
            for child in children:
                if child.__class__ is ScalarNode:
                    scalars += 1
                elif (counted := size.get(child)) is None:
                    stack.append(child)
                    pending = True
                elif counted == 0:
                    return None  # a child still being counted is an ancestor: the alias closes a loop
            if pending:
                continue
        size[node] = 1 + sum(1 if child.__class__ is ScalarNode else size[child] for child in children)
        stack.pop()
    return len(size) + scalars, size[root]


def _alias_refusal(root: Node) -> InputError | None:
    line = root.start_mark.line + 1
    counted = _expansion(root)
    if counted is None:
        return InputError("refused", "an alias refers to the node that contains it (an endless document)",
                          line, refused=True)
    written, decoded = counted
    through_aliases = decoded - written
    if (through_aliases > _ALIAS_FLOOR and decoded > _DECODED_FLOOR
            and through_aliases / decoded > _allowed_ratio(decoded)):
        return InputError("refused", f"excessive aliasing: its {_count(written)} YAML nodes expand to "
                          f"{_count(decoded)} through anchors and aliases (a \"billion laughs\"; the YAML readers of "
                          "Volcano and kubectl refuse it too)", line, refused=True)
    return None


def _nodes_deeper_than(root: Node, limit: int) -> bool:
    """Whether collections nest more than `limit` deep in a node graph (a scalar: 0, `[]`: 1, `[[1]]`: 2)."""
    stack: list[tuple[Node, int]] = [(root, 0)] if not isinstance(root, ScalarNode) else []
    while stack:
        node, depth = stack.pop()
        if depth == limit:
            return True
        depth += 1
        for item in node.value:  # not `_node_children`: building its lists doubles the cost of this walk
            for child in item if isinstance(node, MappingNode) else (item,):
                if child.__class__ is not ScalarNode:
                    stack.append((child, depth))
    return False


def _values_deeper_than(root: Any, limit: int) -> bool:
    """`_nodes_deeper_than` for decoded JSON (dicts and lists; tuples for the odd YAML `!!pairs`)."""
    stack: list[tuple[Any, int]] = [(root, 0)] if root.__class__ in _COLLECTIONS else []
    while stack:
        value, depth = stack.pop()
        if depth == limit:
            return True
        depth += 1
        for child in value.values() if value.__class__ is dict else value:
            if child.__class__ in _COLLECTIONS:
                stack.append((child, depth))
    return False


def _too_deep(limit: int, line: int | None = None) -> InputError:
    return InputError("refused", f"nested deeper than {limit} levels", line, refused=True)


def _may_alias(text: str | bytes) -> bool:
    if isinstance(text, bytes):
        return _MAY_ALIAS_BYTES.search(text) is not None
    return _MAY_ALIAS.search(text) is not None


def _looks_like_json(text: str | bytes) -> bool:
    if isinstance(text, bytes):
        return _JSON_START_BYTES.match(text) is not None
    return _JSON_START.match(text) is not None


def _composed(text: str | bytes, timestamps: bool, max_depth: int | None, unique_keys: bool = False
              ) -> Iterator[tuple[Any, Node | InputError]]:
    """(the loader, each document's node or its refusal); a syntax error raises `InputError`."""
    if isinstance(text, bytes) and text.startswith(_UTF16_BOMS):
        try:
            text = text.decode("utf-16")  # so that `_may_alias` sees the characters
        except UnicodeDecodeError:
            raise InputError("not valid YAML", "a UTF-16 byte-order mark, then no UTF-16 text") from None
    may_alias = _may_alias(text)
    loader = _loader_class(timestamps, unique_keys)(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            refusal = _alias_refusal(node) if may_alias else None
            if refusal is None and max_depth is not None and _nodes_deeper_than(node, max_depth):
                refusal = _too_deep(max_depth, node.start_mark.line + 1)
            yield loader, refusal or node
    except yaml.YAMLError as exc:
        raise _syntax(exc) from None
    finally:
        loader.dispose()


def compose_documents(text: str, *, max_depth: int | None = MAX_DEPTH) -> Iterator[Node | InputError]:
    """Each document's node graph (for a caller that needs lines and styles), or its refusal."""
    for _, item in _composed(text, True, max_depth):
        yield item


def _constructed(loader: Any, node: Node) -> Any:
    """The values of `node`, or the `InputError` saying why PyYAML cannot make them: a tag it has no type for
    (`!foo`), an unhashable key, and values its resolvers claim but cannot build (`2020-13-45` as a date, an
    integer of more than 4,300 digits), which raise ValueError rather than a YAMLError."""
    try:
        return loader.construct_document(node)
    except (yaml.YAMLError, ValueError, OverflowError) as exc:
        mark = getattr(exc, "problem_mark", None) or node.start_mark
        detail = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        return InputError("not valid YAML", str(detail), mark.line + 1, mark.column + 1)


def construct(node: Node) -> Any:
    """The values of a node from `compose_documents`. Raises `InputError` when PyYAML cannot make them."""
    loader = _Loader("")
    try:
        value = _constructed(loader, node)
    finally:
        loader.dispose()
    if isinstance(value, InputError):
        raise value
    return value


def _json(text: str | bytes, max_depth: int | None) -> Any:
    value = orjson.loads(text)
    if max_depth is not None and _values_deeper_than(value, max_depth):
        return _too_deep(max_depth)
    return value


def documents(text: str | bytes, *, timestamps: bool = True, max_depth: int | None = MAX_DEPTH,
              unique_keys: bool = True) -> Iterator[Any]:
    """Each document of a JSON or (multi-document) YAML text, in order: its value (None for an empty YAML
    document) or, in its place, the `InputError` that refused it (or says why it has no values). Raises
    `InputError` for a text that is not valid YAML (or JSON, when it looks like JSON: YAML flow style is a
    superset, so a near-JSON text gets a second chance as YAML, and the JSON error is the one reported if
    that fails too)."""
    for located in _documents(text, timestamps, max_depth, unique_keys, located=False):
        yield located.value


@dataclass(frozen=True, slots=True)
class Located:
    """A document's value (or refusal) with where it starts in the text: `line` (1-based) of the document's
    first node, and for a mapping whose `items` is a sequence (a List) the line of each item — both as a
    reader sees them in an editor. A JSON text is one document; its items carry no lines."""

    value: Any
    line: int | None = None
    item_lines: tuple[int, ...] = ()
    from_yaml: bool = False  # read as YAML (its nodes can be composed again for the lines inside it)


def located_documents(text: str | bytes, *, max_depth: int | None = MAX_DEPTH) -> Iterator[Located]:
    """`documents`, each with where it starts (`lint`'s `file:line`)."""
    return _documents(text, True, max_depth, True, located=True)


def _documents(text: str | bytes, timestamps: bool, max_depth: int | None, unique_keys: bool, *,
               located: bool) -> Iterator[Located]:
    json_error: InputError | None = None
    if _looks_like_json(text):
        try:
            value = _json(text, max_depth)
            yield Located(value, _first_line(text) if located else None)
            return
        except orjson.JSONDecodeError as exc:
            json_error = InputError("not valid JSON", str(exc))
    try:
        for loader, item in _composed(text, timestamps, max_depth, unique_keys):
            if isinstance(item, InputError):
                yield Located(item, item.line)
            elif located:
                yield Located(_constructed(loader, item), item.start_mark.line + 1, _item_lines(item), True)
            else:
                yield Located(_constructed(loader, item))
    except InputError:
        if json_error is not None:
            raise json_error from None
        raise


def _first_line(text: str | bytes) -> int:
    stripped = text.lstrip()
    skipped = text[: len(text) - len(stripped)]
    return 1 + (skipped.count(b"\n") if isinstance(skipped, bytes) else skipped.count("\n"))


def _item_lines(root: Node) -> tuple[int, ...]:
    if not isinstance(root, MappingNode):
        return ()
    for key, value in root.value:
        if isinstance(key, ScalarNode) and key.value == "items" and isinstance(value, SequenceNode):
            return tuple(item.start_mark.line + 1 for item in value.value)
    return ()


def load_all(text: str | bytes, *, timestamps: bool = True, max_depth: int | None = MAX_DEPTH) -> list[Any]:
    """Every document, empty ones dropped; the first refusal raised."""
    values: list[Any] = []
    for value in documents(text, timestamps=timestamps, max_depth=max_depth):
        if isinstance(value, InputError):
            raise value
        if value is not None:
            values.append(value)
    return values


def compose(text: str, *, max_depth: int | None = MAX_DEPTH) -> Node | None:
    """The node graph of the one YAML document of `text` (None when empty). Raises `InputError` for a text
    that is not valid YAML, holds several documents, or is refused."""
    found: list[Node] = []
    for _, item in _composed(text, True, max_depth):
        if isinstance(item, InputError):
            raise item
        found.append(item)
        if len(found) > 1:
            raise InputError("not valid YAML", "expected a single document, found another",
                             item.start_mark.line + 1, item.start_mark.column + 1)
    return found[0] if found else None


def load(text: str, *, max_depth: int | None = MAX_DEPTH) -> Any:
    """The one YAML document of `text` (None when empty), as `yaml.safe_load` reads it, within the limits.
    Raises `InputError` (a `yaml.YAMLError`) as `compose` does."""
    node = compose(text, max_depth=max_depth)
    return None if node is None else construct(node)
