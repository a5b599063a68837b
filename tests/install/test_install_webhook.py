"""`vgpuctl install --webhook` / `uninstall` end to end: the real CLI and kubernetes client over real HTTP
against the stateful API server of conftest.py, whose Deployments roll out only when polled (or never)."""

from __future__ import annotations

import base64
import json
import re
from datetime import UTC, datetime, timedelta
from typing import Any

import kubernetes_validate
import pytest
import yaml
from cryptography import x509
from kubernetes_validate import utils as kv_utils

from tests.cli.conftest import validate
from tests.install.conftest import StatefulCluster
from tests.install.test_install_live import run
from vgpuctl.webhook import certs

NS = "vgpuctl-system"
DEPLOYMENT = f"/apis/apps/v1/namespaces/{NS}/deployments/vgpuctl-webhook"
MUTATING = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations/vgpuctl-webhook"
VALIDATING = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/vgpuctl-webhook"
ADMISSION = "admissionregistration.k8s.io/v1"
WEBHOOK_OBJECTS = [("v1", "Namespace", None, NS),
                   ("v1", "ServiceAccount", NS, "vgpuctl-webhook"),
                   ("v1", "ConfigMap", NS, "vgpuctl-device-config"),
                   ("v1", "Secret", NS, "vgpuctl-webhook-tls"),
                   ("apps/v1", "Deployment", NS, "vgpuctl-webhook"),
                   ("v1", "Service", NS, "vgpuctl-webhook"),
                   ("policy/v1", "PodDisruptionBudget", NS, "vgpuctl-webhook"),
                   ("networking.k8s.io/v1", "NetworkPolicy", NS, "vgpuctl-webhook"),
                   (ADMISSION, "MutatingWebhookConfiguration", None, "vgpuctl-webhook"),
                   (ADMISSION, "ValidatingWebhookConfiguration", None, "vgpuctl-webhook")]
VERSIONS = sorted((v for v in kv_utils.all_versions() if tuple(map(int, v.split(".")[:2])) >= (1, 28)),
                  key=lambda v: tuple(map(int, v.split(".")[:2])))  # matchConditions: 1.28+, as deploy/ says
BASE64_RUN = re.compile(r"[A-Za-z0-9+/=]{64,}")


def install(kubeconfig: str, *extra: str) -> Any:
    return run("install", "--mode", "vgpu", "--webhook", "--kubeconfig", kubeconfig, *extra)


def obj(kube: StatefulCluster, api_version: str, kind: str, namespace: str | None, name: str) -> dict[str, Any]:
    found = kube.get(api_version, kind, namespace, name)
    assert found is not None, (kind, namespace, name)
    return found


def secret_pem(kube: StatefulCluster, key: str) -> bytes:
    return base64.b64decode(obj(kube, "v1", "Secret", NS, "vgpuctl-webhook-tls")["data"][key])


def ca_bundles(kube: StatefulCluster) -> list[str]:
    kinds = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
    return [hook["clientConfig"]["caBundle"] for kind in kinds
            for hook in obj(kube, ADMISSION, kind, None, "vgpuctl-webhook")["webhooks"]]


def put_secret(kube: StatefulCluster, ca: certs.CertKey, leaf: certs.CertKey, *, managed: bool = True) -> None:
    labels = {"app.kubernetes.io/managed-by": "vgpuctl"} if managed else {}
    kube.put({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS, "labels": labels}})
    kube.put({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
              "metadata": {"name": "vgpuctl-webhook-tls", "namespace": NS, "labels": labels},
              "data": {k: base64.b64encode(v).decode() for k, v in
                       (("ca.crt", ca.cert_pem()), ("tls.crt", leaf.cert_pem()), ("tls.key", leaf.key_pem()))}})


# --- install ----------------------------------------------------------------------------------------

def test_install_webhook_creates_every_object_valid_and_trusted(kube: StatefulCluster, kubeconfig: str) -> None:
    kube.ready_after = 3  # the writer must poll: the rollout completes at the third GET
    result = install(kubeconfig)
    assert result.exit_code == 0, result.stdout + result.stderr
    for api_version, kind, namespace, name in WEBHOOK_OBJECTS:
        found = obj(kube, api_version, kind, namespace, name)
        assert found["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "vgpuctl", kind
        for version in (VERSIONS[0], VERSIONS[-1]):
            kubernetes_validate.validate(found, version, strict=True)
    # every webhook trusts exactly the CA in the Secret, and that CA issued the serving certificate for the Service
    ca_b64 = obj(kube, "v1", "Secret", NS, "vgpuctl-webhook-tls")["data"]["ca.crt"]
    assert ca_bundles(kube) == [ca_b64] * 4
    ca = x509.load_pem_x509_certificate(secret_pem(kube, "ca.crt"))
    leaf = x509.load_pem_x509_certificate(secret_pem(kube, "tls.crt"))
    leaf.verify_directly_issued_by(ca)
    names = leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(x509.DNSName)
    assert set(certs.service_dns_names("vgpuctl-webhook", NS)) <= set(names)
    assert obj(kube, "v1", "Secret", NS, "vgpuctl-webhook-tls")["type"] == "kubernetes.io/tls"
    # the webhook judges with the device config Volcano reads
    copy = obj(kube, "v1", "ConfigMap", NS, "vgpuctl-device-config")
    volcano = obj(kube, "v1", "ConfigMap", "kube-system", "volcano-vgpu-device-config")
    assert copy["data"]["device-config.yaml"] == volcano["data"]["device-config.yaml"]
    env = obj(kube, "apps/v1", "Deployment", NS, "vgpuctl-webhook")["spec"]["template"]["spec"]["containers"][0]["env"]
    assert {"name": "VGPUCTL_VOLCANO_VERSION", "value": "v1.15.1"} in env


def test_webhook_configurations_are_written_only_after_the_deployment_is_ready(kube: StatefulCluster,
                                                                                  kubeconfig: str) -> None:
    kube.ready_after = 3
    result = install(kubeconfig)
    assert result.exit_code == 0, result.stdout + result.stderr
    events = kube.events
    deployment_write = events.index(("PATCH", DEPLOYMENT))
    ready = events.index(("READY", DEPLOYMENT))
    assert deployment_write < ready < events.index(("PATCH", MUTATING)) < events.index(("PATCH", VALIDATING))
    assert events[-2:] == [("PATCH", MUTATING), ("PATCH", VALIDATING)]  # the very last writes
    assert kube.polls[("apps/v1", "deployments", NS, "vgpuctl-webhook")] == 3
    # the wait is visible on stderr, and stdout lists it between the objects and the configurations
    assert "vgpuctl: waiting for Deployment vgpuctl-system/vgpuctl-webhook: " in result.stderr
    assert "vgpuctl: Deployment vgpuctl-system/vgpuctl-webhook is ready: 2 of 2 replicas available" in result.stderr
    lines = result.stdout.splitlines()
    wait = lines.index("  … wait      Deployment vgpuctl-system/vgpuctl-webhook  (until its pods are ready; the "
                       "webhook configurations are written only after)")
    assert lines[wait + 1] == "  + create    MutatingWebhookConfiguration vgpuctl-webhook"
    assert lines[wait + 2] == "  + create    ValidatingWebhookConfiguration vgpuctl-webhook"
    assert "√ The vgpuctl webhook, if installed, has ready replicas" in result.stdout  # doctor's webhook check


def test_the_rollout_wait_polls_on_through_api_server_errors(kube: StatefulCluster, kubeconfig: str) -> None:
    """A 5xx while polling the rollout says nothing about the pods: the wait goes on and the install ends
    normally, configurations last."""
    kube.fail_polls(503, 500)
    result = install(kubeconfig)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert kube.poll_faults == []  # both failed polls happened
    events = kube.events
    assert events.index(("READY", DEPLOYMENT)) < events.index(("PATCH", MUTATING))
    assert obj(kube, ADMISSION, "ValidatingWebhookConfiguration", None, "vgpuctl-webhook")


def test_a_refused_rollout_poll_stops_the_install_before_the_configurations(kube: StatefulCluster,
                                                                            kubeconfig: str) -> None:
    kube.fail_polls(403)
    failed = install(kubeconfig)
    assert failed.exit_code == 3, failed.stdout + failed.stderr
    assert "× stopped at wait Deployment vgpuctl-system/vgpuctl-webhook: " in failed.stdout
    assert "injected failure of a poll of vgpuctl-webhook" in failed.stdout
    assert kube.get(ADMISSION, "MutatingWebhookConfiguration", None, "vgpuctl-webhook") is None
    assert kube.get(ADMISSION, "ValidatingWebhookConfiguration", None, "vgpuctl-webhook") is None


def test_second_install_writes_nothing_and_keeps_the_certificates(kube: StatefulCluster, kubeconfig: str) -> None:
    assert install(kubeconfig).exit_code == 0
    before, writes = kube.snapshot(), len(kube.writes)
    second = install(kubeconfig)
    assert second.exit_code == 0, second.stdout + second.stderr
    assert len(kube.writes) == writes and kube.snapshot() == before
    assert "Nothing to change: the cluster already matches (0 writes)." in second.stdout
    assert "  = unchanged Secret vgpuctl-system/vgpuctl-webhook-tls" in second.stdout
    assert "TLS: Secret vgpuctl-system/vgpuctl-webhook-tls holds a valid pair" in second.stdout
    assert "kept, no new certificates" in second.stdout
    assert "wait" not in second.stdout.split("Notes:")[0]  # nothing to wait for when nothing is written


def test_a_webhook_that_never_becomes_ready_stops_before_its_configurations(kube: StatefulCluster,
                                                                           kubeconfig: str) -> None:
    kube.ready_after = None
    failed = install(kubeconfig, "--webhook-timeout", "0.6")
    assert failed.exit_code == 3
    out = failed.stdout
    assert "× stopped at wait Deployment vgpuctl-system/vgpuctl-webhook: Deployment vgpuctl-system/vgpuctl-webhook " \
           "not ready after 0.6s: 0 of 2 updated replicas available" in out
    assert "MinimumReplicasUnavailable" in out
    assert "The webhook configurations were not applied (MutatingWebhookConfiguration vgpuctl-webhook, " \
           "ValidatingWebhookConfiguration vgpuctl-webhook)" in out
    assert "rerun `vgpuctl install --mode vgpu --webhook --kubeconfig" in out
    assert "    × create MutatingWebhookConfiguration vgpuctl-webhook" in out
    assert failed.stderr.strip().splitlines()[-1].startswith("vgpuctl: install stopped at wait Deployment")
    assert kube.get(ADMISSION, "MutatingWebhookConfiguration", None, "vgpuctl-webhook") is None
    assert kube.get(ADMISSION, "ValidatingWebhookConfiguration", None, "vgpuctl-webhook") is None
    secret = obj(kube, "v1", "Secret", NS, "vgpuctl-webhook-tls")

    kube.ready_after = 1  # the pods come up (the image was pulled at last)
    writes = len(kube.writes)
    rerun = install(kubeconfig)
    assert rerun.exit_code == 0, rerun.stdout + rerun.stderr
    assert kube.writes[writes:] == [("PATCH", MUTATING), ("PATCH", VALIDATING)]  # nothing else, certificates kept
    assert obj(kube, "v1", "Secret", NS, "vgpuctl-webhook-tls")["data"] == secret["data"]
    assert ca_bundles(kube) == [secret["data"]["ca.crt"]] * 4
    assert "Nothing to change" in install(kubeconfig).stdout


def test_a_pair_about_to_expire_is_replaced_and_the_pods_roll(kube: StatefulCluster, kubeconfig: str) -> None:
    ca = certs.generate_ca()
    put_secret(kube, ca, certs.issue_serving_cert(ca, certs.service_dns_names("vgpuctl-webhook", NS), days=10))
    old = obj(kube, "v1", "Secret", NS, "vgpuctl-webhook-tls")["data"]
    result = install(kubeconfig)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "the pair in Secret vgpuctl-system/vgpuctl-webhook-tls cannot serve: tls.crt expires on" in result.stdout
    new = obj(kube, "v1", "Secret", NS, "vgpuctl-webhook-tls")["data"]
    assert new["tls.key"] != old["tls.key"] and new["ca.crt"] != old["ca.crt"]
    assert ca_bundles(kube) == [new["ca.crt"]] * 4
    leaf = x509.load_pem_x509_certificate(base64.b64decode(new["tls.crt"]))
    assert leaf.not_valid_after_utc - datetime.now(UTC) > timedelta(days=300)


def test_new_certificates_are_trusted_next_to_the_old_ones_until_the_rollout_is_ready(kube: StatefulCluster,
                                                                                      kubeconfig: str) -> None:
    """Old pods serve the old certificate until the rollout replaces them: for that window the API server
    must trust both CAs, or the fail-closed validating webhook refuses every GPU pod."""
    assert install(kubeconfig).exit_code == 0
    old_ca = certs.generate_ca()
    put_secret(kube, old_ca, certs.issue_serving_cert(old_ca, certs.service_dns_names("vgpuctl-webhook", NS), days=5))
    for kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
        config = obj(kube, ADMISSION, kind, None, "vgpuctl-webhook")
        for hook in config["webhooks"]:
            hook["clientConfig"]["caBundle"] = certs.ca_bundle(old_ca)
        kube.put(config)
    seen: list[tuple[str, str, set[str]]] = []  # (method, path, CAs in the configurations) before each write

    def trusted(_: StatefulCluster, request: Any) -> None:
        seen.append((request.method, request.path, set(ca_bundles(kube))))

    kube.before_write(trusted)
    writes = len(kube.writes)
    result = install(kubeconfig)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "both webhook configurations first trust the old and the new CA" in result.stdout
    new_ca = secret_pem(kube, "ca.crt").decode()
    secret_path = f"/api/v1/namespaces/{NS}/secrets/vgpuctl-webhook-tls"
    assert kube.writes[writes:writes + 2] == [("PATCH", MUTATING), ("PATCH", VALIDATING)]  # the bridge comes first
    at_secret_write = next(cas for method, path, cas in seen if path == secret_path)
    (bundle,) = at_secret_write
    pems = base64.b64decode(bundle).decode()
    assert new_ca in pems and old_ca.cert_pem().decode() in pems
    assert kube.events.index(("PATCH", secret_path)) < kube.events.index(("READY", DEPLOYMENT))
    assert kube.writes[-2:] == [("PATCH", MUTATING), ("PATCH", VALIDATING)]  # then the new CA alone
    assert ca_bundles(kube) == [base64.b64encode(new_ca.encode()).decode()] * 4
    assert "Nothing to change" in install(kubeconfig).stdout


def test_a_certificate_missing_a_service_name_is_replaced(kube: StatefulCluster, kubeconfig: str) -> None:
    ca = certs.generate_ca()
    put_secret(kube, ca, certs.issue_serving_cert(ca, ["vgpuctl-webhook"]))
    result = install(kubeconfig)
    assert "tls.crt does not name vgpuctl-webhook.vgpuctl-system" in result.stdout


def test_a_stale_ca_bundle_is_corrected_without_new_certificates(kube: StatefulCluster, kubeconfig: str) -> None:
    assert install(kubeconfig).exit_code == 0
    secret = obj(kube, "v1", "Secret", NS, "vgpuctl-webhook-tls")["data"]
    mutating = obj(kube, ADMISSION, "MutatingWebhookConfiguration", None, "vgpuctl-webhook")
    for hook in mutating["webhooks"]:
        hook["clientConfig"]["caBundle"] = certs.ca_bundle(certs.generate_ca())
    kube.put(mutating)
    writes = len(kube.writes)
    result = install(kubeconfig)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "the caBundle of MutatingWebhookConfiguration vgpuctl-webhook does not match its CA and is set to it" \
        in result.stdout
    assert kube.writes[writes:] == [("PATCH", MUTATING)]
    assert obj(kube, "v1", "Secret", NS, "vgpuctl-webhook-tls")["data"] == secret
    assert ca_bundles(kube) == [secret["ca.crt"]] * 4


def test_a_secret_that_is_not_vgpuctls_is_left_alone_and_its_ca_trusted(kube: StatefulCluster,
                                                                         kubeconfig: str) -> None:
    ca = certs.generate_ca()
    put_secret(kube, ca, certs.issue_serving_cert(ca, certs.service_dns_names("vgpuctl-webhook", NS)), managed=False)
    before = obj(kube, "v1", "Secret", NS, "vgpuctl-webhook-tls")
    result = install(kubeconfig)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "  ! keep      Secret vgpuctl-system/vgpuctl-webhook-tls" in result.stdout
    assert "  ! keep      Namespace vgpuctl-system" in result.stdout
    assert obj(kube, "v1", "Secret", NS, "vgpuctl-webhook-tls") == before
    assert ca_bundles(kube) == [certs.ca_bundle(ca)] * 4


def test_a_foreign_secret_without_a_ca_stops_the_install_before_any_write(kube: StatefulCluster,
                                                                          kubeconfig: str) -> None:
    kube.put({"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
              "metadata": {"name": "vgpuctl-webhook-tls", "namespace": NS}, "data": {"tls.crt": "", "tls.key": ""}})
    result = install(kubeconfig)
    assert result.exit_code == 3
    assert "Secret vgpuctl-system/vgpuctl-webhook-tls exists, is not vgpuctl's, and has no ca.crt" in result.stderr
    assert kube.writes == []


# --- dry run ----------------------------------------------------------------------------------------

def test_dry_run_shows_every_webhook_object_and_no_key_material(kube: StatefulCluster, kubeconfig: str) -> None:
    before = kube.snapshot()
    result = install(kubeconfig, "--dry-run")
    assert result.exit_code == 0, result.stdout + result.stderr
    assert kube.writes == [] and kube.snapshot() == before
    out = result.stdout
    for line in ("  + create    Namespace vgpuctl-system",
                 "  + create    Secret vgpuctl-system/vgpuctl-webhook-tls",
                 "  + create    Deployment vgpuctl-system/vgpuctl-webhook",
                 "  … wait      Deployment vgpuctl-system/vgpuctl-webhook",
                 "+++ Secret vgpuctl-system/vgpuctl-webhook-tls (planned)",
                 "+++ MutatingWebhookConfiguration vgpuctl-webhook (planned)",
                 "+type: kubernetes.io/tls",
                 "+        vgpuctl.io/tls-hash: "):
        assert line in out, line
    assert re.search(r"^\+  tls\.key: '<redacted: \d+ bytes, sha256 [0-9a-f]{12}>'$", out, re.M)
    assert re.search(r"^\+    caBundle: <CA bundle, sha256 [0-9a-f]{12}>$", out, re.M)
    assert "PRIVATE KEY" not in out and "BEGIN CERTIFICATE" not in out
    assert not BASE64_RUN.search(out), BASE64_RUN.search(out)
    assert out.index("  … wait ") < out.index("  + create    MutatingWebhookConfiguration")
    assert out.rstrip().endswith("Dry run: nothing was written.")


def test_dry_run_of_an_update_redacts_both_sides(kube: StatefulCluster, kubeconfig: str) -> None:
    assert install(kubeconfig).exit_code == 0
    secret = obj(kube, "v1", "Secret", NS, "vgpuctl-webhook-tls")
    secret["data"]["tls.crt"] = base64.b64encode(b"not a certificate").decode()
    kube.put(secret)
    result = install(kubeconfig, "--dry-run")
    assert result.exit_code == 0
    out = result.stdout
    assert "  ~ update    Secret vgpuctl-system/vgpuctl-webhook-tls" in out
    assert re.search(r"^-  tls\.crt: '<redacted: 17 bytes, sha256 [0-9a-f]{12}>'$", out, re.M)
    assert re.search(r"^\+  tls\.crt: '<redacted: \d+ bytes, sha256 [0-9a-f]{12}>'$", out, re.M)
    assert "PRIVATE KEY" not in out and not BASE64_RUN.search(out)


# --- -o json ----------------------------------------------------------------------------------------

def test_install_json_report_is_schema_valid_and_pure(kube: StatefulCluster, kubeconfig: str) -> None:
    result = install(kubeconfig, "-o", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    validate("install-report.schema.json", report)
    assert report["kind"] == "InstallReport" and report["command"] == "install" and report["outcome"] == "applied"
    statuses = {s["object"]: (s["action"], s["method"], s["status"]) for s in report["steps"]}
    assert statuses["Secret vgpuctl-system/vgpuctl-webhook-tls"] == ("create", "apply", "applied")
    assert statuses["MutatingWebhookConfiguration vgpuctl-webhook"] == ("create", "apply", "applied")
    assert [s["action"] for s in report["steps"]][-3:] == ["wait", "create", "create"]
    assert report["summary"]["applied"] == len([s for s in report["steps"] if s["status"] == "applied"])
    assert report["summary"]["writes"] == report["summary"]["applied"] - 1  # the wait is no write
    assert report["doctor"]["summary"]["errors"] == 0
    assert {c["category"] for c in report["doctor"]["checks"]} >= {"scheduler-config", "webhook"}
    assert "PRIVATE KEY" not in result.stdout

    again = install(kubeconfig, "-o", "json")
    second = json.loads(again.stdout)
    validate("install-report.schema.json", second)
    assert second["outcome"] == "unchanged" and second["summary"]["writes"] == 0
    assert {s["status"] for s in second["steps"]} == {"none"}


def test_dry_run_json_report(kube: StatefulCluster, kubeconfig: str) -> None:
    result = install(kubeconfig, "--dry-run", "-o", "json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    validate("install-report.schema.json", report)
    assert report["dryRun"] is True and report["outcome"] == "planned" and report["doctor"] is None
    assert {s["status"] for s in report["steps"]} == {"planned"}
    secret = next(s for s in report["steps"] if s["ref"]["kind"] == "Secret")
    assert "<redacted: " in secret["diff"] and "PRIVATE KEY" not in result.stdout
    assert not BASE64_RUN.search(result.stdout)
    assert kube.writes == []


def test_a_failed_run_reports_json_and_exits_3(kube: StatefulCluster, kubeconfig: str) -> None:
    kube.ready_after = None
    result = install(kubeconfig, "--webhook-timeout", "0.3", "-o", "json")
    assert result.exit_code == 3
    report = json.loads(result.stdout)
    validate("install-report.schema.json", report)
    assert report["outcome"] == "failed" and report["doctor"] is None
    assert report["error"].startswith("stopped at wait Deployment vgpuctl-system/vgpuctl-webhook: ")
    assert report["rerun"].startswith("vgpuctl install --mode vgpu --webhook")
    tail = [(s["action"], s["ref"]["kind"], s["status"]) for s in report["steps"]][-3:]
    assert tail == [("wait", "Deployment", "failed"), ("create", "MutatingWebhookConfiguration", "skipped"),
                    ("create", "ValidatingWebhookConfiguration", "skipped")]
    failed = next(s for s in report["steps"] if s["status"] == "failed")
    assert "not ready after 0.3s" in failed["error"]
    assert report["summary"]["failed"] == 1 and report["summary"]["skipped"] == 2
    assert "stopped at wait Deployment" in result.stderr


def test_a_failed_write_is_reported_in_json(kube: StatefulCluster, kubeconfig: str) -> None:
    kube.fail_write(3, 500)
    result = run("install", "--mode", "vgpu", "-o", "json", "--kubeconfig", kubeconfig)
    assert result.exit_code == 3
    report = json.loads(result.stdout)
    validate("install-report.schema.json", report)
    statuses = [s["status"] for s in report["steps"] if s["status"] != "none"]
    assert statuses[:3] == ["applied", "applied", "failed"] and set(statuses[3:]) == {"skipped"}
    assert "injected failure of write 3" in report["error"]


def test_yaml_output_is_the_same_report(kube: StatefulCluster, kubeconfig: str) -> None:
    result = install(kubeconfig, "--dry-run", "-o", "yaml")
    report = yaml.safe_load(result.stdout)
    validate("install-report.schema.json", report)
    assert report["kind"] == "InstallReport"


# --- uninstall --------------------------------------------------------------------------------------

def test_uninstall_deletes_the_webhook_configurations_first_and_everything_of_vgpuctls(kube: StatefulCluster,
                                                                                        kubeconfig: str) -> None:
    kube.put({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "user-stuff", "namespace": "kube-system"},
              "data": {"a": "b"}})
    kube.put({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "user-secret", "namespace": "default"},
              "data": {"a": "Yg=="}})
    assert install(kubeconfig).exit_code == 0
    writes = len(kube.writes)
    result = run("uninstall", "--kubeconfig", kubeconfig, "-o", "json")
    assert result.exit_code == 0, result.stdout + result.stderr
    validate("install-report.schema.json", json.loads(result.stdout))
    done = kube.writes[writes:]
    assert done[:2] == [("DELETE", MUTATING), ("DELETE", VALIDATING)]
    assert done[-1] == ("DELETE", f"/api/v1/namespaces/{NS}")
    assert done.index(("DELETE", DEPLOYMENT)) < done.index(("DELETE", f"/api/v1/namespaces/{NS}/secrets/"
                                                                       "vgpuctl-webhook-tls"))
    for api_version, kind, namespace, name in WEBHOOK_OBJECTS:
        assert kube.get(api_version, kind, namespace, name) is None, kind
    assert kube.get("v1", "ConfigMap", "kube-system", "user-stuff") is not None
    assert kube.get("v1", "Secret", "default", "user-secret") is not None
    assert "Nothing to change" in run("uninstall", "--kubeconfig", kubeconfig).stdout


def test_uninstall_keeps_a_namespace_holding_user_objects(kube: StatefulCluster, kubeconfig: str) -> None:
    assert install(kubeconfig).exit_code == 0
    kube.put({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "kube-root-ca.crt", "namespace": NS},
              "data": {"ca.crt": "x"}})  # put there by the API server: never a reason to keep the namespace
    kube.put({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "mine", "namespace": NS}, "data": {}})
    result = run("uninstall", "--kubeconfig", kubeconfig)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert "  ! keep      Namespace vgpuctl-system  (holds objects vgpuctl did not create (Secret " \
           "vgpuctl-system/mine): left as it is)" in result.stdout
    assert kube.get("v1", "Namespace", None, NS) is not None
    assert kube.get("v1", "Secret", NS, "mine") is not None
    assert kube.get("apps/v1", "Deployment", NS, "vgpuctl-webhook") is None
    assert kube.get("v1", "Secret", NS, "vgpuctl-webhook-tls") is None


def test_uninstall_leaves_a_hand_deployed_webhook_alone(kube: StatefulCluster, kubeconfig: str) -> None:
    """Deployed with `kubectl apply -k deploy/base` (no managed-by label): not vgpuctl's to delete."""
    from vgpuctl.manifests import webhook_objects

    for manifest in webhook_objects():
        kube.put(manifest)
    kube.mark_ready(NS, "vgpuctl-webhook")  # reads would otherwise move the simulated rollout on
    before = kube.snapshot()
    result = run("uninstall", "--dry-run", "--kubeconfig", kubeconfig)
    assert "  ! keep      MutatingWebhookConfiguration vgpuctl-webhook  (not created by vgpuctl" in result.stdout
    assert "delete" not in result.stdout.split("Notes:")[0].replace("to delete", "")
    assert run("uninstall", "--kubeconfig", kubeconfig).exit_code in (0, 1)
    assert kube.snapshot() == before


def test_uninstall_dry_run_lists_the_configurations_first(kube: StatefulCluster, kubeconfig: str) -> None:
    assert install(kubeconfig).exit_code == 0
    before, writes = kube.snapshot(), len(kube.writes)
    result = run("uninstall", "--dry-run", "--kubeconfig", kubeconfig)
    assert result.exit_code == 0
    assert kube.snapshot() == before and len(kube.writes) == writes
    lines = result.stdout.splitlines()
    assert lines[1].startswith("  - delete    MutatingWebhookConfiguration vgpuctl-webhook  (first: ")
    assert lines[2].startswith("  - delete    ValidatingWebhookConfiguration vgpuctl-webhook  (first: ")
    assert "  - delete    Namespace vgpuctl-system  (last, once nothing in it is anyone else's)" in lines
    assert "PRIVATE KEY" not in result.stdout and not BASE64_RUN.search(result.stdout)


@pytest.mark.parametrize("flag", ["--webhook-image"])
def test_webhook_options_need_webhook(kube: StatefulCluster, kubeconfig: str, flag: str) -> None:
    result = run("install", "--mode", "vgpu", flag, "x", "--kubeconfig", kubeconfig)
    assert result.exit_code == 2 and "needs --webhook" in result.stderr
    assert kube.writes == []


def test_webhook_image_override(kube: StatefulCluster, kubeconfig: str) -> None:
    assert install(kubeconfig, "--webhook-image", "registry.local/vgpuctl:dev").exit_code == 0
    deployment = obj(kube, "apps/v1", "Deployment", NS, "vgpuctl-webhook")
    assert deployment["spec"]["template"]["spec"]["containers"][0]["image"] == "registry.local/vgpuctl:dev"
