"""Issue 23 §10 and §6: the wrong file gets "wrong file", not a confident answer about something else.

- a snapshot with no Node (a Pod manifest, an empty List) is a usage error saying what it holds, unless
  `snapshot save` recorded that the Nodes were listed and there were none;
- every `*List` kind is a list for `lint`, its items' kind taken from the List when they carry none (what
  the API server returns for `GET /api/v1/pods`);
- a file of a directory that cannot be read (binary) is VGL001 for that file, the others still checked;
- `--device-config` reads with `geometry`'s reader: a Service, a Pod or a List is "no device config found".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from tests.cli.conftest import EXAMPLES
from tests.cli.test_hostile_input import POD, one_line_usage_error, write
from vgpuctl.errors import UsageError
from vgpuctl.snapshotfile import KUBECTL_SNAPSHOT
from vgpuctl.sources import load_device_config

KUBECTL = f"({KUBECTL_SNAPSHOT} > cluster.yaml)"
DEVICE_CONFIG = EXAMPLES / "volcano-vgpu-device-config.yaml"
MIG_POD = EXAMPLES / "vgpu" / "mig-pod.yaml"
SERVICE = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}


# ---- §10 a snapshot that is not one ----------------------------------------------------------------------

@pytest.mark.parametrize("command", [("doctor",), ("nodes",), ("why", "ml/p"), ("lint", "-")])
def test_a_pod_manifest_is_not_a_snapshot(run, tmp_path: Path, command: tuple[str, ...]) -> None:
    pod = write(tmp_path, "pod.yaml", yaml.safe_dump(POD))
    line = one_line_usage_error(run(*command, "--snapshot", pod, input=json.dumps(POD)))
    assert line == f"vgpuctl: {pod} holds 1 Pod and no Node: not a cluster snapshot {KUBECTL}\n"


def test_what_a_snapshot_without_nodes_holds_is_said(run, tmp_path: Path) -> None:
    objects = [POD] * 3 + [SERVICE] * 2 + [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
                                           {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy"},
                                           {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy"}]
    listing = write(tmp_path, "l.json", json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))
    assert "holds 3 Pods, 2 NetworkPolicies, 2 Services, 1 other object and no Node: not a cluster snapshot" in \
        one_line_usage_error(run("nodes", "--snapshot", listing))
    empty = write(tmp_path, "e.yaml", "apiVersion: v1\nkind: List\nitems: []\n")
    line = one_line_usage_error(run("doctor", "--snapshot", empty))
    assert "holds no Kubernetes object: not a cluster snapshot" in line


def test_a_saved_cluster_without_nodes_is_still_a_snapshot(run, tmp_path: Path) -> None:
    saved = {"apiVersion": "v1", "kind": "List", "items": [POD],
             "metadata": {"annotations": {"vgpuctl.io/kinds": "Node,Pod,ConfigMap,DaemonSet,Deployment"}}}
    result = run("nodes", "--snapshot", write(tmp_path, "s.json", json.dumps(saved)), "-o", "json")
    assert result.exit_code == 0 and result.json()["nodes"] == []


# ---- §10 typed Lists and unreadable files in lint ----------------------------------------------------------

def test_every_list_kind_is_a_list(run) -> None:
    bare = {k: v for k, v in POD.items() if k not in ("apiVersion", "kind")}  # as GET /api/v1/pods returns it
    bad = json.loads(json.dumps(bare).replace("3072", '"3Gi"'))
    pods = {"apiVersion": "v1", "kind": "PodList", "metadata": {}, "items": [bare, bad]}
    result = run("lint", "-", "-o", "json", input=json.dumps(pods))
    assert result.exit_code == 1
    items = result.json()["items"]
    assert [(i["source"], i["kind"], i["allowed"]) for i in items] == [
        ("<stdin>:1/items[0]", "Pod", True), ("<stdin>:1/items[1]", "Pod", False)]
    deployment = yaml.safe_load((EXAMPLES / "vgpu" / "deployment.yaml").read_text())
    deployments = {"apiVersion": "apps/v1", "kind": "DeploymentList", "items": [deployment]}
    checked = run("lint", "-", "-o", "json", input=json.dumps(deployments))
    assert [i["kind"] for i in checked.json()["items"]] == ["Deployment"]
    configmaps = {"apiVersion": "v1", "kind": "ConfigMapList", "items": ["oops"]}
    assert "items[0] of the ConfigMapList is a string" in run("lint", "-", input=json.dumps(configmaps)).stdout


def test_a_binary_file_in_a_directory_is_vgl001_and_the_rest_is_checked(run, tmp_path: Path) -> None:
    write(tmp_path, "a-binary.yaml", b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    write(tmp_path, "pod.yaml", json.dumps(POD))
    result = run("lint", str(tmp_path), "-o", "json")
    assert result.exit_code == 1
    items = result.json()["items"]
    assert [(i["source"], i["allowed"]) for i in items] == [(f"{tmp_path}/a-binary.yaml", False),
                                                            (f"{tmp_path}/pod.yaml:1", True)]
    assert items[0]["findings"][0]["message"] == "not a UTF-8 text file"
    named = one_line_usage_error(run("lint", f"{tmp_path}/a-binary.yaml"))  # named: the input as a whole
    assert "a-binary.yaml: not a UTF-8 text file" in named


# ---- §6 a --device-config that is not one ---------------------------------------------------------------

NOT_DEVICE_CONFIGS = {
    "service": SERVICE,
    "pod": POD,
    "list": {"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load(DEVICE_CONFIG.read_text())]},
}


@pytest.mark.parametrize("name", sorted(NOT_DEVICE_CONFIGS))
def test_lint_refuses_a_device_config_that_is_another_object(run, tmp_path: Path, name: str) -> None:
    path = write(tmp_path, f"{name}.yaml", yaml.safe_dump(NOT_DEVICE_CONFIGS[name]))
    line = one_line_usage_error(run("lint", str(MIG_POD), "--device-config", path))
    assert line == (f"vgpuctl: {path}: no device config found (expected a ConfigMap with data key "
                    "'device-config.yaml' or a device-config.yaml payload)\n")
    assert run("geometry", "show", path).stderr == line  # one reader, one message
    assert run("lint", str(MIG_POD), "--device-config", str(DEVICE_CONFIG)).exit_code == 0  # the real one


def test_doctor_node_refuses_it_too(run, tmp_path: Path) -> None:
    path = write(tmp_path, "svc.yaml", yaml.safe_dump(SERVICE))
    line = one_line_usage_error(run("doctor", "--node", "--root", str(tmp_path), "--device-config", path))
    assert "no device config found" in line


def test_load_device_config_raises_one_line_usage_errors(tmp_path: Path) -> None:
    """What the webhook's config watcher relies on: a UsageError for anything that is not a device config."""
    with pytest.raises(UsageError, match="no device config found") as caught:
        load_device_config(write(tmp_path, "svc.yaml", yaml.safe_dump(SERVICE)))
    assert "\n" not in str(caught.value)
    config = DEVICE_CONFIG.read_text()
    with pytest.raises(UsageError, match=r"holds 2 device configs"):
        load_device_config(write(tmp_path, "two.yaml", config + "\n---\n" + config))
    daemonset_then_config = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: d}\n---\n" + config
    assert load_device_config(write(tmp_path, "plugin.yaml", daemonset_then_config)).nvidia is not None
