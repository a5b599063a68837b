"""Apply an install/uninstall `Plan` to a live cluster, one write at a time, stopping at the first failure.

Objects vgpuctl owns go in by server-side apply with field manager `vgpuctl`; ConfigMaps an admin may
edit are created only when absent; the scheduler and device ConfigMaps are replaced with the
`resourceVersion` that was read, so a concurrent edit is never overwritten: on 409 the scheduler
ConfigMap is read again, planned again on the new content, and written again (a few times at most).
The first write that fails ends the run with a report of what was and was not applied; every step is
idempotent, so rerunning install finishes the job.

Like the reader, requests go through the kubernetes client's `ApiClient` (auth, TLS, proxies) but
bodies stay raw JSON: no model (de)serialisation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import orjson
import urllib3
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from vgpuctl.core import spec
from vgpuctl.core.doctor.components import image_parts
from vgpuctl.core.install import ClusterState, Method, Mode, Plan, Ref, Step, refs_to_read
from vgpuctl.core.install.plan import SCHEDULER_CM
from vgpuctl.kube.errors import ClusterUnreachable

FIELD_MANAGER = "vgpuctl"
MAX_CONFLICT_RETRIES = 5
Timeout = float | tuple[float, float]

_PLURALS = {"ConfigMap": "configmaps", "ServiceAccount": "serviceaccounts", "Node": "nodes", "DaemonSet": "daemonsets",
            "Deployment": "deployments", "ClusterRole": "clusterroles", "ClusterRoleBinding": "clusterrolebindings"}


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


def _one_line(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


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
        try:
            response = self.api.call_api(*request, _request_timeout=self.timeout)
            raw: bytes = response.read()  # type: ignore[no-untyped-call]
        except (urllib3.exceptions.HTTPError, OSError, ApiException) as exc:
            message = f"{method} {path}: no answer from {self.host}: {_one_line(str(getattr(exc, 'reason', exc)))}"
            if first:
                raise ClusterUnreachable(f"cannot reach the Kubernetes API: {message}") from None
            raise WriteError(message) from None
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
    return _one_line(f"{method} {path}: HTTP {status}" + (f": {detail}" if detail else ""))


def _scheduler_deployment(deployments: Iterable[Mapping[str, Any]]) -> Mapping[str, Any] | None:
    for deployment in deployments:
        containers = (((deployment.get("spec") or {}).get("template") or {}).get("spec") or {}).get("containers")
        if any(image_parts(str(c.get("image", "")))[0] == "vc-scheduler" for c in containers or []):
            return {"apiVersion": "apps/v1", "kind": "Deployment", **deployment}
    return None


def read_state(api_client: ApiClient, modes: Iterable[Mode] = (), *, timeout: Timeout = (5, 30)) -> ClusterState:
    """Every object install/uninstall may touch, the nodes, and the scheduler Deployment."""
    api = _Api(api_client, timeout)
    try:
        scheduler_cm = api.get(SCHEDULER_CM)
        objects: dict[Ref, Mapping[str, Any]] = {SCHEDULER_CM: scheduler_cm} if scheduler_cm else {}
        for ref in refs_to_read(scheduler_cm, tuple(modes)):
            if ref not in objects and (obj := api.get(ref)) is not None:
                objects[ref] = obj
        nodes = api.list("/api/v1/nodes")
        deployment = _scheduler_deployment(api.list(f"/apis/apps/v1/namespaces/{spec.SCHEDULER_NAMESPACE}/deployments"))
    except WriteError as exc:
        raise ClusterUnreachable(f"cannot read what install needs: {exc}") from None
    return ClusterState(objects, nodes, deployment)


@dataclass
class ApplyResult:
    applied: list[Step] = field(default_factory=list)
    failed: Step | None = None
    error: str = ""
    not_applied: list[Step] = field(default_factory=list)
    conflicts: int = 0
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
            result.conflicts += 1
            current = api.get(step.ref)
            if current is None:
                raise WriteError(f"{step.ref} disappeared while vgpuctl was changing it") from None
            step = replan(current)
            if not step.writes:
                result.notes.append(f"{step.ref}: after re-reading it (changed concurrently) nothing is left to do")
                return step
    return step


def apply_plan(api_client: ApiClient, plan: Plan, *, replan_scheduler: Replan | None = None,
               timeout: Timeout = (5, 30)) -> ApplyResult:
    """Write the plan's steps in order; stop at the first failure (see `ApplyResult`)."""
    api = _Api(api_client, timeout)
    api.requests = 1  # the cluster was reached when the state was read: a failure now is a failed write
    result = ApplyResult()
    writes = list(plan.writes)
    for index, step in enumerate(writes):
        try:
            if step.ref == SCHEDULER_CM and step.method is Method.REPLACE:
                step = _replace_scheduler(api, step, replan_scheduler, result)
            else:
                _write(api, step)
        except WriteError as exc:
            result.failed = step
            result.error = str(exc)
            result.not_applied = writes[index + 1:]
            return result
        result.applied.append(step)
    return result
