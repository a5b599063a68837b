"""Snapshot files: every shape kubectl and `snapshot save` produce, and one-line errors for the rest."""

from __future__ import annotations

import gzip
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from vgpuctl.errors import UsageError
from vgpuctl.snapshotfile import SERVER_VERSION_ANNOTATION, SnapshotData, load_snapshot, save_snapshot

# What `kubectl get nodes,pods,configmaps,secrets -A -o yaml` prints (trimmed): a v1 List whose items
# carry their own apiVersion/kind, quoted timestamps, and an empty resourceVersion.
KUBECTL_LIST = """\
apiVersion: v1
items:
- apiVersion: v1
  kind: Node
  metadata:
    annotations:
      volcano.sh/node-vgpu-register: 'GPU-0,10,32768,NVIDIA-A100,true,hami-core:'
    creationTimestamp: "2024-05-01T10:00:00Z"
    name: gpu-1
  status:
    allocatable: {volcano.sh/vgpu-number: "10"}
- apiVersion: v1
  kind: Pod
  metadata: {name: trainer, namespace: ml}
  spec: {nodeName: gpu-1, containers: [{name: main, image: pytorch}]}
- apiVersion: v1
  kind: Secret
  metadata: {name: token, namespace: ml}
  data: {password: aHVudGVyMg==}
- apiVersion: v1
  kind: ConfigMap
  metadata: {name: volcano-vgpu-device-config, namespace: kube-system}
  data: {device-config.yaml: "nvidia: {}"}
- apiVersion: apps/v1
  kind: DaemonSet
  metadata: {name: volcano-device-plugin, namespace: kube-system}
kind: List
metadata:
  resourceVersion: ""
"""


def kinds(data: SnapshotData) -> list[str]:
    return [obj["kind"] for obj in data.objects]


def write(tmp_path: Path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content.encode() if isinstance(content, str) else content)
    return str(path)


def test_kubectl_list_yaml_loads_and_drops_secrets(tmp_path: Path) -> None:
    data = load_snapshot(write(tmp_path, "cluster.yaml", KUBECTL_LIST))
    assert kinds(data) == ["Node", "Pod", "ConfigMap", "DaemonSet"]
    assert data.server_version is None
    node = data.objects[0]
    assert node["metadata"]["annotations"]["volcano.sh/node-vgpu-register"].startswith("GPU-0,10,")
    assert node["status"]["allocatable"]["volcano.sh/vgpu-number"] == "10"


def test_unquoted_timestamps_stay_strings(tmp_path: Path) -> None:
    text = "kind: Node\napiVersion: v1\nmetadata: {name: n, creationTimestamp: 2024-05-01T10:00:00Z}\n"
    data = load_snapshot(write(tmp_path, "node.yaml", text))
    assert data.objects[0]["metadata"]["creationTimestamp"] == "2024-05-01T10:00:00Z"


def test_same_list_as_json(tmp_path: Path) -> None:
    as_json = json.dumps(yaml.safe_load(KUBECTL_LIST), indent=4)
    data = load_snapshot(write(tmp_path, "cluster.json", as_json))
    assert kinds(data) == ["Node", "Pod", "ConfigMap", "DaemonSet"]


def test_multi_document_yaml_of_objects_and_lists(tmp_path: Path) -> None:
    text = (
        "apiVersion: v1\nkind: Node\nmetadata: {name: a}\n---\n"
        "---\n"  # an empty document is skipped
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: Pod, metadata: {name: p}}\n---\n"
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s}\n"
    )
    assert kinds(load_snapshot(write(tmp_path, "multi.yaml", text))) == ["Node", "Pod"]


def test_typed_list_items_get_kind_and_api_version_from_the_list(tmp_path: Path) -> None:
    node_list = {"apiVersion": "v1", "kind": "NodeList", "metadata": {}, "items": [{"metadata": {"name": "a"}}]}
    ds_list = {"apiVersion": "apps/v1", "kind": "DaemonSetList", "items": [{"metadata": {"name": "d"}}]}
    secret_list = {"apiVersion": "v1", "kind": "SecretList", "items": [{"metadata": {"name": "s"}}]}
    text = "---\n".join(yaml.safe_dump(d) for d in (node_list, ds_list, secret_list))
    objects = load_snapshot(write(tmp_path, "typed.yaml", text)).objects
    assert [(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in objects] == [
        ("v1", "Node", "a"), ("apps/v1", "DaemonSet", "d")]


@pytest.mark.parametrize("name", ["cluster.yaml.gz", "cluster.snapshot", "cluster.json"])
def test_gzip_is_detected_by_magic_bytes(tmp_path: Path, name: str) -> None:
    data = load_snapshot(write(tmp_path, name, gzip.compress(KUBECTL_LIST.encode())))
    assert kinds(data) == ["Node", "Pod", "ConfigMap", "DaemonSet"]


def test_plain_file_named_gz_is_read_as_is(tmp_path: Path) -> None:
    assert kinds(load_snapshot(write(tmp_path, "cluster.yaml.gz", KUBECTL_LIST)))[0] == "Node"


def test_stdin_stream(tmp_path: Path) -> None:
    stream = io.BytesIO(gzip.compress(KUBECTL_LIST.encode()))
    assert kinds(load_snapshot("-", stdin=stream)) == ["Node", "Pod", "ConfigMap", "DaemonSet"]


def test_real_stdin_pipe() -> None:
    code = "from vgpuctl.snapshotfile import load_snapshot; print(len(load_snapshot('-').objects))"
    done = subprocess.run([sys.executable, "-c", code], input=KUBECTL_LIST.encode(), capture_output=True,
                          timeout=60, check=True)
    assert done.stdout.strip() == b"4"


@pytest.mark.parametrize("name", ["out.yaml", "out.json", "out.yaml.gz", "out.json.gz"])
def test_save_round_trip_keeps_server_version_and_never_writes_secrets(tmp_path: Path, name: str) -> None:
    original = load_snapshot(write(tmp_path, "in.yaml", KUBECTL_LIST))
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"k": "dg=="}}
    target = str(tmp_path / name)
    save_snapshot(target, SnapshotData([*original.objects, secret], "v1.30.2"))

    raw = Path(target).read_bytes()
    assert raw.startswith(b"\x1f\x8b") == name.endswith(".gz")
    text = gzip.decompress(raw) if name.endswith(".gz") else raw
    document = json.loads(text) if ".json" in name else yaml.safe_load(text)
    assert document["kind"] == "List"
    assert document["metadata"]["annotations"][SERVER_VERSION_ANNOTATION] == "v1.30.2"
    assert b"Secret" not in text and b"aHVudGVyMg" not in text

    again = load_snapshot(target)
    assert again == SnapshotData(original.objects, "v1.30.2")


def test_save_yaml_quotes_timestamps_like_kubectl(tmp_path: Path) -> None:
    node = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n", "creationTimestamp": "2024-05-01T10:00:00Z"}}
    save_snapshot(str(tmp_path / "s.yaml"), SnapshotData([node], None))
    text = (tmp_path / "s.yaml").read_text()
    assert "creationTimestamp: '2024-05-01T10:00:00Z'" in text
    assert "annotations" not in text
    assert load_snapshot(str(tmp_path / "s.yaml")) == SnapshotData([node], None)


def test_save_to_stdout_stream() -> None:
    out = io.BytesIO()
    save_snapshot("-", SnapshotData([{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n"}}], "v1.31.0"),
                  stdout=out)
    assert load_snapshot("-", stdin=io.BytesIO(out.getvalue())).server_version == "v1.31.0"


def test_save_failure_is_a_usage_error_and_leaves_no_file(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"missing/s\.yaml: cannot write: directory .* does not exist"):
        save_snapshot(str(tmp_path / "missing" / "s.yaml"), SnapshotData([], None))
    (tmp_path / "dir.yaml").mkdir()
    with pytest.raises(UsageError, match="cannot write"):
        save_snapshot(str(tmp_path / "dir.yaml"), SnapshotData([], None))
    assert [p.name for p in tmp_path.iterdir()] == ["dir.yaml"]  # no temporary file left behind


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", r"empty file, expected a Kubernetes List"),
        ("kind: List\nitems:\n- {kind: Node\n", r"not valid YAML at line 4, column 1: "),
        ('{"kind": "List", "items": [}', r"not valid JSON: .*line 1 column 28"),
        ("replicaCount: 1\nimage: nginx\n", r"the document is a mapping with keys replicaCount, image, expected"),
        ("- just\n- strings\n", r"item 1 of the document is a string, expected a Kubernetes object"),
        ("apiVersion: v1\nkind: List\nitems:\n- {metadata: {name: x}}\n",
         r"item 1 of the List in the document has no kind \(found a mapping with keys metadata\)"),
        ("apiVersion: v1\nkind: List\nitems:\n- {kind: Node, metadata: {name: n}}\n- {kind: Secret}\n- [x]\n",
         r"item 3 of the List in the document is a list, expected a Kubernetes object"),
        ("kind: Node\n---\n42\n", r"document 2 is a number, expected a Kubernetes List"),
    ],
)
def test_bad_content_is_a_one_line_usage_error(tmp_path: Path, content: str, message: str) -> None:
    path = write(tmp_path, "bad.yaml", content)
    with pytest.raises(UsageError, match=message) as caught:
        load_snapshot(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert "\n" not in str(caught.value)


def test_missing_file_directory_and_broken_gzip(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"nope\.yaml: no such file$"):
        load_snapshot(str(tmp_path / "nope.yaml"))
    with pytest.raises(UsageError, match="is a directory"):
        load_snapshot(str(tmp_path))
    truncated = gzip.compress(KUBECTL_LIST.encode())[:30]
    with pytest.raises(UsageError, match=r"c\.gz: not a valid gzip file"):
        load_snapshot(write(tmp_path, "c.gz", truncated))


def test_gc_paused_restores_the_collector_and_freezes_only_large_loads() -> None:
    import gc

    from vgpuctl import snapshotfile

    assert gc.isenabled()
    frozen = gc.get_freeze_count()
    with snapshotfile.gc_paused():
        assert not gc.isenabled()
        with snapshotfile.gc_paused():  # nested: the outer block decides
            assert not gc.isenabled()
        assert not gc.isenabled()
        data = [{"k": [i]} for i in range(1000)]
    assert gc.isenabled() and gc.get_freeze_count() == frozen  # 1,000 objects: not worth freezing
    with snapshotfile.gc_paused(), snapshotfile.gc_paused(freeze_threshold=1):
        nested = [{"k": [i]} for i in range(1000)]
    assert gc.isenabled() and gc.get_freeze_count() == frozen  # the outer block's threshold decides
    with pytest.raises(ValueError), snapshotfile.gc_paused():
        raise ValueError
    assert gc.isenabled()
    gc.disable()
    try:
        with snapshotfile.gc_paused():
            pass
        assert not gc.isenabled()  # a collector that was off stays off
    finally:
        gc.enable()
    try:
        with snapshotfile.gc_paused(freeze_threshold=500):
            more = [{"k": [i]} for i in range(1000)]  # counted net of frees: keep the first ones alive
        assert gc.isenabled() and gc.get_freeze_count() > frozen
    finally:
        gc.unfreeze()
    assert len(data) == len(nested) == len(more) == 1000


def test_a_loaded_snapshot_is_the_same_with_the_collector_paused(tmp_path: Path) -> None:
    import gc

    from vgpuctl import snapshotfile

    path = tmp_path / "s.json"
    path.write_text(json.dumps(yaml.safe_load(KUBECTL_LIST)))
    try:
        with snapshotfile.gc_paused(freeze_threshold=1):  # outermost: load_snapshot's own block leaves it to this
            data = load_snapshot(str(path))
        assert gc.isenabled() and gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
    assert [o["kind"] for o in data.objects] == [o["kind"] for o in load_snapshot(str(path)).objects]
    assert "Secret" not in [o["kind"] for o in data.objects]
