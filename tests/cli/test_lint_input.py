"""Issue 15 §6: `lint` input that must not pass silently.

`kubectl get … | vgpuctl lint -` must fail CI when kubectl printed nothing. The rule:
- no object at all (empty stdin, an empty file, /dev/null, or only YAML scalars / top-level lists / mappings
  without a kind) is a usage error: exit 2, one line on stderr, nothing on stdout (kubectl refuses each of
  these too);
- a document that is not an object next to real objects, and a non-object item of a `kind: List`, are
  reported as VGL001 (exit 1) while the rest is still checked — as the doctor refuses them in snapshots;
- a `kind: List` with no items (what `kubectl get pods -o yaml` prints when there are none) holds an object,
  the List: "0 objects checked", exit 0.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
       "spec": {"schedulerName": "volcano", "containers": [
           {"name": "c", "resources": {"limits": {"volcano.sh/vgpu-number": 1, "volcano.sh/vgpu-memory": 3072}}}]}}


def usage_error(result) -> str:  # type: ignore[no-untyped-def]
    assert result.exit_code == 2
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    line: str = result.stderr
    return line


@pytest.mark.parametrize("text", ["", "\n\n", "# only a comment\n", "---\n---\n"])
def test_empty_stdin_is_a_usage_error(run, text: str) -> None:
    line = usage_error(run("lint", "-", input=text))
    assert "no Kubernetes object to check in <stdin>: the input is empty" in line


def test_an_empty_file_is_a_usage_error(run, tmp_path: Path) -> None:
    path = tmp_path / "empty.yaml"
    path.write_text("")
    assert "the input is empty" in usage_error(run("lint", str(path), "-o", "json"))


def test_dev_null_is_a_usage_error(run) -> None:
    assert "/dev/null: the input is empty" in usage_error(run("lint", "/dev/null"))


@pytest.mark.parametrize(("text", "what"), [
    ("the server doesn't have a resource type \"podz\"\n", "a string"),
    # kubectl's own error, piped with 2>&1, is YAML too: a mapping, but no object without a kind
    ("error: the server doesn't have a resource type \"podz\"\n", "a mapping without kind"),
    ("42\n", "a number"),
    ("- a\n- b\n", "a list"),
    (json.dumps([POD]), "a list"),
])
def test_only_a_scalar_or_a_top_level_list_is_a_usage_error(run, text: str, what: str) -> None:
    line = usage_error(run("lint", "-", input=text))
    assert f"<stdin>:1 is {what}, not a Kubernetes object" in line  # the line it starts at


def test_a_scalar_next_to_objects_is_reported_and_the_objects_still_checked(run) -> None:
    text = json.dumps(POD) + "\n---\njust text\n---\n[1, 2]\n"
    result = run("lint", "-", "-o", "json", input=text)
    assert result.exit_code == 1
    items = result.json()["items"]
    assert [(i["source"], i["allowed"]) for i in items] == [("<stdin>:1", True), ("<stdin>:3", False),
                                                            ("<stdin>:5", False)]
    assert [i["document"] for i in items] == [0, 1, 2]
    assert [f["code"] for f in items[1]["findings"]] == ["VGL001"]
    assert "is a string" in items[1]["findings"][0]["message"]
    assert "is a list" in items[2]["findings"][0]["message"]


def test_non_object_items_of_a_list_are_reported(run) -> None:
    listing = {"apiVersion": "v1", "kind": "List", "items": [POD, "oops", None]}
    result = run("lint", "-", "-o", "json", input=json.dumps(listing))
    assert result.exit_code == 1
    items = result.json()["items"]
    assert [i["source"] for i in items] == ["<stdin>:1/items[0]", "<stdin>:1/items[1]", "<stdin>:1/items[2]"]
    assert items[0]["allowed"] is True
    assert "items[1] of the List is a string" in items[1]["findings"][0]["message"]
    assert items[2]["findings"][0]["code"] == "VGL001"
    assert result.json()["summary"]["errors"] == 2


def test_a_list_whose_items_is_not_a_list_is_reported(run) -> None:
    result = run("lint", "-", "-o", "json", input='{"apiVersion": "v1", "kind": "List", "items": "x"}')
    assert result.exit_code == 1
    [item] = result.json()["items"]
    assert item["source"] == "<stdin>:1/items" and "is a string" in item["findings"][0]["message"]


def test_an_empty_kind_list_is_zero_objects_and_passes(run) -> None:
    result = run("lint", "-", input="apiVersion: v1\nkind: List\nitems: []\n")
    assert result.exit_code == 0 and "0 objects checked" in result.stdout


def test_an_empty_file_or_a_values_file_next_to_a_manifest_is_fine(run, tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("")
    (tmp_path / "b.yaml").write_text(json.dumps(POD))
    (tmp_path / "values.yaml").write_text("replicas: 2\n")  # no kind: skipped, as it always was
    result = run("lint", str(tmp_path))
    assert result.exit_code == 0 and "1 object checked" in result.stdout and "1 skipped" in result.stdout


def test_a_duplicate_key_is_reported_as_kubectl_would_refuse_it(run) -> None:
    """Issue 27: `vgpu-memory: 3Gi` then `3072` in one map was read as 3072 (PyYAML keeps the last); kubectl
    and the API server refuse the object. The document is VGL001; the next one is still checked."""
    text = ("apiVersion: v1\nkind: Pod\nmetadata: {name: twice, namespace: ml}\nspec:\n  schedulerName: volcano\n"
            "  containers:\n  - name: c\n    resources:\n      limits:\n        volcano.sh/vgpu-number: 1\n"
            "        volcano.sh/vgpu-memory: 3Gi\n        volcano.sh/vgpu-memory: 3072\n---\n" + json.dumps(POD))
    result = run("lint", "-", "-o", "json", input=text)
    assert result.exit_code == 1
    first, second = result.json()["items"]
    assert [f["code"] for f in first["findings"]] == ["VGL001"]
    assert "duplicate key 'volcano.sh/vgpu-memory'" in first["findings"][0]["message"]
    assert "line 12" in first["findings"][0]["message"]
    assert second["allowed"] is True


def test_a_merge_key_may_override_what_it_merges(run) -> None:
    text = ("defaults: &limits {volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 1024}\n---\n"
            "apiVersion: v1\nkind: Pod\nmetadata: {name: merged, namespace: ml}\nspec:\n  schedulerName: volcano\n"
            "  containers:\n  - name: c\n    resources:\n      limits:\n        <<: {volcano.sh/vgpu-number: 1}\n"
            "        volcano.sh/vgpu-number: 2\n        volcano.sh/vgpu-memory: 3072\n")
    result = run("lint", "-", "-o", "json", input=text)
    (pod,) = [i for i in result.json()["items"] if i["name"] == "merged"]
    assert all(f["code"] != "VGL001" for f in pod["findings"])
