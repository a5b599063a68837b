"""`vgpuctl webhook serve` and `vgpuctl webhook certs`: run and provision the admission webhook.

flask, gunicorn and cryptography come with the `[webhook]` extra; they are imported inside the
commands, so `vgpuctl lint` and friends work on a plain install.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import typer

from vgpuctl.cli.env import fail, guarded, stdout
from vgpuctl.cli.kubeopts import cluster_errors, context_option, kubeconfig_option
from vgpuctl.cli.options import PrivilegedPolicy, volcano_version_option
from vgpuctl.core.findings import ExitStatus
from vgpuctl.errors import EXTRA_MODULES, MissingExtra, UsageError
from vgpuctl.paths import not_a_directory, not_a_file

SERVE_EPILOG = """[bold]Examples[/bold]

  vgpuctl webhook serve --port 8443                      # local: self-signed pair, CA path on stderr
  vgpuctl webhook serve --cert /tls/tls.crt --key /tls/tls.key \\
      --device-config /etc/vgpuctl/device-config/device-config.yaml --volcano-version v1.15.1
  # cluster-aware: watch nodes and bound pods (in-cluster account, KUBECONFIG, or --kubeconfig/--context)
  vgpuctl webhook serve --cluster-aware --device-config device-config.yaml

Every option also reads VGPUCTL_<NAME> (VGPUCTL_DEVICE_CONFIG, VGPUCTL_TLS_CERT, VGPUCTL_TLS_KEY,
VGPUCTL_SCHEDULER_NAMES, VGPUCTL_VOLCANO_VERSION, VGPUCTL_PRIVILEGED, VGPUCTL_MAX_BODY_BYTES,
VGPUCTL_CLUSTER_AWARE=true, VGPUCTL_METRICS_PORT, VGPUCTL_HANDSHAKE_TIMEOUT, VGPUCTL_HEADER_TIMEOUT,
VGPUCTL_BODY_TIMEOUT, VGPUCTL_KEEPALIVE_TIMEOUT, VGPUCTL_MAX_CONNECTIONS).

Connections are read without a thread, each phase under a deadline (TLS handshake, headers, body,
idle keep-alive): connections that stall or flood cannot hold up the reviews.

--cluster-aware: /validate also denies pods no node could hold even when empty (more GPUs,
memory or NPU cores than any node has) and warns when no node has room right now; /readyz
is not ready until nodes and pods are first listed. DeviceClasses, ResourceClaims and
ResourceClaimTemplates are watched too (VGP020: a vGPU pod that also claims a GPU through DRA). It
needs get/list/watch on all five: deploy/overlays/cluster-aware.
"""

CERTS_EPILOG = """[bold]Examples[/bold]

  vgpuctl webhook certs --service vgpuctl-webhook --namespace vgpuctl-system --out tls/
  kubectl -n vgpuctl-system create secret tls vgpuctl-webhook-tls --cert tls/tls.crt --key tls/tls.key
  # renew the serving pair with the same CA (the caBundle stays valid):
  vgpuctl webhook certs --service vgpuctl-webhook --namespace vgpuctl-system --out tls/ \\
      --ca-cert tls/ca.crt --ca-key tls/ca.key
"""

def require_webhook_extra() -> None:
    """Name every module of the [webhook] extra this install lacks, before any is needed. One that imports
    here but breaks further in (a half-installed cryptography) is reported the same way by `guarded`."""
    missing = []
    for module in EXTRA_MODULES["webhook"]:
        try:
            importlib.import_module(module)
        except ImportError:
            missing.append(module)
    if missing:
        raise MissingExtra("webhook", missing)


@guarded
def serve_command(
    host: str = typer.Option("0.0.0.0", "--host", metavar="H", help="Address to listen on."),
    port: int = typer.Option(8443, "--port", metavar="P", min=0, max=65535,
                             help="Port of the admission calls (TLS; /mutate, /validate)."),
    metrics_port: int | None = typer.Option(
        None, "--metrics-port", metavar="P", help="Port of GET /metrics (TLS; default 9443); the probes answer on "
        "both."),
    cert: str | None = typer.Option(None, "--cert", metavar="FILE", help="Serving certificate (PEM)."),
    key: str | None = typer.Option(None, "--key", metavar="FILE", help="Serving private key (PEM)."),
    device_config: str | None = typer.Option(
        None, "--device-config", metavar="FILE",
        help="Mounted device ConfigMap or device-config.yaml; reloaded when the file changes."),
    workers: int = typer.Option(1, "--workers", metavar="N", min=1, help="gunicorn worker processes."),
    threads: int = typer.Option(4, "--threads", metavar="N", min=1,
                                help="Threads per worker: reviews answered at once (connections wait without one)."),
    scheduler_name: list[str] = typer.Option(
        [], "--scheduler-name", metavar="NAME", help="A Volcano scheduler name (repeatable; default: volcano)."),
    volcano_version: str | None = volcano_version_option(),
    privileged: PrivilegedPolicy | None = typer.Option(
        None, "--privileged", help="Severity of VGP016 (privileged container with a device); default error."),
    max_body_bytes: int | None = typer.Option(
        None, "--max-body-bytes", metavar="N", help="Largest request body accepted (default 3 MiB)."),
    cluster_aware: bool = typer.Option(
        False, "--cluster-aware",
        help="Watch nodes and bound pods (in-cluster account or kubeconfig): deny pods no node can ever hold, "
        "warn when none has room now; not ready until the first sync."),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
    handshake_timeout: float | None = typer.Option(
        None, "--handshake-timeout", metavar="S", help="Seconds for a client's TLS handshake (default 5)."),
    header_timeout: float | None = typer.Option(
        None, "--header-timeout", metavar="S", help="Seconds for a request's line and headers (default 5)."),
    body_timeout: float | None = typer.Option(
        None, "--body-timeout", metavar="S", help="Seconds for a request's body, and for sending the answer "
        "(default 10)."),
    keepalive_timeout: float | None = typer.Option(
        None, "--keepalive-timeout", metavar="S", help="Seconds an idle kept-alive connection stays open "
        "(default 30)."),
    max_connections: int | None = typer.Option(
        None, "--max-connections", metavar="N", help="Open connections per worker; more are closed at once "
        "(default 1000)."),
) -> None:
    """Serve POST /mutate and /validate (AdmissionReview v1), /healthz, /readyz and /metrics over TLS."""
    require_webhook_extra()
    from vgpuctl.webhook.server import build_server_options, serve
    from vgpuctl.webhook.settings import SettingsError, build_settings

    try:
        settings = build_settings(
            device_config=device_config, scheduler_names=scheduler_name, volcano_version=volcano_version,
            privileged=privileged.value if privileged else None, max_body_bytes=max_body_bytes,
            cert_file=cert, key_file=key, cluster_aware=cluster_aware or None, env=os.environ)
        options = build_server_options(
            os.environ, host=host, port=port, metrics_port=metrics_port, workers=workers, threads=threads,
            handshake_timeout=handshake_timeout, header_timeout=header_timeout, body_timeout=body_timeout,
            keepalive=keepalive_timeout, max_connections=max_connections)
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    if (kubeconfig or context) and not settings.cluster_aware:
        raise UsageError("--kubeconfig/--context are for --cluster-aware (the webhook reads no cluster otherwise)")
    for flag, path in (("--cert", settings.cert_file), ("--key", settings.key_file)):
        problem = not_a_file(path) if path else None
        if problem:
            raise UsageError(f"{flag} {path}: {problem}")
    if settings.cert_file and settings.key_file:
        from vgpuctl.webhook.tls import startup_problem

        # Before gunicorn starts: it would listen, then fail every handshake with these files.
        problem = startup_problem(settings.cert_file, settings.key_file)
        if problem:
            raise UsageError(problem)
    if settings.cluster_aware:
        with cluster_errors():
            cluster_watch, dra_watch = _cluster_watch_factories(kubeconfig, context)
            settings = replace(settings, cluster_watch=cluster_watch, dra_watch=dra_watch)
    if settings.device_config_path:
        from vgpuctl.sources import load_device_config

        load_device_config(settings.device_config_path)  # a bad config at start is a usage error, not a crash
    from vgpuctl.webhook.server import unavailable_address

    problem = unavailable_address(options)
    if problem:
        raise UsageError(problem)
    serve(settings, options, announce=lambda message: typer.echo(f"vgpuctl: {message}", err=True))


def _cluster_watch_factories(kubeconfig: str | None,
                             context: str | None) -> tuple[Callable[[Any], Any], Callable[[Any], Any]]:
    """Check now that a cluster configuration loads (a usage error or exit 3 at start, not a worker that
    never gets ready), and return what starts the watches in each worker, each with its own client: nodes and
    bound pods (`cluster_watch`), DeviceClasses, ResourceClaims and templates (`dra_watch`)."""
    from vgpuctl.kube.dra_watch import dra_watch_factory
    from vgpuctl.kube.kubeconfig import load_api_client
    from vgpuctl.kube.watch import ClusterWatch

    load_api_client(kubeconfig, context).close()  # type: ignore[no-untyped-call]  # kubernetes is untyped

    def client() -> Any:
        return load_api_client(kubeconfig, context)

    def start_watch(sink: Any) -> ClusterWatch:
        return ClusterWatch(client, sink)

    return start_watch, dra_watch_factory(client)


@guarded
def certs_command(
    service: str = typer.Option(..., "--service", metavar="S", help="The webhook's Service name."),
    namespace: str = typer.Option(..., "--namespace", "-n", metavar="N", help="The Service's namespace."),
    out: Path = typer.Option(..., "--out", metavar="DIR", help="Directory for ca.crt, tls.crt and tls.key."),
    days: int = typer.Option(365, "--days", metavar="D", min=1, help="Validity of the serving certificate."),
    ca_days: int = typer.Option(3650, "--ca-days", metavar="D", min=1, help="Validity of a new CA."),
    ca_cert: str | None = typer.Option(None, "--ca-cert", metavar="FILE", help="Sign with this existing CA..."),
    ca_key: str | None = typer.Option(None, "--ca-key", metavar="FILE", help="...and its key (keeps the caBundle)."),
    write_ca_key: bool = typer.Option(False, "--write-ca-key", help="Also write ca.key (needed to renew later)."),
) -> None:
    """Write a CA and a serving certificate/key for the webhook Service; print the base64 caBundle."""
    require_webhook_extra()
    from vgpuctl.webhook.certs import (
        BACKDATE,
        ca_bundle,
        ca_common_name,
        dns_label_problem,
        generate_ca,
        issue_serving_cert,
        load_ca,
        max_days,
        pair_problem,
        service_dns_names,
        write_pem_files,
    )

    largest = max_days()
    for flag, value in (("--days", days), ("--ca-days", ca_days)):
        if value > largest:
            raise UsageError(f"{flag} {value} is too large: a certificate cannot be valid past 9999-12-31, so the "
                             f"largest allowed today is {largest}")
    for flag, name in (("--service", service), ("--namespace", namespace)):
        problem = dns_label_problem(name)
        if problem:
            raise UsageError(f"{flag} {name!r} {problem}")
    problem = not_a_directory(str(out))
    if problem:
        raise UsageError(f"--out {out}: {problem}")
    if bool(ca_cert) != bool(ca_key):
        raise UsageError("--ca-cert and --ca-key go together")
    if ca_cert and ca_key:
        try:
            ca = load_ca(ca_cert, ca_key)
        except ValueError as exc:  # PairError, or a certificate whose extensions do not parse
            raise UsageError(f"--ca-cert/--ca-key: {exc}") from None
    else:
        ca = generate_ca(ca_common_name(service, namespace), days=ca_days)
    names = service_dns_names(service, namespace)
    leaf = issue_serving_cert(ca, names, days=days)
    # What the API server will check, checked before anything is written: a pair it refuses would make a
    # fail-closed webhook deny every GPU pod.
    now = datetime.now(UTC)
    problem = pair_problem(ca.cert_pem().decode(), leaf.cert_pem().decode(), leaf.key_pem().decode(), names,
                           now, renew_before=timedelta(0), skew=BACKDATE)
    if problem:
        raise fail(f"the serving certificate made does not verify, nothing written: {problem}",
                   ExitStatus.INCOMPLETE)
    try:
        written = write_pem_files(out, ca, leaf, write_ca_key=write_ca_key)
    except OSError as exc:
        raise UsageError(f"{out}: {exc.strerror or exc}") from None
    typer.echo(f"vgpuctl: wrote {', '.join(str(p) for p in written)}; serving certificate valid until "
               f"{leaf.cert.not_valid_after_utc:%Y-%m-%d}", err=True)
    stdout().write(ca_bundle(ca) + "\n")


def register(app: typer.Typer) -> None:
    webhook_app = typer.Typer(help="Run and provision the admission webhook.", no_args_is_help=True)
    webhook_app.command("serve", epilog=SERVE_EPILOG)(serve_command)
    webhook_app.command("certs", epilog=CERTS_EPILOG)(certs_command)
    app.add_typer(webhook_app, name="webhook")
