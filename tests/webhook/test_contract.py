"""Contract tests: golden AdmissionReview in/out files through Flask's test client.

Each `golden/<endpoint>-<case>.in.json` is posted to `/<endpoint>`; the answer must equal
`<endpoint>-<case>.out.json` byte for byte as JSON. After a deliberate change of the rules or messages,
regenerate with `VGPUCTL_UPDATE_GOLDEN=1 pytest tests/webhook/test_contract.py` and review the diff.
"""

from __future__ import annotations

import base64
import copy
import json
import os
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
from flask.testing import FlaskClient

from tests.webhook.conftest import GOLDEN, admission_review, load_json, vgpu_pod
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.podrules import Review
from vgpuctl.webhook.review import mutate_decision

CASES = sorted(p.name.removesuffix(".in.json") for p in GOLDEN.glob("*.in.json"))
UPDATE = os.environ.get("VGPUCTL_UPDATE_GOLDEN") == "1"


def post(client: FlaskClient, endpoint: str, body: Any) -> Any:
    response = client.post(f"/{endpoint}", json=body)
    assert response.status_code == 200, response.data
    assert response.mimetype == "application/json"
    return response.json


@pytest.mark.parametrize("case", CASES)
def test_golden(client: FlaskClient, case: str) -> None:
    endpoint = case.split("-", 1)[0]
    request = load_json(GOLDEN / f"{case}.in.json")
    answer = post(client, endpoint, request)
    out = GOLDEN / f"{case}.out.json"
    if UPDATE:
        out.write_text(json.dumps(answer, indent=2, ensure_ascii=False) + "\n")
    assert answer == load_json(out)
    # The invariants every answer keeps, whatever the case.
    response = answer["response"]
    assert answer["apiVersion"] == "admission.k8s.io/v1" and answer["kind"] == "AdmissionReview"
    assert response["uid"] == request["request"]["uid"]
    assert all(len(w) <= 256 for w in response.get("warnings", []))
    if endpoint == "mutate":
        assert response["allowed"] is True
    else:
        assert "patch" not in response and "patchType" not in response
    if not response["allowed"]:
        assert response["status"]["code"] in (400, 403)
        assert response["status"]["message"].startswith("[")


def test_golden_set_is_complete() -> None:
    outs = {p.name.removesuffix(".out.json") for p in GOLDEN.glob("*.out.json")}
    assert outs == set(CASES)
    assert {"mutate", "validate"} == {c.split("-", 1)[0] for c in CASES}


def test_denial_lists_every_error_code(client: FlaskClient) -> None:
    answer = post(client, "validate", load_json(GOLDEN / "validate-vgpu-denied.in.json"))["response"]
    message = answer["status"]["message"]
    assert answer["status"]["code"] == 403
    assert message.startswith("[VGP001]")
    for code in ("VGP001", "VGP005"):
        assert f"[{code}]" in message
    assert "Fix:" in message


def test_dry_run_is_answered_like_the_real_request(client: FlaskClient) -> None:
    for endpoint, case in (("validate", "validate-vgpu-denied"), ("mutate", "mutate-vgpu-defaults")):
        real = post(client, endpoint, load_json(GOLDEN / f"{case}.in.json"))["response"]
        dry = post(client, endpoint, load_json(GOLDEN / f"{case}-dryrun.in.json"))["response"]
        assert {k: v for k, v in real.items() if k != "uid"} == {k: v for k, v in dry.items() if k != "uid"}


@pytest.mark.parametrize("case", [c for c in CASES if c.startswith("mutate-")])
def test_patched_object_passes_validation(client: FlaskClient, case: str) -> None:
    """The mutating answer, applied with a JSON-patch library, yields what /validate then admits (when the
    only problems were ones the defaults repair) — and a second mutation adds nothing (idempotence)."""
    request = load_json(GOLDEN / f"{case}.in.json")
    response = post(client, "mutate", request)["response"]
    obj = request["request"]["object"]
    patched = obj
    if "patch" in response:
        assert response["patchType"] == "JSONPatch"
        ops = json.loads(base64.b64decode(response["patch"]))
        assert ops and all(op["op"] == "add" for op in ops)
        patched = jsonpatch.apply_patch(obj, ops)
    again = copy.deepcopy(request)
    again["request"]["object"] = patched
    assert "patch" not in post(client, "mutate", again)["response"]
    verdict = post(client, "validate", again)["response"]
    assert verdict["allowed"] is True, verdict
    assert verdict["uid"] == request["request"]["uid"]


def test_defaults_make_a_denied_pod_admissible(client: FlaskClient) -> None:
    pod = vgpu_pod({"volcano.sh/vgpu-memory": 3000})
    assert post(client, "validate", admission_review(pod))["response"]["allowed"] is False
    response = post(client, "mutate", admission_review(pod))["response"]
    patched = jsonpatch.apply_patch(pod, json.loads(base64.b64decode(response["patch"])))
    assert patched["spec"]["schedulerName"] == "volcano"
    assert post(client, "validate", admission_review(patched))["response"]["allowed"] is True


def test_warnings_are_clipped_printable_and_deduplicated() -> None:
    long = Finding("VGP010", Severity.WARNING, "pod", "x" * 300 + "\nsecond line")
    texts = mutate_decision(Review(True, (long, long), ())).warnings
    assert len(texts) == 1
    assert len(texts[0]) == 256 and texts[0].endswith("…") and "\n" not in texts[0]
    many = tuple(Finding("VGP013", Severity.WARNING, "pod", f"warning {i}") for i in range(50))
    clipped = mutate_decision(Review(True, many, ())).warnings
    assert len(clipped) == 20 and clipped[-1].startswith("… and 31 more")


def test_object_without_type_meta_is_routed_by_request_kind(client: FlaskClient) -> None:
    pod = vgpu_pod({"volcano.sh/vgpu-number": 1, "volcano.sh/vgpu-memory": "3Gi"}, schedulerName="volcano")
    del pod["apiVersion"], pod["kind"]
    response = post(client, "validate", admission_review(pod))["response"]
    assert response["allowed"] is False and "[VGP005]" in response["status"]["message"]


def test_review_log_line(client: FlaskClient, caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level("INFO", logger="vgpuctl.webhook.review")
    post(client, "validate", load_json(GOLDEN / "validate-vgpu-denied.in.json"))
    lines = [json.loads(r.getMessage()) for r in caplog.records if r.name == "vgpuctl.webhook.review"]
    assert len(lines) == 1
    line = lines[0]
    assert line["uid"] == "0d6f6a54-0003-4c1e-9f0a-000000000003"
    assert line["kind"] == "v1/Pod" and line["namespace"] == "team-a" and line["name"] == "trainer"
    assert line["operation"] == "CREATE" and line["allowed"] is False
    assert "VGP005" in line["codes"] and isinstance(line["durationMs"], float)


def test_golden_inputs_are_realistic() -> None:
    """Every golden request carries what an API server sends (so the cases are not easier than reality)."""
    for name in CASES:
        request = load_json(Path(GOLDEN / f"{name}.in.json"))["request"]
        assert {"uid", "kind", "resource", "operation", "userInfo", "object", "dryRun"} <= request.keys()
