"""`vgpuctl.core.kustomize` (the renderer install and the manifest tests share) and its file-reading edge
`vgpuctl.manifests.build`: what deploy/ uses renders like kustomize, everything else is refused, and the
RFC 6902 applier agrees with the `jsonpatch` library on every document and patch hypothesis finds."""

from __future__ import annotations

import copy
import re
from typing import Any

import jsonpatch
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vgpuctl.core.kustomize import KustomizeError, apply_patch, build
from vgpuctl.manifests import build as build_tree

KUSTOMIZATION = {"apiVersion": "kustomize.config.k8s.io/v1beta1", "kind": "Kustomization"}


def cm(name: str, namespace: str = "a", **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace},
            "data": dict(data)}


def target(**keys: str) -> dict[str, str]:
    return keys


# --- build --------------------------------------------------------------------------------------------

def test_resources_in_order_and_patches_on_matching_targets_only() -> None:
    first, second = [cm("x", k="1"), cm("y", k="1")], [cm("x", "b", k="1")]
    kustomization = {**KUSTOMIZATION, "resources": ["one.yaml", "two.yaml"],
                     "patches": [{"target": target(version="v1", kind="ConfigMap", name="x", namespace="a"),
                                  "patch": "- op: replace\n  path: /data/k\n  value: '2'\n"},
                                 {"target": target(kind="ConfigMap", name="y"),
                                  "patch": [{"op": "add", "path": "/data/new", "value": "v"}]}]}
    given_in = copy.deepcopy((first, second))
    out = build(kustomization, {"one.yaml": first, "two.yaml": second})
    assert out == [cm("x", k="2"), cm("y", k="1", new="v"), cm("x", "b", k="1")]
    assert (first, second) == given_in  # the inputs are not changed


def test_a_target_matches_every_object_it_names() -> None:
    kustomization = {**KUSTOMIZATION, "resources": ["r"],
                     "patches": [{"target": target(kind="ConfigMap"),
                                  "patch": [{"op": "add", "path": "/data/z", "value": "1"}]}]}
    out = build(kustomization, {"r": [cm("x"), cm("y")]})
    assert [o["data"] for o in out] == [{"z": "1"}, {"z": "1"}]


@pytest.mark.parametrize(("kustomization", "message"), [
    ({**KUSTOMIZATION, "resources": ["r"], "namePrefix": "p-"}, "unsupported kustomization keys ['namePrefix']"),
    ({**KUSTOMIZATION, "resources": ["r"], "patches": [{"path": "p.yaml"}]}, "only inline JSON6902 patches"),
    ({**KUSTOMIZATION, "resources": ["r"], "patches": [{"target": {"labelSelector": "a=b"}, "patch": "[]"}]},
     "only inline JSON6902 patches"),
    ({**KUSTOMIZATION, "resources": ["r"], "patches": [{"target": {"kind": "Secret"}, "patch": "[]"}]},
     "matches nothing"),
    ({**KUSTOMIZATION, "resources": ["r"], "patches": [{"target": {"kind": "ConfigMap"},
                                                        "patch": "metadata:\n  name: x\n"}]},
     "not a JSON6902 list of operations"),
    ({**KUSTOMIZATION, "resources": ["r", "r"]}, "listed twice"),
    ({**KUSTOMIZATION, "resources": ["missing"]}, "resource missing was not loaded"),
    ({**KUSTOMIZATION, "kind": "Component", "resources": ["r"]}, "not a kustomize.config.k8s.io/v1beta1"),
    ({**KUSTOMIZATION, "resources": ["r"], "patches": [{"target": {"kind": "ConfigMap"},
                                                        "patch": [{"op": "remove", "path": "/nope"}]}]},
     "patch 1 on ConfigMap x: JSON patch: can't remove a non-existent object 'nope'"),
])
def test_what_the_renderer_cannot_render_faithfully_is_refused(kustomization: dict[str, Any], message: str) -> None:
    with pytest.raises(KustomizeError, match=re.escape(message)):
        build(kustomization, {"r": [cm("x")]}, where="here")


def test_duplicate_objects_are_refused() -> None:
    with pytest.raises(KustomizeError, match="duplicate objects: v1 ConfigMap a x"):
        build({**KUSTOMIZATION, "resources": ["r", "s"]}, {"r": [cm("x")], "s": [cm("x")]})


def test_an_object_without_a_name_is_refused() -> None:
    with pytest.raises(KustomizeError, match=re.escape("without apiVersion, kind or metadata.name")):
        build({**KUSTOMIZATION, "resources": ["r"]}, {"r": [{"apiVersion": "v1", "kind": "ConfigMap"}]})


# --- the file-reading edge ------------------------------------------------------------------------------

def reader(files: dict[str, str]) -> Any:
    return files.get


def test_directories_are_built_first_and_paths_resolve_like_kustomize() -> None:
    files = {"base/kustomization.yaml": "resources: [cm.yaml]\n",
             "base/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: a}\n---\n",
             "overlays/o/kustomization.yaml": "resources: [../../base, extra.yaml]\n"
                                              "patches:\n- target: {kind: ConfigMap, name: x}\n"
                                              "  patch: '[{op: add, path: /data, value: {k: v}}]'\n",
             "overlays/o/extra.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: y, namespace: a}\n"}
    out = build_tree(reader(files), "overlays/o")
    assert [(o["metadata"]["name"], o.get("data")) for o in out] == [("x", {"k": "v"}), ("y", None)]


@pytest.mark.parametrize(("resource", "message"), [("../../../etc", "outside the tree"),
                                                   ("gone.yaml", "resource gone.yaml does not exist")])
def test_the_edge_refuses_paths_outside_the_tree_and_missing_files(resource: str, message: str) -> None:
    files = {"o/kustomization.yaml": f"resources: [{resource}]\n"}
    with pytest.raises(KustomizeError, match=re.escape(message)):
        build_tree(reader(files), "o")


def test_no_kustomization_is_refused() -> None:
    with pytest.raises(KustomizeError, match=re.escape("no kustomization.yaml")):
        build_tree(reader({}), "o")


# --- RFC 6902 ------------------------------------------------------------------------------------------

RFC_EXAMPLES = [  # RFC 6902 appendix A
    ({"foo": "bar"}, [{"op": "add", "path": "/baz", "value": "qux"}], {"baz": "qux", "foo": "bar"}),
    ({"foo": ["bar", "baz"]}, [{"op": "add", "path": "/foo/1", "value": "qux"}], {"foo": ["bar", "qux", "baz"]}),
    ({"baz": "qux", "foo": "bar"}, [{"op": "remove", "path": "/baz"}], {"foo": "bar"}),
    ({"foo": ["bar", "qux", "baz"]}, [{"op": "remove", "path": "/foo/1"}], {"foo": ["bar", "baz"]}),
    ({"baz": "qux", "foo": "bar"}, [{"op": "replace", "path": "/baz", "value": "boo"}], {"baz": "boo", "foo": "bar"}),
    ({"foo": {"bar": "baz", "waldo": "fred"}, "qux": {"corge": "grault"}},
     [{"op": "move", "from": "/foo/waldo", "path": "/qux/thud"}],
     {"foo": {"bar": "baz"}, "qux": {"corge": "grault", "thud": "fred"}}),
    ({"foo": ["all", "grass", "cows", "eat"]}, [{"op": "move", "from": "/foo/1", "path": "/foo/3"}],
     {"foo": ["all", "cows", "eat", "grass"]}),
    ({"foo": "bar"}, [{"op": "add", "path": "/child", "value": {"grandchild": {}}}],
     {"foo": "bar", "child": {"grandchild": {}}}),
    ({"foo": ["bar"]}, [{"op": "add", "path": "/foo/-", "value": ["abc", "def"]}], {"foo": ["bar", ["abc", "def"]]}),
    ({"/": 9, "~1": 10}, [{"op": "test", "path": "/~01", "value": 10}], {"/": 9, "~1": 10}),
    ({"a": 1}, [{"op": "copy", "from": "/a", "path": "/b"}], {"a": 1, "b": 1}),
]


@pytest.mark.parametrize(("document", "ops", "expected"), RFC_EXAMPLES)
def test_rfc_6902_examples(document: Any, ops: list[dict[str, Any]], expected: Any) -> None:
    before = copy.deepcopy(document)
    assert apply_patch(document, ops) == expected
    assert document == before


@pytest.mark.parametrize("ops", [
    [{"op": "add", "path": "/baz/bat", "value": "qux"}],  # A.12: the parent must exist
    [{"op": "test", "path": "/baz", "value": "bar"}],  # A.9 with a value that differs
    [{"op": "replace", "path": "/nope", "value": 1}],
    [{"op": "add", "path": "/foo/9", "value": 1}],
    [{"op": "add", "path": "/foo/01", "value": 1}],
    [{"op": "remove", "path": ""}],
    [{"op": "move", "from": "/foo", "path": "/foo/0"}],
    [{"op": "frobnicate", "path": "/baz"}],
    [{"op": "add", "path": "baz", "value": 1}],
])
def test_ops_that_do_not_apply_are_errors(ops: list[dict[str, Any]]) -> None:
    with pytest.raises(KustomizeError):
        apply_patch({"baz": "qux", "foo": ["a"]}, ops)


KEYS = st.sampled_from(["a", "b", "c/d", "e~f"])
VALUES = st.recursive(st.none() | st.booleans() | st.integers(-3, 3) | st.text(max_size=3),
                      lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS, inner, max_size=3),
                      max_leaves=8)


def _pointers(doc: Any, prefix: str = "") -> list[str]:
    out = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            out += _pointers(value, f"{prefix}/{key.replace('~', '~0').replace('/', '~1')}")
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            out += _pointers(value, f"{prefix}/{i}")
    return out


@st.composite
def documents_and_ops(draw: st.DrawFn) -> tuple[Any, list[dict[str, Any]]]:
    doc = draw(st.dictionaries(KEYS, VALUES, max_size=4))
    paths = _pointers(doc)[1:] or ["/a"]
    ops = []
    for _ in range(draw(st.integers(1, 3))):
        name = draw(st.sampled_from(["add", "remove", "replace", "move", "copy", "test"]))
        path = draw(st.sampled_from([*paths, "/a", "/b/-", "/zz"]))
        op: dict[str, Any] = {"op": name, "path": path}
        if name in ("add", "replace", "test"):
            op["value"] = draw(VALUES)
        if name in ("move", "copy"):
            op["from"] = draw(st.sampled_from(paths))
        ops.append(op)
    return doc, ops


@settings(max_examples=400, deadline=None)
@given(documents_and_ops())
def test_any_patch_applies_as_jsonpatch_does_or_is_a_kustomize_error(case: tuple[Any, list[dict[str, Any]]]) -> None:
    doc, ops = case
    try:
        expected = jsonpatch.apply_patch(copy.deepcopy(doc), ops)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError, KeyError, IndexError):
        with pytest.raises(KustomizeError):
            apply_patch(doc, ops)
        return
    assert apply_patch(doc, ops) == expected
