"""VGP018 through the webhook's HTTP surface (Flask test client): the same podrules.review as `lint`.

Evidence: volcano-sh/volcano ed72c7c81 `pkg/scheduler/api/devices/nvidia/vgpu/type.go` (the vGPU pod
annotations Volcano reads: `volcano.sh/vgpu-use-gpuuuid`, not HAMi's `nvidia.com/use-gpuuuid`, which no file
under `pkg/` mentions).
"""

from __future__ import annotations

from flask.testing import FlaskClient

from tests.webhook.conftest import admission_review, vgpu_pod

LIMITS = {"volcano.sh/vgpu-number": 1, "volcano.sh/vgpu-memory": 1000}
UUID = "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448"


def _pod(annotations: dict[str, str]) -> dict:  # type: ignore[type-arg]
    pod = vgpu_pod(LIMITS, schedulerName="volcano")
    pod["metadata"]["annotations"] = annotations
    return pod


def test_validate_admits_with_a_vgp018_warning(client: FlaskClient) -> None:
    for path in ("/validate", "/mutate"):
        answer = client.post(path, json=admission_review(_pod({"nvidia.com/use-gpuuuid": UUID}))).json["response"]
        assert answer["allowed"] is True
        (warning,) = [w for w in answer.get("warnings", []) if w.startswith("[VGP018]")]
        assert "nvidia.com/use-gpuuuid" in warning and len(warning) <= 256


def test_the_annotation_volcano_reads_gets_no_vgp018(client: FlaskClient) -> None:
    answer = client.post("/validate", json=admission_review(_pod({"volcano.sh/vgpu-use-gpuuuid": UUID}))).json
    assert not [w for w in answer["response"].get("warnings", []) if w.startswith("[VGP018]")]
