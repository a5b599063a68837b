"""One truth: the same object through every command that judges it gets the same verdict.

Issue 15's promise is that the webhook, `lint`, `doctor` and `why` cannot disagree, because they call the same
rule core with the same facts. This file holds them against each other on the bundled examples, the upstream
example manifests and the values the issue found drifting:

- the admission webhook (its `/mutate` then `/validate`, as the API server calls them) and `lint` with the
  same `--device-config`: `allowed` and the denial codes agree;
- `lint --snapshot`, `why -f --snapshot` and `doctor --snapshot` (the pod stored as the API server would keep
  it after the mutating webhook, Pending in that cluster): the error codes agree, and `why` answers
  `rejected` exactly when lint denies.

`tests/cli/test_nodes_doctor_agree.py` does the same for nodes (`nodes` against `doctor`).
"""

from __future__ import annotations

import base64
import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
import yaml

from tests.cli.conftest import EXAMPLES, validate
from vgpuctl.webhook.app import create_app
from vgpuctl.webhook.settings import Settings

HEALTHY = EXAMPLES / "clusters" / "healthy.yaml"
UPSTREAM = EXAMPLES.parent / "tests" / "fixtures" / "upstream-examples"

MANIFESTS = sorted(p for d in ("vgpu", "gpushare", "ascend-hami", "mindcluster") for p in (EXAMPLES / d).glob("*.yaml"))
MANIFESTS += sorted(UPSTREAM.glob("[!d]*/*.y*ml"))


def _pod(name: str, limits: dict[str, Any], annotations: dict[str, str] | None = None) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": "ml", "annotations": annotations or {}},
            "spec": {"schedulerName": "volcano",
                     "containers": [{"name": "main", "image": "x", "resources": {"limits": limits}}]}}


# The values issue 15 found judged differently by different commands.
DRIFTED = [
    _pod("negative-count", {"volcano.sh/vgpu-number": -1, "volcano.sh/vgpu-memory": 1024}),
    _pod("huge-count", {"volcano.sh/vgpu-number": "1e38"}),
    _pod("full-width", {"volcano.sh/vgpu-number": 1, "volcano.sh/vgpu-memory": "３０００"}),
    _pod("gibibytes", {"volcano.sh/vgpu-number": 1, "volcano.sh/vgpu-memory": "3Gi"}),
    _pod("mode-caps", {"volcano.sh/vgpu-number": 1, "volcano.sh/vgpu-memory": 1024}, {"volcano.sh/vgpu-mode": "MIG"}),
    _pod("npu-over-chip", {"huawei.com/Ascend310P": 1, "huawei.com/Ascend310P-memory": 30000}),
    _pod("npu-partial-two", {"huawei.com/Ascend310P": 2, "huawei.com/Ascend310P-memory": 4096}),
    _pod("empty-nouse", {"volcano.sh/vgpu-number": 1}, {"volcano.sh/vgpu-nouse-gpuuuid": ""}),
    _pod("hami-uuid", {"volcano.sh/vgpu-number": 1}, {"nvidia.com/use-gpuuuid": "GPU-0"}),
]


def _first_object(path: Path) -> dict[str, Any]:
    return next(d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict))


def _cases() -> list[Any]:
    cases = [pytest.param(_first_object(p), id=f"{p.parent.name}/{p.name}") for p in MANIFESTS]
    cases += [pytest.param(pod, id=pod["metadata"]["name"]) for pod in DRIFTED]
    return cases


@pytest.fixture(scope="module")
def device_config(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The device ConfigMap Volcano reads in the healthy cluster, as a file the webhook mounts."""
    objects = yaml.safe_load(HEALTHY.read_text())["items"]
    configmap = next(o for o in objects if o["kind"] == "ConfigMap"
                     and o["metadata"]["name"] == "volcano-vgpu-device-config")
    path = tmp_path_factory.mktemp("config") / "device-config.yaml"
    path.write_text(configmap["data"]["device-config.yaml"])
    return path


def _review(kind: str, obj: dict[str, Any]) -> dict[str, Any]:
    group, _, version = obj.get("apiVersion", "v1").rpartition("/")
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": "u", "kind": {"group": group, "version": version, "kind": kind},
                        "operation": "CREATE", "namespace": obj["metadata"].get("namespace", "default"),
                        "object": obj}}


def _webhook(device_config: Path, obj: dict[str, Any]) -> tuple[bool, list[str]]:
    """What the API server ends with: /mutate's patch applied, then /validate's answer and denial codes."""
    client = create_app(Settings(device_config_path=str(device_config), config_check_interval=0)).test_client()
    mutated = client.post("/mutate", json=_review(obj["kind"], obj)).get_json()["response"]
    if mutated.get("patch"):
        obj = jsonpatch.apply_patch(obj, json.loads(base64.b64decode(mutated["patch"])))
    answer = client.post("/validate", json=_review(obj["kind"], obj)).get_json()["response"]
    message = answer.get("status", {}).get("message", "")
    codes = sorted(set(re.findall(r"\[(VG[A-Z]\d{3})\]", message)))
    return answer["allowed"], codes


def _write(tmp_path: Path, name: str, obj: Any) -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(obj))
    return str(path)


def _errors(findings: list[dict[str, Any]]) -> list[str]:
    return sorted({f["code"] for f in findings if f["severity"] == "error"})


@pytest.mark.parametrize("obj", _cases())
def test_webhook_and_lint_agree(run, tmp_path: Path, device_config: Path, obj: dict[str, Any]) -> None:
    lint = run("lint", _write(tmp_path, "obj.yaml", obj), "--device-config", str(device_config), "-o", "json")
    item = lint.json()["items"][0]
    allowed, codes = _webhook(device_config, copy.deepcopy(obj))
    assert allowed is item["allowed"]
    assert codes == _errors(item["findings"])


@pytest.mark.parametrize("obj", _cases())
def test_lint_why_and_doctor_agree_on_a_snapshot(run, tmp_path: Path, obj: dict[str, Any]) -> None:
    path = _write(tmp_path, "obj.yaml", obj)
    lint = run("lint", path, "--snapshot", str(HEALTHY), "-o", "json").json()["items"][0]
    errors = _errors(lint["findings"])

    why = run("why", "-f", path, "--snapshot", str(HEALTHY), "-o", "json")
    report = why.json()
    validate("why-report.schema.json", report)
    assert (report["verdict"] == "rejected") is (not lint["allowed"])
    assert _errors(report["findings"]) == errors

    if obj.get("kind") != "Pod":
        return  # the doctor judges pods that exist; a workload's pods are judged through lint's template path
    stored = jsonpatch.apply_patch(obj, lint["patch"]) if lint["patch"] else copy.deepcopy(obj)
    stored["metadata"].setdefault("namespace", "default")
    stored["metadata"]["name"] = "one-truth-probe"
    stored["status"] = {"phase": "Pending"}
    cluster = yaml.safe_load(HEALTHY.read_text())
    cluster["items"].append(stored)
    doctor = run("doctor", "--snapshot", _write(tmp_path, "cluster.yaml", cluster), "-o", "json").json()
    subject = f"pod/{stored['metadata']['namespace']}/one-truth-probe"
    mine = [f for f in doctor["findings"]
            if any(s == subject or s.startswith(subject + "/") for s in [f["subject"], *f.get("subjects", [])])]
    assert _errors(mine) == errors
