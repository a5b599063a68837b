"""`nodes` and `doctor` live, through the real client: the same verdict per node, also when a list call
fails (the doctor skips the checks that need it; `nodes` runs the same checks, so it skips them too)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from tests.kube.conftest import FakeCluster, write_kubeconfig
from tests.kube.test_doctor_live import MIXED, run, serve_fixture

UNREGISTERED = {  # advertises vGPU resources but carries no register: VGN001, which reads pods too
    "apiVersion": "v1", "kind": "Node",
    "metadata": {"name": "gpu-unregistered", "labels": {"nvidia.com/cuda.driver.major": "550"}},
    "status": {"allocatable": {"volcano.sh/vgpu-number": "10", "volcano.sh/vgpu-memory": "40960",
                               "volcano.sh/vgpu-cores": "100"}},
}


def _by_node(doctor: dict[str, Any], nodes: dict[str, Any]) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    said: dict[str, set[str]] = {}
    for f in doctor["findings"]:
        for subject in f.get("subjects", [f["subject"]]):
            if subject.startswith("node/"):
                said.setdefault(subject.removeprefix("node/"), set()).add(f"{f['code']}/{f['severity']}")
    shown = {n["name"]: {f"{f['code']}/{f['severity']}" for f in n["findings"]} for n in nodes["nodes"]}
    return said, {k: v for k, v in shown.items() if v}


def _serve(cluster: FakeCluster, tmp_path: Path) -> str:
    doc = yaml.safe_load(MIXED.read_text())
    doc["items"].append(UNREGISTERED)
    path = tmp_path / "cluster.yaml"
    path.write_text(yaml.safe_dump(doc))
    serve_fixture(cluster, path)
    return write_kubeconfig(tmp_path / "config", {"fake": cluster.url}, current="fake")


def test_live_nodes_agree_with_doctor(cluster: FakeCluster, tmp_path: Path) -> None:
    config = _serve(cluster, tmp_path)
    said, shown = _by_node(run("doctor", "--kubeconfig", config, "-o", "json")[1],
                           run("nodes", "--kubeconfig", config, "-o", "json")[1])
    assert said == shown and "VGN001/error" in shown["gpu-unregistered"]


def test_a_forbidden_pod_list_skips_the_same_node_checks(cluster: FakeCluster, tmp_path: Path) -> None:
    config = _serve(cluster, tmp_path)
    cluster.fail_status("/api/v1/pods", 403, "Forbidden", 'pods is forbidden: User "tester" cannot list pods')
    doctor = run("doctor", "--kubeconfig", config, "-o", "json")[1]
    code, nodes, _ = run("nodes", "--kubeconfig", config, "-o", "json")
    said, shown = _by_node(doctor, nodes)
    assert said == shown and not any("VGN001" in c for codes in shown.values() for c in codes)
    assert any(f["code"] == "VGK001" for f in nodes["findings"]) and code == 1
