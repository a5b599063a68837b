"""`nodes` and `doctor` give every node the same verdict (issue 15 §2).

For each node of a snapshot, the (code, severity) pairs `doctor -o json` reports for `node/<name>` (grouped
findings expanded through their `subjects`) must be exactly those `nodes -o json` lists on that node, and a
node `doctor` flags must be listed by `nodes` at all. Both run through the CLI, as a user would.

The generated nodes are the cases that looked healthy in `nodes` before:
- registered only through HAMi's `hami.io/node-nvidia-register`, which only the HAMi scheduler reads;
  Volcano's vGPU builds its model from `volcano.sh/node-vgpu-register` (volcano-sh/volcano
  pkg/scheduler/api/devices/nvidia/vgpu/utils.go decodeNodeDevices; the mix-up of volcano-sh/volcano#4511): VGN012;
- allocatable `volcano.sh/vgpu-memory: 0` (volcano-sh/volcano v1.15.1 vgpu/device_info.go NewGPUDevices
  drops the node when any of the three vGPU resources is 0): VGN004, and VGN005 for the memory units;
- registered as `mig` with a type no `knownMigGeometries` model matches (volcano-sh/volcano vgpu/utils.go
  extractGeometryFromType finds none, so the GPU is handled as hami-core): VGN008;
- an NVIDIA driver 435 (Project-HAMi/volcano-vgpu-device-plugin README: driver > 440): VGN017.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.conftest import EXAMPLES, validate

BROKEN = EXAMPLES / "clusters" / "broken.yaml"
HEALTHY = EXAMPLES / "clusters" / "healthy.yaml"
MIXED = Path(__file__).resolve().parents[1] / "fixtures" / "clusters" / "mixed.yaml"

A100 = "NVIDIA-NVIDIA A100-PCIE-40GB"


def _register(gpu_type: str, mode: str, count: int = 2, prefix: str = "GPU-aaaa") -> str:
    return "".join(f"{prefix}-{i:04d},10,40960,{gpu_type},true,{mode}:" for i in range(count))


def _node(name: str, *, annotations: dict[str, str], allocatable: dict[str, str] | None = None,
          driver: str = "550") -> dict[str, Any]:
    resources = {"cpu": "64", "memory": "512Gi", "pods": "110", **(allocatable or {})}
    return {
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "annotations": annotations,
                     "labels": {"kubernetes.io/hostname": name, "nvidia.com/cuda.driver.major": driver}},
        "status": {"allocatable": resources, "capacity": resources, "nodeInfo": {"kubeletVersion": "v1.31.4"}},
    }


def _vgpu_allocatable(memory: str = "81920") -> dict[str, str]:
    return {"volcano.sh/vgpu-number": "20", "volcano.sh/vgpu-cores": "200", "volcano.sh/vgpu-memory": memory}


GENERATED = {
    "gen-hami-only": _node("gen-hami-only", annotations={
        "hami.io/node-nvidia-register": '[{"id":"GPU-bbbb-0000","count":10,"devmem":40960,"devcore":100,'
                                        '"type":"NVIDIA A100-PCIE-40GB","health":true}]'},
        allocatable={"nvidia.com/gpu": "1"}),
    # two alike, so the doctor groups their findings into one listing both nodes
    "gen-mem0-a": _node("gen-mem0-a", annotations={"volcano.sh/node-vgpu-register": _register(A100, "hami-core")},
                        allocatable=_vgpu_allocatable("0")),
    "gen-mem0-b": _node("gen-mem0-b", annotations={
        "volcano.sh/node-vgpu-register": _register(A100, "hami-core", prefix="GPU-cccc")},
        allocatable=_vgpu_allocatable("0")),
    "gen-mig-l4": _node("gen-mig-l4", annotations={
        "volcano.sh/node-vgpu-register": _register("NVIDIA-NVIDIA L4", "mig", prefix="GPU-dddd")},
        allocatable=_vgpu_allocatable()),
    "gen-driver-435": _node("gen-driver-435", annotations={
        "volcano.sh/node-vgpu-register": _register(A100, "hami-core", prefix="GPU-eeee")},
        allocatable=_vgpu_allocatable(), driver="435"),
}
EXPECTED = {  # what each generated node must at least show, so the comparison can never pass empty-handed
    "gen-hami-only": {("VGN012", "warning")},
    "gen-mem0-a": {("VGN004", "error"), ("VGN005", "error")},
    "gen-mem0-b": {("VGN004", "error"), ("VGN005", "error")},
    "gen-mig-l4": {("VGN008", "error")},
    "gen-driver-435": {("VGN017", "error")},
}


def _items(path: Path) -> list[dict[str, Any]]:
    document = yaml.safe_load(path.read_text())
    items: list[dict[str, Any]] = document["items"]
    return items


@pytest.fixture(scope="module")
def generated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """healthy.yaml with the generated nodes added."""
    path = tmp_path_factory.mktemp("agree") / "generated.yaml"
    path.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List",
                                    "items": [*_items(HEALTHY), *GENERATED.values()]}))
    return path


def _node_names(path: Path) -> list[str]:
    return [i["metadata"]["name"] for i in _items(path) if i.get("kind") == "Node"]


def _doctor_by_node(report: dict[str, Any]) -> dict[str, set[tuple[str, str]]]:
    out: dict[str, set[tuple[str, str]]] = {}
    for f in report["findings"]:
        for subject in f.get("subjects", [f["subject"]]):
            if subject.startswith("node/"):
                out.setdefault(subject.removeprefix("node/"), set()).add((f["code"], f["severity"]))
    return out


def _nodes_by_node(report: dict[str, Any]) -> dict[str, set[tuple[str, str]]]:
    return {n["name"]: {(f["code"], f["severity"]) for f in n["findings"]} for n in report["nodes"]}


def _both(run: Any, path: Path, *extra: str) -> tuple[dict[str, Any], dict[str, Any]]:
    doctor = run("doctor", "--snapshot", str(path), "-o", "json", *extra)
    nodes = run("nodes", "--snapshot", str(path), "-o", "json", *extra)
    assert doctor.exit_code in (0, 1) and nodes.exit_code in (0, 1), (doctor.stderr, nodes.stderr)
    validate("node-report.schema.json", nodes.json())
    return doctor.json(), nodes.json()


CASES = [("broken", ()), ("broken", ("--volcano-version", "1.11.0")), ("healthy", ()), ("mixed", ()),
         ("generated", ()), ("generated", ("--volcano-version", "1.14.3"))]


@pytest.mark.parametrize(("name", "extra"), CASES, ids=[f"{n}{''.join(e)}" for n, e in CASES])
def test_every_node_gets_the_doctors_verdict(run: Any, generated: Path, name: str, extra: tuple[str, ...]) -> None:
    path = {"broken": BROKEN, "healthy": HEALTHY, "mixed": MIXED, "generated": generated}[name]
    doctor, nodes = _both(run, path, *extra)
    by_doctor, by_nodes = _doctor_by_node(doctor), _nodes_by_node(nodes)
    for node in _node_names(path):
        assert by_nodes.get(node, set()) == by_doctor.get(node, set()), node
        if by_doctor.get(node):
            assert node in by_nodes, f"{node} is flagged by doctor but not listed by nodes"
    assert set(by_doctor) <= set(_node_names(path))  # no finding names a node the snapshot lacks


def test_the_reported_cases_are_flagged_on_their_node(run: Any, generated: Path) -> None:
    _, broken = _both(run, BROKEN)
    h100 = _nodes_by_node(broken)["gpu-h100-0"]
    assert {("VGN004", "error"), ("VGN005", "error"), ("VGN008", "error"), ("VGK004", "error")} <= h100
    doctor, nodes = _both(run, generated)
    shown = _nodes_by_node(nodes)
    for node, expected in EXPECTED.items():
        assert expected <= shown[node], node
    # the doctor did group the two alike nodes, so the expansion above was exercised
    assert any(len(f.get("subjects", [])) > 1 and "node/gen-mem0-a" in f["subjects"] for f in doctor["findings"])


@pytest.mark.parametrize("name", ["broken", "generated"])
def test_named_nodes_show_the_same_findings_as_the_whole_list(run: Any, generated: Path, name: str) -> None:
    """`nodes NAME...` judges only the named nodes; their verdicts must not change."""
    path = {"broken": BROKEN, "generated": generated}[name]
    _, everything = _both(run, path)
    named = sorted(GENERATED) if name == "generated" else ["gpu-h100-0", "gpu-node-1"]
    alone = run("nodes", *named, "--snapshot", str(path), "-o", "json").json()["nodes"]
    assert alone == [n for n in everything["nodes"] if n["name"] in named] and len(alone) == len(named)
    assert all(n["findings"] for n in alone)
