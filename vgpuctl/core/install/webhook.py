"""`install --webhook` and its `uninstall`, planned as data: the admission webhook's objects in a safe order.

The objects are the packaged kustomize base (`vgpuctl.manifests`, loaded by the CLI — the same files as
`deploy/base`), or with `--cluster-aware` the packaged overlay built on it (`deploy/overlays/cluster-aware`:
a read-only ClusterRole and its binding, the token, the flag, more memory, egress to the API server), so
there is one source of truth. Install adds to them only what a cluster-specific
install needs: the label `app.kubernetes.io/managed-by: vgpuctl`, the TLS Secret the Deployment mounts,
the `caBundle` of both webhook configurations, the device config Volcano reads (copied into the
webhook's own ConfigMap: a pod mounts ConfigMaps of its own namespace only), the Volcano version, and
the TLS certificate's hash on the pod template (a new certificate rolls the pods).

The certificates arrive as PEM text (`WebhookTLS`): making or checking them needs `cryptography`, which
the pure core does not import; the CLI keeps a valid pair it finds in the Secret and makes a new one
otherwise (with `vgpuctl.webhook.certs`).

Order matters because a webhook configuration is live the moment it is written: the validating one
(`failurePolicy: Fail`) makes the API server reject every GPU/NPU pod while its Service has no ready
endpoint. So install writes Namespace, ServiceAccount, Secret, ConfigMap, Deployment, Service,
PodDisruptionBudget and NetworkPolicy, then waits until the Deployment is ready (`Action.WAIT`), and
only then the two configurations. The cluster-aware ClusterRole and binding are written before the
Deployment (its new pods list nodes and pods at start); going back to a plain install deletes them
(`WebhookOptions.retired`) only after that wait, once no pod that uses them is left. Uninstall deletes
the configurations first, so the API server stops calling a webhook before it goes away, and the
Namespace last, only while it holds nothing of anyone else's.
"""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.install.devconf import MANAGED_BY, MANAGER
from vgpuctl.core.install.modes import InstallError
from vgpuctl.core.install.plan import (
    Action,
    ClusterState,
    InstallOptions,
    Method,
    Plan,
    Ref,
    Step,
    apply_step,
    detect_volcano,
    geometry_target,
    owned,
    plan,
    project,
    ref_of,
    scheduler_text,
    unified,
)
from vgpuctl.core.install.removal import plan_removal
from vgpuctl.core.versions import Version

CONFIG_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")
#: What the pods use from the API server: written before the Deployment, like the Secret.
RBAC_KINDS = ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding")
TLS_HASH = "vgpuctl.io/tls-hash"
COPY_OF = "vgpuctl.io/copy-of"
VERSION_ENV = "VGPUCTL_VOLCANO_VERSION"
TLS_TYPE = "kubernetes.io/tls"
CA_KEY, CERT_KEY, KEY_KEY = "ca.crt", "tls.crt", "tls.key"
#: Objects the API server or the controllers put into every namespace: they never keep a Namespace alive.
AUTOMATIC = {("ConfigMap", "kube-root-ca.crt"), ("ServiceAccount", "default")}
#: Uninstall deletes the namespaced objects in this order: the pods stop before what they use goes away.
DELETE_ORDER = ("Deployment", "Service", "PodDisruptionBudget", "NetworkPolicy", "ResourceQuota", "ConfigMap",
                "Secret", "ServiceAccount")


@dataclass(frozen=True, slots=True)
class WebhookTLS:
    """PEM text for the Secret and the caBundle, and what the CLI decided about it (said as a note).

    `tls_crt`/`tls_key` are empty when the Secret exists and is not vgpuctl's: it is left alone, and only
    its CA goes into the caBundle."""

    ca_crt: str
    tls_crt: str = ""
    tls_key: str = ""
    note: str = ""


@dataclass(frozen=True, slots=True)
class WebhookOptions:
    """`manifests`: the objects of the variant to install (the base, or the cluster-aware overlay).
    `retired`: objects another variant writes and this one does not (`retired_refs`) — the cluster-aware
    RBAC when installing without it: deleted when vgpuctl's, so a rerun switches the variant."""

    manifests: tuple[Mapping[str, Any], ...]
    tls: WebhookTLS
    image: str | None = None
    retired: tuple[Ref, ...] = ()


def retired_refs(manifests: Sequence[Mapping[str, Any]],
                 variants: Sequence[Sequence[Mapping[str, Any]]]) -> tuple[Ref, ...]:
    """What the `variants` (every set of webhook manifests install knows) write and `manifests` does not."""
    mine = set(webhook_refs(manifests))
    return tuple(sorted({r for v in variants for r in webhook_refs(v)} - mine))


@dataclass(frozen=True, slots=True)
class WebhookLayout:
    """The names install needs, read from the manifests (never repeated in code)."""

    namespace: str
    service: str
    deployment: Ref
    secret: Ref
    device_config: Ref | None  # the ConfigMap the Deployment mounts as its device config
    configs: tuple[Ref, ...]


def _one(manifests: Sequence[Mapping[str, Any]], kind: str) -> Mapping[str, Any]:
    found = [o for o in manifests if o.get("kind") == kind]
    if len(found) != 1:
        raise InstallError(f"the packaged webhook manifests hold {len(found)} {kind} objects, expected 1")
    return found[0]


def _pod_spec(deployment: Mapping[str, Any]) -> Mapping[str, Any]:
    return ((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}


def layout(manifests: Sequence[Mapping[str, Any]]) -> WebhookLayout:
    deployment = _one(manifests, "Deployment")
    service = _one(manifests, "Service")
    dref = ref_of(deployment)
    if not dref.namespace:
        raise InstallError("the packaged webhook Deployment has no namespace")
    volumes = _pod_spec(deployment).get("volumes") or []
    secrets = [v["secret"]["secretName"] for v in volumes if isinstance(v.get("secret"), Mapping)]
    if len(secrets) != 1:
        raise InstallError(f"the packaged webhook Deployment mounts {len(secrets)} Secrets, expected 1 (TLS)")
    mounted = {v["configMap"]["name"] for v in volumes if isinstance(v.get("configMap"), Mapping)}
    cms = [ref_of(o) for o in manifests if o.get("kind") == "ConfigMap" and ref_of(o).name in mounted]
    return WebhookLayout(
        namespace=dref.namespace,
        service=str(service["metadata"]["name"]),
        deployment=dref,
        secret=Ref("v1", "Secret", dref.namespace, str(secrets[0])),
        device_config=cms[0] if len(cms) == 1 else None,
        configs=tuple(ref_of(o) for o in manifests if o.get("kind") in CONFIG_KINDS),
    )


def webhook_refs(manifests: Sequence[Mapping[str, Any]]) -> list[Ref]:
    """Every object install --webhook writes (and uninstall takes back): the manifests and the Secret."""
    return sorted({*(ref_of(o) for o in manifests), layout(manifests).secret})


# --- rendering ------------------------------------------------------------------------------------

def _b64(text: str) -> str:
    return base64.b64encode(text.encode()).decode()


def _short_hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _managed(obj: Mapping[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(dict(obj))
    meta = out.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), MANAGED_BY: MANAGER}
    return out


def render_secret(lay: WebhookLayout, tls: WebhookTLS, labels: Mapping[str, str]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": lay.secret.name, "namespace": lay.secret.namespace,
                         "labels": {**labels, MANAGED_BY: MANAGER}},
            "type": TLS_TYPE,
            "data": {CA_KEY: _b64(tls.ca_crt), CERT_KEY: _b64(tls.tls_crt), KEY_KEY: _b64(tls.tls_key)}}


def _deployment(obj: dict[str, Any], tls: WebhookTLS, image: str | None, volcano: Version | None) -> None:
    template = obj["spec"]["template"]
    meta = template.setdefault("metadata", {})
    meta["annotations"] = {**(meta.get("annotations") or {}), TLS_HASH: _short_hash(tls.tls_crt or tls.ca_crt)}
    containers = template["spec"]["containers"]
    for container in containers[:1]:  # the webhook container; the manifests have no sidecar
        if image:
            container["image"] = image
        if volcano is not None:
            env = [e for e in container.get("env") or [] if e.get("name") != VERSION_ENV]
            container["env"] = [*env, {"name": VERSION_ENV, "value": f"v{volcano}"}]


def render(options: WebhookOptions, *, device_config: tuple[Ref, str] | None = None,
           volcano: Version | None = None) -> list[dict[str, Any]]:
    """The webhook's objects as install writes them, in write order (the two configurations last).

    `device_config` is the device ConfigMap Volcano reads and the `device-config.yaml` it will hold; the
    webhook's own copy gets that payload (without it, the packaged default stays)."""
    lay = layout(options.manifests)
    objects = [_managed(o) for o in options.manifests]
    deployment = next(o for o in objects if ref_of(o) == lay.deployment)
    labels = {k: v for k, v in (deployment["metadata"].get("labels") or {}).items()
              if k.startswith("app.kubernetes.io/") and k != MANAGED_BY}
    for obj in objects:
        ref = ref_of(obj)
        if ref == lay.deployment:
            _deployment(obj, options.tls, options.image, volcano)
        elif ref == lay.device_config and device_config is not None:
            source, payload = device_config
            obj["data"] = {**(obj.get("data") or {}), spec.DEVICE_CONFIG_KEY: payload}
            obj["metadata"]["annotations"] = {**(obj["metadata"].get("annotations") or {}),
                                              COPY_OF: f"{source.namespace}/{source.name}"}
        elif obj.get("kind") in CONFIG_KINDS:
            for hook in obj.get("webhooks") or []:
                hook.setdefault("clientConfig", {})["caBundle"] = _b64(options.tls.ca_crt)
    secret = render_secret(lay, options.tls, labels)
    rbac = [o for o in objects if o.get("kind") in RBAC_KINDS]
    rest = [o for o in objects if o.get("kind") not in RBAC_KINDS]
    at = rest.index(deployment)
    ordered = [*rest[:at], secret, *rbac, *rest[at:]]
    return [o for o in ordered if o.get("kind") not in CONFIG_KINDS] + \
           [o for o in ordered if o.get("kind") in CONFIG_KINDS]


# --- what a diff may show -------------------------------------------------------------------------

def _redacted(value: Any) -> str:
    text = str(value)
    try:
        size = len(base64.b64decode(text, validate=True))
    except (binascii.Error, ValueError):
        size = len(text.encode())
    return f"<redacted: {size} bytes, sha256 {_short_hash(text)[:12]}>"


def redact(obj: Any, kind: str | None = None) -> Any:
    """`obj` (of `kind`, default its own) fit to print: Secret values replaced by their size and a hash,
    caBundles shortened likewise (a public certificate, but a screen of base64 says nothing to a reader;
    the hash still shows a change)."""
    if not isinstance(obj, Mapping):
        return obj
    out = copy.deepcopy(dict(obj))
    if (kind or out.get("kind")) == "Secret":
        for key in ("data", "stringData"):
            if isinstance(out.get(key), Mapping):
                out[key] = {k: _redacted(v) for k, v in out[key].items()}
    for hook in out.get("webhooks") or []:
        client = hook.get("clientConfig") if isinstance(hook, dict) else None
        if isinstance(client, dict) and "caBundle" in client:
            client["caBundle"] = f"<CA bundle, sha256 {_short_hash(str(client['caBundle']))[:12]}>"
    return out


def redacted_step(desired: dict[str, Any], current: Mapping[str, Any] | None) -> Step:
    """`apply_step`, with a diff that shows no Secret value and no caBundle."""
    step = apply_step(desired, current)
    if not step.diff:
        return step
    before = None if current is None else redact(project(current, desired), step.ref.kind)
    return replace(step, diff=unified(step.ref, before, redact(desired)))


# --- readiness ------------------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Rollout:
    ready: bool
    failed: bool
    message: str


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def rollout(deployment: Mapping[str, Any]) -> Rollout:
    """Is the Deployment's newest generation rolled out and available? (`kubectl rollout status`'s rules.)"""
    meta = deployment.get("metadata") or {}
    spec_ = deployment.get("spec") or {}
    status = deployment.get("status") or {}
    wanted = spec_.get("replicas", 1)
    wanted = wanted if isinstance(wanted, int) else 1
    generation = _int(meta.get("generation"))
    if _int(status.get("observedGeneration")) < generation or not status:
        return Rollout(False, False, "waiting for the Deployment controller to see the new spec")
    for condition in status.get("conditions") or []:
        if condition.get("type") == "Progressing" and condition.get("reason") == "ProgressDeadlineExceeded":
            return Rollout(False, True, f"the rollout exceeded its progress deadline: {condition.get('message', '')}"
                           .rstrip(": "))
    updated, total = _int(status.get("updatedReplicas")), _int(status.get("replicas"))
    available = _int(status.get("availableReplicas"))
    if updated < wanted:
        return Rollout(False, False, f"{updated} of {wanted} replicas updated")
    if total > updated:
        return Rollout(False, False, f"{total - updated} old replicas pending termination")
    if available < updated:
        return Rollout(False, False, f"{available} of {updated} updated replicas available")
    return Rollout(True, False, f"{available} of {wanted} replicas available")


def conditions_text(deployment: Mapping[str, Any]) -> str:
    """The Deployment's unhappy conditions, for a timeout message (`Available=False: MinimumReplicasUnavailable`)."""
    parts = []
    for c in (deployment.get("status") or {}).get("conditions") or []:
        if c.get("status") != "True":
            text = f"{c.get('type')}={c.get('status')}: {c.get('reason', '')}"
            parts.append(text + (f" ({c['message']})" if c.get("message") else ""))
    return "; ".join(parts)


# --- install --------------------------------------------------------------------------------------

def _device_source(state: ClusterState, base: Plan, options: InstallOptions) -> tuple[Ref, str] | None:
    """The device ConfigMap Volcano reads, and its device-config.yaml once the base plan is applied."""
    try:
        _, text = scheduler_text(state)
        name, namespace = geometry_target(text, options.modes)
    except InstallError:
        name, namespace = spec.DEVICE_CONFIGMAP, spec.DEVICE_CONFIGMAP_NAMESPACE
    ref = Ref("v1", "ConfigMap", namespace, name)
    planned = next((s.body for s in base.steps if s.ref == ref and s.body is not None and s.writes), None)
    source = planned if planned is not None else state.get(ref)
    payload = ((source or {}).get("data") or {}).get(spec.DEVICE_CONFIG_KEY)
    return (ref, payload) if isinstance(payload, str) else None


def plan_webhook(state: ClusterState, options: WebhookOptions, *, device_config: tuple[Ref, str] | None,
                 volcano: Version | None) -> tuple[list[Step], list[str]]:
    lay = layout(options.manifests)
    notes = [options.tls.note] if options.tls.note else []
    steps: list[Step] = []
    configs: list[Step] = []
    for obj in render(options, device_config=device_config, volcano=volcano):
        step = redacted_step(obj, state.get(ref_of(obj)))
        (configs if obj["kind"] in CONFIG_KINDS else steps).append(step)
        if step.ref == lay.device_config and step.writes and device_config is not None:
            notes.append(f"{step.ref} is the webhook's copy of {device_config[0]}: rerun install --webhook after "
                         "changing that one, so the webhook judges with what the scheduler reads")
    if device_config is None and lay.device_config is not None:
        notes.append(f"no device ConfigMap found for Volcano: {lay.device_config} keeps the packaged default "
                     "(vGPU resource names, A30/A100 MIG geometries)")
    secret_step = next((s for s in steps if s.ref == lay.secret), None)
    bridge = _rotation_bridge(state, configs, options.tls.ca_crt) if secret_step and secret_step.writes else []
    if bridge:
        notes.append("new certificates: both webhook configurations first trust the old and the new CA, so the "
                     "API server can call old and new pods during the rollout; the new CA alone follows once the "
                     "Deployment is ready")
    retire = [_retire_step(ref, current) for ref in options.retired if (current := state.get(ref)) is not None]
    if any(s.writes for s in configs):
        steps.append(Step(lay.deployment, Action.WAIT, Method.WAIT,
                          note="until its pods are ready; the webhook configurations are written only after"))
    elif any(s.writes for s in retire):
        steps.append(Step(lay.deployment, Action.WAIT, Method.WAIT,
                          note="until its pods are ready; what the old pods used is deleted only after"))
    return bridge + steps + configs + retire, notes


def _shown(obj: Mapping[str, Any]) -> dict[str, Any]:
    """An object as a diff shows it: what was applied, without what the API server adds to its metadata."""
    meta = obj.get("metadata") or {}
    return {**{k: v for k, v in obj.items() if k != "status"},
            "metadata": {k: v for k, v in meta.items() if k in ("name", "namespace", "labels", "annotations")}}


def _retire_step(ref: Ref, current: Mapping[str, Any]) -> Step:
    if not owned(current):
        return Step(ref, Action.KEEP, Method.NONE, note="the webhook is installed without --cluster-aware now, but "
                                                        "this is not vgpuctl's: left as it is")
    return Step(ref, Action.DELETE, Method.DELETE, None, unified(ref, redact(_shown(current)), None),
                note="the webhook is installed without --cluster-aware now: no longer used")


def _rotation_bridge(state: ClusterState, configs: Sequence[Step], new_ca: str) -> list[Step]:
    """With new certificates, pods serving the old certificate keep answering until the rollout replaces
    them, and new pods answer with the new one. A caBundle holding only one CA would make the API server
    reject the other pods' answers for that window, and the validating webhook fails closed: GPU pods
    would be refused. So each configuration already in the cluster is first written with both CAs."""
    bridge: list[Step] = []
    for step in configs:
        current = state.get(step.ref)
        if step.body is None or current is None or not owned(current):
            continue
        old = {decode_b64_text((h.get("clientConfig") or {}).get("caBundle")) for h in current.get("webhooks") or []
               if isinstance(h, Mapping)}
        old_pem = "".join(sorted(o for o in old if o and new_ca.strip() not in o))
        if not old_pem:
            continue  # no CA, or the new CA is already trusted
        desired = copy.deepcopy(step.body)
        for hook in desired.get("webhooks") or []:
            hook.setdefault("clientConfig", {})["caBundle"] = _b64(new_ca.rstrip("\n") + "\n" + old_pem)
        bridge.append(replace(redacted_step(desired, current),
                              note="old and new CA during the rollout (new certificates)"))
    return bridge


def decode_b64_text(value: Any) -> str:
    """A base64 Secret value or caBundle as text; "" when it is missing or not base64 of text."""
    if not isinstance(value, str):
        return ""
    try:
        return base64.b64decode(value, validate=True).decode()
    except (binascii.Error, UnicodeDecodeError):
        return ""


def install_plan(state: ClusterState, options: InstallOptions, webhook: WebhookOptions | None, *,
                 now: datetime) -> Plan:
    """`plan` (scheduler config, device ConfigMap, plugins, restart), then the webhook when asked for."""
    base = plan(state, options, now=now)
    if webhook is None:
        return base
    steps, notes = plan_webhook(state, webhook, device_config=_device_source(state, base, options),
                                volcano=options.volcano_version or detect_volcano(state))
    return Plan(base.steps + tuple(steps), base.notes + tuple(notes), base.volcano_version)


# --- uninstall ------------------------------------------------------------------------------------

def _automatic(ref: Ref, obj: Mapping[str, Any]) -> bool:
    if (ref.kind, ref.name) in AUTOMATIC:
        return True
    if ref.kind == "Secret" and obj.get("type") == "kubernetes.io/service-account-token":
        return True
    return bool((obj.get("metadata") or {}).get("ownerReferences"))  # made by a controller of something listed


def webhook_removal(state: ClusterState, manifests: Sequence[Mapping[str, Any]]) -> tuple[list[Step], list[Step],
                                                                                          list[str], set[Ref]]:
    """(steps that go first, steps that go last, notes, the refs handled here) for uninstall.

    First the webhook configurations; last the webhook's namespaced objects and the Namespace, which is
    deleted only while every object in it (of the kinds the writer lists) is one install wrote (a name of
    the manifests, with vgpuctl's label) or automatic."""
    lay = layout(manifests)
    namespace_ref = Ref("v1", "Namespace", None, lay.namespace)
    handled = {r for r in state.objects if r.namespace == lay.namespace}
    handled |= {*webhook_refs(manifests), namespace_ref}
    first: list[Step] = []
    last: list[Step] = []
    notes: list[str] = []

    def keep(ref: Ref) -> Step:
        return Step(ref, Action.KEEP, Method.NONE, note="not created by vgpuctl: left as it is")

    for ref in lay.configs:
        current = state.get(ref)
        if current is not None:
            first.append(Step(ref, Action.DELETE, Method.DELETE, None, f"delete {ref}\n",
                              note="first: the API server stops calling the webhook before it goes away")
                         if owned(current) else keep(ref))
    manifest_refs = {ref_of(o) for o in manifests} | {lay.secret}
    namespaced = sorted((r for r in handled if r.namespace == lay.namespace and r in state.objects),
                        key=lambda r: (DELETE_ORDER.index(r.kind) if r.kind in DELETE_ORDER else len(DELETE_ORDER),
                                       r))
    blockers: list[Ref] = []
    for ref in namespaced:
        current = state.objects[ref]
        if owned(current) and ref in manifest_refs:  # install's own names: a label alone is no record
            last.append(Step(ref, Action.DELETE, Method.DELETE, None, f"delete {ref}\n"))
        elif not _automatic(ref, current):
            blockers.append(ref)
            if ref in manifest_refs:
                last.append(keep(ref))
    for ref in sorted(r for r in manifest_refs if r.namespace is None and r not in lay.configs):
        current = state.get(ref)
        if current is not None and ref != namespace_ref:
            last.append(Step(ref, Action.DELETE, Method.DELETE, None, f"delete {ref}\n") if owned(current)
                        else keep(ref))
    current_ns = state.get(namespace_ref)
    if current_ns is not None:
        if not owned(current_ns):
            last.append(keep(namespace_ref))
        elif blockers:
            shown = ", ".join(str(r) for r in blockers[:5]) + (", …" if len(blockers) > 5 else "")
            last.append(Step(namespace_ref, Action.KEEP, Method.NONE,
                             note=f"holds objects vgpuctl did not create ({shown}): left as it is"))
            notes.append(f"{namespace_ref} was created by vgpuctl but holds objects of yours ({shown}); it is kept "
                         f"— delete it yourself (kubectl delete namespace {lay.namespace}) when they can go")
        else:
            last.append(Step(namespace_ref, Action.DELETE, Method.DELETE, None, f"delete {namespace_ref}\n",
                             note="last, once nothing in it is anyone else's"))
    return first, last, notes, handled


def removal_plan(state: ClusterState, manifests: Sequence[Mapping[str, Any]], *, now: datetime,
                 restart: bool = True) -> Plan:
    """`plan_removal` with the webhook taken down around it: its configurations first, the rest last."""
    first, last, notes, handled = webhook_removal(state, manifests)
    rest = ClusterState({r: o for r, o in state.objects.items() if r not in handled}, state.nodes,
                        state.scheduler_deployment)
    base = plan_removal(rest, now=now, restart=restart)
    return Plan((*first, *base.steps, *last), base.notes + tuple(notes), base.volcano_version)
