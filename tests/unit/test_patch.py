"""JSON Patch helpers: RFC 6901 escaping and add-only ops that create missing parents."""

from __future__ import annotations

import copy

import jsonpatch

from vgpuctl.core.patch import add_ops, escape_token, pointer


def test_escaping() -> None:
    assert escape_token("volcano.sh/vgpu-number") == "volcano.sh~1vgpu-number"
    assert escape_token("a~b/c") == "a~0b~1c"
    assert pointer(["spec", "containers", 0, "resources"]) == "/spec/containers/0/resources"


def test_missing_parents_are_created_once_and_the_patch_applies() -> None:
    doc = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a"}, {"name": "b", "resources": {}}]}}
    additions = [
        (("spec", "containers", 0, "resources", "limits", "volcano.sh/vgpu-number"), "1"),
        (("spec", "containers", 0, "resources", "limits", "volcano.sh/vgpu-cores"), "10"),
        (("spec", "containers", 1, "resources", "limits", "volcano.sh/vgpu-number"), "1"),
        (("metadata", "labels", "vnpu-level"), "low"),
        (("spec", "schedulerName"), "volcano"),
    ]
    ops = add_ops(doc, additions)
    assert all(op["op"] == "add" for op in ops)
    assert ops[0] == {"op": "add", "path": "/spec/containers/0/resources",
                      "value": {"limits": {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-cores": "10"}}}
    patched = jsonpatch.apply_patch(copy.deepcopy(doc), ops)
    assert patched["spec"]["containers"][1]["resources"]["limits"] == {"volcano.sh/vgpu-number": "1"}
    assert patched["metadata"]["labels"] == {"vnpu-level": "low"}
    assert patched["spec"]["schedulerName"] == "volcano"


def test_add_replaces_an_existing_member() -> None:
    doc = {"spec": {"schedulerName": "default-scheduler"}}
    ops = add_ops(doc, [(("spec", "schedulerName"), "volcano")])
    assert jsonpatch.apply_patch(doc, ops)["spec"]["schedulerName"] == "volcano"


def test_a_null_parent_is_replaced() -> None:
    doc = {"spec": {"containers": [{"name": "a", "resources": None}]}}
    ops = add_ops(doc, [(("spec", "containers", 0, "resources", "limits", "x"), "1")])
    assert jsonpatch.apply_patch(doc, ops)["spec"]["containers"][0]["resources"] == {"limits": {"x": "1"}}
