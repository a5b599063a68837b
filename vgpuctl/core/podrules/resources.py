"""Which family a resource name belongs to, and how its value reads as a whole number."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.deviceconfig import VnpuConfig
from vgpuctl.core.memo import MISSING, store
from vgpuctl.core.podrules.context import ASCEND, ContainerView, PodContext, quantity, show


@dataclass(frozen=True, slots=True)
class AscendResource:
    name: str
    role: str  # "count" | "memory" | "core"
    count_name: str  # the count resource this one belongs with
    vnpu: VnpuConfig | None  # the `vnpus` entry declaring it; None when the config Volcano runs on has none
    declared: bool  # False: a given device config has no `vnpus` entry declaring it (VGH008)


def ascend_resource(ctx: PodContext, name: str) -> AscendResource | None:
    """Classify a `huawei.com/Ascend*` resource; `huawei.com/npu-core` is MindCluster, not this.

    Remembered per name and device config (`ResourceNames.memo`): the answer depends on nothing else, and
    the same few names recur in every Ascend pod. The value is shared, so it stays frozen."""
    memo = ctx.names.memo  # remembered per name (benchmarks/review_throughput.py)
    key = ("ascend", name)
    found = memo.get(key, MISSING)
    if found is MISSING:
        found = store(memo, key, _ascend_resource(ctx.names.vnpus, ctx.names.vnpus_complete, name))
    resource: AscendResource | None = found
    return resource


def _ascend_resource(vnpus: tuple[VnpuConfig, ...], complete: bool, name: str) -> AscendResource | None:
    if not name.startswith(spec.ASCEND_RESOURCE_PREFIX):
        return None
    for vnpu in vnpus:
        if name == vnpu.resource_name:
            return AscendResource(name, "count", vnpu.resource_name, vnpu, True)
        if name == vnpu.resource_memory_name:
            return AscendResource(name, "memory", vnpu.resource_name, vnpu, True)
        if name == vnpu.core_resource_name:
            return AscendResource(name, "core", vnpu.resource_name, vnpu, True)
    # Undeclared: the naming convention every shipped config follows. Unknown to Volcano when the config
    # was given; else (the built-in config standing in) taken as declared by the real one, entry unknown.
    if name.endswith(spec.ASCEND_MEMORY_SUFFIX):
        role, count = "memory", name[: -len(spec.ASCEND_MEMORY_SUFFIX)]
    elif name.endswith(spec.ASCEND_CORE_SUFFIX):
        role, count = "core", name[: -len(spec.ASCEND_CORE_SUFFIX)]
    else:
        role, count = "count", name
    return AscendResource(name, role, count, None, not complete)


def ascend_resources(ctx: PodContext, c: ContainerView) -> list[AscendResource]:
    """The container's Ascend resources, classified; kept on the view (four rules ask per container) until a
    default adds a limit."""
    if c.ascend is None:  # classified once per view, not per rule (benchmarks/review_throughput.py)
        c.ascend = _ascend_resources(ctx, c)
    cached: list[AscendResource] = c.ascend
    return cached


def _ascend_resources(ctx: PodContext, c: ContainerView) -> list[AscendResource]:
    if not c.kinds & ASCEND:
        return []
    found: list[AscendResource] = []  # each name once: limits first, then requests
    for name in c.limits:
        res = ascend_resource(ctx, name)
        if res is not None:
            found.append(res)
    for name in c.requests:
        if name not in c.limits:
            res = ascend_resource(ctx, name)
            if res is not None:
                found.append(res)
    return found


@dataclass(frozen=True, slots=True)
class WholeNumber:
    value: int | None  # None when the text is not a whole number
    problem: str  # why not, for messages ("" when value is set)
    unit: str = ""  # the unit suffix as written, if any


_whole_numbers: dict[str | int, WholeNumber] = {}  # a dict beats an lru_cache (benchmarks/review_throughput.py)


def whole_number(raw: Any) -> WholeNumber:
    """A resource value read as a whole number; remembered (for strings and ints, never bools: True == 1),
    since the same few values recur in every pod. Values come from user input, so the memo is cleared
    when it grows past a bound."""
    if type(raw) is str or type(raw) is int:
        found = _whole_numbers.get(raw)
        return store(_whole_numbers, raw, _whole_number(raw)) if found is None else found
    return _whole_number(raw)


def _whole_number(raw: Any) -> WholeNumber:
    q = quantity(raw)
    if q is None:
        return WholeNumber(None, f"{show(raw)} is not a valid Kubernetes quantity")
    n = q.as_int()
    if n is None:
        return WholeNumber(None, f"{show(raw)} is not a whole number (extended resources must be integers)",
                           q.suffix)
    return WholeNumber(n, "", q.suffix)
