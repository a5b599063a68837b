"""The node-local adapter for `doctor --node`: run the vendor tools, read the engine configs, build HostFacts.

`collect` observes one node (commands + config files) and returns `HostFacts` (`vgpuctl.core.host.observed`).

This is the only place that touches the machine. Commands go through an injected `Runner` (the real one
wraps `subprocess.run` with a timeout; tests pass recorded outputs), and files are read under a `root`
directory, so tests point it at a temporary tree and a privileged pod can point it at the host's `/`
mounted elsewhere. `root` only moves the files: commands still run in the caller's mount namespace —
wrap the runner (for example with `chroot`) if the tools live only on the host. Nothing here raises for a
missing tool, a failing tool, an unreadable file or a garbage config: each becomes a `HostProblem`.
"""

from __future__ import annotations

import glob
import os
import socket
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from vgpuctl.core.host import nvidia_smi, runtime
from vgpuctl.core.host.npu_smi import INFO_ARGS, NpuChip, parse_npu_info
from vgpuctl.core.host.observed import CommandResult, HostFacts, HostProblem, Outcome
from vgpuctl.core.host.runtime import ConfigDocument, RuntimeConfig

#: Runs argv with a timeout in seconds; must never raise (a missing executable is `Outcome.MISSING`).
Runner = Callable[[Sequence[str], float], CommandResult]

DEFAULT_TIMEOUT = 20.0  # nvidia-smi can take seconds on a node with many GPUs and persistence mode off

#: Where Ascend installs npu-smi; it is often not on a non-root PATH.
NPU_SMI_FALLBACKS = ("/usr/local/sbin/npu-smi", "/usr/local/bin/npu-smi")

CONTAINERD_CONFIGS = ("/etc/containerd/config.toml",)
RANCHER_CONTAINERD_CONFIGS = ("/var/lib/rancher/rke2/agent/etc/containerd/config.toml",
                              "/var/lib/rancher/k3s/agent/etc/containerd/config.toml")
DOCKER_CONFIG = "/etc/docker/daemon.json"
CRIO_CONFIG = "/etc/crio/crio.conf"
CRIO_DROPINS = "/etc/crio/crio.conf.d"
KUBELET_CONFIG = "/var/lib/kubelet/config.yaml"
KUBELET_FLAGS = "/var/lib/kubelet/kubeadm-flags.env"

DEVICE_NODES = {"nvidia": ("/dev/nvidiactl", "/dev/nvidia0"), "ascend": ("/dev/davinci_manager", "/dev/davinci0")}


def _first_line(*texts: str) -> str:
    for text in texts:
        for line in text.splitlines():
            if line.strip():
                return line.strip()
    return ""


def subprocess_runner(argv: Sequence[str], timeout: float) -> CommandResult:
    """The real runner: `subprocess.run` without a shell, output decoded leniently, never raising."""
    args = tuple(argv)
    try:
        proc = subprocess.run(list(args), capture_output=True, text=True, errors="replace", timeout=timeout,
                              check=False)
    except FileNotFoundError:
        return CommandResult(args, Outcome.MISSING, detail="not found")
    except subprocess.TimeoutExpired:
        return CommandResult(args, Outcome.TIMEOUT, detail=f"no answer within {timeout:g} s")
    except OSError as exc:  # permission denied, exec format error, …
        return CommandResult(args, Outcome.FAILED, detail=f"{type(exc).__name__}: {exc.strerror or exc}")
    if proc.returncode != 0:
        # nvidia-smi prints its failures ("NVIDIA-SMI has failed because it couldn't communicate with the
        # NVIDIA driver…") on stdout, so fall back to it.
        return CommandResult(args, Outcome.FAILED, proc.stdout, _first_line(proc.stderr, proc.stdout),
                             proc.returncode)
    return CommandResult(args, Outcome.OK, proc.stdout, _first_line(proc.stderr), proc.returncode)


class _Collector:
    def __init__(self, root: str | os.PathLike[str], run: Runner, timeout: float) -> None:
        self.root = Path(root)
        self.run_command = run
        self.timeout = timeout
        self.problems: list[HostProblem] = []

    # ---- files ------------------------------------------------------------------------------------
    def path(self, host_path: str) -> Path:
        return self.root / host_path.lstrip("/")

    def exists(self, host_path: str) -> bool:
        return self._stat(host_path, Path.exists)

    def is_dir(self, host_path: str) -> bool:
        return self._stat(host_path, Path.is_dir)

    def _stat(self, host_path: str, test: Callable[[Path], bool]) -> bool:
        """`test` of the path; a path that cannot even be looked at (a directory above it not searchable by
        this user) is recorded as unreadable and counts as absent."""
        try:
            return test(self.path(host_path))
        except OSError as exc:
            self.unreadable(host_path, exc)
            return False

    def unreadable(self, host_path: str, exc: BaseException) -> None:
        detail = "is a directory" if isinstance(exc, IsADirectoryError) else f"{type(exc).__name__}: {exc}"
        self.problems.append(HostProblem(host_path, "unreadable", detail))

    def read(self, host_path: str) -> str | None:
        """The file's text, or None when absent; unreadable files are recorded as problems."""
        file = self.path(host_path)
        try:
            return file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None
        except (OSError, UnicodeDecodeError) as exc:
            self.unreadable(host_path, exc)
        return None

    def unreadable_since(self, mark: int) -> tuple[str, ...]:
        """The files recorded unreadable after `len(self.problems)` was `mark`, as `path (why)`."""
        return tuple(f"{p.source} ({p.detail})" for p in self.problems[mark:] if p.kind == "unreadable")

    def document(self, host_path: str) -> ConfigDocument | None:
        text = self.read(host_path)
        return None if text is None else ConfigDocument(host_path, text)

    def glob(self, host_pattern: str) -> list[str]:
        """Host paths matching a glob, as the engine would see them (lexical order)."""
        root = str(self.root).rstrip("/")
        matches = sorted(glob.glob(str(self.path(host_pattern))))
        return ["/" + m[len(root):].lstrip("/") if root else m for m in matches]

    # ---- commands ---------------------------------------------------------------------------------
    def run_unrecorded(self, argv: Sequence[str]) -> CommandResult:
        try:
            return self.run_command(argv, self.timeout)
        except Exception as exc:  # a runner must not raise; if one does, it is still only a finding
            return CommandResult(tuple(argv), Outcome.FAILED, detail=f"{type(exc).__name__}: {exc}")

    def record(self, result: CommandResult) -> CommandResult:
        if not result.ok:
            self.problems.append(HostProblem(result.command, result.outcome.value, result.detail))
        return result

    def run(self, argv: Sequence[str]) -> CommandResult:
        return self.record(self.run_unrecorded(argv))

    def unparsable(self, source: str, problems: Sequence[str]) -> None:
        self.problems.extend(HostProblem(source, "unparsable", p) for p in problems)


def _containerd(c: _Collector, evidence: str) -> RuntimeConfig | None:
    rancher = "/k3s/" in evidence or "/rke2/" in evidence
    candidates = RANCHER_CONTAINERD_CONFIGS + CONTAINERD_CONFIGS if rancher else \
        CONTAINERD_CONFIGS + RANCHER_CONTAINERD_CONFIGS
    mark = len(c.problems)
    main = next((p for p in candidates if c.exists(p)), None)
    if main is None:
        unreadable = c.unreadable_since(mark)
        return replace(runtime.containerd_runtime([]), unreadable=unreadable) if unreadable else None
    documents: list[ConfigDocument] = []
    pending, seen = [main], set()
    while pending:  # containerd loads the main file, then its imports (recursively), later ones overriding
        path = pending.pop(0)
        if path in seen:
            continue
        seen.add(path)
        doc = c.document(path)
        if doc is None:
            continue
        documents.append(doc)
        base = os.path.dirname(path)
        for pattern in runtime.containerd_imports(doc.text):
            pattern = pattern if pattern.startswith("/") else os.path.join(base, pattern)
            pending.extend(c.glob(pattern) if any(ch in pattern for ch in "*?[") else [pattern])
    return replace(runtime.containerd_runtime(documents), unreadable=c.unreadable_since(mark))


def _docker(c: _Collector, engine: str | None) -> RuntimeConfig | None:
    mark = len(c.problems)
    document = c.document(DOCKER_CONFIG)
    unreadable = c.unreadable_since(mark)
    if document is None and not unreadable and engine != runtime.DOCKER:
        return None
    return replace(runtime.docker_runtime(document), unreadable=unreadable)


def _crio(c: _Collector) -> RuntimeConfig | None:
    mark = len(c.problems)
    paths = [CRIO_CONFIG] if c.exists(CRIO_CONFIG) else []
    if c.is_dir(CRIO_DROPINS):
        try:
            dropins = sorted(c.path(CRIO_DROPINS).iterdir(), key=lambda f: f.name)
            paths += [f"{CRIO_DROPINS}/{f.name}" for f in dropins if f.is_file()]
        except OSError as exc:
            c.unreadable(CRIO_DROPINS, exc)
    documents = [d for d in (c.document(p) for p in paths) if d is not None]
    unreadable = c.unreadable_since(mark)
    if not paths and not unreadable:
        return None
    return replace(runtime.crio_runtime(documents), unreadable=unreadable)


def _runtimes(c: _Collector) -> tuple[str | None, str, tuple[RuntimeConfig, ...]]:
    endpoint = runtime.kubelet_runtime_endpoint(c.read(KUBELET_CONFIG), c.read(KUBELET_FLAGS))
    sockets = [s for s, _ in runtime.CRI_SOCKETS if c.exists(s)]
    engine, evidence = runtime.pick_engine(endpoint, sockets)
    found: list[RuntimeConfig] = []
    containerd = _containerd(c, evidence)
    if containerd is None and engine == runtime.CONTAINERD:
        containerd = runtime.containerd_runtime([])
    docker = _docker(c, engine)
    crio = _crio(c)
    if crio is None and engine == runtime.CRIO:
        crio = runtime.crio_runtime([])
    for config in (containerd, docker, crio):
        if config is not None:
            found.append(config)
            c.unparsable(config.engine, config.problems)
    return engine, evidence, tuple(found)


def _npu_smi(c: _Collector) -> CommandResult:
    """`npu-smi info`, trying Ascend's install paths when it is not on PATH (it is often root-only)."""
    result = c.run_unrecorded(INFO_ARGS)
    for fallback in NPU_SMI_FALLBACKS:
        if result.outcome is not Outcome.MISSING:
            break
        result = c.run_unrecorded((fallback, *INFO_ARGS[1:]))
    if result.outcome is Outcome.MISSING:
        result = CommandResult(INFO_ARGS, Outcome.MISSING,
                               detail=f"not on PATH nor in {', '.join(NPU_SMI_FALLBACKS)}")
    return c.record(result)


def collect(root: str | os.PathLike[str] = "/", run: Runner = subprocess_runner, *,
            timeout: float = DEFAULT_TIMEOUT, node_name: str | None = None) -> HostFacts:
    """Observe this node: GPUs and MIG (nvidia-smi), NPUs (npu-smi), device nodes, container engines.

    `root` is where the host's files are (tests: a temporary tree); `run` executes commands (tests: recorded
    outputs); `node_name` defaults to `$NODE_NAME`, then the hostname. Never raises for what it observes.
    """
    c = _Collector(root, run, timeout)
    hostname = node_name or os.environ.get("NODE_NAME") or socket.gethostname() or None
    device_nodes = frozenset(vendor for vendor, paths in DEVICE_NODES.items() if any(c.exists(p) for p in paths))

    # NVIDIA
    gpus: tuple[nvidia_smi.GpuInfo, ...] = ()
    fields: tuple[str, ...] = nvidia_smi.QUERY_FIELDS
    query = c.run_unrecorded(nvidia_smi.QUERY_ARGS)
    if nvidia_smi.INVALID_FIELD in query.stdout + query.detail:  # a pre-R450 driver: no MIG fields
        query, fields = c.run_unrecorded(nvidia_smi.LEGACY_QUERY_ARGS), nvidia_smi.LEGACY_QUERY_FIELDS
    c.record(query)
    if query.ok:
        parsed = nvidia_smi.parse_gpu_query(query.stdout, fields)
        gpus = parsed.gpus
        c.unparsable(query.command, parsed.problems)
    lgip: CommandResult | None = None
    profiles: tuple[nvidia_smi.MigProfile, ...] = ()
    if any(g.mig_mode is nvidia_smi.MigMode.ENABLED for g in gpus):
        lgip = c.run(nvidia_smi.MIG_PROFILES_ARGS)
        if lgip.ok or nvidia_smi.NO_MIG_DEVICES in lgip.stdout:
            listed = nvidia_smi.parse_mig_profiles(lgip.stdout)
            profiles = listed.profiles
            c.unparsable(lgip.command, listed.problems)

    # Ascend
    npu = _npu_smi(c)
    npu_version: str | None = None
    chips: tuple[NpuChip, ...] = ()
    if npu.ok:
        info = parse_npu_info(npu.stdout)
        chips, npu_version = info.chips, info.version
        c.unparsable(npu.command, info.problems)

    engine, evidence, runtimes = _runtimes(c)
    return HostFacts(
        hostname=hostname, nvidia_smi=query, gpus=gpus, mig_profiles_result=lgip, mig_profiles=profiles,
        npu_smi=npu, npu_smi_version=npu_version, npus=chips, device_nodes=device_nodes,
        engine_in_use=engine, engine_evidence=evidence, runtimes=runtimes, problems=tuple(c.problems),
    )
