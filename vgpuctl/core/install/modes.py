"""What `vgpuctl install --mode` can turn on, and which combinations the scheduler survives
(docs/volcano.md#fatal-combinations).

A mode is one `deviceshare` family. Volcano exits at session open (`klog.Fatal`) when gpushare and
gpu-number are both on, or either is on with vGPU; install refuses those before it writes anything,
counting the families already enabled in the cluster, not only the requested ones.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable

from vgpuctl.core import spec
from vgpuctl.core.selector import Selector, SelectorError, parse_selector
from vgpuctl.core.versions import Version, has_ascend, has_device_config, has_deviceshare


class InstallError(ValueError):
    """The install cannot be planned as asked (a fatal combination, a version without the feature, …)."""


def parse_nodes(text: str) -> Selector:
    """`--nodes SELECTOR` read by the shared label-selector parser (`core.selector`, as `nodes -l` reads it).

    The same selector picks the nodes install labels and the node affinity of the device-plugin DaemonSets;
    a selector that cannot be read is an `InstallError` naming the option.
    """
    try:
        return parse_selector(text)
    except SelectorError as exc:
        raise InstallError(f"--nodes: {exc}") from None


class Mode(str, enum.Enum):
    VGPU = "vgpu"
    GPUSHARE = "gpushare"
    GPUNUMBER = "gpunumber"
    VNPU_HAMI = "vnpu-hami"
    VNPU_MINDCLUSTER = "vnpu-mindcluster"

    @property
    def family(self) -> spec.Family:
        return FAMILY_BY_MODE[self]

    @property
    def enable_arg(self) -> str:
        return spec.ENABLE_ARG_BY_FAMILY[self.family]


FAMILY_BY_MODE = {
    Mode.VGPU: spec.Family.VGPU,
    Mode.GPUSHARE: spec.Family.GPUSHARE,
    Mode.GPUNUMBER: spec.Family.GPUNUMBER,
    Mode.VNPU_HAMI: spec.Family.ASCEND_HAMI,
    Mode.VNPU_MINDCLUSTER: spec.Family.ASCEND_MINDCLUSTER,
}
MODE_BY_FAMILY = {family: mode for mode, family in FAMILY_BY_MODE.items()}

#: Modes whose scheduler side reads the device ConfigMap (`nvidia:` / `vnpus:`).
DEVICE_CONFIG_MODES = frozenset({Mode.VGPU, Mode.VNPU_HAMI})


def fatal_combination(families: Iterable[spec.Family]) -> str | None:
    """Volcano's `klog.Fatal` text for a set of enabled families, or None when the scheduler starts."""
    on = set(families)
    share, number, vgpu = (spec.Family.GPUSHARE in on, spec.Family.GPUNUMBER in on, spec.Family.VGPU in on)
    if share and number:
        return "gpushare and gpunumber cannot both be on (Volcano exits: 'can not define true in both gpu " \
               "sharing and gpu number')"
    if (share or number) and vgpu:
        return "gpushare/gpunumber and vgpu cannot both be on (Volcano exits: 'gpu-share and vgpu can't be used " \
               "together')"
    return None


def check_modes(modes: Iterable[Mode], already_on: Iterable[spec.Family], version: Version) -> None:
    """Raise InstallError when `modes` cannot be installed on Volcano `version` next to `already_on`."""
    wanted = list(modes)
    if not wanted:
        raise InstallError("no --mode given (vgpu, gpushare, gpunumber, vnpu-hami, vnpu-mindcluster)")
    if not has_deviceshare(version):
        raise InstallError(f"Volcano {version} has no deviceshare plugin (it arrived in v1.9.0); upgrade Volcano")
    for mode in wanted:
        if mode in (Mode.VNPU_HAMI, Mode.VNPU_MINDCLUSTER) and not has_ascend(version):
            raise InstallError(f"--mode {mode.value} needs Volcano >= v1.14.0 (this is {version})")
        if mode is Mode.VGPU and not has_device_config(version):
            raise InstallError(f"--mode vgpu: Volcano {version} predates the device ConfigMap and the 6-field "
                               "register annotation (v1.12.0); vgpuctl installs vGPU on v1.12.0 or newer only")
    requested = {m.family for m in wanted}
    problem = fatal_combination(requested)
    if problem:
        raise InstallError(f"refusing --mode {' --mode '.join(m.value for m in wanted)}: {problem}")
    combined = requested | set(already_on)
    problem = fatal_combination(combined)
    if problem:
        enabled = ", ".join(sorted(MODE_BY_FAMILY[f].value for f in set(already_on) - requested))
        raise InstallError(f"refusing: the scheduler already has {enabled} on, and {problem}; turn it off first "
                           "(vgpuctl uninstall, or edit the deviceshare arguments)")
