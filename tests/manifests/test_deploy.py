"""Every object in deploy/ (the base and every overlay, rendered) is valid Kubernetes for 1.28 through the
newest version kubernetes-validate knows, in strict mode; and the objects agree with each other and with
the code (paths, ports, names, flags)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate import utils as kv_utils

from tests.manifests.conftest import BASE, DEPLOY, OVERLAYS, ROOT
from tests.manifests.kustomize import render
from vgpuctl.webhook.app import create_app
from vgpuctl.webhook.certs import service_dns_names
from vgpuctl.webhook.settings import Settings

TREES = [BASE, *OVERLAYS]
TREE_IDS = [str(t.relative_to(DEPLOY)) for t in TREES]
OLDEST = (1, 28)


def _minor(version: str) -> tuple[int, int]:
    major, minor = version.split(".")[:2]
    return int(major), int(minor)


VERSIONS = sorted({v for v in kv_utils.all_versions() if _minor(v) >= OLDEST}, key=_minor)
# Custom resources kubernetes-validate has no schema for; checked structurally below instead.
CRD_GROUPS = {"cert-manager.io", "monitoring.coreos.com"}  # the Prometheus Operator: tests/manifests/test_monitoring.py


@cache
def rendered(tree: Path) -> tuple[dict[str, Any], ...]:
    return tuple(render(tree))


def by_kind(tree: Path, kind: str) -> list[dict[str, Any]]:
    return [o for o in rendered(tree) if o["kind"] == kind]


def one(tree: Path, kind: str) -> dict[str, Any]:
    (obj,) = by_kind(tree, kind)
    return obj


def test_versions_cover_1_28_to_the_newest() -> None:
    assert _minor(VERSIONS[0]) == OLDEST
    assert _minor(VERSIONS[-1]) == _minor(kv_utils.latest_version())
    assert len(VERSIONS) >= 10


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize("tree", TREES, ids=TREE_IDS)
def test_objects_pass_strict_validation(tree: Path, version: str) -> None:
    checked = 0
    for obj in rendered(tree):
        if obj["apiVersion"].split("/")[0] in CRD_GROUPS:
            continue
        kubernetes_validate.validate(obj, version, strict=True)
        checked += 1
    assert checked >= 9


def test_strict_validation_rejects_an_unknown_field() -> None:
    """The negative control: strict mode really looks at our fields."""
    webhook = dict(one(BASE, "ValidatingWebhookConfiguration"))
    webhook["webhooks"] = [{**webhook["webhooks"][0], "failurePolicyy": "Fail"}]
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(webhook, VERSIONS[-1], strict=True)


def test_base_lists_every_file_and_objects_are_namespaced_consistently() -> None:
    listed = {p.name for p in BASE.glob("*.yaml")} - {"kustomization.yaml"}
    import yaml

    assert listed == set(yaml.safe_load((BASE / "kustomization.yaml").read_text())["resources"])
    for obj in rendered(BASE):
        if obj["kind"] not in ("Namespace", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            assert obj["metadata"]["namespace"] == "vgpuctl-system", obj["metadata"]


def test_deployment_is_hardened_and_highly_available() -> None:
    deployment = one(BASE, "Deployment")
    spec = deployment["spec"]
    pod = spec["template"]["spec"]
    (container,) = pod["containers"]
    assert spec["replicas"] == 2
    assert pod["affinity"]["podAntiAffinity"]
    assert pod["automountServiceAccountToken"] is False
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["seccompProfile"] == {"type": "RuntimeDefault"}
    # A Secret mounted without world-read (0440) must be readable through fsGroup by the non-root user.
    tls_mode = next(v for v in pod["volumes"] if v["name"] == "tls")["secret"]["defaultMode"]
    assert tls_mode & 0o004 or pod["securityContext"]["fsGroup"] == pod["securityContext"]["runAsUser"]
    sc = container["securityContext"]
    assert sc["readOnlyRootFilesystem"] is True and sc["allowPrivilegeEscalation"] is False
    assert sc["capabilities"]["drop"] == ["ALL"]
    assert container["resources"]["requests"] and container["resources"]["limits"]["memory"]
    for probe, path in (("livenessProbe", "/healthz"), ("readinessProbe", "/readyz")):
        assert container[probe]["httpGet"] == {"path": path, "port": "https", "scheme": "HTTPS"}
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    volumes = {v["name"]: v for v in pod["volumes"]}
    assert volumes["device-config"]["configMap"]["name"] == one(BASE, "ConfigMap")["metadata"]["name"]
    assert "subPath" not in mounts["device-config"]  # subPath mounts never see ConfigMap updates
    assert "subPath" not in mounts["tls"]
    args = dict(a.split("=", 1) for a in container["args"])
    assert args["--device-config"] == mounts["device-config"]["mountPath"] + "/device-config.yaml"
    assert args["--cert"] == mounts["tls"]["mountPath"] + "/tls.crt"
    assert args["--key"] == mounts["tls"]["mountPath"] + "/tls.key"
    assert one(BASE, "ServiceAccount")["automountServiceAccountToken"] is False
    assert pod["serviceAccountName"] == one(BASE, "ServiceAccount")["metadata"]["name"]


def test_deployment_args_are_serve_flags() -> None:
    from typer.main import get_command

    from vgpuctl.cli.app import app

    serve = get_command(app).get_command(None, "webhook").commands["serve"]  # type: ignore[attr-defined]
    flags = {opt for param in serve.params for opt in param.opts}
    (container,) = one(BASE, "Deployment")["spec"]["template"]["spec"]["containers"]
    for arg in container["args"]:
        assert arg.split("=", 1)[0] in flags, arg


def test_device_config_configmap_loads(tmp_path: Path) -> None:
    import yaml

    from vgpuctl.sources import load_device_config

    path = tmp_path / "cm.yaml"
    path.write_text(yaml.safe_dump(one(BASE, "ConfigMap")))
    assert load_device_config(str(path)).nvidia is not None


def test_service_pdb_and_network_policy_select_the_webhook_pods() -> None:
    deployment = one(BASE, "Deployment")
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    service = one(BASE, "Service")
    for selector in (service["spec"]["selector"], one(BASE, "PodDisruptionBudget")["spec"]["selector"]["matchLabels"],
                     one(BASE, "NetworkPolicy")["spec"]["podSelector"]["matchLabels"]):
        assert selector.items() <= labels.items()
    admission, metrics = service["spec"]["ports"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    args = dict(a.split("=", 1) for a in container["args"])
    assert (admission["targetPort"], ports["https"], args["--port"]) == ("https", 8443, "8443")
    assert (metrics["targetPort"], ports["metrics"], args["--metrics-port"]) == ("metrics", 9443, "9443")
    # The admission port is open (the API server is not a pod); /metrics only to Prometheus' namespace.
    policy = one(BASE, "NetworkPolicy")["spec"]
    assert policy["egress"] == []
    assert policy["ingress"] == [
        {"ports": [{"port": 8443, "protocol": "TCP"}]},
        {"ports": [{"port": 9443, "protocol": "TCP"}],
         "from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}}]}]
    assert one(BASE, "PodDisruptionBudget")["spec"]["minAvailable"] == 1


def test_the_webhook_is_control_plane_and_drains_before_it_stops() -> None:
    """Issue 23 item 4: not preemptible, and still serving while its endpoint is being removed."""
    deployment = one(BASE, "Deployment")
    pod = deployment["spec"]["template"]["spec"]
    assert pod["priorityClassName"] == "system-cluster-critical"
    (container,) = pod["containers"]
    command = container["lifecycle"]["preStop"]["exec"]["command"]
    assert command[0] == "sleep" and 3 <= int(command[1]) <= 15
    from vgpuctl.webhook.server import ServerOptions

    assert pod["terminationGracePeriodSeconds"] > int(command[1]) + ServerOptions().graceful_timeout
    # Where the API server limits the critical classes to kube-system by quota, this quota lets the
    # namespace use it, for every replica and the surge.
    quota = one(BASE, "ResourceQuota")
    assert quota["metadata"]["namespace"] == deployment["metadata"]["namespace"]
    assert quota["spec"]["scopeSelector"]["matchExpressions"] == [
        {"operator": "In", "scopeName": "PriorityClass", "values": ["system-cluster-critical"]}]
    surge = deployment["spec"]["strategy"]["rollingUpdate"]["maxSurge"]
    assert int(quota["spec"]["hard"]["pods"]) >= deployment["spec"]["replicas"] + surge


def _webhooks(tree: Path, kind: str) -> list[dict[str, Any]]:
    return list(one(tree, kind)["webhooks"])


def test_webhook_configurations() -> None:
    routes = {rule.rule for rule in create_app(Settings()).url_map.iter_rules()}
    service = one(BASE, "Service")
    excluded = {"kube-system", "kube-node-lease", one(BASE, "Namespace")["metadata"]["name"]}
    resources = set()
    for kind, path, failure in (("MutatingWebhookConfiguration", "/mutate", "Ignore"),
                                ("ValidatingWebhookConfiguration", "/validate", "Fail")):
        for hook in _webhooks(BASE, kind):
            ref = hook["clientConfig"]["service"]
            assert ref == {"name": service["metadata"]["name"], "namespace": service["metadata"]["namespace"],
                           "path": path, "port": service["spec"]["ports"][0]["port"]}
            assert path in routes
            assert hook["failurePolicy"] == failure
            assert hook["sideEffects"] == "None" and hook["timeoutSeconds"] == 5
            assert hook["admissionReviewVersions"] == ["v1"]
            assert hook.get("reinvocationPolicy") == ("IfNeeded" if kind.startswith("Mutating") else None)
            names, optout = hook["namespaceSelector"]["matchExpressions"]
            assert (names["key"], names["operator"]) == ("kubernetes.io/metadata.name", "NotIn")
            assert set(names["values"]) == excluded
            # An administrator may label a namespace out of both; only the defaults can be skipped by a
            # label on the object itself — the validation never (issue 23 item 3: VGP016 and every other
            # denial were one label away for any pod author).
            assert optout == {"key": "vgpuctl.io/webhook", "operator": "NotIn", "values": ["ignore"]}
            if failure == "Ignore":
                assert hook["objectSelector"]["matchExpressions"] == [optout]
            else:
                assert "objectSelector" not in hook
            assert 1 <= len(hook["matchConditions"]) <= 64
            for rule in hook["rules"]:
                assert "DELETE" not in rule["operations"] and "CONNECT" not in rule["operations"]
                resources.add((kind, rule["apiGroups"][0], rule["resources"][0], tuple(rule["operations"])))
    assert resources == {
        ("MutatingWebhookConfiguration", "", "pods", ("CREATE",)),
        ("MutatingWebhookConfiguration", "batch.volcano.sh", "jobs", ("CREATE",)),
        ("ValidatingWebhookConfiguration", "", "pods", ("CREATE",)),
        ("ValidatingWebhookConfiguration", "batch.volcano.sh", "jobs", ("CREATE", "UPDATE")),
    }
    # The deployment's own pods are never judged by the webhook they run.
    labels = one(BASE, "Deployment")["spec"]["template"]["metadata"]["labels"]
    assert labels.get("vgpuctl.io/webhook") == "ignore"


CERT_MANAGER = "cert-manager.io/inject-ca-from"


@pytest.mark.parametrize(("overlay", "under"), [("cert-manager", BASE),
                                                ("cluster-aware-cert-manager", DEPLOY / "overlays" / "cluster-aware")])
def test_cert_manager_overlays(overlay: str, under: Path) -> None:
    """Certificates from cert-manager, over the base or over the cluster-aware overlay: the issuers and
    certificates added, the caBundle injected into both configurations, nothing else changed."""
    tree = DEPLOY / "overlays" / overlay
    certificates = {c["metadata"]["name"]: c for c in by_kind(tree, "Certificate")}
    issuers = {i["metadata"]["name"]: i for i in by_kind(tree, "Issuer")}
    serving = certificates["vgpuctl-webhook"]
    service = one(tree, "Service")
    assert serving["spec"]["dnsNames"] == service_dns_names(service["metadata"]["name"],
                                                            service["metadata"]["namespace"])
    tls_volume = next(v for v in one(tree, "Deployment")["spec"]["template"]["spec"]["volumes"] if v["name"] == "tls")
    assert serving["spec"]["secretName"] == tls_volume["secret"]["secretName"]
    assert issuers[serving["spec"]["issuerRef"]["name"]]["spec"]["ca"]["secretName"] == \
        certificates["vgpuctl-webhook-ca"]["spec"]["secretName"]
    assert certificates["vgpuctl-webhook-ca"]["spec"]["isCA"] is True
    assert "selfSigned" in issuers[certificates["vgpuctl-webhook-ca"]["spec"]["issuerRef"]["name"]]["spec"]
    inject = f"{serving['metadata']['namespace']}/{serving['metadata']['name']}"
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        assert one(tree, kind)["metadata"]["annotations"] == {CERT_MANAGER: inject}
    for obj in by_kind(tree, "Certificate") + by_kind(tree, "Issuer"):
        assert obj["apiVersion"] == "cert-manager.io/v1"
        assert set(obj["spec"]) <= {"isCA", "commonName", "secretName", "duration", "renewBefore", "dnsNames",
                                    "usages", "privateKey", "issuerRef", "selfSigned", "ca"}
    # What it builds on is unchanged apart from the annotations and the added objects.
    added = [o for o in rendered(tree) if o["apiVersion"] == "cert-manager.io/v1"]
    assert len(added) == 4
    unannotated = [{**o, "metadata": {k: v for k, v in o["metadata"].items() if k != "annotations"}}
                   if CERT_MANAGER in o["metadata"].get("annotations", {}) else o
                   for o in rendered(tree) if o not in added]
    assert unannotated == list(rendered(under))


def test_dockerfile() -> None:
    text = (ROOT / "webhook" / "Dockerfile").read_text()
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]
    froms = [line for line in lines if line.startswith("FROM ")]
    assert len(froms) == 2 and all("slim" in text for _ in froms)
    assert " AS build" in froms[0] and "--from=build" in text
    final = lines[lines.index(froms[1]):]
    assert not any(line.startswith("RUN") and ("pip" in line or "apt-get" in line) for line in final)
    assert any(line.startswith("USER 65532") for line in final)
    assert 'ENTRYPOINT ["vgpuctl", "webhook", "serve"]' in final
