"""The node-local adapter for `doctor --node`: run the vendor tools, read the engine configs, build HostFacts.

This is the only place that touches the machine. Commands go through an injected `Runner` (the real one
wraps `subprocess.run` with a timeout; tests pass recorded outputs), and files are read under a `root`
directory, so tests point it at a temporary tree and a privileged pod can point it at the host's `/`
mounted elsewhere. `root` only moves the files: commands still run in the caller's mount namespace —
wrap the runner (for example with `chroot`) if the tools live only on the host. Nothing here raises for a
missing tool, a failing tool, an unreadable file or a garbage config: each becomes a `HostProblem`.
"""

from vgpuctl.host.collect import (
    DEFAULT_TIMEOUT,
    Runner,
    collect,
    subprocess_runner,
)

__all__ = ["DEFAULT_TIMEOUT", "Runner", "collect", "subprocess_runner"]
