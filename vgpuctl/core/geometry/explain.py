"""`geometry explain`: which MIG slice or vNPU template a request gets, and why — or why it never fits.

The answer comes from the functions the pod rules use (`mig_fit_in_geometry`, `mig_request_mib`,
`trim_vnpu_memory`), so `explain`, `lint` (VGP009/VGP017, VGH003/VGH004/VGH009) and the webhook agree
by construction. The steps spell out Volcano's walk (docs/vgpu.md#vgpu-mig, docs/ascend.md#ascend-hami-template-mode)
with the numbers filled in.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from vgpuctl.core.deviceconfig import (
    DeviceConfig,
    VnpuConfig,
    VnpuTrim,
    mig_fit_in_geometry,
    mig_request_mib,
    trim_vnpu_memory,
)


@dataclass(frozen=True, slots=True)
class Explanation:
    family: str  # "mig" | "vnpu"
    subject: str  # the model or chip asked about
    request: dict[str, int]
    fits: bool
    answer: str  # one line: what the request gets, or why it never fits
    steps: tuple[str, ...] = ()
    result: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "family": self.family,
            "subject": self.subject,
            "request": dict(self.request),
            "fits": self.fits,
            "answer": self.answer,
            "steps": list(self.steps),
            "result": dict(self.result),
        }


def explain_mig(config: DeviceConfig, model: str, memory: int) -> Explanation:
    """A per-GPU `vgpu-memory` request on a MIG GPU whose type (NVML name) is `model`."""
    nv = config.nvidia
    request = mig_request_mib(nv, memory)
    asked = {"memory": memory, "requestMiB": request}
    steps = [f"request: {memory} × gpuMemoryFactor {nv.memory_factor} = {request} MiB per GPU"
             if nv.memory_factor > 1 else f"request: {memory} MiB per GPU (gpuMemoryFactor {nv.gpu_memory_factor})"]
    if not nv.known_mig_geometries:
        return Explanation("mig", model, asked, False,
                           "no knownMigGeometries in the device config: Volcano runs every GPU as hami-core, so a "
                           "MIG request never fits", tuple(steps))
    index, geometry = next(((i, g) for i, g in enumerate(nv.known_mig_geometries) if g.matches(model)), (-1, None))
    if geometry is None:
        known = sorted({m for g in nv.known_mig_geometries for m in g.models if m})
        return Explanation("mig", model, asked, False,
                           f"no knownMigGeometries model is a substring of {model!r}: Volcano treats such a GPU as "
                           "hami-core, so a MIG request never fits it",
                           (*steps, f"known models: {', '.join(known)}"))
    matched = next(m for m in geometry.models if m and m in model)
    steps.append(f"model: knownMigGeometries[{index}] matches ({matched!r} is a substring of {model!r}); "
                 "the first matching entry wins")
    fit = mig_fit_in_geometry(geometry, request)
    for group in geometry.groups:
        best = next((i for i in sorted(group.instances, key=lambda i: i.memory) if i.memory >= request), None)
        largest = max((i.memory for i in group.instances), default=0)
        if best is None:
            steps.append(f"{group.name}: no instance ≥ {request} MiB (largest {largest} MiB)")
        elif fit is not None and group is fit.group:
            steps.append(f"{group.name}: smallest instance ≥ {request} MiB is {best.name} ({best.memory} MiB) — "
                         "chosen on an idle GPU (first group that fits, in config order)")
        else:
            steps.append(f"{group.name}: {best.name} ({best.memory} MiB) — only on a GPU already running "
                         f"{group.name} (a GPU keeps its group until it is empty)")
    if fit is None:
        return Explanation("mig", model, asked, False,
                           f"{request} MiB is larger than every MIG instance of this model (largest "
                           f"{geometry.largest_instance} MiB): the pod never fits", tuple(steps))
    units = f" ({fit.instance.memory // nv.memory_factor} in vgpu-memory units)" if nv.memory_factor > 1 else ""
    steps.append(f"booked: the instance's {fit.instance.memory} MiB{units}, not the requested memory")
    return Explanation("mig", model, asked, True,
                       f"{fit.instance.name} ({fit.instance.memory} MiB) in {fit.group.name} on an idle GPU",
                       tuple(steps),
                       {"entry": index, "group": fit.group.name, "instance": fit.instance.name,
                        "memory": fit.instance.memory})


def find_chip(config: DeviceConfig, chip: str) -> VnpuConfig | None:
    """The vnpus entry named `chip` by commonWord, resource name or chip name (in that order)."""
    for attr in ("common_word", "resource_name", "chip_name"):
        for vnpu in config.vnpus:
            if getattr(vnpu, attr) == chip:
                return vnpu
    return None


def explain_vnpu(config: DeviceConfig, chip: str, memory: int, count: int = 1) -> Explanation:
    """A template-mode Ascend request: `count` devices of `memory` MiB each on chip `chip`."""
    asked = {"memory": memory, "count": count}
    vnpu = find_chip(config, chip)
    if vnpu is None:
        known = ", ".join(v.common_word for v in config.vnpus) or "none"
        return Explanation("vnpu", chip, asked, False,
                           f"no vnpus entry declares {chip!r} (known: {known}): Volcano never books it", ())
    templates = ", ".join(f"{t.name} {t.memory}" for t in vnpu.templates) or "none"
    steps = [f"chip: {vnpu.common_word} ({vnpu.resource_name}); templates by memory: {templates}; "
             f"memoryAllocatable {vnpu.memory_allocatable}, memoryCapacity {vnpu.memory_capacity}"]
    trim = trim_vnpu_memory(vnpu, memory)
    result: dict[str, Any] = {"commonWord": vnpu.common_word, "memory": trim.memory,
                              "template": trim.template.name if trim.template else None}
    if trim.memory == 0:
        steps.append(f"{memory} MiB > memoryCapacity {vnpu.memory_capacity}: Volcano trims it to 0")
    elif trim.template is not None:
        steps.append(f"rounded up to the first template with memory ≥ {memory}: {trim.template.name} "
                     f"({trim.template.memory} MiB)")
    else:
        steps.append(f"larger than every template but ≤ memoryCapacity: a whole card "
                     f"(memoryAllocatable {vnpu.memory_allocatable} MiB)")
    # Volcano checks the count first (verifyReq in volcano-sh/volcano
    # pkg/scheduler/api/devices/ascend/hami/device_info.go): several devices need whole cards, and any
    # other trimmed memory (a template, or the 0 of an oversized request) is refused on every node.
    if count > 1 and trim.memory != vnpu.memory_allocatable:
        got = ("memory over memoryCapacity (trimmed to 0)" if trim.memory == 0
               else f"a partial card, {_vnpu_answer(vnpu, trim)},")
        steps.append(f"{count} devices requested: Volcano needs each to be a whole card (memoryAllocatable "
                     f"{vnpu.memory_allocatable} MiB), this request books {trim.memory} MiB")
        return Explanation("vnpu", vnpu.common_word, asked, False,
                           f"never fits: {count} devices with {got} each; Volcano refuses partial "
                           "memory when several devices are requested (VGH004); omit the memory for whole cards",
                           tuple(steps), result)
    if trim.memory == 0:
        # Placed, but not as asked: the request books no memory and the plugin is told the smallest template.
        smallest = vnpu.templates[0].name if vnpu.templates else "none"
        return Explanation("vnpu", vnpu.common_word, asked, False,
                           f"{memory} MiB exceeds memoryCapacity {vnpu.memory_capacity}: Volcano still places it, but "
                           f"books no memory and hands out the smallest template ({smallest}) instead (VGH003)",
                           tuple(steps), result)
    answer = _vnpu_answer(vnpu, trim)
    if count > 1:
        answer = f"{count} × {answer}"
    return Explanation("vnpu", vnpu.common_word, asked, True, answer, tuple(steps), result)


def _vnpu_answer(vnpu: VnpuConfig, trim: VnpuTrim) -> str:
    """What a trimmed, non-zero request gets on `vnpu`."""
    if trim.template is not None:
        return f"{trim.template.name} ({trim.template.memory} MiB)"
    return f"a whole card ({vnpu.memory_allocatable} MiB)"
