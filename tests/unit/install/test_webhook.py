"""The webhook part of install/uninstall, planned in the pure core: what is rendered from the packaged
manifests, in which order, what a diff may show, when a rollout counts as done, and what uninstall takes."""

from __future__ import annotations

import base64
import copy
from datetime import UTC, datetime
from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate import utils as kv_utils

from vgpuctl.core import spec
from vgpuctl.core.install.modes import InstallError, Mode
from vgpuctl.core.install.plan import SCHEDULER_CM, Action, ClusterState, InstallOptions, Method, Ref, ref_of
from vgpuctl.core.install.webhook import (
    TLS_HASH,
    WebhookOptions,
    WebhookTLS,
    install_plan,
    layout,
    plan_webhook,
    redact,
    removal_plan,
    render,
    rollout,
    webhook_refs,
)
from vgpuctl.core.versions import Version
from vgpuctl.manifests import webhook_objects

NOW = datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)
VERSIONS = sorted((v for v in kv_utils.all_versions() if tuple(map(int, v.split(".")[:2])) >= (1, 28)),
                  key=lambda v: tuple(map(int, v.split(".")[:2])))
CA = "-----BEGIN CERTIFICATE-----\nQ0EgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n"
CRT = "-----BEGIN CERTIFICATE-----\nc2VydmluZyBjZXJ0\n-----END CERTIFICATE-----\n"
KEY = "-----BEGIN PRIVATE KEY-----\nc2VjcmV0IGtleSBtYXRlcmlhbA==\n-----END PRIVATE KEY-----\n"
TLS = WebhookTLS(CA, CRT, KEY, note="TLS: test pair")
MANIFESTS = tuple(webhook_objects())
NS = "vgpuctl-system"
DEVICE = (Ref("v1", "ConfigMap", "kube-system", "volcano-vgpu-device-config"), "nvidia:\n  gpuMemoryFactor: 1\n")
ADMISSION = "admissionregistration.k8s.io/v1"


def options(tls: WebhookTLS = TLS, image: str | None = None) -> WebhookOptions:
    return WebhookOptions(MANIFESTS, tls, image)


def rendered(**kwargs: Any) -> list[dict[str, Any]]:
    return render(options(**kwargs), device_config=DEVICE, volcano=Version(1, 15, 1))


def as_cluster(objects: list[dict[str, Any]]) -> dict[Ref, Any]:
    return {ref_of(o): copy.deepcopy(o) for o in objects}


def scheduler_state(extra: dict[Ref, Any] | None = None) -> ClusterState:
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": spec.SCHEDULER_CONFIGMAP, "namespace": spec.SCHEDULER_NAMESPACE, "resourceVersion": "7"},
          "data": {spec.SCHEDULER_CONF_KEY: "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n"}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "volcano-scheduler", "namespace": "volcano-system"},
                  "spec": {"template": {"spec": {"containers": [{"image": "volcanosh/vc-scheduler:v1.15.1"}]}}}}
    return ClusterState({SCHEDULER_CM: cm, **(extra or {})}, [], deployment)


# --- rendering --------------------------------------------------------------------------------------

def test_layout_reads_every_name_from_the_manifests() -> None:
    lay = layout(MANIFESTS)
    assert lay.namespace == NS and lay.service == "vgpuctl-webhook"
    assert lay.secret == Ref("v1", "Secret", NS, "vgpuctl-webhook-tls")
    assert lay.deployment == Ref("apps/v1", "Deployment", NS, "vgpuctl-webhook")
    assert lay.device_config == Ref("v1", "ConfigMap", NS, "vgpuctl-device-config")
    assert [r.kind for r in lay.configs] == ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]
    assert set(webhook_refs(MANIFESTS)) == {ref_of(o) for o in MANIFESTS} | {lay.secret}


def test_layout_refuses_manifests_it_cannot_read() -> None:
    with pytest.raises(InstallError, match="hold 0 Deployment objects, expected 1"):
        layout([o for o in MANIFESTS if o["kind"] != "Deployment"])


def test_objects_are_written_in_a_safe_order_configurations_last() -> None:
    kinds = [o["kind"] for o in rendered()]
    # The quota before the pods that need it (system-cluster-critical outside kube-system).
    assert kinds == ["Namespace", "ServiceAccount", "ConfigMap", "ResourceQuota", "Secret", "Deployment", "Service",
                     "PodDisruptionBudget", "NetworkPolicy", "MutatingWebhookConfiguration",
                     "ValidatingWebhookConfiguration"]


def test_install_adds_only_what_a_cluster_needs_to_the_manifests() -> None:
    objects = {o["kind"]: o for o in rendered(image="registry.local/vgpuctl:dev")}
    for obj in objects.values():
        assert obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "vgpuctl"
    bundle = base64.b64encode(CA.encode()).decode()
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        assert [h["clientConfig"]["caBundle"] for h in objects[kind]["webhooks"]] == [bundle, bundle]
    secret = objects["Secret"]
    assert secret["type"] == "kubernetes.io/tls"
    assert {k: base64.b64decode(v).decode() for k, v in secret["data"].items()} == \
        {"ca.crt": CA, "tls.crt": CRT, "tls.key": KEY}
    assert secret["metadata"]["labels"]["app.kubernetes.io/name"] == "vgpuctl-webhook"
    pod = objects["Deployment"]["spec"]["template"]
    assert TLS_HASH in pod["metadata"]["annotations"]
    (container,) = pod["spec"]["containers"]
    assert container["image"] == "registry.local/vgpuctl:dev"
    assert {"name": "VGPUCTL_VOLCANO_VERSION", "value": "v1.15.1"} in container["env"]
    assert objects["ConfigMap"]["data"] == {"device-config.yaml": DEVICE[1]}
    assert objects["ConfigMap"]["metadata"]["annotations"] == {
        "vgpuctl.io/copy-of": "kube-system/volcano-vgpu-device-config"}
    # and nothing else differs from the packaged manifests
    packaged = {o["kind"]: o for o in MANIFESTS}
    assert objects["Service"]["spec"] == packaged["Service"]["spec"]
    assert objects["NetworkPolicy"]["spec"] == packaged["NetworkPolicy"]["spec"]
    assert tuple(webhook_objects()) == MANIFESTS  # rendering never changes its input


def test_a_new_certificate_changes_the_pod_template() -> None:
    first = next(o for o in rendered() if o["kind"] == "Deployment")
    second = next(o for o in rendered(tls=WebhookTLS(CA, CRT + "x", KEY)) if o["kind"] == "Deployment")
    assert first["spec"]["template"]["metadata"]["annotations"][TLS_HASH] != \
        second["spec"]["template"]["metadata"]["annotations"][TLS_HASH]


def test_without_a_known_version_or_device_config_the_packaged_values_stay() -> None:
    objects = {o["kind"]: o for o in render(options(), device_config=None, volcano=None)}
    packaged = {o["kind"]: o for o in MANIFESTS}
    assert objects["ConfigMap"]["data"] == packaged["ConfigMap"]["data"]
    env = objects["Deployment"]["spec"]["template"]["spec"]["containers"][0]["env"]
    assert all(e["name"] != "VGPUCTL_VOLCANO_VERSION" for e in env)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_rendered_object_passes_strict_validation(version: str) -> None:
    for obj in rendered():
        kubernetes_validate.validate(obj, version, strict=True)


# --- planning ---------------------------------------------------------------------------------------

def test_a_fresh_cluster_gets_everything_and_a_wait_before_the_configurations() -> None:
    steps, notes = plan_webhook(ClusterState({}), options(), device_config=DEVICE, volcano=None)
    actions = [(s.action, s.ref.kind) for s in steps]
    assert actions[-3:] == [(Action.WAIT, "Deployment"), (Action.CREATE, "MutatingWebhookConfiguration"),
                            (Action.CREATE, "ValidatingWebhookConfiguration")]
    assert steps[-3].method is Method.WAIT and not steps[-3].writes
    assert all(s.action is Action.CREATE and s.method is Method.APPLY for s in steps if s.action is not Action.WAIT)
    assert "TLS: test pair" in notes


def test_a_cluster_that_matches_needs_nothing_not_even_a_wait() -> None:
    steps, _ = plan_webhook(ClusterState(as_cluster(rendered())), options(), device_config=DEVICE,
                            volcano=Version(1, 15, 1))
    assert {s.action for s in steps} == {Action.UNCHANGED}


def test_only_a_configuration_to_write_still_waits_for_the_pods() -> None:
    cluster = as_cluster(rendered())
    del cluster[Ref(ADMISSION, "ValidatingWebhookConfiguration", None, "vgpuctl-webhook")]
    steps, _ = plan_webhook(ClusterState(cluster), options(), device_config=DEVICE, volcano=Version(1, 15, 1))
    assert [(s.action, s.ref.kind) for s in steps if s.action is not Action.UNCHANGED] == \
        [(Action.WAIT, "Deployment"), (Action.CREATE, "ValidatingWebhookConfiguration")]


def test_a_changed_deployment_alone_does_not_wait() -> None:
    cluster = as_cluster(rendered())
    steps, _ = plan_webhook(ClusterState(cluster), options(image="other:1"), device_config=DEVICE,
                            volcano=Version(1, 15, 1))
    assert [(s.action, s.ref.kind) for s in steps if s.action is not Action.UNCHANGED] == \
        [(Action.UPDATE, "Deployment")]


def test_objects_that_are_not_vgpuctls_are_kept() -> None:
    cluster = as_cluster(rendered())
    for obj in cluster.values():
        del obj["metadata"]["labels"]["app.kubernetes.io/managed-by"]
    steps, _ = plan_webhook(ClusterState(cluster), options(tls=WebhookTLS(CA + "\n")), device_config=DEVICE,
                            volcano=None)
    assert {s.action for s in steps} == {Action.KEEP}


def test_install_plan_puts_the_webhook_after_everything_else() -> None:
    the_plan = install_plan(scheduler_state(), InstallOptions((Mode.VGPU,)), options(), now=NOW)
    kinds = [s.ref.kind for s in the_plan.steps]
    restart = [i for i, s in enumerate(the_plan.steps) if s.action is Action.RESTART]
    assert restart and restart[0] < kinds.index("Namespace")
    assert kinds[-2:] == ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]
    copy_step = next(s for s in the_plan.steps if s.ref == layout(MANIFESTS).device_config)
    device = next(s for s in the_plan.steps if s.ref.name == spec.DEVICE_CONFIGMAP)
    assert copy_step.body is not None and device.body is not None
    assert copy_step.body["data"]["device-config.yaml"] == device.body["data"]["device-config.yaml"]
    assert [s.action for s in the_plan.todo][-3:] == [Action.WAIT, Action.CREATE, Action.CREATE]
    assert all(s in the_plan.todo for s in the_plan.writes)


def test_install_plan_without_webhook_is_the_plain_plan() -> None:
    from vgpuctl.core.install.plan import plan

    state = scheduler_state()
    assert install_plan(state, InstallOptions((Mode.VGPU,)), None, now=NOW) == \
        plan(state, InstallOptions((Mode.VGPU,)), now=NOW)


# --- what a diff may show ---------------------------------------------------------------------------

def test_diffs_never_show_secret_values_or_the_ca_bundle() -> None:
    steps, _ = plan_webhook(ClusterState({}), options(), device_config=DEVICE, volcano=None)
    text = "".join(s.diff for s in steps)
    assert "BEGIN" not in text and "PRIVATE" not in text
    for value in (CA, CRT, KEY):
        assert base64.b64encode(value.encode()).decode() not in text
    assert "tls.key: '<redacted: " in text and "caBundle: <CA bundle, sha256 " in text


def test_an_updated_secret_is_redacted_on_both_sides() -> None:
    cluster = as_cluster(rendered())
    old_key = "-----BEGIN PRIVATE KEY-----\nb2xkIGtleQ==\n-----END PRIVATE KEY-----\n"
    secret = cluster[layout(MANIFESTS).secret]
    secret["data"]["tls.key"] = base64.b64encode(old_key.encode()).decode()
    steps, _ = plan_webhook(ClusterState(cluster), options(), device_config=DEVICE, volcano=Version(1, 15, 1))
    (update,) = [s for s in steps if s.writes]
    assert update.ref.kind == "Secret" and update.action is Action.UPDATE
    removed = [line for line in update.diff.splitlines() if line.startswith("-  ")]
    added = [line for line in update.diff.splitlines() if line.startswith("+  ")]
    assert len(removed) == len(added) == 1 and "tls.key: '<redacted: " in removed[0]
    assert "PRIVATE" not in update.diff


def test_redact_leaves_other_objects_alone() -> None:
    configmap = {"kind": "ConfigMap", "data": {"k": "v"}}
    assert redact(configmap) == configmap
    assert redact(None) is None
    shown = redact({"data": {"k": "dg=="}}, "Secret")["data"]["k"]  # the kind given apart: a projected object
    assert shown.startswith("<redacted: 1 bytes, sha256 ") and shown == redact({"kind": "Secret",
                                                                               "data": {"k": "dg=="}})["data"]["k"]


# --- readiness ------------------------------------------------------------------------------------

def deployment(generation: int = 2, wanted: int = 2, **status: Any) -> dict[str, Any]:
    return {"metadata": {"generation": generation}, "spec": {"replicas": wanted}, "status": status}


@pytest.mark.parametrize(("doc", "ready", "failed", "message"), [
    (deployment(), False, False, "waiting for the Deployment controller"),
    (deployment(observedGeneration=1, updatedReplicas=2, replicas=2, availableReplicas=2), False, False,
     "waiting for the Deployment controller"),
    (deployment(observedGeneration=2, updatedReplicas=1, replicas=2, availableReplicas=1), False, False,
     "1 of 2 replicas updated"),
    (deployment(observedGeneration=2, updatedReplicas=2, replicas=3, availableReplicas=2), False, False,
     "1 old replicas pending termination"),
    (deployment(observedGeneration=2, updatedReplicas=2, replicas=2, availableReplicas=1), False, False,
     "1 of 2 updated replicas available"),
    (deployment(observedGeneration=2, updatedReplicas=2, replicas=2, availableReplicas=2), True, False,
     "2 of 2 replicas available"),
    (deployment(observedGeneration=2, conditions=[{"type": "Progressing", "status": "False",
                                                   "reason": "ProgressDeadlineExceeded",
                                                   "message": 'ReplicaSet "x" has timed out progressing.'}]),
     False, True, "exceeded its progress deadline"),
    (deployment(generation=1, wanted=0, observedGeneration=1), True, False, "0 of 0"),
])
def test_rollout_follows_kubectl_rollout_status(doc: dict[str, Any], ready: bool, failed: bool, message: str) -> None:
    state = rollout(doc)
    assert (state.ready, state.failed) == (ready, failed)
    assert message in state.message


# --- uninstall --------------------------------------------------------------------------------------

def test_uninstall_deletes_the_configurations_first_and_the_namespace_last() -> None:
    state = scheduler_state(as_cluster(rendered()))
    the_plan = removal_plan(state, MANIFESTS, now=NOW)
    deletes = [s.ref.kind for s in the_plan.steps if s.action is Action.DELETE]
    assert deletes[:2] == ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]
    assert deletes[2:] == ["Deployment", "Service", "PodDisruptionBudget", "NetworkPolicy", "ResourceQuota",
                           "ConfigMap", "Secret", "ServiceAccount", "Namespace"]


def test_uninstall_keeps_a_namespace_that_holds_someone_elses_objects() -> None:
    cluster = as_cluster(rendered())
    theirs = Ref("v1", "ConfigMap", NS, "theirs")
    automatic = {Ref("v1", "ConfigMap", NS, "kube-root-ca.crt"): {"metadata": {"name": "kube-root-ca.crt"}},
                 Ref("v1", "ServiceAccount", NS, "default"): {"metadata": {"name": "default"}},
                 Ref("v1", "Pod", NS, "vgpuctl-webhook-abc"): {
                     "metadata": {"ownerReferences": [{"kind": "ReplicaSet"}]}}}
    state = scheduler_state({**cluster, **automatic})
    namespace_step = removal_plan(state, MANIFESTS, now=NOW).steps[-1]
    assert namespace_step.ref.kind == "Namespace" and namespace_step.action is Action.DELETE
    state = scheduler_state({**cluster, **automatic, theirs: {"metadata": {"name": "theirs"}}})
    the_plan = removal_plan(state, MANIFESTS, now=NOW)
    assert the_plan.steps[-1].action is Action.KEEP and "ConfigMap vgpuctl-system/theirs" in the_plan.steps[-1].note
    assert all(s.ref != theirs for s in the_plan.steps)
    assert any("kubectl delete namespace vgpuctl-system" in n for n in the_plan.notes)


def test_uninstall_without_a_webhook_is_the_plain_removal() -> None:
    from vgpuctl.core.install.removal import plan_removal

    state = scheduler_state()
    assert removal_plan(state, MANIFESTS, now=NOW) == plan_removal(state, now=NOW)
