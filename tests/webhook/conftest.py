"""Webhook test fixtures: the Flask app with the test device config, and golden-file helpers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from vgpuctl.webhook.app import create_app
from vgpuctl.webhook.settings import Settings

HERE = Path(__file__).resolve().parent
GOLDEN = HERE / "golden"
DEVICE_CONFIG = HERE / "fixtures" / "device-config.yaml"


def load_json(path: Path) -> Any:
    return json.loads(path.read_text())


@pytest.fixture
def settings() -> Settings:
    return Settings(device_config_path=str(DEVICE_CONFIG), config_check_interval=0)


@pytest.fixture
def app(settings: Settings) -> Flask:
    return create_app(settings)


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


def admission_review(obj: Any, *, uid: str = "uid-1", operation: str = "CREATE", dry_run: bool = False,
                     group: str = "", version: str = "v1", kind: str = "Pod") -> dict[str, Any]:
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "request": {"uid": uid, "kind": {"group": group, "version": version, "kind": kind},
                        "operation": operation, "namespace": "team-a", "object": obj, "dryRun": dry_run}}


def vgpu_pod(limits: dict[str, Any], **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "team-a"},
            "spec": {"containers": [{"name": "main", "image": "x", "resources": {"limits": limits}}], **spec}}
