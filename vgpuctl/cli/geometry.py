"""`vgpuctl geometry`: validate, show, explain, export and merge Volcano device configs (docs/contracts.md#interfaces).

Inputs are ConfigMap manifests or bare `device-config.yaml` payloads, from files or `-`. The commands
only read files and print; every decision is in `vgpuctl.core.geometry`.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

import typer

from vgpuctl.cli.env import guarded, make_console, stderr, stdout
from vgpuctl.cli.kubeopts import context_option, kubeconfig_option, refuse_live_options_with_snapshot
from vgpuctl.cli.options import (
    FailOnAny,
    fail_on_option,
    output_option,
    read_volcano_version,
    snapshot_option,
    volcano_version_option,
)
from vgpuctl.core import spec
from vgpuctl.core.deviceconfig import DeviceConfig, default_device_config, parse_device_config
from vgpuctl.core.findings import ExitStatus, Severity
from vgpuctl.core.geometry.documents import DeviceConfigSource
from vgpuctl.core.geometry.explain import explain_mig, explain_vnpu
from vgpuctl.core.geometry.export import (
    configmap,
    dump_yaml,
    export_document,
    export_payload,
)
from vgpuctl.core.geometry.merge import Prefer, merge_payloads
from vgpuctl.core.geometry.report import API_VERSION, GeometryReport, LocatedFinding, sort_findings
from vgpuctl.core.geometry.validate import form_for, validate_source
from vgpuctl.core.safeyaml import MAX_DEPTH
from vgpuctl.core.versions import NEWEST_VOLCANO, Version
from vgpuctl.errors import UsageError
from vgpuctl.render import OutputFormat, dump, to_json
from vgpuctl.render.geometry import (
    render_device_config,
    render_explanation,
    render_findings,
    render_geometry_report,
    render_merge_summary,
)
from vgpuctl.sources import INPUT_LIMIT, read_device_config, read_device_configs


class DocumentFormat(str, enum.Enum):
    YAML = "yaml"
    JSON = "json"


EPILOG = f"""[bold]Examples[/bold]

  vgpuctl geometry validate volcano-vgpu-device-config.yaml --volcano-version v1.15.0
  vgpuctl geometry merge --vgpu volcano-vgpu-device-config.yaml --vnpu hami-scheduler-device.yaml > merged.yaml
  vgpuctl geometry show merged.yaml
  vgpuctl geometry explain --model "NVIDIA A100-SXM4-40GB" --memory 3000 --config merged.yaml
  vgpuctl geometry explain --chip Ascend310P --memory 3000
  kubectl get cm -n kube-system volcano-vgpu-device-config -o yaml | vgpuctl geometry export -
  vgpuctl geometry show cluster:kube-system/volcano-vgpu-device-config       # live (kubeconfig)
  vgpuctl geometry validate cluster:kube-system/volcano-vgpu-device-config --snapshot cluster.json

Each input is read {INPUT_LIMIT.help()}.
A document its anchors and aliases expand excessively, or nested over {MAX_DEPTH} levels, is unreadable (VGM002).
"""

geometry_app = typer.Typer(
    name="geometry",
    help="Validate, merge, show, explain and export the Volcano device config (MIG geometries, vnpus).",
    no_args_is_help=True,
    rich_markup_mode="rich",
    context_settings={"help_option_names": ["-h", "--help"]},
)

VERSION_HELP = "Volcano version the cluster runs, e.g. v1.15.1 (default: the newest, said on stderr)."


def _version(text: str | None) -> tuple[Version, bool]:
    """The version to judge for, and whether it was assumed (none given: the newest)."""
    version = read_volcano_version(text)
    return (NEWEST_VOLCANO, True) if version is None else (version, False)


def _assumed_notice(version: Version) -> None:
    make_console(stderr()).print(f"note: no --volcano-version given; judging for the newest Volcano ({version})")


@dataclass(frozen=True)
class Cluster:
    """Where `cluster:NS/NAME` is read: a snapshot file, or the live cluster (kubeconfig and context)."""

    snapshot: str | None = None
    kubeconfig: str | None = None
    context: str | None = None


LIVE = Cluster()
SNAPSHOT_HELP = "Read cluster:NS/NAME from this snapshot file, not the cluster."


def _read_cluster_configmap(ref: str, cluster: Cluster = LIVE) -> str:
    """`cluster:NS/NAME` → the ConfigMap read from the snapshot, or live, as YAML text."""
    namespace, _, name = ref.removeprefix("cluster:").partition("/")
    if not namespace or not name or "/" in name:
        raise UsageError(f"{ref}: expected cluster:NAMESPACE/NAME, e.g. cluster:kube-system/volcano-vgpu-device-config")
    import yaml

    if cluster.snapshot:
        return yaml.safe_dump(_snapshot_configmap(cluster.snapshot, namespace, name), sort_keys=False)
    from vgpuctl.cli.kubeopts import cluster_errors, connect
    from vgpuctl.kube.reader import read_configmap

    with cluster_errors():
        return yaml.safe_dump(read_configmap(connect(cluster.kubeconfig, cluster.context), namespace, name),
                              sort_keys=False)


def _snapshot_configmap(path: str, namespace: str, name: str) -> dict[str, Any]:
    from vgpuctl.snapshotfile import load_snapshot

    configmaps = [obj for obj in load_snapshot(path).objects if obj.get("kind") == "ConfigMap"]
    for obj in configmaps:
        meta = obj.get("metadata") or {}
        if (meta.get("namespace"), meta.get("name")) == (namespace, name):
            return obj
    held = sorted(f"{(o.get('metadata') or {}).get('namespace')}/{(o.get('metadata') or {}).get('name')}"
                  for o in configmaps)
    raise UsageError(f"--snapshot {path}: no ConfigMap {namespace}/{name} (it holds {', '.join(held) or 'none'})")


def cluster_of(paths: list[str], snapshot: str | None, kubeconfig: str | None, context: str | None) -> Cluster:
    """Where the `cluster:NS/NAME` inputs among `paths` are read; a usage error for cluster options with none."""
    refuse_live_options_with_snapshot(snapshot, kubeconfig, context)
    if not any(path.startswith("cluster:") for path in paths) and (snapshot or kubeconfig or context):
        raise UsageError("--snapshot, --kubeconfig and --context say where cluster:NS/NAME is read; no input is one")
    return Cluster(snapshot, kubeconfig, context)


def read_sources(path: str, cluster: Cluster = LIVE) -> list[DeviceConfigSource]:
    """Every device config in FILE, `-` or `cluster:NS/NAME` (`sources.read_device_configs`)."""
    text = _read_cluster_configmap(path, cluster) if path.startswith("cluster:") else None
    return read_device_configs(path, text)


def read_one(path: str, flag: str = "FILE", cluster: Cluster = LIVE) -> DeviceConfigSource:
    text = _read_cluster_configmap(path, cluster) if path.startswith("cluster:") else None
    return read_device_config(path, flag, text)


def _model(src: DeviceConfigSource) -> DeviceConfig:
    """The config Volcano would use; findings on stderr and exit 1 if it would reject the document."""
    parsed = parse_device_config(src.payload) if src.error is None else None
    if parsed is None or parsed.config is None:
        errors = [f for f in validate_source(src) if f.finding.code in ("VGM002", "VGM011")]
        console = make_console(stderr())
        console.print(f"{src.source}: Volcano would reject this device config and run on its built-in defaults")
        render_findings(errors, console, hints=False)
        raise typer.Exit(int(ExitStatus.FINDINGS))
    return parsed.config


@geometry_app.command("validate", epilog=EPILOG)
@guarded
def validate_command(
    files: list[str] = typer.Argument(..., metavar="FILE...", help="ConfigMap manifests or payloads, or - for stdin; "
                                      f"each {INPUT_LIMIT.help()}."),
    volcano_version: str | None = volcano_version_option(help=VERSION_HELP),
    output: OutputFormat = output_option(),
    fail_on: FailOnAny = fail_on_option(default=FailOnAny.ERROR),
    snapshot: str | None = snapshot_option(help=SNAPSHOT_HELP),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
) -> None:
    """Report every VGM finding the device config itself shows (VGM001–VGM011), with JSON paths and lines."""
    cluster = cluster_of(files, snapshot, kubeconfig, context)
    version, assumed = _version(volcano_version)
    sources = [src for path in files for src in read_sources(path, cluster)]
    findings = [f for src in sources for f in validate_source(src, version=version)]
    report = GeometryReport(version, assumed, [s.source for s in sources], sort_findings(findings))
    if assumed:
        _assumed_notice(version)
    out = stdout()
    if output is OutputFormat.TABLE:
        render_geometry_report(report, make_console(out))
    else:
        out.write(dump(report.to_dict(), output))
    raise typer.Exit(int(report.exit_status(Severity(fail_on.value))))


@geometry_app.command("show", epilog=EPILOG)
@guarded
def show_command(
    file: str = typer.Argument(..., metavar="FILE", help=f"ConfigMap manifest or payload, or - for stdin; "
                               f"{INPUT_LIMIT.help()}."),
    output: OutputFormat = output_option(),
    snapshot: str | None = snapshot_option(help=SNAPSHOT_HELP),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
) -> None:
    """Table the config as Volcano reads it: models → groups → instances, chips → templates."""
    src = read_one(file, "FILE", cluster_of([file], snapshot, kubeconfig, context))
    config = _model(src)
    out = stdout()
    if output is OutputFormat.TABLE:
        render_device_config(config, make_console(out), src.source)
    else:
        # a report like every other -o json (schemas/geometry-view.schema.json); `export` prints the bare document
        out.write(dump({"apiVersion": API_VERSION, "kind": "GeometryView", "source": src.source,
                        "config": export_payload(config)}, output))


@geometry_app.command("export", epilog=EPILOG)
@guarded
def export_command(
    file: str = typer.Argument(..., metavar="FILE", help=f"ConfigMap manifest or payload, or - for stdin; "
                               f"{INPUT_LIMIT.help()}."),
    volcano_version: str | None = volcano_version_option(help="Rewrite vnpus in the form this Volcano version reads."),
    output: DocumentFormat = output_option(DocumentFormat.YAML),
    snapshot: str | None = snapshot_option(help=SNAPSHOT_HELP),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
) -> None:
    """Print the normalised document (same wrapper as the input): what Volcano reads, in upstream key order."""
    src = read_one(file, "FILE", cluster_of([file], snapshot, kubeconfig, context))
    config = _model(src)
    form = form_for(_version(volcano_version)[0]) if volcano_version else None
    dropped = [f for f in validate_source(src) if f.finding.code == "VGM009"]
    if dropped:
        console = make_console(stderr())
        console.print(f"note: {len(dropped)} key(s) no reader knows are left out:")
        render_findings(dropped, console, hints=False)
    document = export_document(config, src.configmap, form)
    stdout().write(to_json(document) if output is DocumentFormat.JSON else dump_yaml(document))


@geometry_app.command("explain", epilog=EPILOG)
@guarded
def explain_command(
    model: str | None = typer.Option(None, "--model", metavar="M",
                                     help='GPU type as NVML names it, e.g. "NVIDIA A100-SXM4-40GB" (MIG).'),
    chip: str | None = typer.Option(None, "--chip", metavar="C",
                                    help="Ascend chip: commonWord (Ascend310P), resource name or chipName."),
    memory: int = typer.Option(..., "--memory", min=1, metavar="N",
                               help="Per-device memory request (vgpu-memory units / Ascend MiB)."),
    count: int = typer.Option(1, "--count", min=1, metavar="N", help="Ascend devices requested (template mode)."),
    config_file: str | None = typer.Option(None, "--config", metavar="FILE",
                                           help="Device ConfigMap or payload (default: Volcano's built-in defaults)."),
    output: OutputFormat = output_option(),
    snapshot: str | None = snapshot_option(help="Read --config cluster:NS/NAME from this snapshot file."),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
) -> None:
    """Say which MIG slice or vNPU template a request gets and why; exit 1 when Volcano never places it
    (or, for an Ascend request over memoryCapacity, places it on the smallest template instead)."""
    if (model is None) == (chip is None):
        raise UsageError("give exactly one of --model (MIG) or --chip (Ascend vNPU)")
    if model is not None and count != 1:
        raise UsageError("--count applies to --chip only (the MIG request is per GPU)")
    cluster = cluster_of([config_file] if config_file else [], snapshot, kubeconfig, context)
    if config_file:
        config, label = _model(read_one(config_file, "--config", cluster)), config_file
    else:
        config, label = default_device_config(), "Volcano's built-in defaults (no --config)"
        make_console(stderr()).print("note: no --config: using Volcano's built-in defaults (no MIG geometries, "
                                     "Ascend310P only)")
    explanation = explain_mig(config, model, memory) if model is not None else explain_vnpu(
        config, chip or "", memory, count)
    out = stdout()
    if output is OutputFormat.TABLE:
        render_explanation(explanation, make_console(out), label)
    else:
        data = {"apiVersion": API_VERSION, "kind": "GeometryExplanation", "config": label,
                **explanation.to_dict()}
        out.write(dump(data, output))
    raise typer.Exit(int(ExitStatus.OK if explanation.fits else ExitStatus.FINDINGS))


@geometry_app.command("merge", epilog=EPILOG)
@guarded
def merge_command(
    vgpu: str = typer.Option(..., "--vgpu", metavar="FILE", help="The vGPU plugin's device config (nvidia:)."),
    vnpu: str = typer.Option(..., "--vnpu", metavar="FILE", help="The Ascend plugin's device config (vnpus:)."),
    volcano_version: str | None = volcano_version_option(help=VERSION_HELP),
    name: str = typer.Option(spec.DEVICE_CONFIGMAP, "--name", metavar="N", help="Name of the merged ConfigMap."),
    namespace: str = typer.Option(spec.DEVICE_CONFIGMAP_NAMESPACE, "--namespace", metavar="NS",
                                  help="Namespace of the merged ConfigMap."),
    prefer: Prefer | None = typer.Option(None, "--prefer", help="Which input wins a conflict (still reported)."),
    output: DocumentFormat = output_option(DocumentFormat.YAML),
    snapshot: str | None = snapshot_option(help=SNAPSHOT_HELP),
    kubeconfig: str | None = kubeconfig_option(),
    context: str | None = context_option(),
) -> None:
    """Merge the vGPU and vNPU device configs into the one ConfigMap Volcano reads; stdout is the ConfigMap."""
    if vgpu == "-" and vnpu == "-":
        raise UsageError("only one of --vgpu and --vnpu can read stdin (-)")
    cluster = cluster_of([vgpu, vnpu], snapshot, kubeconfig, context)
    version, assumed = _version(volcano_version)
    sources = {flag: read_one(path, flag, cluster) for flag, path in (("--vgpu", vgpu), ("--vnpu", vnpu))}
    read_errors: list[LocatedFinding] = [f for src in sources.values() if src.error is not None
                                         for f in validate_source(src)]
    result = merge_payloads(sources["--vgpu"].payload, sources["--vnpu"].payload,
                            version=None if assumed else version, prefer=prefer)
    findings = [*read_errors, *result.findings]
    ok = not any(f.finding.severity is Severity.ERROR for f in findings)
    console = make_console(stderr())
    if assumed:
        _assumed_notice(version)
    args = result.deviceshare_arguments(name, namespace) if ok else None
    if ok:
        document = configmap(result.payload, name, namespace)  # no managed-by label: vgpuctl does not manage it
        stdout().write(to_json(document) if output is DocumentFormat.JSON else dump_yaml(document))
    render_merge_summary(findings, result.notes, console, args)
    raise typer.Exit(int(ExitStatus.OK if ok else ExitStatus.FINDINGS))


def register(app: typer.Typer) -> None:
    app.add_typer(geometry_app, name="geometry")
