"""Node-local checks (`doctor --node`, docs/contracts.md#finding-families VGN017 and VGN019), over the `HostFacts` in
`ctx.host`.

They answer what the cluster view cannot: does the driver work and is it new enough, does the engine the
kubelet uses start containers with NVIDIA's runtime by default (the vGPU plugin sets no runtimeClassName,
docs/device-plugins.md#vgpu-plugin-prerequisites), and do MIG mode and the GPU's MIG profiles agree with
`knownMigGeometries` (docs/vgpu.md#vgpu-node-registration, docs/vgpu.md#vgpu-mig). The
geometry comes from the device config the doctor was given (`--device-config`, or a snapshot/live cluster);
without one, geometry comparisons are skipped with an info finding, never guessed. The node's registered
mode is known only when a snapshot or live cluster holding this node is also given.

A check whose facts could not be observed (no GPU listed, the driver version unknown, no engine config found
or readable) is skipped with the reason, never passed: a √ means it looked. Each finding's subject names the
part of the node it is about, `node/<name>:<part>` (`ASPECTS`), so a script tells the four VGN019 checks apart.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from vgpuctl.core import spec
from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.deviceconfig import NvidiaConfig
from vgpuctl.core.doctor.framework import Category, DoctorContext, SkipCheck, check
from vgpuctl.core.findings import Finding, Severity

# `vgpuctl.core.host` (its parsers: 10 dataclasses, their regexes) is imported by the checks when they run, only
# for `doctor --node`: `doctor`, `nodes` and `why` on a cluster import this module to register the checks, and
# the host modules were ~10 ms of their start-up (`python -X importtime -m vgpuctl doctor --snapshot …`,
# benchmarks/doctor_scale.py).
if TYPE_CHECKING:
    from vgpuctl.core.host.nvidia_smi import GpuInfo
    from vgpuctl.core.host.observed import CommandResult, HostFacts
    from vgpuctl.core.host.runtime import RuntimeConfig

CAT = Category.HOST
NODE = ("node",)
ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

#: The vGPU device plugin needs a driver newer than this (docs/device-plugins.md#vgpu-plugin-prerequisites).
MAX_UNSUPPORTED_DRIVER = 440


def _host(ctx: DoctorContext) -> HostFacts:
    from vgpuctl.core.host.observed import HostFacts

    host = ctx.host
    return host if isinstance(host, HostFacts) else HostFacts()


#: The part of the node a finding is about, after the node in its subject: `node/gpu-1:runtime`.
ASPECTS = ("driver", "nvidia-smi", "npu-smi", "runtime", "mig", "npu")


def _subject(host: HostFacts, aspect: str) -> str:
    return f"node/{host.hostname or '(this node)'}:{aspect}"


def _f(host: HostFacts, aspect: str, code: str, severity: Severity, message: str, hint: str = "") -> Finding:
    return Finding(code, severity, _subject(host, aspect), message, hint or hint_for(code))


def _ran(result: CommandResult | None, tool: str) -> str:
    return result.describe() if result is not None else f"{tool} was not run"


def _not_nvidia(host: HostFacts) -> SkipCheck:
    return SkipCheck(f"no NVIDIA GPU seen ({_ran(host.nvidia_smi, 'nvidia-smi')}; no /dev/nvidiactl)")


def _gpu(gpu: GpuInfo) -> str:
    return f"GPU {gpu.index} ({gpu.name}, {gpu.uuid})"


def _nvidia_config(ctx: DoctorContext) -> NvidiaConfig | None:
    """The device config's NVIDIA section when one was given; None when only Volcano's defaults are known."""
    if ctx.facts.device_config is not None:
        return ctx.facts.device_config.nvidia
    if ctx.snapshot.device_config_source.startswith("configmap"):
        return ctx.snapshot.device_config.nvidia
    return None


def _registered_modes(ctx: DoctorContext, host: HostFacts) -> dict[str, str]:
    """GPU UUID -> mode in `volcano.sh/node-vgpu-register`, when the snapshot holds this node."""
    node = ctx.snapshot.node(host.hostname) if host.hostname else None
    if node is None:
        return {}
    return {d.id: d.mode for d in node.devices if d.family is spec.Family.VGPU}


# --------------------------------------------------------------------------------------------------


def _tool_findings(host: HostFacts, result: CommandResult | None, vendor: str,
                   other_vendor: bool) -> Iterator[Finding]:
    from vgpuctl.core.host.observed import Outcome

    tool = "nvidia-smi" if vendor == "nvidia" else "npu-smi"
    plugin = "vGPU device plugin" if vendor == "nvidia" else "Ascend device plugin"
    if result is None:
        return
    if result.outcome in (Outcome.FAILED, Outcome.TIMEOUT):
        yield _f(host, tool, "VGN019", ERROR, f"{result.describe()}: the driver or its management library does not "
                                              f"answer, so the {plugin} cannot enumerate devices on this node either")
    elif result.outcome is Outcome.MISSING:
        if vendor in host.device_nodes:
            nodes = "/dev/nvidiactl" if vendor == "nvidia" else "/dev/davinci_manager"
            yield _f(host, tool, "VGN019", ERROR, f"{tool} not found although {nodes} exists: the driver is loaded "
                                                  "but its tools are not installed or not on PATH")
        elif other_vendor:
            kind = "NVIDIA" if vendor == "nvidia" else "Ascend"
            yield _f(host, tool, "VGN019", INFO, f"{tool} not found: not an {kind} node, so those checks do not apply")


@check("host.tools", CAT, "VGN019", "nvidia-smi / npu-smi work on this node", sources=NODE)
def tools(ctx: DoctorContext) -> Iterator[Finding]:
    from vgpuctl.core.host.observed import HostFacts, Outcome

    if not isinstance(ctx.host, HostFacts):
        yield Finding("VGN019", ERROR, "node/(this node)", "no node-local observations were collected (internal: "
                      "DoctorContext.host is not HostFacts)", hint_for("VGN019"))
        return
    host = ctx.host
    nvidia, npu = host.nvidia_smi, host.npu_smi
    nvidia_ok, npu_ok = bool(nvidia and nvidia.ok), bool(npu and npu.ok)
    missing = (Outcome.MISSING, None)
    if (nvidia.outcome if nvidia else None) in missing and (npu.outcome if npu else None) in missing \
            and not host.device_nodes:
        yield _f(host, "driver", "VGN019", ERROR, "neither nvidia-smi nor npu-smi was found and no /dev/nvidia* or "
                                                  "/dev/davinci* device exists: no GPU/NPU driver on this node")
        return
    yield from _tool_findings(host, nvidia, "nvidia", host.is_ascend_node)
    yield from _tool_findings(host, npu, "ascend", host.is_nvidia_node)
    if nvidia_ok and not host.gpus:
        yield _f(host, "nvidia-smi", "VGN019", WARNING, "nvidia-smi ran but listed no GPU")
    if npu_ok and not host.npus:
        yield _f(host, "npu-smi", "VGN019", WARNING, "npu-smi info ran but listed no NPU chip")
    for problem in host.problems:
        tool = problem.source.split()[0].rsplit("/", 1)[-1] if problem.kind == "unparsable" else ""
        if tool in ("nvidia-smi", "npu-smi"):
            yield _f(host, tool, "VGN019", WARNING, f"{problem.source}: output not understood ({problem.detail}); "
                                                    "devices on that line were not checked")


@check("host.driver", CAT, "VGN017", "The NVIDIA driver is newer than 440", sources=NODE)
def driver(ctx: DoctorContext) -> Iterator[Finding]:
    host = _host(ctx)
    if not host.is_nvidia_node:
        raise _not_nvidia(host)
    version = host.driver_version
    from vgpuctl.core.host.nvidia_smi import driver_major

    major = driver_major(version)
    if major is None:
        why = host.nvidia_smi.describe() if host.nvidia_smi and not host.nvidia_smi.ok else \
            f"nvidia-smi reported {version or 'no driver version'}"
        raise SkipCheck(f"the NVIDIA driver version is unknown ({why}); check it with "
                        "`nvidia-smi --query-gpu=driver_version --format=csv`")
    if major <= MAX_UNSUPPORTED_DRIVER:
        yield _f(host, "driver", "VGN017", ERROR, f"NVIDIA driver {version} is {MAX_UNSUPPORTED_DRIVER} or older: "
                                                  "the vGPU device plugin and HAMi-core do not support it")


def _not_read(configs: list[RuntimeConfig]) -> str:
    return "; ".join(f"could not read {file}" for config in configs for file in config.unreadable)


@check("host.runtime", CAT, "VGN019", "nvidia is the default runtime of the container engine in use", sources=NODE)
def default_runtime(ctx: DoctorContext) -> Iterator[Finding]:
    host = _host(ctx)
    if not host.is_nvidia_node:
        raise _not_nvidia(host)
    why = ("the vGPU device plugin pod sets no runtimeClassName, so it cannot load NVML and restarts in a loop "
           "(`did you set the docker default runtime to nvidia?`)")
    in_use = host.runtime(host.engine_in_use) if host.engine_in_use else None
    candidates = [in_use] if in_use is not None else list(host.runtimes)
    if not candidates:
        not_read = "".join(f"; could not read {p.source} ({p.detail})" for p in host.problems if p.kind == "unreadable")
        raise SkipCheck(f"could not tell which container engine the kubelet uses "
                        f"({host.engine_evidence or 'nothing found'}) and found no containerd, Docker or CRI-O "
                        f"config{not_read}")
    unknown = [config for config in candidates if config.unreadable]
    if len(unknown) == len(candidates):  # a config that exists but cannot be read says nothing of the default
        raise SkipCheck(f"{_not_read(unknown)}: the default runtime was not checked")
    if unknown:
        yield _f(host, "runtime", "VGN019", INFO, f"{_not_read(unknown)}: the default runtime of "
                                                  f"{', '.join(c.engine for c in unknown)} was not checked")
    for config in candidates:
        if config.is_nvidia or config.unreadable:
            continue
        declared = config.nvidia_runtimes
        fix = f"nvidia-ctk runtime configure --runtime={config.engine} --set-as-default"
        first = (f"Make {declared[0]!r} the default" if declared
                 else "Install the NVIDIA Container Toolkit and register its runtime as the default")
        engine = "Docker" if config.engine == "docker" else config.engine
        hint = f"{first}: `sudo {fix}`, then restart {engine} (or let the GPU Operator's toolkit do it)."
        broken = f"; unparsable config skipped: {'; '.join(config.problems)}" if config.problems else ""
        declared_note = f" (runtime {', '.join(map(repr, declared))} is declared but not the default)" if declared \
            else " (no NVIDIA runtime is declared)"
        if in_use is not None:
            yield _f(host, "runtime", "VGN019", ERROR,
                     f"{config.describe()}{declared_note}, and the kubelet uses {config.engine} "
                     f"({host.engine_evidence}): {why}{broken}", hint)
        else:
            yield _f(host, "runtime", "VGN019", WARNING,
                     f"{config.describe()}{declared_note}; could not tell whether the kubelet uses "
                     f"{config.engine} ({host.engine_evidence}), but if it does, {why}{broken}", hint)


@check("host.mig", CAT, "VGN019", "MIG mode and profiles agree with knownMigGeometries", sources=NODE)
def mig(ctx: DoctorContext) -> Iterator[Finding]:
    from vgpuctl.core.host.nvidia_smi import MigMode

    host = _host(ctx)
    if not host.gpus:
        if not host.is_nvidia_node:
            raise _not_nvidia(host)
        raise SkipCheck("nvidia-smi listed no GPU" if host.nvidia_smi is not None and host.nvidia_smi.ok
                        else f"no GPU could be listed ({_ran(host.nvidia_smi, 'nvidia-smi')})")
    config = _nvidia_config(ctx)
    registered = _registered_modes(ctx, host)
    enable = "Enable MIG (`sudo nvidia-smi -i <gpu> -mig 1`, then reset the GPU) or register the node as hami-core."
    unchecked: list[GpuInfo] = []
    for gpu in host.gpus:
        mode = registered.get(gpu.uuid)
        geometry = config.geometry_for(gpu.registered_type) if config is not None else None
        if gpu.mig_mode is not MigMode.ENABLED and mode == "mig":
            state = "has no MIG support" if gpu.mig_mode is MigMode.NOT_SUPPORTED else \
                f"has MIG mode {gpu.mig_mode.value}"
            yield _f(host, "mig", "VGN019", ERROR, f"{_gpu(gpu)} is registered as `mig` but {state}: the device "
                                                   "plugin cannot create MIG instances, so `vgpu-mode: mig` pods bound "
                                                   "here fail", enable)
        elif gpu.mig_mode is MigMode.DISABLED and mode is None and geometry is not None:
            yield _f(host, "mig", "VGN019", WARNING,
                     f"{_gpu(gpu)} matches knownMigGeometries model(s) {', '.join(geometry.models)} but MIG mode "
                     "is Disabled: if this node is meant to run MIG (`operatingmode: mig` in "
                     "volcano-vgpu-node-config) the plugin cannot create instances; on a hami-core node ignore this",
                     enable)
        if gpu.mig_mode is not MigMode.ENABLED:
            continue
        if config is None:
            unchecked.append(gpu)
            continue
        if geometry is None:
            yield _f(host, "mig", "VGN019", ERROR,
                     f"{_gpu(gpu)} has MIG enabled but its type {gpu.registered_type!r} contains no "
                     "knownMigGeometries model: registered as `mig`, Volcano falls back to hami-core for it "
                     "(see VGN008)", hint_for("VGN008"))
            continue
        yield from _profiles(host, gpu, geometry.models, [(g.name, i.name) for g in geometry.groups
                                                          for i in g.instances])
    if unchecked:
        yield _f(host, "mig", "VGN019", INFO,
                 f"MIG is enabled on {len(unchecked)} GPU(s) ({', '.join(str(g.index) for g in unchecked)}) but no "
                 "device config was given: GPU names and MIG profiles were not compared with knownMigGeometries",
                 "Pass the device config (`--device-config`) or a snapshot / live cluster to compare them.")


def _profiles(host: HostFacts, gpu: GpuInfo, models: tuple[str, ...],
              instances: list[tuple[str, str]]) -> Iterator[Finding]:
    result = host.mig_profiles_result
    if result is None or not (result.ok or host.mig_profiles):
        what = result.describe() if result is not None else "nvidia-smi mig -lgip was not run"
        yield _f(host, "mig", "VGN019", WARNING, f"{_gpu(gpu)}: could not list its MIG profiles ({what}); the "
                                                 "geometry's instance names were not checked")
        return
    offered = {p.name for p in host.profiles_of(gpu.index)}
    if not offered:
        yield _f(host, "mig", "VGN019", WARNING, f"{_gpu(gpu)}: nvidia-smi mig -lgip lists no profile for this GPU; "
                                                 "the geometry's instance names were not checked")
        return
    missing: dict[str, list[str]] = {}
    for group, name in instances:
        if name not in offered:
            missing.setdefault(name, []).append(group)
    for name, groups in missing.items():
        yield _f(host, "mig", "VGN019", WARNING,
                 f"{_gpu(gpu)}: knownMigGeometries entry for {', '.join(models)} uses instance {name!r} "
                 f"(group {', '.join(groups)}), which this GPU does not offer (it offers "
                 f"{', '.join(sorted(offered))}): the device plugin cannot create it",
                 "Correct the instance names of this model's geometry in `knownMigGeometries` to the GPU's profiles "
                 "(`nvidia-smi mig -lgip`), then restart the device plugin and the scheduler.")


@check("host.npu", CAT, "VGN019", "Ascend chips report healthy", sources=NODE)
def npu_health(ctx: DoctorContext) -> Iterator[Finding]:
    host = _host(ctx)
    if not host.npus:
        if not host.is_ascend_node:
            raise SkipCheck(f"no Ascend NPU seen ({_ran(host.npu_smi, 'npu-smi')}; no /dev/davinci_manager)")
        raise SkipCheck("npu-smi info listed no NPU chip" if host.npu_smi is not None and host.npu_smi.ok
                        else f"no NPU could be listed ({_ran(host.npu_smi, 'npu-smi')})")
    for chip in host.npus:
        if not chip.healthy:
            yield _f(host, "npu", "VGN019", WARNING,
                     f"NPU {chip.npu_id} chip {chip.chip_id} ({chip.name}) reports health {chip.health!r}: the Ascend "
                     "device plugin reports it unhealthy and vNPUs on it are not allocated",
                     "Inspect the chip with `npu-smi info -t health -i <npu>` and its alarms; reset or replace it.")
