"""HTTP-level behaviour of the Flask app: refusals, health, readiness, metrics, config reload."""

from __future__ import annotations

import datetime as dt
import io
import json
import os
from pathlib import Path
from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.webhook.conftest import DEVICE_CONFIG, admission_review, vgpu_pod
from vgpuctl.webhook.app import create_app
from vgpuctl.webhook.certs import generate_ca, issue_serving_cert, write_pem_files
from vgpuctl.webhook.review import build_response, internal_error_decision
from vgpuctl.webhook.settings import Settings

MIG_POD = vgpu_pod({"volcano.sh/vgpu-number": 1, "volcano.sh/vgpu-memory": 90000}, schedulerName="volcano")
MIG_POD["metadata"]["annotations"] = {"volcano.sh/vgpu-mode": "mig"}


def test_wrong_content_type_is_415(client: FlaskClient) -> None:
    r = client.post("/validate", data=json.dumps(admission_review(MIG_POD)), content_type="text/plain")
    assert r.status_code == 415 and r.json["code"] == 415


def test_not_json_is_400(client: FlaskClient) -> None:
    r = client.post("/mutate", data=b"\xff\x00{", content_type="application/json")
    assert r.status_code == 400 and "not valid JSON" in r.json["error"]


@pytest.mark.parametrize(("body", "fragment"), [
    ([], "JSON object"),
    ({"apiVersion": "admission.k8s.io/v1beta1", "kind": "AdmissionReview", "request": {}}, "apiVersion"),
    ({"apiVersion": "admission.k8s.io/v1", "kind": "Pod"}, "kind must be"),
    ({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview"}, "request is required"),
    ({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": {"uid": 5}}, "uid must be a string"),
    ({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
      "request": {"uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"}, "operation": "PATCH"}},
     "operation"),
    ({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
      "request": {"uid": "u", "kind": {"group": "", "version": "v1", "kind": "Pod"}, "operation": "CREATE"}},
     "object is required"),
])
def test_invalid_reviews_are_400(client: FlaskClient, body: Any, fragment: str) -> None:
    r = client.post("/validate", json=body)
    assert r.status_code == 400
    assert fragment in r.json["error"]


def test_body_over_the_limit_is_413() -> None:
    client = create_app(Settings(max_body_bytes=4096)).test_client()
    review = admission_review(vgpu_pod({"volcano.sh/vgpu-number": 1}))
    review["request"]["object"]["metadata"]["annotations"] = {"x": "y" * 5000}
    r = client.post("/validate", json=review)
    assert r.status_code == 413 and r.json["code"] == 413


def test_chunked_body_over_the_limit_is_413() -> None:
    client = create_app(Settings(max_body_bytes=4096)).test_client()
    body = json.dumps({"pad": "y" * 10000}).encode()
    r = client.post("/validate", input_stream=io.BytesIO(body),
                    content_type="application/json", headers={"Transfer-Encoding": "chunked"},
                    environ_overrides={"wsgi.input_terminated": True})
    assert r.status_code == 413


def test_health_and_methods(client: FlaskClient) -> None:
    assert client.get("/healthz").status_code == 200
    assert client.get("/validate").status_code == 405
    assert client.get("/nope").status_code == 404


def test_internal_error_fails_closed_on_validate_and_open_on_mutate() -> None:
    error = RuntimeError("boom")
    denied = build_response("u1", internal_error_decision("validate", error), with_patch=False)["response"]
    assert denied["uid"] == "u1" and denied["allowed"] is False
    assert denied["status"]["code"] == 403 and "denied rather than admitted unchecked" in denied["status"]["message"]
    assert denied["status"]["message"].startswith("[INTERNAL] ")
    allowed = build_response("u2", internal_error_decision("mutate", error), with_patch=True)["response"]
    assert allowed["allowed"] is True and "patch" not in allowed and allowed["warnings"]


def test_metrics_count_reviews_codes_and_latency(client: FlaskClient) -> None:
    client.post("/validate", json=admission_review(MIG_POD))
    client.post("/mutate", json=admission_review(vgpu_pod({"volcano.sh/vgpu-memory": 3000})))
    client.post("/validate", data=b"nope", content_type="application/json")
    text = client.get("/metrics").data.decode()
    assert 'vgpuctl_webhook_reviews_total{endpoint="validate",result="denied"} 1.0' in text
    assert 'vgpuctl_webhook_reviews_total{endpoint="mutate",result="allowed"} 1.0' in text
    assert 'vgpuctl_webhook_review_findings_total{code="VGP009",endpoint="validate",severity="error"} 1.0' in text
    assert 'vgpuctl_webhook_review_duration_seconds_count{endpoint="validate"} 1.0' in text
    assert 'vgpuctl_webhook_invalid_requests_total{endpoint="validate",status="400"} 1.0' in text
    assert 'vgpuctl_webhook_device_config_reloads_total{result="success"} 1.0' in text
    assert "vgpuctl_webhook_device_config_loaded 1.0" in text


def test_two_apps_have_separate_registries() -> None:
    a = create_app(Settings()).test_client()
    b = create_app(Settings()).test_client()
    a.post("/validate", json=admission_review(MIG_POD))
    assert 'result="skipped"} 0.0' in b.get("/metrics").data.decode()


# ---- device config reload ----------------------------------------------------------------------------

def _mount(root: Path, payload: str, version: int) -> None:
    """Write `payload` the way the kubelet updates a mounted ConfigMap: a new timestamped directory and an
    atomic swap of the `..data` symlink; `device-config.yaml` → `..data/device-config.yaml` never changes."""
    stamp = root / f"..2026_11_21_00_00_0{version}.000000000"
    stamp.mkdir()
    (stamp / "device-config.yaml").write_text(payload)
    tmp = root / "..data_tmp"
    tmp.symlink_to(stamp.name)
    os.replace(tmp, root / "..data")
    link = root / "device-config.yaml"
    if not link.is_symlink():
        link.symlink_to("..data/device-config.yaml")


def _verdict(client: FlaskClient) -> dict[str, Any]:
    response = client.post("/validate", json=admission_review(MIG_POD)).json["response"]
    assert isinstance(response, dict)
    return response


BIG_MIG = """\
nvidia:
  resourceCountName: volcano.sh/vgpu-number
  resourceMemoryName: volcano.sh/vgpu-memory
  resourceCoreName: volcano.sh/vgpu-cores
  gpuMemoryFactor: 1
  deviceSplitCount: 10
  deviceCoreScaling: 1
  knownMigGeometries:
  - models: ["H200"]
    allowedGeometries:
    - group: group1
      geometries:
      - name: 7g.141gb
        memory: 144384
        count: 1
"""


def test_device_config_reload_on_symlink_swap(tmp_path: Path) -> None:
    import yaml

    payload = yaml.safe_load(DEVICE_CONFIG.read_text())["data"]["device-config.yaml"]
    _mount(tmp_path, payload, 1)
    app = create_app(Settings(device_config_path=str(tmp_path / "device-config.yaml"), config_check_interval=0))
    client = app.test_client()
    # With the A30/A100 MIG geometries, a 90000 MiB MIG request fits no instance: VGP009.
    first = _verdict(client)
    assert first["allowed"] is False and "[VGP009]" in first["status"]["message"]

    _mount(tmp_path, BIG_MIG, 2)  # an H200 geometry with a 141 GB instance: the request now fits
    second = _verdict(client)
    assert second["allowed"] is True

    _mount(tmp_path, "nvidia: [this is: not, a device config", 3)  # broken: the last good config stays
    third = _verdict(client)
    assert third == second
    ready = client.get("/readyz")
    assert ready.status_code == 200  # a config was loaded once: a bad edit does not take the webhook out
    assert ready.json["checks"]["deviceConfig"]["lastError"]
    text = client.get("/metrics").data.decode()
    assert 'vgpuctl_webhook_device_config_reloads_total{result="success"} 2.0' in text
    assert 'vgpuctl_webhook_device_config_reloads_total{result="failure"} 1.0' in text

    _mount(tmp_path, payload, 4)
    assert _verdict(client) == first


def test_not_ready_when_no_device_config_was_ever_loaded(tmp_path: Path) -> None:
    path = tmp_path / "device-config.yaml"
    client = create_app(Settings(device_config_path=str(path), config_check_interval=0)).test_client()
    r = client.get("/readyz")
    assert r.status_code == 503 and r.json["checks"]["deviceConfig"]["ok"] is False
    assert "vgpuctl_webhook_device_config_loaded 0.0" in client.get("/metrics").data.decode()
    path.write_text(DEVICE_CONFIG.read_text())
    assert client.get("/readyz").status_code == 200


# ---- TLS readiness -----------------------------------------------------------------------------------

def _cert_files(tmp_path: Path, days: int) -> tuple[str, str]:
    ca = generate_ca("test-ca", days=days + 1)
    leaf = issue_serving_cert(ca, ["localhost"], ["127.0.0.1"], days=days)
    write_pem_files(tmp_path, ca, leaf)
    return str(tmp_path / "tls.crt"), str(tmp_path / "tls.key")


def test_ready_with_a_valid_certificate(tmp_path: Path) -> None:
    cert, key = _cert_files(tmp_path, 30)
    r = create_app(Settings(cert_file=cert, key_file=key)).test_client().get("/readyz")
    assert r.status_code == 200 and r.json["checks"]["tls"]["ok"] is True


def test_not_ready_when_the_certificate_expires_within_7_days(tmp_path: Path) -> None:
    cert, key = _cert_files(tmp_path, 5)
    r = create_app(Settings(cert_file=cert, key_file=key)).test_client().get("/readyz")
    assert r.status_code == 503 and "expires" in r.json["checks"]["tls"]["reason"]
    not_after = dt.datetime.fromisoformat(r.json["checks"]["tls"]["notAfter"])
    assert not_after - dt.datetime.now(dt.UTC) < dt.timedelta(days=6)


def test_not_ready_when_the_certificate_is_unreadable(tmp_path: Path) -> None:
    cert, key = _cert_files(tmp_path, 30)
    Path(cert).write_text("garbage")
    r = create_app(Settings(cert_file=cert, key_file=key)).test_client().get("/readyz")
    assert r.status_code == 503 and "unreadable" in r.json["checks"]["tls"]["reason"]


NOT_A_DEVICE_CONFIG = {
    "a Service": "apiVersion: v1\nkind: Service\nmetadata: {name: svc}\nspec: {ports: [{port: 443}]}\n",
    "a Pod": "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: x}]}\n",
    "a List": "apiVersion: v1\nkind: List\nitems: []\n",
}


@pytest.mark.parametrize("what", sorted(NOT_A_DEVICE_CONFIG))
def test_a_file_that_is_no_device_config_is_refused_at_start_and_on_reload(tmp_path: Path, what: str) -> None:
    """Issue 23 item 6: a Service, Pod or List given as the device config was "loaded" as an empty payload
    (Volcano's defaults, no MIG geometry): the webhook was ready and denied valid MIG pods (VGP009)."""
    import subprocess
    import sys

    import yaml

    wrong = tmp_path / "wrong.yaml"
    wrong.write_text(NOT_A_DEVICE_CONFIG[what])
    serve = subprocess.run([sys.executable, "-c", "from vgpuctl.cli.app import main; main()", "webhook", "serve",
                            "--port", "0", "--metrics-port", "0", "--device-config", str(wrong)],
                           capture_output=True, text=True, timeout=60)
    assert serve.returncode == 2 and "no device config found" in serve.stderr, serve.stderr
    assert serve.stderr.count("\n") == 1

    mounted = tmp_path / "mount"
    mounted.mkdir()
    _mount(mounted, yaml.safe_load(DEVICE_CONFIG.read_text())["data"]["device-config.yaml"], 1)
    client = create_app(Settings(device_config_path=str(mounted / "device-config.yaml"),
                                 config_check_interval=0)).test_client()
    good = _verdict(client)
    _mount(mounted, NOT_A_DEVICE_CONFIG[what], 2)  # a bad edit of the ConfigMap: the last good config stays
    assert _verdict(client) == good
    ready = client.get("/readyz")
    assert ready.status_code == 200
    assert "no device config found" in ready.json["checks"]["deviceConfig"]["lastError"]
