"""Issue 15 §1: a webhook with no device config mounted judges against Volcano's built-in device config.

Volcano's scheduler runs on `GetDefaultDevicesConfig()` when its device ConfigMap is missing or unreadable
(volcano-sh/volcano `pkg/scheduler/api/devices/config/config.go`, `InitDevicesConfig`): default vGPU
resource names, no MIG geometries, and one vnpus entry, Ascend310P (memoryCapacity 24576, templates vir01 /
vir02 / vir04). The webhook judges the resources that config declares and says so once, at info, when it
starts; a chip it does not declare is not "unknown" (VGH008 needs a config that was given).
"""

from __future__ import annotations

import logging
from typing import Any

import pytest
from flask.testing import FlaskClient

from tests.webhook.conftest import DEVICE_CONFIG, admission_review, vgpu_pod
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.lintreport import Document, lint
from vgpuctl.webhook.app import create_app
from vgpuctl.webhook.settings import Settings

P310, P310_MEM = "huawei.com/Ascend310P", "huawei.com/Ascend310P-memory"


def ascend_pod(limits: dict[str, Any]) -> dict[str, Any]:
    return vgpu_pod(limits, schedulerName="volcano", runtimeClassName="ascend")


@pytest.fixture
def bare() -> FlaskClient:
    """The webhook as `webhook serve` runs it without --device-config."""
    return create_app(Settings(config_check_interval=0)).test_client()


def validate(client: FlaskClient, obj: dict[str, Any]) -> dict[str, Any]:
    r = client.post("/validate", json=admission_review(obj))
    assert r.status_code == 200
    response: dict[str, Any] = r.json["response"]
    return response


@pytest.mark.parametrize(("limits", "code"), [
    ({P310: 1, P310_MEM: 30000}, "VGH003"),  # more than the chip's memoryCapacity (24576)
    ({P310: 2, P310_MEM: 4096}, "VGH004"),  # several devices with a partial card
])
def test_a_request_the_builtin_config_never_places_is_denied(bare: FlaskClient, limits: dict[str, Any],
                                                            code: str) -> None:
    response = validate(bare, ascend_pod(limits))
    assert response["allowed"] is False
    assert response["status"]["message"].startswith(f"[{code}]")


def test_a_chip_the_builtin_config_does_not_declare_is_not_unknown(bare: FlaskClient) -> None:
    response = validate(bare, ascend_pod({"huawei.com/Ascend910B3": 1, "huawei.com/Ascend910B3-memory": 99999}))
    assert response["allowed"] is True and "VGH008" not in str(response)


def test_a_mounted_config_is_judged_instead() -> None:
    """The test device config declares no Ascend chip: there the same 310P pod is unknown (VGH008)."""
    client = create_app(Settings(device_config_path=str(DEVICE_CONFIG), config_check_interval=0)).test_client()
    response = validate(client, ascend_pod({P310: 1, P310_MEM: 30000}))
    assert response["allowed"] is False and response["status"]["message"].startswith("[VGH008]")


def test_the_webhook_and_lint_give_the_same_verdict_without_a_device_config(bare: FlaskClient) -> None:
    """One truth across commands: the validating webhook and `lint --no-defaults` (no config either)."""
    pods = [ascend_pod({P310: 1, P310_MEM: 30000}), ascend_pod({P310: 2, P310_MEM: 4096}),
            ascend_pod({P310: 1, P310_MEM: 4096}), ascend_pod({"huawei.com/Ascend910B3": 1})]
    report = lint([Document(f"pod:{i}", p) for i, p in enumerate(pods)], ClusterFacts(), apply_defaults=False)
    by_lint = [item.allowed for item in report.items]
    by_webhook = [validate(bare, p)["allowed"] for p in pods]
    assert by_webhook == by_lint == [False, False, True, True]


def test_startup_says_once_at_info_that_the_builtin_config_is_judged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="vgpuctl.webhook"):
        client = create_app(Settings(config_check_interval=0)).test_client()
        for _ in range(3):
            validate(client, ascend_pod({P310: 1, P310_MEM: 4096}))
    notes = [r for r in caplog.records if "built-in device config" in r.getMessage()]
    assert len(notes) == 1 and notes[0].levelno == logging.INFO
    assert "Ascend310P" in notes[0].getMessage() and "no MIG geometries" in notes[0].getMessage()


def test_no_such_note_with_a_mounted_config(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="vgpuctl.webhook"):
        create_app(Settings(device_config_path=str(DEVICE_CONFIG), config_check_interval=0))
    assert not [r for r in caplog.records if "built-in device config" in r.getMessage()]


def test_vgh010_without_plugin_facts_is_no_admission_warning(bare: FlaskClient) -> None:
    """VGH010 is `info` when nothing says which ascend-device-plugin runs (issue 16 §3): the mutating path
    returns warnings and the defaults it applied, and this info is neither."""
    pod = vgpu_pod({P310: 1}, schedulerName="volcano")
    r = bare.post("/mutate", json=admission_review(pod)).json["response"]
    assert r["allowed"] is True and not any("VGH010" in w for w in r.get("warnings") or [])
    defaulted = vgpu_pod({P310_MEM: 4096}, schedulerName="volcano")  # a default still shows as a warning
    r = bare.post("/mutate", json=admission_review(defaulted)).json["response"]
    assert any(w.startswith("[VGH002]") for w in r["warnings"])
