"""Reading manifests and device configs from files, directories and stdin (an adapter: I/O only).

Every input a command names — a file, a device, a FIFO, `-` for stdin — is read up to a size cap and never
past it (`/dev/zero` stops there): `INPUT_LIMIT` (64 MiB, `VGPUCTL_MAX_INPUT_SIZE`) for manifests, device
configs and the like, `SNAPSHOT_LIMIT` (256 MiB, `VGPUCTL_MAX_SNAPSHOT_SIZE`) for snapshot files. The text
is then parsed by `vgpuctl.core.safeyaml`, with its alias and depth limits.

A path that cannot be read is a usage error (exit 2); a file that is read but is not valid YAML/JSON (or is
refused by a limit) becomes a document carrying the error, which `lint` reports as VGL001 so one bad file
never hides the others — and so does a file of a directory that cannot be read at all (binary, unreadable,
too large, not a regular file).
"""

from __future__ import annotations

import io
import os
import re
import stat
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

from vgpuctl.errors import UsageError

if TYPE_CHECKING:
    from vgpuctl.core.deviceconfig import DeviceConfig
    from vgpuctl.core.geometry.documents import DeviceConfigSource
    from vgpuctl.core.inputdoc import Document

MANIFEST_SUFFIXES = (".yaml", ".yml", ".json")
STDIN_NAME = "<stdin>"
_MIB = 1 << 20
_CHUNK = 16 * _MIB
_SIZE = re.compile(r"\s*(\d+)\s*(Ki|Mi|Gi)?\s*")
_UNITS = {None: 1, "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30}


def _show_size(n: int) -> str:
    for unit, name in ((1 << 30, "GiB"), (_MIB, "MiB"), (1 << 10, "KiB")):
        if n % unit == 0:
            return f"{n // unit} {name}"
    return f"{n} bytes"


@dataclass(frozen=True)
class SizeLimit:
    """The most vgpuctl reads from one input of a kind: `default` bytes unless the environment variable `env`
    says otherwise (bytes, or a number with Ki, Mi or Gi)."""

    env: str
    default: int
    what: str  # "one input", "a snapshot": where the message says it reads from

    def bytes(self) -> int:
        raw = os.environ.get(self.env)
        if raw is None or not raw.strip():
            return self.default
        match = _SIZE.fullmatch(raw)
        if match is None or int(match.group(1)) == 0:
            raise UsageError(f"{self.env}={raw}: expected a size in bytes, or with Ki, Mi or Gi (e.g. 512Mi)")
        return int(match.group(1)) * _UNITS[match.group(2)]

    def help(self) -> str:
        """For option help texts: `at most 64 MiB (VGPUCTL_MAX_INPUT_SIZE)`."""
        return f"at most {_show_size(self.default)} ({self.env})"

    def exceeded(self, name: str, limit: int, verb: str = "is larger than") -> InputReadError:
        return InputReadError(name, f"{verb} {_show_size(limit)}, the most vgpuctl reads from {self.what}; "
                                f"set {self.env} to read more")


INPUT_LIMIT = SizeLimit("VGPUCTL_MAX_INPUT_SIZE", 64 * _MIB, "one input")
SNAPSHOT_LIMIT = SizeLimit("VGPUCTL_MAX_SNAPSHOT_SIZE", 256 * _MIB, "a snapshot")


class InputReadError(UsageError):
    """An input that could not be read; `reason` is the message without the name."""

    def __init__(self, name: str, reason: str) -> None:
        self.reason = reason
        super().__init__(f"{name}: {reason}")


class _Reader(Protocol):
    def read(self, size: int, /) -> bytes: ...


def read_capped(handle: _Reader, limit: int, hint: int = 0) -> bytes | None:
    """What `handle` holds, or None once it holds more than `limit` bytes (nothing past limit + 1 is read).
    `hint` (a regular file's size) lets a whole file come in one read."""
    chunks: list[bytes] = []
    total = 0
    want = min(hint + 1, limit + 1) if hint else _CHUNK
    while True:
        chunk = handle.read(min(want, limit + 1 - total))
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            return None
        want = _CHUNK


def _stdin_bytes(stdin: IO[bytes] | IO[str] | None, limit: int) -> bytes | None:
    stream = stdin if stdin is not None else sys.stdin
    if stream is None:  # started with fd 0 closed (`vgpuctl lint - <&-`)
        raise InputReadError(STDIN_NAME, "standard input is closed")
    binary: Any = getattr(stream, "buffer", stream)
    try:
        if isinstance(binary, io.TextIOBase):  # text with no bytes under it (a StringIO): count characters
            text = binary.read(limit + 1)
            return None if len(text) > limit else text.encode()
        return read_capped(binary, limit)
    except (OSError, ValueError) as exc:  # ValueError: the stream was closed
        raise InputReadError(STDIN_NAME, f"cannot read standard input: {exc}") from None


def read_bytes(path: str, limit: SizeLimit = INPUT_LIMIT, *, stdin: IO[bytes] | IO[str] | None = None,
               regular_only: bool = False) -> bytes:
    """The bytes of `path` (`-`: stdin), at most `limit`; `regular_only` refuses devices, FIFOs and sockets
    (a file met while walking a directory, which nobody named). Raises `InputReadError` (a `UsageError`)."""
    cap = limit.bytes()
    name = STDIN_NAME if path == "-" else path
    if path == "-":
        data = _stdin_bytes(stdin, cap)
    else:
        try:
            if regular_only and not stat.S_ISREG(os.stat(path).st_mode):
                raise InputReadError(path, "not a regular file (a device, FIFO or socket); name it to read it")
            with open(path, "rb") as handle:
                info = os.fstat(handle.fileno())
                if stat.S_ISREG(info.st_mode) and info.st_size > cap:
                    raise limit.exceeded(path, cap)
                data = read_capped(handle, cap, info.st_size if stat.S_ISREG(info.st_mode) else 0)
        except FileNotFoundError:
            raise InputReadError(path, "no such file") from None
        except IsADirectoryError:
            raise InputReadError(path, "is a directory") from None
        except PermissionError:
            raise InputReadError(path, "permission denied") from None
        except OSError as exc:
            raise InputReadError(path, str(exc.strerror or exc)) from None
    if data is None:
        raise limit.exceeded(name, cap)
    return data


def read_text(path: str, limit: SizeLimit = INPUT_LIMIT, *, stdin: IO[bytes] | IO[str] | None = None,
              regular_only: bool = False) -> str:
    """`read_bytes` decoded as UTF-8."""
    data = read_bytes(path, limit, stdin=stdin, regular_only=regular_only)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise InputReadError(STDIN_NAME if path == "-" else path, "not a UTF-8 text file") from None


def parse_documents(text: str, source: str) -> list[Document]:
    """All documents in a YAML (multi-document) or JSON text, each placed at `<source>:<line>` (the line where
    it starts, as editors and kubeconform say it); empty documents are dropped. A document a limit refuses is
    one carrying the reason, in its place; a syntax error is the last document (nothing after it can be
    read), placed at the line of the error."""
    from vgpuctl.core.inputdoc import Document
    from vgpuctl.core.safeyaml import InputError, located_documents

    docs: list[Document] = []
    read = 0  # documents read so far: the index of the next one
    end = text.count("\n") + 2  # the line after the last
    try:
        for found in located_documents(text):
            where = f"{source}:{found.line or 1}"
            if docs and docs[-1].span is not None and found.line is not None:  # the one before ends here
                docs[-1] = replace(docs[-1], span=(docs[-1].span[0], found.line))
            if isinstance(found.value, InputError):
                docs.append(Document(where, None, str(found.value), read, source))
            elif found.value is not None:
                # YAML keeps its text, for the lines of the findings' fields (`core/lintlines.py`)
                yaml_text = text if found.from_yaml and found.line is not None else ""
                span = (found.line, end) if yaml_text and found.line is not None else None
                docs.append(Document(where, found.value, "", read, source, found.item_lines, yaml_text, span))
            read += 1
    except InputError as exc:
        docs.append(Document(f"{source}:{exc.line or 1}", None, str(exc), read, source))
    return docs


def _walk(path: Path) -> Iterator[Path]:
    for root, dirs, files in os.walk(path):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.endswith(MANIFEST_SUFFIXES) and not name.startswith("."):
                yield Path(root) / name


def read_manifests(paths: list[str], stdin: IO[bytes] | IO[str] | None = None) -> list[Document]:
    """The documents of every path: a file or `-` must be readable (else `UsageError`); a file found in a
    directory that cannot be read is a document carrying why, and the others are still read."""
    from vgpuctl.core.inputdoc import Document

    documents: list[Document] = []
    for raw in paths:
        if raw != "-" and Path(raw).is_dir():
            files = list(_walk(Path(raw)))
            if not files:
                raise UsageError(f"{raw}: directory holds no .yaml, .yml or .json files")
            for file in files:
                try:
                    text = read_text(str(file), regular_only=True)
                except InputReadError as exc:
                    documents.append(Document(str(file), None, exc.reason))
                    continue
                documents.extend(parse_documents(text, str(file)))
        else:
            documents.extend(parse_documents(read_text(raw, stdin=stdin), STDIN_NAME if raw == "-" else raw))
    return documents


def read_device_configs(path: str, text: str | None = None) -> list[DeviceConfigSource]:
    """Every device config in a file or `-` (or in `text`, read elsewhere from `path`), as `geometry validate`
    reads it (`find_device_configs`): ConfigMaps with `device-config.yaml` and bare payloads, other objects
    skipped. None at all is a `UsageError`."""
    from vgpuctl.core import spec
    from vgpuctl.core.geometry.documents import find_device_configs

    label = STDIN_NAME if path == "-" else path
    found = find_device_configs(read_text(path) if text is None else text, label)
    if not found:
        raise UsageError(f"{label}: no device config found (expected a ConfigMap with data key "
                         f"{spec.DEVICE_CONFIG_KEY!r} or a device-config.yaml payload)")
    return found


def read_device_config(path: str, flag: str = "FILE", text: str | None = None) -> DeviceConfigSource:
    """The one device config of a file; several, or a ConfigMap without the key, is a `UsageError`."""
    from vgpuctl.core import spec

    found = read_device_configs(path, text)
    if len(found) > 1:
        raise UsageError(f"{flag} {found[0].source.rsplit(':', 1)[0]}: holds {len(found)} device configs; "
                         "pass a file with one")
    if found[0].missing_key:
        raise UsageError(f"{flag} {found[0].source}: ConfigMap has no data key {spec.DEVICE_CONFIG_KEY!r}")
    return found[0]


def load_device_config(path: str, flag: str = "--device-config") -> DeviceConfig:
    """A device config from a ConfigMap manifest or a bare payload, as Volcano would parse it. Anything else
    (another object, a List, a file Volcano would reject) is a `UsageError` with a one-line message."""
    from vgpuctl.core.deviceconfig import parse_device_config

    src = read_device_config(path, flag)
    if src.error is not None:
        where = f" (line {src.error_line})" if src.error_line is not None else ""
        raise UsageError(f"{flag} {src.source}: {src.error}{where}")
    parsed = parse_device_config(src.payload)
    if parsed.config is None:
        details = "; ".join(f"{p.path}: {p.message}" for p in parsed.problems[:5])
        raise UsageError(f"{flag} {src.source}: Volcano would reject this device config and fall back to its "
                         f"built-in defaults: {details}")
    return parsed.config
