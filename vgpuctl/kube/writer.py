"""Apply an install/uninstall `Plan` to a live cluster, one write at a time, stopping at the first failure.

Objects vgpuctl owns go in by server-side apply with field manager `vgpuctl`; ConfigMaps an admin may
edit are created only when absent; the scheduler and device ConfigMaps are replaced with the
`resourceVersion` that was read, so a concurrent edit is never overwritten: on 409 the scheduler
ConfigMap is read again, planned again on the new content, and written again (a few times at most).
A `wait` step polls a Deployment until it is rolled out and available, with a deadline and progress
reports (the webhook's pods must answer before its configurations are written). The first write or
wait that fails ends the run with a report of what was and was not applied; every step is idempotent,
so rerunning install finishes the job.

Like the reader, requests go through the kubernetes client's `ApiClient` (auth, TLS, proxies) but
bodies stay raw JSON: no model (de)serialisation.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
import urllib3
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from vgpuctl.core.install.gather import gather_state
from vgpuctl.core.install.modes import Mode
from vgpuctl.core.install.plan import SCHEDULER_CM, Action, ClusterState, Method, Plan, Ref, Step
from vgpuctl.core.install.webhook import conditions_text, rollout
from vgpuctl.kube.errors import ClusterUnreachable, Timeout, not_kubernetes_api, one_line, transport_message

FIELD_MANAGER = "vgpuctl"
MAX_CONFLICT_RETRIES = 5
DEFAULT_WAIT = 180.0  # seconds a `wait` step may take
MAX_POLL_INTERVAL = 2.0
PROGRESS_EVERY = 10.0  # seconds between progress lines while nothing changes
Progress = Callable[[str], None]

_PLURALS = {"ConfigMap": "configmaps", "ServiceAccount": "serviceaccounts", "Node": "nodes", "DaemonSet": "daemonsets",
            "Deployment": "deployments", "ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings",
            "Namespace": "namespaces", "Secret": "secrets", "Service": "services", "Pod": "pods",
            "StatefulSet": "statefulsets", "PodDisruptionBudget": "poddisruptionbudgets",
            "NetworkPolicy": "networkpolicies", "MutatingWebhookConfiguration": "mutatingwebhookconfigurations",
            "ValidatingWebhookConfiguration": "validatingwebhookconfigurations", "Role": "roles",
            "RoleBinding": "rolebindings", "RuntimeClass": "runtimeclasses", "ResourceQuota": "resourcequotas"}


class WriteError(Exception):
    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status


def collection_path(ref: Ref) -> str:
    base = "/api/v1" if ref.api_version == "v1" else f"/apis/{ref.api_version}"
    where = f"/namespaces/{ref.namespace}" if ref.namespace else ""
    return f"{base}{where}/{_PLURALS[ref.kind]}"


def object_path(ref: Ref) -> str:
    return f"{collection_path(ref)}/{ref.name}"


class _Api:
    def __init__(self, api_client: ApiClient, timeout: Timeout) -> None:
        self.api = api_client
        self.timeout = timeout
        self.host = api_client.configuration.host
        self.requests = 0

    def call(self, method: str, path: str, *, query: list[tuple[str, Any]] | None = None, body: Any = None,
             content_type: str | None = None) -> tuple[int, Any]:
        headers = {"Accept": "application/json"}
        if content_type:
            headers["Content-Type"] = content_type
        request = self.api.param_serialize(method=method, resource_path=path, query_params=query or [],
                                           header_params=headers, body=body, auth_settings=["BearerToken"])
        first = self.requests == 0
        self.requests += 1
        started = time.monotonic()
        try:
            response = self.api.call_api(*request, _request_timeout=self.timeout)
            raw: bytes = response.read()  # type: ignore[no-untyped-call]
        except (urllib3.exceptions.HTTPError, OSError, ApiException) as exc:
            what = transport_message(exc, self.host, self.timeout, time.monotonic() - started)
            if first:  # the doctor's words (kube.reader): which server, what happened, the timeout that applied
                raise ClusterUnreachable(f"cannot reach the Kubernetes API: {what}") from None
            raise WriteError(f"{method} {path}: {what}") from None
        try:
            doc = orjson.loads(raw) if raw.strip() else None
        except orjson.JSONDecodeError:
            doc = None
        if response.status == 401:
            raise ClusterUnreachable(f"the Kubernetes API at {self.host} rejected the credentials (HTTP 401); "
                                     "check the kubeconfig user or token")
        return response.status, doc

    def ok(self, method: str, path: str, **kwargs: Any) -> Any:
        status, doc = self.call(method, path, **kwargs)
        if not 200 <= status <= 299:
            raise WriteError(_status_message(method, path, status, doc), status)
        return doc

    def get(self, ref: Ref) -> dict[str, Any] | None:
        status, doc = self.call("GET", object_path(ref))
        if status == 404:
            return None
        if status != 200 or not isinstance(doc, dict):
            raise WriteError(_status_message("GET", object_path(ref), status, doc), status)
        doc.setdefault("apiVersion", ref.api_version)
        doc.setdefault("kind", ref.kind)
        return doc

    def list(self, path: str) -> list[dict[str, Any]]:
        items: list[dict[str, Any]] = []
        token = ""
        while True:
            query: list[tuple[str, Any]] = [("limit", 500)] + ([("continue", token)] if token else [])
            doc = self.ok("GET", path, query=query)
            items += [i for i in (doc or {}).get("items") or [] if isinstance(i, dict)]
            token = ((doc or {}).get("metadata") or {}).get("continue") or ""
            if not token:
                return items


def _status_message(method: str, path: str, status: int, doc: Any) -> str:
    detail = doc.get("message") if isinstance(doc, dict) and isinstance(doc.get("message"), str) else ""
    return one_line(f"{method} {path}: HTTP {status}" + (f": {detail}" if detail else ""))


def read_state(api_client: ApiClient, modes: Iterable[Mode] = (), *, extra: Iterable[Ref] = (),
               inventory: Iterable[str] = (), timeout: Timeout = (5, 30)) -> ClusterState:
    """What install/uninstall read (`core.install.gather`), from the API server."""
    api = _Api(api_client, timeout)

    def list_kind(api_version: str, kind: str, namespace: str | None) -> list[dict[str, Any]]:
        if kind == "Node":
            return _nodes(api)
        return api.list(collection_path(Ref(api_version, kind, namespace, "")))

    try:
        return gather_state(api.get, list_kind, tuple(modes), extra=extra, inventory=inventory)
    except WriteError as exc:
        raise ClusterUnreachable(f"cannot read what install needs: {exc}") from None


def _nodes(api: _Api) -> list[dict[str, Any]]:
    try:
        return api.list("/api/v1/nodes")
    except WriteError as exc:
        if exc.status == 404:  # not an API server (the reader's words: `not_kubernetes_api`)
            raise ClusterUnreachable(not_kubernetes_api(api.host, exc.status)) from None
        raise


@dataclass
class ApplyResult:
    applied: list[Step] = field(default_factory=list)
    failed: Step | None = None
    error: str = ""
    not_applied: list[Step] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.failed is None


Replan = Callable[[Mapping[str, Any]], Step]


def _write(api: _Api, step: Step) -> None:
    body = step.body
    if step.method is Method.APPLY:
        api.ok("PATCH", object_path(step.ref), query=[("fieldManager", FIELD_MANAGER), ("force", "true")],
               body=body, content_type="application/apply-patch+yaml")
    elif step.method is Method.CREATE:
        status, doc = api.call("POST", collection_path(step.ref), query=[("fieldManager", FIELD_MANAGER)], body=body,
                               content_type="application/json")
        if status == 409:
            # Created meanwhile: fine when it holds exactly what we meant to write (a rerun's backup).
            existing = api.get(step.ref)
            if existing is not None and existing.get("data") == (body or {}).get("data"):
                return
        if not 200 <= status <= 299:
            raise WriteError(_status_message("POST", collection_path(step.ref), status, doc), status)
    elif step.method is Method.REPLACE:
        api.ok("PUT", object_path(step.ref), query=[("fieldManager", FIELD_MANAGER)], body=body,
               content_type="application/json")
    elif step.method is Method.MERGE:
        api.ok("PATCH", object_path(step.ref), query=[("fieldManager", FIELD_MANAGER)], body=body,
               content_type="application/merge-patch+json")
    elif step.method is Method.DELETE:
        status, doc = api.call("DELETE", object_path(step.ref))
        if status != 404 and not 200 <= status <= 299:
            raise WriteError(_status_message("DELETE", object_path(step.ref), status, doc), status)


def _replace_scheduler(api: _Api, step: Step, replan: Replan | None, result: ApplyResult) -> Step:
    """PUT the scheduler ConfigMap; on 409 read it again and plan again, a few times at most."""
    for attempt in range(MAX_CONFLICT_RETRIES + 1):
        try:
            _write(api, step)
            return step
        except WriteError as exc:
            if exc.status != 409 or replan is None or attempt == MAX_CONFLICT_RETRIES:
                if exc.status == 409:
                    raise WriteError(f"{exc} (still conflicting after {attempt} re-reads: someone else keeps "
                                     "changing it; rerun later)", 409) from None
                raise
            current = api.get(step.ref)
            if current is None:
                raise WriteError(f"{step.ref} disappeared while vgpuctl was changing it") from None
            step = replan(current)
            if not step.writes:
                result.notes.append(f"{step.ref}: after re-reading it (changed concurrently) nothing is left to do")
                return step
    return step


def _wait_ready(api: _Api, step: Step, limit: float, progress: Progress | None,
                clock: Callable[[], float] = time.monotonic, sleep: Callable[[float], None] = time.sleep) -> str:
    """Poll the Deployment until it is rolled out and available; a `WriteError` after `limit` seconds."""
    start = clock()
    interval = 0.1  # the first checks come quickly (a rerun finds it ready), then every 2 s
    said, said_at = "", start
    while True:
        try:
            deployment = api.get(step.ref)
        except WriteError as exc:  # a hiccup of the API server is no verdict on the pods: poll on
            if (exc.status is not None and exc.status < 500) or clock() - start >= limit:
                raise
            deployment = {}
        if deployment is None:
            raise WriteError(f"{step.ref} does not exist (deleted meanwhile?)")
        state = rollout(deployment)
        elapsed = clock() - start
        if state.ready:
            if progress:
                progress(f"{step.ref} is ready: {state.message} ({elapsed:.0f}s)")
            return state.message
        if state.failed:
            raise WriteError(f"{step.ref} is not ready: {state.message}")
        if elapsed >= limit:
            why = conditions_text(deployment)
            raise WriteError(f"{step.ref} not ready after {limit:g}s: {state.message}" + (f"; {why}" if why else "")
                             + f" (kubectl -n {step.ref.namespace} describe deployment {step.ref.name})")
        if progress and (state.message != said or clock() - said_at >= PROGRESS_EVERY):
            progress(f"waiting for {step.ref}: {state.message} ({elapsed:.0f}s of at most {limit:g}s)")
            said, said_at = state.message, clock()
        sleep(max(0.0, min(interval, limit - elapsed)))
        interval = min(interval * 2, MAX_POLL_INTERVAL)


def apply_plan(api_client: ApiClient, plan: Plan, *, replan_scheduler: Replan | None = None,
               timeout: Timeout = (5, 30), wait: float = DEFAULT_WAIT, progress: Progress | None = None) -> ApplyResult:
    """Do the plan's writes and waits in order; stop at the first failure (see `ApplyResult`)."""
    api = _Api(api_client, timeout)
    api.requests = 1  # the cluster was reached when the state was read: a failure now is a failed write
    result = ApplyResult()
    writes = list(plan.todo)
    for index, step in enumerate(writes):
        try:
            if step.ref == SCHEDULER_CM and step.method is Method.REPLACE:
                step = _replace_scheduler(api, step, replan_scheduler, result)
            elif step.action is Action.WAIT:
                _wait_ready(api, step, wait, progress)
            else:
                if progress:
                    progress(f"{step.action.value} {step.ref}")
                _write(api, step)
        except WriteError as exc:
            result.failed = step
            result.error = str(exc)
            result.not_applied = writes[index + 1:]
            return result
        result.applied.append(step)
    return result
