"""The two variants of the webhook install plans in the pure core: plain (deploy/base) and cluster-aware
(deploy/overlays/cluster-aware). What each renders and in which order, what switching from one to the other
writes, and what uninstall takes back — with plain data, no API server."""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.install.plan import SCHEDULER_CM, Action, ClusterState, Method, Ref, ref_of
from vgpuctl.core.install.webhook import (
    WebhookOptions,
    WebhookTLS,
    plan_webhook,
    removal_plan,
    render,
    retired_refs,
)
from vgpuctl.manifests import webhook_objects

PLAIN = tuple(webhook_objects())
AWARE = tuple(webhook_objects(cluster_aware=True))
TLS = WebhookTLS("-----BEGIN CERTIFICATE-----\nQ0E=\n-----END CERTIFICATE-----\n", "crt", "key")
RBAC = "rbac.authorization.k8s.io/v1"
ROLE = Ref(RBAC, "ClusterRole", None, "vgpuctl-webhook-cluster-reader")
BINDING = Ref(RBAC, "ClusterRoleBinding", None, "vgpuctl-webhook-cluster-reader")
NOW = datetime(2026, 11, 21, tzinfo=UTC)


def plain_options() -> WebhookOptions:
    return WebhookOptions(PLAIN, TLS, retired=retired_refs(PLAIN, (PLAIN, AWARE)))


def aware_options() -> WebhookOptions:
    return WebhookOptions(AWARE, TLS, retired=retired_refs(AWARE, (PLAIN, AWARE)))


def cluster(options: WebhookOptions) -> ClusterState:
    """The cluster right after an install with `options` (what it wrote, as written)."""
    return ClusterState({ref_of(o): copy.deepcopy(o) for o in render(options)})


def actions(steps: list[Any]) -> list[tuple[str, str]]:
    return [(s.action.value, s.ref.kind) for s in steps if s.action is not Action.UNCHANGED]


def test_only_the_plain_install_retires_something_and_that_is_the_rbac() -> None:
    assert retired_refs(PLAIN, (PLAIN, AWARE)) == (ROLE, BINDING)
    assert retired_refs(AWARE, (PLAIN, AWARE)) == ()


def test_cluster_aware_renders_the_rbac_before_the_deployment_and_the_configurations_last() -> None:
    kinds = [o["kind"] for o in render(aware_options())]
    assert kinds.index("Secret") < kinds.index("ClusterRole") < kinds.index("ClusterRoleBinding") < \
        kinds.index("Deployment")
    assert kinds[-2:] == ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]
    assert [o["kind"] for o in render(plain_options())] == [k for k in kinds if not k.startswith("ClusterRole")]


def test_rendering_a_variant_twice_plans_nothing() -> None:
    for options in (plain_options(), aware_options()):
        steps, _ = plan_webhook(cluster(options), options, device_config=None, volcano=None)
        assert actions(steps) == []


def test_plain_to_cluster_aware_adds_the_rbac_and_updates_the_pods_and_the_policy() -> None:
    steps, _ = plan_webhook(cluster(plain_options()), aware_options(), device_config=None, volcano=None)
    assert actions(steps) == [("create", "ClusterRole"), ("create", "ClusterRoleBinding"),
                              ("update", "Deployment"), ("update", "NetworkPolicy")]


def test_cluster_aware_to_plain_deletes_the_rbac_after_the_rollout() -> None:
    steps, _ = plan_webhook(cluster(aware_options()), plain_options(), device_config=None, volcano=None)
    assert actions(steps) == [("update", "Deployment"), ("update", "NetworkPolicy"), ("wait", "Deployment"),
                              ("delete", "ClusterRole"), ("delete", "ClusterRoleBinding")]
    delete = next(s for s in steps if s.ref == ROLE)
    assert delete.method is Method.DELETE and delete.body is None
    assert "-  - watch" in delete.diff and "resourceVersion" not in delete.diff


def test_rbac_that_is_not_vgpuctls_is_kept_when_going_back() -> None:
    state = cluster(aware_options())
    objects = dict(state.objects)
    for ref in (ROLE, BINDING):
        foreign = copy.deepcopy(objects[ref])
        del foreign["metadata"]["labels"]["app.kubernetes.io/managed-by"]
        objects[ref] = foreign
    steps, _ = plan_webhook(ClusterState(objects), plain_options(), device_config=None, volcano=None)
    assert [(s.action, s.ref) for s in steps if s.ref in (ROLE, BINDING)] == [(Action.KEEP, ROLE),
                                                                               (Action.KEEP, BINDING)]
    assert ("wait", "Deployment") not in actions(steps)  # nothing of vgpuctl's is deleted: nothing to wait for


def test_uninstall_takes_the_rbac_back_after_the_deployment() -> None:
    every = {ref_of(o): o for o in (*PLAIN, *AWARE)}
    scheduler = {"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": spec.SCHEDULER_CONFIGMAP, "namespace": spec.SCHEDULER_NAMESPACE},
                 "data": {spec.SCHEDULER_CONF_KEY: "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n"}}
    state = ClusterState({SCHEDULER_CM: scheduler, **cluster(aware_options()).objects})
    plan = removal_plan(state, tuple(every.values()), now=NOW)
    deleted = [s.ref for s in plan.steps if s.action is Action.DELETE]
    assert {ROLE, BINDING} <= set(deleted)
    deployment = next(r for r in deleted if r.kind == "Deployment")
    assert deleted.index(deployment) < deleted.index(ROLE)
