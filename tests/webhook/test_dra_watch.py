"""`webhook serve --cluster-aware` and DRA: the real kubernetes client discovers resource.k8s.io on a local API
server, lists and watches DeviceClasses, ResourceClaims and ResourceClaimTemplates, and /validate judges VGP020
with what it learned (docs/stacks.md#pods-mixing-stacks). Objects and faults on the fake API server, reviews and
probes on the app: nothing of vgpuctl is replaced.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

import orjson
import pytest
from flask.testing import FlaskClient
from werkzeug import Response

from tests.kube.conftest import client_for
from tests.webhook import test_cluster_aware as aware
from tests.webhook.fake_watch_api import FakeApi, WatchableList
from tests.webhook.live import wait_for
from tests.webhook.test_cluster_aware import FAST, SYNC, validate, wait_synced
from vgpuctl.kube.dra_watch import DraWatch
from vgpuctl.webhook.app import create_app
from vgpuctl.webhook.settings import Settings

GROUP = "resource.k8s.io"


class DraApi:
    """The DRA group at one version on the fake API server: its discovery document and three watchable lists."""

    def __init__(self, api: FakeApi, version: str) -> None:
        self.version = version
        api_version = f"{GROUP}/{version}"
        base = f"/apis/{api_version}"
        self.classes = WatchableList(api, f"{base}/deviceclasses", api_version, "DeviceClass")
        self.claims = WatchableList(api, f"{base}/resourceclaims", api_version, "ResourceClaim")
        self.templates = WatchableList(api, f"{base}/resourceclaimtemplates", api_version, "ResourceClaimTemplate")
        group = {"kind": "APIGroup", "apiVersion": "v1", "name": GROUP,
                 "versions": [{"groupVersion": api_version, "version": version}],
                 "preferredVersion": {"groupVersion": api_version, "version": version}}
        api.cluster.route(f"/apis/{GROUP}", lambda _r: Response(orjson.dumps(group), content_type="application/json"))


def device_class(name: str, driver: str) -> dict[str, Any]:
    return {"kind": "DeviceClass", "metadata": {"name": name},
            "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{driver}"'}}]}}


def template(name: str, cls: str, *, namespace: str = "team-a", version: str = "v1") -> dict[str, Any]:
    request = {"name": "r", "exactly": {"deviceClassName": cls}} if version == "v1" else \
        {"name": "r", "deviceClassName": cls}
    return {"kind": "ResourceClaimTemplate", "metadata": {"name": name, "namespace": namespace},
            "spec": {"spec": {"devices": {"requests": [request]}}}}


def claim(name: str, cls: str, *, namespace: str = "team-a") -> dict[str, Any]:
    return {"kind": "ResourceClaim", "metadata": {"name": name, "namespace": namespace},
            "spec": {"devices": {"requests": [{"name": "r", "exactly": {"deviceClassName": cls}}]}}}


def vgpu_pod(name: str, *entries: dict[str, str]) -> dict[str, Any]:
    """A vGPU pod (fits gpu-1's free memory) with these `spec.resourceClaims` entries."""
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "team-a"},
            "spec": {"schedulerName": "volcano", "resourceClaims": list(entries), "containers": [
                {"name": "main", "image": "x", "resources": {"limits": {
                    "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "1024"}}}]}}


BY_TEMPLATE = vgpu_pod("by-template", {"name": "gpu", "resourceClaimTemplateName": "one-gpu"})
BY_CLAIM = vgpu_pod("by-claim", {"name": "gpu", "resourceClaimName": "shared"})


def codes(response: dict[str, Any]) -> str:
    return str(response.get("status", {}).get("message", "")) + " ".join(response.get("warnings") or [])


def denied_for_vgp020(client: FlaskClient, pod: dict[str, Any]) -> bool:
    response = validate(client, pod)
    return response["allowed"] is False and "[VGP020]" in codes(response)


def dra_check(client: FlaskClient) -> dict[str, Any]:
    r = client.get("/readyz")
    check: dict[str, Any] = r.json["checks"]["draWatch"]
    return check


api = aware.api  # the local API server with test_cluster_aware's nodes and pods (a fixture)


def settings_for(api: FakeApi, **extra: Any) -> Settings:
    return replace(aware.aware_settings(api),
                   dra_watch=lambda sink: DraWatch(lambda: client_for(api.url), sink, options=FAST, **extra))


@pytest.fixture
def app_for(api: FakeApi) -> Iterator[Any]:
    apps: list[Any] = []

    def make(**extra: Any) -> FlaskClient:
        app = create_app(settings_for(api, **extra))
        apps.append(app)
        return app.test_client()

    yield make
    for app in apps:
        state = app.extensions["vgpuctl"]
        state.dra.stop()
        state.cluster.stop()


def listed(client: FlaskClient) -> bool:
    return len(dra_check(client)["listed"]) == 3


# ---- VGP020 from the watched objects -----------------------------------------------------------------------

@pytest.mark.parametrize("version", ["v1", "v1beta1"])
def test_a_watched_gpu_template_denies_a_vgpu_pod_that_claims_it(api: FakeApi, app_for: Any, version: str) -> None:
    dra = DraApi(api, version)
    dra.templates.put(template("one-gpu", "gpu.nvidia.com", version=version))
    client = app_for()
    wait_synced(client)
    wait_for(lambda: listed(client), SYNC, "the DRA lists")
    assert dra_check(client)["version"] == version
    assert denied_for_vgp020(client, BY_TEMPLATE)
    assert {r.path for r in dra.templates.lists} == {f"/apis/{GROUP}/{version}/resourceclaimtemplates"}

    dra.templates.delete(template("one-gpu", "gpu.nvidia.com", version=version))  # a watch event
    wait_for(lambda: validate(client, BY_TEMPLATE)["allowed"], SYNC, "the deleted template to reach the webhook")
    dra.templates.put(template("one-gpu", "gpu.nvidia.com", version=version))
    wait_for(lambda: denied_for_vgp020(client, BY_TEMPLATE), SYNC, "the re-created template")


def test_a_claim_is_judged_by_its_class_as_the_watch_says(api: FakeApi, app_for: Any) -> None:
    dra = DraApi(api, "v1")
    dra.classes.put(device_class("fast", "gpu.nvidia.com"))
    dra.claims.put(claim("shared", "fast"))
    client = app_for()
    wait_synced(client)
    wait_for(lambda: listed(client), SYNC, "the DRA lists")
    assert denied_for_vgp020(client, BY_CLAIM)  # a class of its own that selects NVIDIA's GPU driver

    dra.classes.put(device_class("fast", "dra.net"))  # the same class now selects NICs
    wait_for(lambda: validate(client, BY_CLAIM)["allowed"], SYNC, "the changed class to reach the webhook")
    dra.claims.put(claim("shared", "gpu.nvidia.com"))  # the claim now asks NVIDIA's own class
    wait_for(lambda: denied_for_vgp020(client, BY_CLAIM), SYNC, "the changed claim")


def test_unknown_claims_and_other_namespaces_are_not_guessed(api: FakeApi, app_for: Any) -> None:
    dra = DraApi(api, "v1")
    dra.templates.put(template("one-gpu", "gpu.nvidia.com", namespace="team-b"))  # not the pod's namespace
    dra.classes.put(device_class("dranet", "dra.net"))
    dra.templates.put(template("nic", "dranet"))
    client = app_for()
    wait_synced(client)
    wait_for(lambda: listed(client), SYNC, "the DRA lists")
    assert dra_check(client)["objects"] == {"deviceclasses": 1, "resourceclaims": 0, "resourceclaimtemplates": 2}
    assert validate(client, BY_TEMPLATE)["allowed"] is True
    assert validate(client, BY_CLAIM)["allowed"] is True  # no such claim known
    nic = vgpu_pod("nic", {"name": "net", "resourceClaimTemplateName": "nic"})
    assert validate(client, nic)["allowed"] is True


def test_a_re_list_after_410_replaces_what_was_known(api: FakeApi, app_for: Any) -> None:
    dra = DraApi(api, "v1")
    dra.templates.put(template("one-gpu", "gpu.nvidia.com"))
    client = app_for()
    wait_synced(client)
    wait_for(lambda: listed(client), SYNC, "the DRA lists")
    assert denied_for_vgp020(client, BY_TEMPLATE)
    dra.templates.put(template("one-gpu", "dranet-free-class"), silent=True)  # only a new list shows it
    dra.templates.expire()
    wait_for(lambda: len(dra.templates.lists) >= 2, SYNC, "the re-list")
    wait_for(lambda: validate(client, BY_TEMPLATE)["allowed"], SYNC, "the re-listed template")


# ---- a cluster without DRA, or without the right to read it -----------------------------------------------

def test_a_server_without_dra_is_ready_and_says_why_vgp020_is_skipped(api: FakeApi, app_for: Any) -> None:
    client = app_for(recheck=0.2)
    wait_synced(client)
    check = wait_for(lambda: (c := dra_check(client)).get("reason", "").startswith("the API server serves") and c,
                     SYNC, "the discovery")
    assert check["ok"] is True and check["version"] is None
    assert client.get("/readyz").status_code == 200
    assert validate(client, BY_TEMPLATE)["allowed"] is True  # nothing known: skipped, never guessed

    dra = DraApi(api, "v1")  # the control plane is upgraded: found on the next look, no restart
    dra.templates.put(template("one-gpu", "gpu.nvidia.com"))
    wait_for(lambda: denied_for_vgp020(client, BY_TEMPLATE), SYNC, "the DRA watch to start")


def test_forbidden_device_classes_break_one_watch_not_the_webhook(api: FakeApi, app_for: Any,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, "vgpuctl.webhook")
    dra = DraApi(api, "v1")
    api.cluster.fail_status(f"/apis/{GROUP}/v1/deviceclasses", 403, "Forbidden",
                            'deviceclasses.resource.k8s.io is forbidden: User "system:serviceaccount:x" cannot list')
    dra.templates.put(template("one-gpu", "gpu.nvidia.com"))  # NVIDIA's chart's class: a GPU class unseen
    client = app_for()
    wait_synced(client)
    check = wait_for(lambda: "broken" in (c := dra_check(client)).get("reason", "") and c, SYNC, "the 403 to show")
    assert check["reason"].startswith("watch of deviceclasses broken: HTTP 403 FORBIDDEN: deviceclasses.resource")
    assert client.get("/readyz").status_code == 200
    wait_for(lambda: denied_for_vgp020(client, BY_TEMPLATE), SYNC, "the templates to be judged without the classes")
    metrics = client.get("/metrics").get_data(as_text=True)
    assert 'vgpuctl_webhook_cluster_watch_errors_total{resource="deviceclasses"}' in metrics
    assert sum("cluster watch of deviceclasses broke" in r.getMessage() for r in caplog.records) == 1


def test_without_a_dra_watch_the_readiness_says_so(api: FakeApi) -> None:
    app = create_app(aware.aware_settings(api))
    try:
        client = app.test_client()
        wait_synced(client)
        assert dra_check(client) == {"ok": True, "version": None, "listed": [], "reason": "no DRA watch was started",
                                     "objects": {"deviceclasses": 0, "resourceclaims": 0,
                                                 "resourceclaimtemplates": 0}}
    finally:
        app.extensions["vgpuctl"].cluster.stop()


def test_webhook_serve_watches_dra_in_the_worker(api: FakeApi, tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """`vgpuctl webhook serve --cluster-aware` for real: the CLI's watch factories start the DRA watch in the
    gunicorn worker, and /validate denies a vGPU pod whose template asks a GPU."""
    from tests.webhook.conftest import admission_review

    dra = DraApi(api, "v1beta2")
    dra.templates.put(template("one-gpu", "mig.nvidia.com"))
    live = aware.serve_cluster_aware(api, tmp_path, monkeypatch)
    try:
        def denied() -> bool:
            status, body = live.connection().post_json("/validate", admission_review(BY_TEMPLATE))
            return status == 200 and "[VGP020]" in body["response"].get("status", {}).get("message", "")

        wait_for(denied, SYNC, "the worker to judge the watched template")
    finally:
        live.stop()
    log = live.log()
    assert "Traceback" not in log, log
    assert "resource.k8s.io/v1beta2" in log


def test_pod_churn_keeps_the_judged_facts_and_pins_no_old_view(api: FakeApi, app_for: Any) -> None:
    """With DRA facts merged in, a view rebuilt for pod changes alone keeps the facts value requests judge with
    (and its derived caches), and the webhook's cache holds no previous view alive."""
    import gc
    import weakref

    dra = DraApi(api, "v1")
    dra.templates.put(template("one-gpu", "gpu.nvidia.com"))
    client = app_for()
    wait_synced(client)
    wait_for(lambda: listed(client), SYNC, "the DRA lists")
    state = client.application.extensions["vgpuctl"]
    judged, view = state.cluster_view()
    assert judged.dra is not None and judged.max_gpus_per_node == 4
    old_view = weakref.ref(view)
    del view
    api.pods.put(aware.running("c0", "gpu-2", ("GPU-gpu-2-0", 1000)))
    wait_for(lambda: state.cluster_view()[1] is not old_view(), SYNC, "the rebuilt view")
    again, _ = state.cluster_view()
    assert again is judged  # the same facts value: nothing re-derived on the request path
    gc.collect()
    assert old_view() is None  # nothing of the webhook's keeps the previous view
