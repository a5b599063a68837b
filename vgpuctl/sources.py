"""Reading manifests and device configs from files, directories and stdin (an adapter: I/O only).

Turns paths into `Document`s for the pure core. A path that cannot be read is a usage error (exit 2);
a file that is read but is not valid YAML/JSON becomes a document carrying the error, which `lint`
reports as VGL001 so one bad file never hides the others.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import yaml

from vgpuctl.core.deviceconfig import (
    DeviceConfig,
    DeviceConfigDocumentError,
    parse_device_config,
    payload_from_document,
)
from vgpuctl.core.lintreport import Document
from vgpuctl.errors import UsageError

try:  # the C loader is ~10× faster on large manifests and snapshots
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - libyaml missing
    _Loader = yaml.SafeLoader

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")


def read_text(path: str, stdin: IO[str] | None = None) -> str:
    if path == "-":
        return (stdin or sys.stdin).read()
    try:
        return Path(path).read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise UsageError(f"{path}: no such file or directory") from exc
    except IsADirectoryError as exc:
        raise UsageError(f"{path}: is a directory") from exc
    except PermissionError as exc:
        raise UsageError(f"{path}: permission denied") from exc
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}: not a UTF-8 text file") from exc
    except OSError as exc:
        raise UsageError(f"{path}: {exc.strerror or exc}") from exc


def parse_documents(text: str, source: str) -> list[Document]:
    """All documents in a YAML (multi-document) or JSON text; empty documents are dropped."""
    stripped = text.lstrip()
    if stripped.startswith(("{", "[")):
        try:
            return [Document(f"{source}:0", json.loads(text))]
        except json.JSONDecodeError:
            pass  # YAML flow style is a superset; let the YAML parser have a go
    docs: list[Document] = []
    try:
        for index, obj in enumerate(yaml.load_all(text, Loader=_Loader)):
            if obj is not None:
                docs.append(Document(f"{source}:{index}", obj))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        docs.append(Document(f"{source}:{len(docs)}", None, f"not valid YAML{where}: {problem}"))
    return docs


def _walk(path: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(MANIFEST_SUFFIXES) and not name.startswith("."):
                yield Path(root) / name


def read_manifests(paths: list[str], stdin: IO[str] | None = None) -> list[Document]:
    documents: list[Document] = []
    for raw in paths:
        if raw != "-" and Path(raw).is_dir():
            files = list(_walk(Path(raw)))
            if not files:
                raise UsageError(f"{raw}: directory holds no .yaml, .yml or .json files")
            for file in files:
                documents.extend(parse_documents(read_text(str(file)), str(file)))
        else:
            documents.extend(parse_documents(read_text(raw, stdin), "<stdin>" if raw == "-" else raw))
    return documents


def load_device_config(path: str, stdin: IO[str] | None = None) -> DeviceConfig:
    """A device config from a ConfigMap manifest or a bare payload, as Volcano would parse it."""
    docs = parse_documents(read_text(path, stdin), path)
    if not docs:
        raise UsageError(f"{path}: empty file, expected a device ConfigMap or device-config.yaml")
    if docs[0].error:
        raise UsageError(f"{path}: {docs[0].error}")
    try:
        payload = payload_from_document(docs[0].obj)
    except DeviceConfigDocumentError as exc:
        raise UsageError(f"{path}: {exc}") from exc
    parsed = parse_device_config(payload)
    if parsed.config is None:
        details = "; ".join(f"{p.path}: {p.message}" for p in parsed.problems[:5])
        raise UsageError(f"{path}: Volcano would reject this device config and fall back to its built-in "
                         f"defaults: {details}")
    return parsed.config
