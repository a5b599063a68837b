"""`schemas/device-config.schema.json` accepts what Volcano decodes and rejects what makes it fall back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
from hypothesis import given
from hypothesis import strategies as st

from tests.unit.geometry.helpers import VGPU_PAYLOAD, VNPU_PAYLOAD, payload
from vgpuctl.core.deviceconfig import parse_device_config
from vgpuctl.core.geometry.merge import merge_payloads

SCHEMAS = Path(__file__).resolve().parents[3] / "schemas"
SCHEMA = json.loads((SCHEMAS / "device-config.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)


def valid(document: Any) -> bool:
    return VALIDATOR.is_valid(document)


def test_schemas_are_valid_2020_12() -> None:
    for name in ("device-config.schema.json", "geometry-report.schema.json"):
        jsonschema.Draft202012Validator.check_schema(json.loads((SCHEMAS / name).read_text()))


def test_upstream_and_merged_configs_validate_in_both_vnpus_forms() -> None:
    vgpu, vnpu = payload(VGPU_PAYLOAD), payload(VNPU_PAYLOAD)
    assert valid(vgpu) and valid(vnpu)
    merged = merge_payloads(vgpu, vnpu).payload
    assert valid(merged) and isinstance(merged["vnpus"], dict)
    listed = {**merged, "vnpus": merged["vnpus"]["configs"]}
    assert valid(listed)


def test_unknown_keys_are_allowed_and_type_errors_are_not() -> None:
    assert valid({"nvidia": {"migstrategy": "mixed"}, "extra": 1})
    assert not valid({"nvidia": {"knownMigGeometries": [{"models": ["A30"], "allowedGeometries": [[{"name": "x"}]]}]}})
    assert not valid({"nvidia": {"gpuMemoryFactor": "2"}})
    assert not valid({"nvidia": {"deviceSplitCount": -1}})
    assert not valid({"vnpus": "Ascend310P"})
    assert not valid(["nvidia"])


SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-3, 70000), st.floats(0, 1e5),
                   st.text(alphabet="ab1 .", max_size=4))
VALUE = st.one_of(SCALAR, st.lists(SCALAR, max_size=2), st.dictionaries(st.sampled_from(["a", "memory"]), SCALAR,
                                                                       max_size=1))


def maybe(value: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A typed position: usually a value of the right shape, sometimes anything."""
    return st.one_of(value, VALUE)


@st.composite
def loose_payload(draw: st.DrawFn) -> Any:
    instance = st.fixed_dictionaries({}, optional={k: VALUE for k in ("name", "memory", "count")})
    group = st.fixed_dictionaries({}, optional={"group": VALUE, "geometries": maybe(st.lists(maybe(instance),
                                                                                               max_size=2))})
    entry = st.fixed_dictionaries({}, optional={"models": maybe(st.lists(VALUE, max_size=2)),
                                                "allowedGeometries": maybe(st.lists(maybe(group), max_size=2))})
    nvidia = st.fixed_dictionaries({}, optional={
        **{k: VALUE for k in ("resourceCountName", "gpuMemoryFactor", "deviceCoreScaling", "overwriteEnv")},
        "knownMigGeometries": maybe(st.lists(maybe(entry), max_size=2)),
    })
    template = st.fixed_dictionaries({}, optional={k: VALUE for k in ("name", "memory", "aiCPU")})
    vnpu = st.fixed_dictionaries({}, optional={
        **{k: VALUE for k in ("commonWord", "memoryAllocatable", "aiCore")},
        "templates": maybe(st.lists(maybe(template), max_size=2)),
    })
    vnpus = st.one_of(st.lists(maybe(vnpu), max_size=2),
                      st.fixed_dictionaries({}, optional={"hamiVnpuCore": VALUE,
                                                          "configs": maybe(st.lists(maybe(vnpu), max_size=2))}))
    return draw(maybe(st.fixed_dictionaries({}, optional={"nvidia": maybe(nvidia), "vnpus": maybe(vnpus)})))


@given(loose_payload())
def test_schema_agrees_with_volcanos_decoder(raw: Any) -> None:
    """Valid under the schema exactly when Volcano decodes it (negative floats in unsigned fields aside)."""
    assert valid(raw) == (parse_device_config(raw).problems == ())
