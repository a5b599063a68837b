"""One GPU, one owner, through the CLI (docs/stacks.md): `doctor` and `nodes` on the mixed-stacks snapshot give each
node one verdict and the reports validate against schemas/; `nodes` shows every stack offering each GPU; `lint`
resolves DRA claims from its own input and from a snapshot."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml

from tests.cli.conftest import validate

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
MIXED = FIXTURES / "clusters" / "mixed-stacks.yaml"
STACK_NODE_CODES = {"VGN012", "VGN020", "VGN021", "VGN022"}


def test_doctor_on_the_mixed_cluster_names_every_stack_problem(run: Any) -> None:
    result = run("doctor", "--snapshot", str(MIXED), "-o", "json")
    assert result.exit_code == 1
    report = result.json()
    validate("doctor-report.schema.json", report)
    found = {(f["code"], f["severity"], tuple(f.get("subjects") or (f["subject"],))) for f in report["findings"]}
    assert found >= {
        ("VGN020", "error", ("node/gpu-ts-1",)),
        ("VGN020", "warning", ("node/gpu-split-1",)),
        ("VGN012", "error", ("node/gpu-hami-1",)),
        ("VGN022", "error", ("node/gpu-share-1",)),
        ("VGC014", "error", ("configmap/volcano-system/volcano-scheduler-configmap",)),
        ("VGP019", "error", ("pod/ml/trainer-0/container/trainer",)),
        ("VGP020", "error", ("pod/ml/infer-dra/spec.resourceClaims[0]",)),
    }
    vgn021 = [f for f in report["findings"] if f["code"] == "VGN021"]
    assert {s for f in vgn021 for s in (f.get("subjects") or [f["subject"]])} == {"node/gpu-dra-1", "node/gpu-hdra-1"}
    # the NIC claim of ml/allreduce-0 is fine, the clean node is clean
    assert not any("allreduce" in f["subject"] for f in report["findings"] if f["code"] == "VGP020")
    assert not any("gpu-ok-1" in str(f) for f in report["findings"])


def test_nodes_and_doctor_give_each_node_one_verdict(run: Any) -> None:
    doctor = run("doctor", "--snapshot", str(MIXED), "--all", "-o", "json").json()
    nodes = run("nodes", "--snapshot", str(MIXED), "-o", "json").json()
    validate("node-report.schema.json", nodes)
    from_doctor = {(f["code"], f["severity"], s) for f in doctor["findings"] if f["code"] in STACK_NODE_CODES
                   for s in (f.get("subjects") or [f["subject"]])}
    from_nodes = {(f["code"], f["severity"], f["subject"]) for n in nodes["nodes"] for f in n["findings"]
                  if f["code"] in STACK_NODE_CODES}
    assert from_nodes == from_doctor and len(from_nodes) == 6


def test_nodes_shows_every_stack_offering_each_gpu(run: Any) -> None:
    report = run("nodes", "--snapshot", str(MIXED), "-o", "json").json()
    by_name = {n["name"]: n for n in report["nodes"]}
    assert "stacks" not in by_name["gpu-ok-1"]  # one stack: nothing more to say
    dra = by_name["gpu-dra-1"]
    assert [s["name"] for s in dra["stacks"]] == ["volcano-vgpu", "dra:gpu.nvidia.com"]
    assert all(d["stacks"] == ["volcano-vgpu", "dra:gpu.nvidia.com"] for d in dra["devices"])
    ts = by_name["gpu-ts-1"]
    assert ts["stacks"][1] == {"name": "nvidia-device-plugin", "source": "allocatable nvidia.com/gpu", "gpus": 4}
    assert all(d["stacks"] == ["volcano-vgpu", "nvidia-device-plugin"] for d in ts["devices"])
    split = by_name["gpu-split-1"]  # 2 + 2 of 4 GPUs: which ones the device plugin took cannot be told
    assert [s["name"] for s in split["stacks"]] == ["volcano-vgpu", "nvidia-device-plugin"]
    assert all("stacks" not in d for d in split["devices"])
    table = run("nodes", "--snapshot", str(MIXED), "gpu-hami-1").stdout
    assert "GPU stacks: volcano-vgpu (2 GPUs), hami (2 GPUs)" in table
    assert "STACKS" in table and "volcano-vgpu, hami" in table


def test_without_the_dra_kinds_vgn021_is_skipped_with_the_reason(run: Any, tmp_path: Path) -> None:
    doc = yaml.safe_load(MIXED.read_text())
    del doc["metadata"]["annotations"]["vgpuctl.io/kinds"]
    doc["items"] = [o for o in doc["items"] if not o["apiVersion"].startswith("resource.k8s.io/")]
    plain = tmp_path / "kubectl.json"
    plain.write_text(json.dumps(doc))
    report = run("doctor", "--snapshot", str(plain), "-o", "json").json()
    (row,) = [c for c in report["checks"] if c["code"] == "VGN021"]
    assert row["status"] == "skip" and "ResourceSlices were not collected" in row["reason"]
    assert not any(f["code"] in ("VGN021", "VGP020") for f in report["findings"])  # nothing guessed
    nodes = run("nodes", "--snapshot", str(plain), "-o", "json")
    validate("node-report.schema.json", nodes.json())


def _pod_with_template(tmp_path: Path, *, with_template: bool) -> Path:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "infer", "namespace": "ml"},
           "spec": {"schedulerName": "volcano", "resourceClaims": [{"name": "gpu", "resourceClaimTemplateName":
                                                                     "single-gpu"}],
                    "containers": [{"name": "c", "resources": {"limits": {"volcano.sh/vgpu-number": 1},
                                                               "claims": [{"name": "gpu"}]}}]}}
    template = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                "metadata": {"name": "single-gpu", "namespace": "ml"},
                "spec": {"spec": {"devices": {"requests": [{"name": "g", "exactly": {"deviceClassName":
                                                                                   "gpu.nvidia.com"}}]}}}}
    path = tmp_path / "infer.yaml"
    path.write_text(yaml.safe_dump_all([pod, template] if with_template else [pod]))
    return path


def test_lint_resolves_a_claim_from_its_own_input(run: Any, tmp_path: Path) -> None:
    result = run("lint", str(_pod_with_template(tmp_path, with_template=True)), "-o", "json")
    assert result.exit_code == 1
    report = result.json()
    validate("lint-report.schema.json", report)
    (item,) = [i for i in report["items"] if i["kind"] == "Pod"]
    assert [f["code"] for f in item["findings"] if f["code"] == "VGP020"] == ["VGP020"]
    alone = run("lint", str(_pod_with_template(tmp_path, with_template=False)), "-o", "json").json()
    assert not any(f["code"] == "VGP020" for i in alone["items"] for f in i["findings"])  # unknown: not guessed


def test_lint_against_the_mixed_cluster_resolves_its_templates_and_its_scheduler(run: Any, tmp_path: Path) -> None:
    """The template is in the snapshot only; the snapshot's Volcano 1.14.4 cannot allocate claims (VGC014)."""
    manifest = str(_pod_with_template(tmp_path, with_template=False))
    result = run("lint", manifest, "--snapshot", str(MIXED), "-o", "json")
    codes = {f["code"] for i in result.json()["items"] for f in i["findings"]}
    assert {"VGP020", "VGC014"} <= codes
    fixed = yaml.safe_load(MIXED.read_text())
    conf = next(o for o in fixed["items"] if o["metadata"]["name"] == "volcano-scheduler-configmap")
    conf["data"]["volcano-scheduler.conf"] = conf["data"]["volcano-scheduler.conf"].replace(
        "  - name: predicates\n",
        "  - name: predicates\n    arguments:\n      predicate.DynamicResourceAllocationEnable: true\n")
    deployment = next(o for o in fixed["items"] if o["kind"] == "Deployment")
    deployment["spec"]["template"]["spec"]["containers"][0]["args"].append(
        "--feature-gates=DynamicResourceAllocation=true")
    enabled = tmp_path / "enabled.json"
    enabled.write_text(json.dumps(copy.deepcopy(fixed)))
    result = run("lint", manifest, "--snapshot", str(enabled), "-o", "json")
    codes = {f["code"] for i in result.json()["items"] for f in i["findings"]}
    assert "VGC014" not in codes and "VGP020" in codes
    doctor = run("doctor", "--snapshot", str(enabled), "-o", "json").json()
    assert not any(f["code"] == "VGC014" for f in doctor["findings"])
