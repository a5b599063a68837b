"""Where in its file a lint finding is: the line of the field its subject names (a container, an annotation, a
path such as `spec.initContainers[0]`), as kubeconform and kube-linter place theirs, or the object's own line.

The subject is read back into a JSON pointer with the pod templates `podrules.targets` finds (`task/<name>/`,
`template/`), then followed through the document's YAML nodes as far as it goes. Only the lines of an object with
findings are composed again. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from yaml.nodes import MappingNode, Node, SequenceNode

from vgpuctl.core.patch import Pointer
from vgpuctl.core.podrules.targets import as_list, as_mapping, pod_targets
from vgpuctl.core.safeyaml import InputError, compose_documents

_CONTAINERS = {"container": "containers", "initContainer": "initContainers",
               "ephemeralContainer": "ephemeralContainers"}
_META = {"annotation": "annotations", "label": "labels"}
_TOKEN = re.compile(r"([^.\[\]]+)|\[([^\]]*)\]")


def subject_pointer(obj: Mapping[str, Any], subject: str) -> Pointer:
    """The JSON pointer (from the object's top) of what `subject` names, as far as it can be told."""
    targets = pod_targets(obj) or []
    target = max((t for t in targets if subject.startswith(t.subject_prefix)), default=None,
                 key=lambda t: len(t.subject_prefix))
    if target is None:  # named from the object's top (a Volcano Job's own labels: VGW001)
        return _path(subject) if subject.startswith(("spec.", "metadata.")) else ()
    rest = subject[len(target.subject_prefix):]
    head, _, tail = rest.partition("/")
    if head in _CONTAINERS and tail:
        listed = as_list(as_mapping(target.spec).get(_CONTAINERS[head]))
        index = next((i for i, c in enumerate(listed) if as_mapping(c).get("name") == tail), None)
        return (*target.pointer, "spec", _CONTAINERS[head], *((index,) if index is not None else ()))
    if head in _META and tail:
        return (*target.pointer, "metadata", _META[head], tail)
    if rest.startswith(("spec.", "metadata.")):
        # a path inside the pod (with a template prefix) or, without one, from the object's top
        return (*(target.pointer if target.subject_prefix else ()), *_path(rest))
    return target.pointer


def _path(dotted: str) -> Pointer:
    """`spec.initContainers[0]` → ("spec", "initContainers", 0); `metadata.labels[a.b]` → (…, "labels", "a.b")."""
    tokens = (name or key for name, key in _TOKEN.findall(dotted))
    return tuple(int(token) if token.isdigit() else token for token in tokens)


def _line(node: Node, pointer: Pointer) -> int:
    """The line (1-based) of the deepest node `pointer` reaches: a mapping entry at its key."""
    line = node.start_mark.line + 1
    for token in pointer:
        if isinstance(node, MappingNode):
            found = next(((k, v) for k, v in node.value if getattr(k, "value", None) == str(token)), None)
            if found is None:
                break
            line, node = found[0].start_mark.line + 1, found[1]
        elif isinstance(node, SequenceNode) and isinstance(token, int) and 0 <= token < len(node.value):
            node = node.value[token]
            line = node.start_mark.line + 1
        else:
            break
    return line


class FieldLines:
    """The lines of findings' subjects in YAML texts. Only the lines of an object with findings are composed
    again (its span of the text), so a large input with few findings costs little more than its first read."""

    def __init__(self) -> None:
        self._starts: dict[int, tuple[str, list[int]]] = {}
        self._last: tuple[tuple[int, tuple[int, int]], Node | None] | None = None  # the object being asked about

    def _offsets(self, text: str) -> list[int]:
        """Where each line of `text` starts (the text kept with them, so its id stays its own)."""
        key = id(text)
        if key not in self._starts:
            starts = [0]
            at = text.find("\n")
            while at != -1:
                starts.append(at + 1)
                at = text.find("\n", at + 1)
            self._starts[key] = (text, starts)
        return self._starts[key][1]

    def line(self, text: str, span: tuple[int, int], item: bool, obj: Mapping[str, Any], subject: str) -> int | None:
        """The line in `text` of `subject` in the object written on lines `span` (first, next after it; a List's
        `item` starts with its `- `); None when those lines cannot be read alone (an alias to another object)."""
        key = (id(text), span)
        if self._last is None or self._last[0] != key:  # the findings of one object ask one after another
            self._last = (key, self._compose(text, span, item))
        node = self._last[1]
        return None if node is None else span[0] - 1 + _line(node, subject_pointer(obj, subject))

    def _compose(self, text: str, span: tuple[int, int], item: bool) -> Node | None:
        starts = self._offsets(text)
        first, after = span
        chunk = text[starts[first - 1]:starts[after - 1] if after - 1 < len(starts) else len(text)]
        try:
            node = next((n for n in compose_documents(chunk, max_depth=None) if isinstance(n, Node)), None)
        except InputError:
            return None
        if item and isinstance(node, SequenceNode):
            return node.value[0] if node.value else None
        return node


def lines_of(field_lines: FieldLines, text: str, span: tuple[int, int] | None, item: bool, obj: Mapping[str, Any],
             subjects: Sequence[str]) -> tuple[int | None, ...]:
    if not text or span is None:
        return ()
    return tuple(field_lines.line(text, span, item, obj, subject) for subject in subjects)
