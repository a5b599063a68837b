"""Finding the device config in an input text, and where each of its values sits in that text.

A geometry input is a ConfigMap manifest (the payload is the string under `data["device-config.yaml"]`)
or a bare `device-config.yaml` payload, possibly among other documents of a multi-document file. To
point a finding at a line, the YAML is composed into nodes and every JSON path of the payload
(`nvidia.knownMigGeometries[1].models[3]`) is mapped to its 1-based line; for a ConfigMap whose payload
is a literal block scalar (`|`, as every upstream one is) the lines are shifted into the manifest.

Pure: text in, data out (YAML composition is computation, not I/O), through `vgpuctl.core.safeyaml`: a
document its limits refuse (an alias bomb, nesting too deep) is an unreadable payload, VGM002 with the reason.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import yaml

from vgpuctl.core import spec
from vgpuctl.core.safeyaml import InputError, compose, compose_documents, construct

ROOT = "$"
_PLAIN_KEY = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]*$")
_PARENT = re.compile(r"^(.*?)(?:\.[A-Za-z_][A-Za-z0-9_-]*|\[[^\]]*\])$")


def join_path(parent: str, key: str | int) -> str:
    """The JSON path of `key` under `parent`, in the style `parse_device_config` reports problems."""
    if isinstance(key, int):
        return f"{parent}[{key}]"
    step = key if _PLAIN_KEY.match(key) else f"[{json.dumps(key)}]"
    if parent == ROOT:
        return step
    return f"{parent}.{step}" if _PLAIN_KEY.match(key) else f"{parent}{step}"


def parent_path(path: str) -> str | None:
    if path == ROOT:
        return None
    match = _PARENT.match(path)
    return (match.group(1) or ROOT) if match else ROOT


def line_for(lines: Mapping[str, int], path: str) -> int | None:
    """The line of `path`, or of its nearest ancestor that has one (an absent key → its section)."""
    current: str | None = path
    while current is not None:
        if current in lines:
            return lines[current]
        current = parent_path(current)
    return None


def _map_lines(node: yaml.Node, path: str, offset: int, lines: dict[str, int]) -> None:
    lines.setdefault(path, node.start_mark.line + 1 + offset)
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            if not isinstance(key_node, yaml.ScalarNode):
                continue
            child = join_path(path, key_node.value)
            lines.setdefault(child, key_node.start_mark.line + 1 + offset)
            _map_lines(value_node, child, offset, lines)
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            _map_lines(item, join_path(path, index), offset, lines)


def _error_line(exc: InputError, offset: int) -> int | None:
    return exc.line + offset if exc.line is not None else None


@dataclass(frozen=True, slots=True)
class DeviceConfigSource:
    """One device config found in an input: its payload (YAML-decoded) and where its values are."""

    source: str
    payload: Any = None
    lines: Mapping[str, int] = field(default_factory=dict)
    error: str | None = None  # the payload cannot be read at all (bad YAML, not a string)
    error_line: int | None = None
    configmap: Mapping[str, Any] | None = None  # the manifest, when the input is a ConfigMap
    missing_key: bool = False  # a ConfigMap without `device-config.yaml` (Volcano: built-in defaults)

    @property
    def configmap_subject(self) -> str:
        meta = (self.configmap or {}).get("metadata") or {}
        return f"configmap/{meta.get('namespace') or '-'}/{meta.get('name') or '?'}"


def parse_payload_text(text: str, source: str, offset: int = 0, configmap: Mapping[str, Any] | None = None
                       ) -> DeviceConfigSource:
    """A `device-config.yaml` payload given as text; `offset` shifts its lines into the enclosing file."""
    try:
        node = compose(text)
        payload = None if node is None else construct(node)
    except InputError as exc:
        return DeviceConfigSource(source, error=exc.reason, error_line=_error_line(exc, offset), configmap=configmap)
    lines: dict[str, int] = {}
    if node is not None:
        _map_lines(node, ROOT, offset, lines)
    return DeviceConfigSource(source, payload, lines, configmap=configmap)


def _node_at(node: yaml.Node, *keys: str) -> yaml.Node | None:
    for key in keys:
        if not isinstance(node, yaml.MappingNode):
            return None
        found = next((v for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == key), None)
        if found is None:
            return None
        node = found
    return node


def _from_configmap(obj: Mapping[str, Any], node: yaml.Node, source: str) -> DeviceConfigSource:
    data = obj.get("data")
    if not isinstance(data, Mapping) or spec.DEVICE_CONFIG_KEY not in data:
        return DeviceConfigSource(source, configmap=obj, missing_key=True,
                                  error_line=node.start_mark.line + 1)
    text = data[spec.DEVICE_CONFIG_KEY]
    value_node = _node_at(node, "data", spec.DEVICE_CONFIG_KEY)
    if not isinstance(text, str):
        line = value_node.start_mark.line + 1 if value_node is not None else None
        return DeviceConfigSource(source, error=f"data[{spec.DEVICE_CONFIG_KEY!r}] must be a string",
                                  error_line=line, configmap=obj)
    if isinstance(value_node, yaml.ScalarNode) and value_node.style == "|":
        return parse_payload_text(text, source, value_node.start_mark.line + 1, obj)
    parsed = parse_payload_text(text, source, 0, obj)
    # A quoted or folded payload: its own line numbers mean nothing in the manifest.
    line = value_node.start_mark.line + 1 if value_node is not None else None
    return DeviceConfigSource(source, parsed.payload, {}, parsed.error, line if parsed.error else None, obj)


def find_device_configs(text: str, source: str) -> list[DeviceConfigSource]:
    """Every device config in `text`: ConfigMaps carrying `device-config.yaml` and bare payloads.

    Documents of other kinds are skipped. A ConfigMap without the key counts only when the input holds
    no other device config (a multi-document plugin manifest also carries its node-config ConfigMap).
    """
    try:
        nodes = list(compose_documents(text))
    except InputError as exc:
        return [DeviceConfigSource(source, error=exc.reason, error_line=exc.line)]
    found: list[DeviceConfigSource] = []
    keyless: list[DeviceConfigSource] = []
    for index, node in enumerate(nodes):
        name = source if len(nodes) == 1 else f"{source}:{index}"
        try:
            if isinstance(node, InputError):
                raise node
            obj = construct(node)
        except InputError as exc:  # refused or unbuildable: what it was is not known, so it counts as unreadable
            found.append(DeviceConfigSource(name, error=exc.reason, error_line=exc.line))
            continue
        if isinstance(obj, Mapping) and obj.get("kind") == "ConfigMap":
            candidate = _from_configmap(obj, node, name)
            (keyless if candidate.missing_key else found).append(candidate)
        elif isinstance(obj, Mapping) and ("kind" in obj or "apiVersion" in obj):
            continue  # another Kubernetes object (DaemonSet, ServiceAccount, …)
        else:
            lines: dict[str, int] = {}
            _map_lines(node, ROOT, 0, lines)
            found.append(DeviceConfigSource(name, obj, lines))
    return found or keyless
