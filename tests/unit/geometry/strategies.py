"""Hypothesis strategies for device-config payloads: mostly well-formed, with unknown keys and overlaps.

Names come from small alphabets so two generated inputs often share a MIG model or a commonWord — that
is where merge conflicts and deduplication happen.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

NAMES = st.text(alphabet="abcXYZ019.", min_size=1, max_size=6)
MODELS = st.sampled_from(["A30", "A100-SXM4-40GB", "A100-PCIE-40GB", "A100-SXM4-80GB", "H100", "B200"])
WORDS = st.sampled_from(["Ascend310P", "Ascend910B3", "Ascend910A", "Ascend910C"])
UNKNOWN = st.dictionaries(st.sampled_from(["zz", "note", "vendorX"]), st.integers(0, 3), max_size=1)


@st.composite
def mig_entry(draw: st.DrawFn) -> dict[str, Any]:
    groups = draw(st.lists(st.fixed_dictionaries({
        "group": st.sampled_from(["group1", "group2", "group3"]),
        "geometries": st.lists(st.fixed_dictionaries({
            "name": st.sampled_from(["1g.5gb", "2g.10gb", "7g.40gb"]),
            "memory": st.integers(1, 81920),
            "count": st.integers(1, 7),
        }), min_size=1, max_size=2),
    }), min_size=1, max_size=2, unique_by=lambda g: g["group"]))
    entry: dict[str, Any] = {"models": draw(st.lists(MODELS, min_size=1, max_size=2, unique=True)),
                             "allowedGeometries": groups}
    entry.update(draw(UNKNOWN))
    return entry


@st.composite
def nvidia(draw: st.DrawFn) -> dict[str, Any]:
    section: dict[str, Any] = {
        "resourceCountName": "volcano.sh/vgpu-number",
        "resourceMemoryName": "volcano.sh/vgpu-memory",
        "resourceCoreName": "volcano.sh/vgpu-cores",
        "deviceSplitCount": draw(st.sampled_from([10, 10, 4])),
        "deviceCoreScaling": 1,
        "gpuMemoryFactor": draw(st.sampled_from([1, 1, 2])),
    }
    if draw(st.booleans()):
        section["defaultGPUNum"] = 1
    section.update(draw(UNKNOWN))
    section["knownMigGeometries"] = draw(st.lists(mig_entry(), max_size=3))
    return section


@st.composite
def vnpu_entry(draw: st.DrawFn) -> dict[str, Any]:
    capacity = draw(st.integers(1024, 65536))
    allocatable = draw(st.integers(1024, capacity))
    templates = draw(st.lists(st.fixed_dictionaries({
        "name": NAMES, "memory": st.integers(1, allocatable), "aiCore": st.integers(0, 30),
    }), max_size=3))
    word = draw(WORDS)
    entry: dict[str, Any] = {"chipName": draw(NAMES), "commonWord": word, "resourceName": f"huawei.com/{word}",
                             "resourceMemoryName": f"huawei.com/{word}-memory", "memoryAllocatable": allocatable,
                             "memoryCapacity": capacity, "templates": templates}
    entry.update(draw(UNKNOWN))
    return entry


@st.composite
def vnpus(draw: st.DrawFn) -> Any:
    entries = draw(st.lists(vnpu_entry(), max_size=3, unique_by=lambda e: e["commonWord"]))
    if draw(st.booleans()):
        return entries
    return {"hamiVnpuCore": draw(st.booleans()), "configs": entries}


@st.composite
def payload(draw: st.DrawFn, *, with_nvidia: float = 0.5, with_vnpus: float = 0.5) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if with_nvidia >= 1 or (with_nvidia > 0 and draw(st.booleans())):
        out["nvidia"] = draw(nvidia())
    if with_vnpus >= 1 or (with_vnpus > 0 and draw(st.booleans())):
        out["vnpus"] = draw(vnpus())
    out.update(draw(st.dictionaries(st.sampled_from(["topExtra", "other"]), st.integers(0, 2), max_size=1)))
    return out


SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-3, 70000), st.floats(-2, 1e5, allow_nan=False),
                   st.text(alphabet="ab1 .", max_size=4))


def any_value(depth: int = 2) -> st.SearchStrategy[Any]:
    """Arbitrary YAML-ish values, for the schema-agrees-with-parser property."""
    if depth == 0:
        return SCALAR
    return st.one_of(SCALAR, st.lists(any_value(depth - 1), max_size=2),
                     st.dictionaries(st.sampled_from(["name", "memory", "count", "group", "x"]), any_value(depth - 1),
                                     max_size=2))
