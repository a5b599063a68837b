"""`vgpuctl install --webhook --cluster-aware` end to end: the packaged cluster-aware overlay (the same files as
deploy/overlays/cluster-aware) applied by the real CLI and kubernetes client against the stateful API server
of conftest.py; switching a plain install to cluster-aware and back; uninstall taking the RBAC back too."""

from __future__ import annotations

import json
from typing import Any

import kubernetes_validate
import pytest

from tests.cli.conftest import validate
from tests.install.conftest import StatefulCluster
from tests.install.test_install_live import run
from tests.install.test_install_webhook import (
    DEPLOYMENT,
    MUTATING,
    NS,
    VALIDATING,
    VERSIONS,
    WEBHOOK_OBJECTS,
    install,
    obj,
)
from vgpuctl.manifests import webhook_objects

RBAC = "rbac.authorization.k8s.io/v1"
ROLE = (RBAC, "ClusterRole", None, "vgpuctl-webhook-cluster-reader")
BINDING = (RBAC, "ClusterRoleBinding", None, "vgpuctl-webhook-cluster-reader")
ROLE_PATH = f"/apis/{RBAC}/clusterroles/vgpuctl-webhook-cluster-reader"
BINDING_PATH = f"/apis/{RBAC}/clusterrolebindings/vgpuctl-webhook-cluster-reader"
NETWORK_POLICY = f"/apis/networking.k8s.io/v1/namespaces/{NS}/networkpolicies/vgpuctl-webhook"
MANAGED = {"app.kubernetes.io/managed-by": "vgpuctl"}


def aware(kubeconfig: str, *extra: str) -> Any:
    return install(kubeconfig, "--cluster-aware", *extra)


def pod_spec(kube: StatefulCluster) -> dict[str, Any]:
    return obj(kube, "apps/v1", "Deployment", NS, "vgpuctl-webhook")["spec"]["template"]["spec"]


def egress(kube: StatefulCluster) -> list[Any]:
    return obj(kube, "networking.k8s.io/v1", "NetworkPolicy", NS, "vgpuctl-webhook")["spec"]["egress"]


def test_install_cluster_aware_creates_every_object_valid_with_read_only_rbac(kube: StatefulCluster,
                                                                              kubeconfig: str) -> None:
    kube.ready_after = 2
    result = aware(kubeconfig)
    assert result.exit_code == 0, result.stdout + result.stderr
    for api_version, kind, namespace, name in [*WEBHOOK_OBJECTS, ROLE, BINDING]:
        found = obj(kube, api_version, kind, namespace, name)
        assert found["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "vgpuctl", kind
        for version in (VERSIONS[0], VERSIONS[-1]):
            kubernetes_validate.validate(found, version, strict=True)
    pod = pod_spec(kube)
    (container,) = pod["containers"]
    assert "--cluster-aware" in container["args"]
    assert pod["automountServiceAccountToken"] is True
    assert container["resources"]["limits"]["memory"] == "512Mi"
    assert egress(kube) == [{"ports": [{"port": 443, "protocol": "TCP"}, {"port": 6443, "protocol": "TCP"}]}]
    # read-only: get/list/watch of nodes and pods, nothing else, for the webhook's own ServiceAccount
    role = obj(kube, *ROLE)
    assert role["rules"] == [{"apiGroups": [""], "resources": ["nodes", "pods"], "verbs": ["get", "list", "watch"]},
                             {"apiGroups": ["resource.k8s.io"],
                              "resources": ["deviceclasses", "resourceclaims", "resourceclaimtemplates"],
                              "verbs": ["get", "list", "watch"]}]
    binding = obj(kube, *BINDING)
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                                  "name": "vgpuctl-webhook-cluster-reader"}
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": pod["serviceAccountName"], "namespace": NS}]
    # the RBAC is there before the pods that use it, and the configurations still come last
    events = kube.events
    assert events.index(("PATCH", ROLE_PATH)) < events.index(("PATCH", BINDING_PATH)) < \
        events.index(("PATCH", DEPLOYMENT)) < events.index(("READY", DEPLOYMENT))
    assert events[-2:] == [("PATCH", MUTATING), ("PATCH", VALIDATING)]
    assert "  + create    ClusterRole vgpuctl-webhook-cluster-reader" in result.stdout


def test_install_applies_exactly_the_packaged_overlay(kube: StatefulCluster, kubeconfig: str) -> None:
    """One source of truth: what install writes is the built overlay plus only vgpuctl's own additions."""
    assert aware(kubeconfig).exit_code == 0
    for manifest in webhook_objects(cluster_aware=True):
        meta = manifest["metadata"]
        found = obj(kube, manifest["apiVersion"], manifest["kind"], meta.get("namespace"), meta["name"])
        if manifest["kind"] in ("ClusterRole", "ClusterRoleBinding", "NetworkPolicy", "ServiceAccount"):
            assert {k: v for k, v in found.items() if k != "metadata"} == \
                {k: v for k, v in manifest.items() if k != "metadata"}, manifest["kind"]
            assert found["metadata"]["labels"] == {**meta["labels"], **MANAGED}


def test_second_cluster_aware_install_writes_nothing(kube: StatefulCluster, kubeconfig: str) -> None:
    assert aware(kubeconfig).exit_code == 0
    before, writes = kube.snapshot(), len(kube.writes)
    second = aware(kubeconfig, "-o", "json")
    assert second.exit_code == 0, second.stdout + second.stderr
    assert len(kube.writes) == writes and kube.snapshot() == before
    report = json.loads(second.stdout)
    validate("install-report.schema.json", report)
    assert report["outcome"] == "unchanged" and report["summary"]["writes"] == 0
    assert {s["object"]: s["action"] for s in report["steps"]}["ClusterRole vgpuctl-webhook-cluster-reader"] == \
        "unchanged"


def test_switching_a_plain_install_to_cluster_aware_and_back(kube: StatefulCluster, kubeconfig: str) -> None:
    assert install(kubeconfig).exit_code == 0
    plain_deployment = obj(kube, "apps/v1", "Deployment", NS, "vgpuctl-webhook")["spec"]
    plain_policy = obj(kube, "networking.k8s.io/v1", "NetworkPolicy", NS, "vgpuctl-webhook")["spec"]
    assert kube.get(*ROLE) is None and kube.get(*BINDING) is None
    secret = obj(kube, "v1", "Secret", NS, "vgpuctl-webhook-tls")

    # plain → cluster-aware: the RBAC, then the Deployment and the NetworkPolicy; nothing else changes
    writes = len(kube.writes)
    on = aware(kubeconfig)
    assert on.exit_code == 0, on.stdout + on.stderr
    assert kube.writes[writes:] == [("PATCH", ROLE_PATH), ("PATCH", BINDING_PATH), ("PATCH", DEPLOYMENT),
                                    ("PATCH", NETWORK_POLICY)]
    assert "--cluster-aware" in pod_spec(kube)["containers"][0]["args"]
    assert obj(kube, "v1", "Secret", NS, "vgpuctl-webhook-tls") == secret  # certificates kept
    assert "Nothing to change" in aware(kubeconfig).stdout

    # cluster-aware → plain: the Deployment and NetworkPolicy back, then (after the rollout) the RBAC deleted
    writes = len(kube.writes)
    off = install(kubeconfig)
    assert off.exit_code == 0, off.stdout + off.stderr
    assert kube.writes[writes:] == [("PATCH", DEPLOYMENT), ("PATCH", NETWORK_POLICY), ("DELETE", ROLE_PATH),
                                    ("DELETE", BINDING_PATH)]
    assert kube.events.index(("READY", DEPLOYMENT), len(kube.events) - 5) < kube.events.index(("DELETE", ROLE_PATH))
    assert "  - delete    ClusterRole vgpuctl-webhook-cluster-reader  (the webhook is installed without " \
           "--cluster-aware now: no longer used)" in off.stdout
    assert "until its pods are ready; what the old pods used is deleted only after" in off.stdout
    assert kube.get(*ROLE) is None and kube.get(*BINDING) is None
    assert obj(kube, "apps/v1", "Deployment", NS, "vgpuctl-webhook")["spec"] == plain_deployment
    assert obj(kube, "networking.k8s.io/v1", "NetworkPolicy", NS, "vgpuctl-webhook")["spec"] == plain_policy
    assert "Nothing to change" in install(kubeconfig).stdout


def test_going_back_leaves_rbac_that_is_not_vgpuctls_alone(kube: StatefulCluster, kubeconfig: str) -> None:
    assert install(kubeconfig).exit_code == 0
    foreign = [m for m in webhook_objects(cluster_aware=True) if m["kind"] in ("ClusterRole", "ClusterRoleBinding")]
    for manifest in foreign:  # e.g. applied by hand with kubectl: no managed-by label
        kube.put(manifest)
    before, writes = kube.snapshot(), len(kube.writes)
    result = install(kubeconfig)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert len(kube.writes) == writes and kube.snapshot() == before
    assert "  ! keep      ClusterRole vgpuctl-webhook-cluster-reader  (the webhook is installed without " \
           "--cluster-aware now, but this is not vgpuctl's: left as it is)" in result.stdout
    uninstall = run("uninstall", "--kubeconfig", kubeconfig)
    assert uninstall.exit_code == 0, uninstall.stdout + uninstall.stderr
    assert kube.get(*ROLE) is not None and kube.get(*BINDING) is not None


def test_dry_run_of_the_switch_shows_the_diffs_and_writes_nothing(kube: StatefulCluster, kubeconfig: str) -> None:
    assert install(kubeconfig).exit_code == 0
    before, writes = kube.snapshot(), len(kube.writes)
    on = aware(kubeconfig, "--dry-run")
    assert on.exit_code == 0, on.stdout + on.stderr
    assert len(kube.writes) == writes and kube.snapshot() == before
    out = on.stdout
    for line in ("  + create    ClusterRole vgpuctl-webhook-cluster-reader",
                 "  + create    ClusterRoleBinding vgpuctl-webhook-cluster-reader",
                 "  ~ update    Deployment vgpuctl-system/vgpuctl-webhook",
                 "  ~ update    NetworkPolicy vgpuctl-system/vgpuctl-webhook",
                 "+++ ClusterRole vgpuctl-webhook-cluster-reader (planned)",
                 "-      automountServiceAccountToken: false",
                 "+      automountServiceAccountToken: true",
                 "+        - --cluster-aware",
                 "-            memory: 256Mi",
                 "+            memory: 512Mi",
                 "-  egress: []"):
        assert line in out, line
    assert "wait" not in out.split("Notes:")[0]  # the configurations do not change: nothing waits on the rollout

    assert aware(kubeconfig).exit_code == 0
    off = install(kubeconfig, "--dry-run", "-o", "json")
    assert off.exit_code == 0, off.stdout + off.stderr
    report = json.loads(off.stdout)
    validate("install-report.schema.json", report)
    steps = {s["object"]: s for s in report["steps"]}
    role = steps["ClusterRole vgpuctl-webhook-cluster-reader"]
    assert (role["action"], role["method"], role["status"]) == ("delete", "delete", "planned")
    assert "-  - get" in role["diff"] and "+++ ClusterRole vgpuctl-webhook-cluster-reader (planned)" in role["diff"]
    assert ("update", "Deployment vgpuctl-system/vgpuctl-webhook") in {(s["action"], s["object"])
                                                                       for s in report["steps"]}
    assert [s["action"] for s in report["steps"] if s["action"] != "unchanged"][-3:] == ["wait", "delete", "delete"]


def test_cluster_aware_json_report_is_schema_valid(kube: StatefulCluster, kubeconfig: str) -> None:
    result = aware(kubeconfig, "-o", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    validate("install-report.schema.json", report)
    statuses = {s["object"]: (s["action"], s["status"]) for s in report["steps"]}
    assert statuses["ClusterRole vgpuctl-webhook-cluster-reader"] == ("create", "applied")
    assert statuses["ClusterRoleBinding vgpuctl-webhook-cluster-reader"] == ("create", "applied")
    assert report["doctor"]["summary"]["errors"] == 0


def test_uninstall_removes_every_object_rbac_included(kube: StatefulCluster, kubeconfig: str) -> None:
    assert aware(kubeconfig).exit_code == 0
    writes = len(kube.writes)
    dry = run("uninstall", "--dry-run", "--kubeconfig", kubeconfig)
    assert "  - delete    ClusterRole vgpuctl-webhook-cluster-reader" in dry.stdout
    assert "  - delete    ClusterRoleBinding vgpuctl-webhook-cluster-reader" in dry.stdout
    result = run("uninstall", "--kubeconfig", kubeconfig, "-o", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    validate("install-report.schema.json", json.loads(result.stdout))
    done = kube.writes[writes:]
    assert done[:2] == [("DELETE", MUTATING), ("DELETE", VALIDATING)]
    assert done.index(("DELETE", DEPLOYMENT)) < done.index(("DELETE", ROLE_PATH))  # no pod left using it
    assert {("DELETE", ROLE_PATH), ("DELETE", BINDING_PATH)} <= set(done)
    for api_version, kind, namespace, name in [*WEBHOOK_OBJECTS, ROLE, BINDING]:
        assert kube.get(api_version, kind, namespace, name) is None, kind
    assert kube.of_kind("ClusterRole") == [] or all(
        (o["metadata"].get("labels") or {}).get("app.kubernetes.io/managed-by") != "vgpuctl"
        for o in kube.of_kind("ClusterRole"))
    assert "Nothing to change" in run("uninstall", "--kubeconfig", kubeconfig).stdout


@pytest.mark.parametrize("extra", [(), ("--webhook-image", "x")])
def test_cluster_aware_needs_webhook(kube: StatefulCluster, kubeconfig: str, extra: tuple[str, ...]) -> None:
    result = run("install", "--mode", "vgpu", "--cluster-aware", *extra, "--kubeconfig", kubeconfig)
    assert result.exit_code == 2 and "needs --webhook" in result.stderr
    assert kube.writes == []


def test_a_failed_cluster_aware_install_names_the_flag_in_its_rerun(kube: StatefulCluster, kubeconfig: str) -> None:
    kube.ready_after = None
    result = aware(kubeconfig, "--webhook-timeout", "0.2", "-o", "json")
    assert result.exit_code == 3
    report = json.loads(result.stdout)
    validate("install-report.schema.json", report)
    assert "--webhook --cluster-aware" in report["rerun"]
