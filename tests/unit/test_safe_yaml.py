"""Issue 23 §7 and §9: `vgpuctl.core.safeyaml`, the one loader for YAML and JSON from users and the cluster.

Alias bombs are refused by yaml.v2's "excessive aliasing" rule (what Volcano and kubectl decode with), real
anchors keep working, nesting deeper than `MAX_DEPTH` is refused, and a refused document leaves the ones
after it readable. Every hostile document here is run for real: the loader refuses it before anything walks
the expansion, so each test takes milliseconds.
"""

from __future__ import annotations

import datetime
import json
import re

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from tests.hostile import laughs
from vgpuctl.core import safeyaml
from vgpuctl.core.safeyaml import MAX_DEPTH, InputError, documents, load, load_all


def refusal(text: str | bytes) -> InputError:
    (doc,) = documents(text)
    assert isinstance(doc, InputError) and doc.refused, doc
    return doc


@pytest.mark.parametrize("flow", [True, False])
def test_a_billion_laughs_is_refused_before_anything_expands_it(flow: bool) -> None:
    refused = refusal(laughs(flow=flow))
    assert "excessive aliasing" in str(refused) and "\n" not in str(refused)
    assert "expand to 4,412,961,516 through anchors and aliases" in str(refused)
    assert refused.line == 1
    with pytest.raises(InputError, match="excessive aliasing"):
        load(laughs())
    with pytest.raises(InputError, match="excessive aliasing"):
        load_all(laughs().encode())


def test_merge_keys_are_aliases_too() -> None:
    """`<<: [*a, *a, …]` makes PyYAML's own constructor copy pairs exponentially (flatten_mapping)."""
    lines = ["a0: &a0 {" + ", ".join(f"k{i}: {i}" for i in range(9)) + "}"]
    lines += [f"a{i}: &a{i} {{<<: [{', '.join([f'*a{i - 1}'] * 9)}]}}" for i in range(1, 10)]
    assert "excessive aliasing" in str(refusal("\n".join(lines)))


def test_an_alias_inside_its_own_anchor_is_refused() -> None:
    assert "refers to the node that contains it" in str(refusal("a: &a [1, *a]\n"))
    assert "refers to the node that contains it" in str(refusal("&m {k: *m}\n"))


def test_utf16_and_bytes_are_counted_too() -> None:
    assert refusal(b"\xff\xfe" + laughs().encode("utf-16-le")).refused
    assert refusal(laughs().encode()).refused


def test_real_anchors_read_as_pyyaml_reads_them() -> None:
    text = """\
defaults: &defaults {schedulerName: volcano, restartPolicy: Never}
labels: &labels {app: trainer, team: ml}
pods:
  - <<: *defaults
    metadata: {labels: *labels}
  - <<: *defaults
    metadata: {labels: *labels}
    restartPolicy: Always
"""
    assert load(text) == yaml.safe_load(text)
    assert list(documents(text)) == [yaml.safe_load(text)]


def test_heavy_but_bounded_reuse_is_kept() -> None:
    """A geometry list reused by 300 models (yaml.v2 allows 99 % of up to 400,000 decoded nodes from aliases)."""
    geometries = "[" + ", ".join(f"{{name: g{i}, memory: {i * 1024}, count: 1}}" for i in range(20)) + "]"
    models = "\n".join(f"  - {{models: [m{i}], allowedGeometries: *g}}" for i in range(300))
    text = f"shared: &g {geometries}\nknown:\n{models}\n"
    value = load(text)
    assert len(value["known"]) == 300 and value["known"][299]["allowedGeometries"][19]["memory"] == 19 * 1024


def test_a_flat_list_of_aliases_below_the_ratio_is_kept() -> None:
    """100 aliases to an 11-node list: 1,101 nodes decoded, 98.9 % through aliases — under yaml.v2's 99 %."""
    text = "a: &a [" + ", ".join(["x"] * 10) + "]\nb: [" + ", ".join(["*a"] * 100) + "]\n"
    assert len(load(text)["b"]) == 100


def test_a_refused_document_leaves_the_others_readable() -> None:
    text = "kind: Pod\n---\n" + laughs() + "---\nkind: Service\n"
    first, bomb, last = documents(text)
    assert first == {"kind": "Pod"} and last == {"kind": "Service"}
    assert isinstance(bomb, InputError) and bomb.line == 3


@pytest.mark.parametrize("as_json", [True, False])
def test_nesting_deeper_than_max_depth_is_refused(as_json: bool) -> None:
    def nested(depth: int) -> str:
        value: object = 1
        for _ in range(depth):
            value = {"a": [value]}
        return json.dumps(value) if as_json else yaml.safe_dump(value, default_flow_style=True, width=1 << 20)

    assert load_all(nested(MAX_DEPTH // 2))  # 256 levels: 128 mappings, each holding a list
    refused = refusal(nested(MAX_DEPTH // 2 + 1))
    assert str(refused).endswith(f"nested deeper than {MAX_DEPTH} levels")


def test_100000_deep_json_is_an_error_not_a_recursion_error() -> None:
    with pytest.raises(InputError, match="not valid JSON: depth limit exceeded"):
        load_all("[" * 100_000 + "]" * 100_000)
    with pytest.raises(InputError, match=r"^not valid YAML at line 1, column \d+: exceeded maximum nesting depth$"):
        load("a: " + "[" * 100_000)


def test_snapshots_may_skip_the_depth_walk() -> None:
    deep = "[" * 300 + "]" * 300
    assert load_all(deep, max_depth=None)
    with pytest.raises(InputError):
        load_all(deep)


def test_syntax_errors_are_one_line_with_the_position() -> None:
    with pytest.raises(InputError) as caught:
        load("a: 1\nb: [2,\n")
    assert str(caught.value) == "not valid YAML at line 3, column 1: did not find expected node content"
    assert caught.value.reason == "not valid YAML: did not find expected node content"
    assert caught.value.line == 3 and not caught.value.refused
    assert isinstance(caught.value, yaml.YAMLError)  # callers that catch PyYAML's errors still catch it
    with pytest.raises(InputError, match="expected a single document"):
        load("a: 1\n---\nb: 2\n")


def test_json_first_then_yaml_and_the_json_error_when_both_fail() -> None:
    assert load_all('{"a": 1}') == [{"a": 1}]
    assert load_all('{"a": 1,}') == [{"a": 1}]  # not JSON, but YAML flow style
    with pytest.raises(InputError, match=r'^not valid JSON: unexpected end of data: line 1 column 7'):
        load_all('{"a": ')


def test_timestamps_are_kept_as_text_on_request() -> None:
    assert load("t: 2026-11-01") == {"t": datetime.date(2026, 11, 1)}
    assert load_all("t: 2026-11-01", timestamps=False) == [{"t": "2026-11-01"}]


def test_compose_gives_checked_nodes_with_lines() -> None:
    node = safeyaml.compose("a:\n  b: |\n    text\n")
    assert node is not None and node.value[0][1].value[0][1].style == "|"
    assert safeyaml.compose("") is None
    with pytest.raises(InputError, match="excessive aliasing"):
        safeyaml.compose(laughs())


def test_every_reader_of_cluster_yaml_refuses_a_bomb() -> None:
    """The payload strings inside ConfigMaps (device config, scheduler config) go through the same loader."""
    from vgpuctl.core.deviceconfig import DeviceConfigDocumentError, payload_from_document
    from vgpuctl.core.geometry.documents import find_device_configs, parse_payload_text
    from vgpuctl.core.install.devconf import payload_of
    from vgpuctl.core.install.modes import InstallError
    from vgpuctl.core.install.scheduler_edit import load_conf
    from vgpuctl.core.scheduler_config import SchedulerConfError, parse_scheduler_conf

    bomb = laughs()
    configmap = {"kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"device-config.yaml": bomb}}
    with pytest.raises(DeviceConfigDocumentError, match=r"device-config\.yaml: refused at line 1: excessive aliasing"):
        payload_from_document(configmap)
    with pytest.raises(SchedulerConfError, match="excessive aliasing"):
        parse_scheduler_conf(bomb)
    with pytest.raises(InstallError, match="excessive aliasing"):
        load_conf(bomb)
    with pytest.raises(InstallError, match="excessive aliasing"):
        payload_of(configmap, "configmap/kube-system/x")
    src = parse_payload_text(bomb, "p", offset=10)
    assert src.error is not None and src.error.startswith("refused: excessive aliasing") and src.error_line == 11
    (found,) = find_device_configs(bomb, "f")
    assert found.error is not None and "excessive aliasing" in found.error


ALIAS_PLACES = [
    "a: &x 1\nb: *x\n", "- &x 1\n- *x\n", "[&x 1, *x]", "[&x 1,*x]", "{a: &x 1, b: *x}", '{"a": &x 1, "b":*x}',
    "a: &k key\n? *k\n: v\n", "*k : v\n", "a: &x 1\nb:\t*x\n", "a: &x 1\r\nb: *x\r\n", "- &x 1\x85- *x",
    "- &x 1\u2028- *x", "- &x 1\u2029- *x", "\ufeff- &x 1\n- *x\n", "base: &b {a: 1}\nc:\n  <<: *b\n",
    "a: &x-1_y 1\nb: [ *x-1_y ]\n", "a: &x 1\nb:\n  - *x # *x\n",
]


@pytest.mark.parametrize("text", ALIAS_PLACES)
def test_the_alias_gate_sees_every_place_libyaml_reads_an_alias(text: str) -> None:
    """The pass over the nodes runs only when the gate says an alias may be there: it must never miss one."""
    assert any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(text, Loader=yaml.CSafeLoader))
    assert safeyaml._may_alias(text) and safeyaml._may_alias(text.encode())


@pytest.mark.parametrize("text", ["cron: '*/5 * * * *'\n", "regex: (.*)pod\n", "cmd: rm -rf /tmp/*\n", "a: 2*x\n",
                                  "note: |\n  a.*b\n"])
def test_a_star_inside_a_scalar_costs_no_pass(text: str) -> None:
    assert not safeyaml._may_alias(text) and not safeyaml._may_alias(text.encode())


shared = st.recursive(
    st.one_of(st.integers(), st.text(max_size=5)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=3), inner, max_size=3),
    max_leaves=8)


@given(shared, st.integers(1, 4), st.sampled_from([None, True, False]), st.booleans())
def test_documents_with_anchors_read_back_and_are_gated(value: object, copies: int, flow: bool | None,
                                                        canonical: bool) -> None:
    text = yaml.safe_dump({"anchor": value, "uses": [value] * copies}, default_flow_style=flow, canonical=canonical)
    has_alias = any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(text, Loader=yaml.CSafeLoader))
    assert not has_alias or safeyaml._may_alias(text)
    assert load(text) == yaml.safe_load(text)


@pytest.mark.parametrize(("text", "problem"), [
    ("t: 2020-13-45\n", "month must be in 1..12"),  # ValueError from the date constructor, not a YAMLError
    ("n: " + "1" * 5000 + "\n", "Exceeds the limit (4300 digits)"),
    ("a: !foo x\n", "could not determine a constructor for the tag '!foo'"),
    ("{[1]: 2}\n", "found unhashable key"),
])
def test_a_document_pyyaml_cannot_build_is_an_error_in_its_place(text: str, problem: str) -> None:
    first, bad, last = documents("a: 1\n---\n" + text + "---\nb: 2\n")
    assert first == {"a": 1} and last == {"b": 2}
    assert isinstance(bad, InputError) and not bad.refused and problem in str(bad)
    with pytest.raises(InputError, match=re.escape(problem)):
        load(text)


def test_duplicate_keys_refused_in_manifests_but_read_as_volcano_reads_its_own_yaml() -> None:
    """A manifest naming a key twice is refused (kubectl refuses it); the YAML Volcano reads itself (the device
    config, volcano-scheduler.conf) goes through gopkg.in/yaml.v2's Unmarshal, which keeps the last value."""
    from vgpuctl.core.deviceconfig import parse_device_config, payload_from_document

    (refused,) = list(safeyaml.documents("a: 1\nb: 2\na: 3\n"))
    assert isinstance(refused, safeyaml.InputError) and "duplicate key 'a'" in str(refused)
    assert safeyaml.load("a: 1\nb: 2\na: 3\n") == {"a": 3, "b": 2}
    payload = payload_from_document({"kind": "ConfigMap", "data": {"device-config.yaml": (
        "nvidia:\n  resourceCountName: volcano.sh/vgpu-number\n  deviceSplitCount: 4\n  deviceSplitCount: 10\n")}})
    config = parse_device_config(payload).config
    assert config is not None and config.nvidia.device_split_count == 10
