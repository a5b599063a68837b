"""Which OCI runtime each container engine starts containers with by default.

The vGPU device plugin DaemonSet sets no `runtimeClassName`, so NVML reaches it only when `nvidia` is the
engine's *default* runtime (docs/device-plugins.md#vgpu-plugin-prerequisites, docs/checks.md#check-index-device-plugins
rule 22). This module reads that setting the way each engine does:

- containerd, by config `version`: 3 (containerd 2.x) `[plugins."io.containerd.cri.v1.runtime".containerd]`,
  2 `[plugins."io.containerd.grpc.v1.cri".containerd]`, 1/absent `[plugins.cri.containerd]`, key
  `default_runtime_name`; files named in `imports` are merged after the main file and override it
  (nvidia-ctk ≥ 1.18 writes its settings into such a drop-in). Unset → `runc`.
- Docker `daemon.json`: `"default-runtime"`; unset → `runc`.
- CRI-O: `crio.conf`, then every file in `crio.conf.d` in lexical order, later wins; `[crio.runtime]
  default_runtime`; unset → CRI-O's built-in default (`crun` on current releases, `runc` on older ones).

A runtime counts as NVIDIA's when it is named `nvidia` or its binary is `nvidia-container-runtime`
(the GPU Operator and k3s sometimes name it differently). TOML is read with the standard `tomllib`.
"""

from __future__ import annotations

import json
import re
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

CONTAINERD, DOCKER, CRIO = "containerd", "docker", "crio"

BUILTIN_DEFAULT = {CONTAINERD: "runc", DOCKER: "runc", CRIO: "crun"}

NVIDIA_BINARY = "nvidia-container-runtime"


def _is_nvidia_binary(path: str) -> bool:
    # nvidia-container-runtime, and its .cdi / .legacy mode variants the toolkit also installs
    return path.rsplit("/", 1)[-1].startswith(NVIDIA_BINARY)


@dataclass(frozen=True, slots=True)
class ConfigDocument:
    """One config file's text, in the order the engine applies it."""

    path: str
    text: str


@dataclass(frozen=True, slots=True)
class RuntimeConfig:
    engine: str  # "containerd" | "docker" | "crio"
    default_runtime: str | None  # as configured; None = not set in any file read
    source: str  # the file that set it, or why the built-in default applies
    binaries: Mapping[str, str]  # runtime name -> its binary (BinaryName / path / runtime_path), when set
    files: tuple[str, ...] = ()  # every file read, in order
    problems: tuple[str, ...] = ()  # files that could not be parsed (they were skipped, as the engine would fail)
    unreadable: tuple[str, ...] = ()  # files that exist but could not be read, `path (why)`: the default is unknown

    @property
    def effective(self) -> str:
        return self.default_runtime or BUILTIN_DEFAULT[self.engine]

    @property
    def is_nvidia(self) -> bool:
        name = self.effective
        return name == "nvidia" or _is_nvidia_binary(self.binaries.get(name, ""))

    @property
    def nvidia_runtimes(self) -> tuple[str, ...]:
        """Runtimes declared in the config that would run NVIDIA's hook (to name in a hint)."""
        return tuple(sorted(n for n, b in self.binaries.items() if n == "nvidia" or _is_nvidia_binary(b)))

    def describe(self) -> str:
        if self.default_runtime is None:
            return f"{self.engine} default runtime not set ({self.source}): {self.effective}"
        return f"{self.engine} default runtime {self.default_runtime!r} ({self.source})"


def _m(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _dig(doc: Mapping[str, Any], *keys: str) -> Mapping[str, Any]:
    for key in keys:
        doc = _m(doc.get(key))
    return doc


def _load_toml(doc: ConfigDocument) -> tuple[dict[str, Any] | None, str | None]:
    try:
        return tomllib.loads(doc.text), None
    except Exception as exc:  # TOMLDecodeError, or RecursionError on deeply nested arrays
        return None, f"{doc.path}: not valid TOML: {exc}"


# --------------------------------------------------------------------------------------------------
# containerd

_CONTAINERD_CRI = {3: ("plugins", "io.containerd.cri.v1.runtime", "containerd"),
                   2: ("plugins", "io.containerd.grpc.v1.cri", "containerd"),
                   1: ("plugins", "cri", "containerd")}


def containerd_imports(text: str) -> tuple[str, ...]:
    """The `imports` of a containerd config (glob patterns); empty when absent or unparsable."""
    try:
        doc = tomllib.loads(text)
    except Exception:
        return ()
    imports = doc.get("imports")
    return tuple(i for i in imports if isinstance(i, str)) if isinstance(imports, list) else ()


def containerd_runtime(documents: Sequence[ConfigDocument]) -> RuntimeConfig:
    """containerd's default CRI runtime from its config and imports (main file first, imports after)."""
    default: str | None = None
    source = "no config file: containerd's built-in default"
    binaries: dict[str, str] = {}
    problems: list[str] = []
    for doc in documents:
        parsed, problem = _load_toml(doc)
        if parsed is None:
            problems.append(problem or doc.path)
            continue
        version = parsed.get("version", 1)
        if not isinstance(version, int) or version not in _CONTAINERD_CRI:
            problems.append(f"{doc.path}: unsupported config version {version!r}")
            continue
        cri = _dig(parsed, *_CONTAINERD_CRI[version])
        name = cri.get("default_runtime_name")
        if isinstance(name, str) and name:
            default, source = name, f"{doc.path}, config version {version}"
        for runtime, settings in _m(cri.get("runtimes")).items():
            binary = _m(_m(settings).get("options")).get("BinaryName")
            if isinstance(binary, str) and binary:
                binaries[runtime] = binary
            else:
                binaries.setdefault(runtime, "")
    if default is None and documents:
        source = "default_runtime_name not set in " + ", ".join(d.path for d in documents)
    return RuntimeConfig(CONTAINERD, default, source, binaries, tuple(d.path for d in documents), tuple(problems))


# --------------------------------------------------------------------------------------------------
# Docker


def docker_runtime(document: ConfigDocument | None) -> RuntimeConfig:
    if document is None:
        return RuntimeConfig(DOCKER, None, "no daemon.json: Docker's built-in default", {})
    try:
        parsed = json.loads(document.text) if document.text.strip() else {}
    except ValueError as exc:
        return RuntimeConfig(DOCKER, None, f"{document.path} unparsable", {}, (document.path,),
                             (f"{document.path}: not valid JSON: {exc}",))
    if not isinstance(parsed, dict):
        return RuntimeConfig(DOCKER, None, f"{document.path} unparsable", {}, (document.path,),
                             (f"{document.path}: not a JSON object",))
    binaries = {name: str(_m(spec).get("path", "")) for name, spec in _m(parsed.get("runtimes")).items()}
    name = parsed.get("default-runtime")
    if isinstance(name, str) and name:
        return RuntimeConfig(DOCKER, name, document.path, binaries, (document.path,))
    return RuntimeConfig(DOCKER, None, f"default-runtime not set in {document.path}", binaries, (document.path,))


# --------------------------------------------------------------------------------------------------
# CRI-O


def crio_runtime(documents: Sequence[ConfigDocument]) -> RuntimeConfig:
    """CRI-O's default runtime: `crio.conf` first, then the drop-ins in lexical order; later files win."""
    default: str | None = None
    source = "no config file: CRI-O's built-in default"
    binaries: dict[str, str] = {}
    problems: list[str] = []
    for doc in documents:
        parsed, problem = _load_toml(doc)
        if parsed is None:
            problems.append(problem or doc.path)
            continue
        runtime = _dig(parsed, "crio", "runtime")
        name = runtime.get("default_runtime")
        if isinstance(name, str) and name:
            default, source = name, doc.path
        for runtime_name, settings in _m(runtime.get("runtimes")).items():
            path = _m(settings).get("runtime_path")
            binaries[runtime_name] = path if isinstance(path, str) else binaries.get(runtime_name, "")
    if default is None and documents:
        source = "default_runtime not set in " + ", ".join(d.path for d in documents)
    return RuntimeConfig(CRIO, default, source, binaries, tuple(d.path for d in documents), tuple(problems))


# --------------------------------------------------------------------------------------------------
# Which engine the kubelet talks to

_ENDPOINT_YAML = re.compile(r"^\s*containerRuntimeEndpoint:\s*[\"']?([^\"'\s#]+)", re.MULTILINE)
_ENDPOINT_FLAG = re.compile(r"--container-runtime-endpoint[= ]\"?([^\"\s]+)")


def kubelet_runtime_endpoint(kubelet_config: str | None, kubelet_flags: str | None) -> str | None:
    """`containerRuntimeEndpoint` from the kubelet config file, else `--container-runtime-endpoint` from its
    flags file (kubeadm's `kubeadm-flags.env`); the flag wins when both are set, as in the kubelet."""
    if kubelet_flags and (match := _ENDPOINT_FLAG.search(kubelet_flags)):
        return match.group(1)
    if kubelet_config and (match := _ENDPOINT_YAML.search(kubelet_config)):
        return match.group(1)
    return None


def engine_for_endpoint(endpoint: str) -> str | None:
    lowered = endpoint.lower()
    if "cri-dockerd" in lowered or "dockershim" in lowered:
        return DOCKER
    if "crio" in lowered or "cri-o" in lowered:
        return CRIO
    if "containerd" in lowered:
        return CONTAINERD
    return None


#: CRI sockets in the order they decide (cri-dockerd first: Docker hosts also run containerd).
CRI_SOCKETS = (
    ("/run/cri-dockerd.sock", DOCKER),
    ("/var/run/cri-dockerd.sock", DOCKER),
    ("/run/crio/crio.sock", CRIO),
    ("/var/run/crio/crio.sock", CRIO),
    ("/run/k3s/containerd/containerd.sock", CONTAINERD),
    ("/run/containerd/containerd.sock", CONTAINERD),
    ("/var/run/containerd/containerd.sock", CONTAINERD),
)


def pick_engine(endpoint: str | None, sockets: Sequence[str]) -> tuple[str | None, str]:
    """The engine the kubelet uses, and the evidence: its configured endpoint, else the CRI socket present."""
    if endpoint:
        engine = engine_for_endpoint(endpoint)
        if engine:
            return engine, f"kubelet container runtime endpoint {endpoint}"
    present = set(sockets)
    for socket, engine in CRI_SOCKETS:
        if socket in present:
            return engine, f"socket {socket}"
    return None, "no kubelet runtime endpoint and no CRI socket found"
