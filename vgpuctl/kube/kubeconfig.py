"""Which cluster to talk to, resolved the way kubectl does, with one-line errors instead of tracebacks.

Order: `--kubeconfig FILE` (must exist), else the `KUBECONFIG` list (files that exist, merged), else
`~/.kube/config`, else the in-cluster service account. A file the user named that is not there or does
not load, by flag or by `KUBECONFIG`, is a usage error (exit 2); having named nothing and found no
usable configuration is `ClusterUnreachable` (exit 3), since vgpuctl can then read no cluster.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import partial
from typing import Any

import urllib3
from kubernetes import config as kube_config
from kubernetes.client import ApiClient, Configuration
from kubernetes.config import incluster_config as incluster
from kubernetes.config.config_exception import ConfigException

from vgpuctl.core.safeyaml import InputError, load
from vgpuctl.errors import UsageError
from vgpuctl.kube.errors import ClusterUnreachable, one_line
from vgpuctl.paths import not_a_file

DEFAULT_KUBECONFIG = "~/.kube/config"


def tune_configuration(configuration: Configuration) -> Configuration:
    """At most one quick reconnect and no read or status retries.

    urllib3's default (3 retries of everything) turns one dead API server into a minute of waiting, and
    a read retry after a timeout doubles the wait for no gain: the reader reports the failure instead.
    """
    configuration.retries = urllib3.Retry(total=1, connect=1, read=0, status=0, other=0, redirect=0)
    return configuration


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def _contexts(paths: list[str], source: str) -> tuple[list[str], str | None]:
    """Context names and the current context across merged kubeconfig files (first setter wins)."""
    names: list[str] = []
    current: str | None = None
    for path in paths:
        try:
            with open(path, encoding="utf-8") as handle:
                doc: Any = load(handle.read())  # the alias and depth limits every input of vgpuctl meets
        except (OSError, UnicodeDecodeError, InputError) as exc:
            raise UsageError(f"{source}: cannot read kubeconfig {path}: {_one_line(exc)}") from None
        if not isinstance(doc, dict):
            raise UsageError(f"{source}: {path} is not a kubeconfig (expected a mapping with contexts)")
        names.extend(c["name"] for c in doc.get("contexts") or [] if isinstance(c, dict) and "name" in c)
        current = current or doc.get("current-context") or None
    return names, current


def _from_kubeconfig(paths: list[str], context: str | None, configuration: Configuration, source: str) -> None:
    names, current = _contexts(paths, source)
    wanted = context or current
    listing = ", ".join(names) or "none"
    if not wanted:
        raise UsageError(f"{source}: no current-context set; pass --context (contexts: {listing})")
    if wanted not in names:
        flag = f"--context {context}" if context else f"current-context {wanted}"
        raise UsageError(f"{flag}: no such context in {source} (contexts: {listing})")
    with _client_log() as said:
        try:
            kube_config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=os.pathsep.join(paths), context=wanted, client_configuration=configuration,
                persist_config=False)
        except (ConfigException, OSError, ValueError, KeyError, TypeError) as exc:
            raise UsageError(f"{source}: context {wanted}: {_one_line(exc)}") from None
    if said:  # the client logs a failed exec credential plugin and goes on without credentials
        raise ClusterUnreachable(f"{source}: context {wanted}: the user's exec credential plugin failed: "
                                 f"{one_line(said[0])}")
    hook = configuration.refresh_api_key_hook
    if hook is not None:  # an expiring exec token is refreshed before a request: the same failure, the same line
        configuration.refresh_api_key_hook = partial(_refresh, hook, f"{source}: context {wanted}")


def _refresh(hook: Callable[[Configuration], None], where: str, configuration: Configuration) -> None:
    with _client_log() as said:
        hook(configuration)
    if said:
        raise ClusterUnreachable(f"{where}: the user's exec credential plugin failed: {one_line(said[0])}")


class _Said(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.WARNING)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record.getMessage())


@contextmanager
def _client_log() -> Iterator[list[str]]:
    """What the kubernetes client logs on the root logger meanwhile (an exec credential plugin that is missing
    or fails): collected here to be said as one line, never printed raw. A handler on the root logger also
    keeps `logging.error` from configuring it, which would then print urllib3's retry warnings too."""
    said: list[str] = []
    handler = _Said(said)
    root = logging.getLogger()
    root.addHandler(handler)
    try:
        yield said
    finally:
        root.removeHandler(handler)


def load_api_client(kubeconfig: str | None = None, context: str | None = None, *,
                    environ: Mapping[str, str] | None = None) -> ApiClient:
    """An `ApiClient` for the chosen cluster, with vgpuctl's retry policy (`tune_configuration`)."""
    env = os.environ if environ is None else environ
    configuration = Configuration()
    if kubeconfig is not None:
        path = os.path.expanduser(kubeconfig)
        problem = not_a_file(path)
        if problem:
            raise UsageError(f"--kubeconfig {kubeconfig}: {problem}")
        _from_kubeconfig([path], context, configuration, f"--kubeconfig {kubeconfig}")
    elif env.get("KUBECONFIG"):
        listed = [os.path.expanduser(p) for p in env["KUBECONFIG"].split(os.pathsep) if p]
        existing = [p for p in listed if os.path.isfile(p)]
        if not existing:
            problems = {p: not_a_file(p) or "not readable" for p in listed}
            said = "; ".join(f"{p}: {why}" for p, why in problems.items()) if len(listed) > 1 else next(
                iter(problems.values()), "no such file")
            raise UsageError(f"KUBECONFIG={env['KUBECONFIG']}: {said}")
        _from_kubeconfig(existing, context, configuration, "KUBECONFIG")
    elif os.path.isfile(os.path.expanduser(DEFAULT_KUBECONFIG)):
        _from_kubeconfig([os.path.expanduser(DEFAULT_KUBECONFIG)], context, configuration, DEFAULT_KUBECONFIG)
    elif env.get("KUBERNETES_SERVICE_HOST"):
        if context:
            raise UsageError(f"--context {context}: no kubeconfig found, and in-cluster config has no contexts")
        try:
            incluster.InClusterConfigLoader(  # type: ignore[no-untyped-call]
                incluster.SERVICE_TOKEN_FILENAME, incluster.SERVICE_CERT_FILENAME, environ=env,
            ).load_and_set(configuration)
        except ConfigException as exc:
            raise ClusterUnreachable(f"in-cluster configuration: {_one_line(exc)}") from None
    else:
        raise ClusterUnreachable("no Kubernetes configuration: pass --kubeconfig, set KUBECONFIG, create "
                                 f"{DEFAULT_KUBECONFIG}, or run inside a cluster (or use a snapshot file)")
    return ApiClient(tune_configuration(configuration))
