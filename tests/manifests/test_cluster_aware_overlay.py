"""deploy/overlays/cluster-aware: valid for every supported Kubernetes version (strict), read-only RBAC for the
webhook's own ServiceAccount, the token mounted, the flag set, egress to the API server, and otherwise
the base unchanged."""

from __future__ import annotations

from functools import cache
from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate import utils as kv_utils

from tests.manifests.conftest import BASE, DEPLOY
from tests.manifests.kustomize import render

OVERLAY = DEPLOY / "overlays" / "cluster-aware"
OLDEST = (1, 28)


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


VERSIONS = sorted({v for v in kv_utils.all_versions() if _minor(v) >= OLDEST}, key=_minor)


@cache
def overlay() -> tuple[dict[str, Any], ...]:
    return tuple(render(OVERLAY))


@cache
def base() -> tuple[dict[str, Any], ...]:
    return tuple(render(BASE))


def one(objects: tuple[dict[str, Any], ...], kind: str) -> dict[str, Any]:
    (obj,) = [o for o in objects if o["kind"] == kind]
    return obj


@pytest.mark.parametrize("version", VERSIONS)
def test_every_object_passes_strict_validation(version: str) -> None:
    for obj in overlay():
        kubernetes_validate.validate(obj, version, strict=True)
    assert len(overlay()) == len(base()) + 2


def test_rbac_is_read_only_nodes_pods_and_dra_claims_for_the_webhook_account() -> None:
    role = one(overlay(), "ClusterRole")
    binding = one(overlay(), "ClusterRoleBinding")
    account = one(overlay(), "ServiceAccount")
    core, dra = role["rules"]
    assert core["apiGroups"] == [""]
    assert sorted(core["resources"]) == ["nodes", "pods"]
    # what vgpuctl.kube.dra_watch lists and watches, and nothing more (no ResourceSlices: no rule reads them)
    from vgpuctl.kube.dra_watch import WATCHED
    assert dra["apiGroups"] == ["resource.k8s.io"]
    assert sorted(dra["resources"]) == sorted(kind for kind, _ in WATCHED)
    for rule in (core, dra):
        assert sorted(rule["verbs"]) == ["get", "list", "watch"]
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": role["metadata"]["name"]}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account["metadata"]["name"],
                                    "namespace": account["metadata"]["namespace"]}]


def test_the_webhook_pods_get_a_token_the_flag_and_more_memory() -> None:
    deployment = one(overlay(), "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert pod["automountServiceAccountToken"] is True
    assert pod["serviceAccountName"] == one(overlay(), "ServiceAccount")["metadata"]["name"]
    assert "--cluster-aware" in container["args"]
    # sized from benchmarks/cluster_aware.py at 5,000 nodes (the overlay's note): synced, and a /metrics scrape's peak
    assert container["resources"]["requests"]["memory"] == "384Mi"
    assert container["resources"]["limits"]["memory"] == "512Mi"
    # nothing else about the pod changes
    (base_container,) = one(base(), "Deployment")["spec"]["template"]["spec"]["containers"]
    assert container["args"][:-1] == base_container["args"]
    assert {k: v for k, v in container.items() if k not in ("args", "resources")} == \
        {k: v for k, v in base_container.items() if k not in ("args", "resources")}


def test_deployment_args_are_serve_flags() -> None:
    from typer.main import get_command

    from vgpuctl.cli.app import app

    serve = get_command(app).get_command(None, "webhook").commands["serve"]  # type: ignore[attr-defined]
    flags = {opt for param in serve.params for opt in param.opts}
    (container,) = one(overlay(), "Deployment")["spec"]["template"]["spec"]["containers"]
    for arg in container["args"]:
        assert arg.split("=", 1)[0] in flags, arg


def test_network_policy_lets_the_webhook_reach_the_api_server() -> None:
    policy = one(overlay(), "NetworkPolicy")["spec"]
    assert policy["ingress"] == one(base(), "NetworkPolicy")["spec"]["ingress"]
    (egress,) = policy["egress"]
    assert "to" not in egress  # the API server is no pod: match it by port, before and after the Service DNAT
    assert egress["ports"] == [{"port": 443, "protocol": "TCP"}, {"port": 6443, "protocol": "TCP"}]


def test_the_rest_of_the_base_is_unchanged() -> None:
    changed = {"Deployment", "NetworkPolicy", "ClusterRole", "ClusterRoleBinding"}
    assert [o for o in overlay() if o["kind"] not in changed] == [o for o in base() if o["kind"] not in changed]
