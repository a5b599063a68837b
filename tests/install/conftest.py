"""A stateful Kubernetes API server on 127.0.0.1 for read-modify-write flows, over pytest-httpserver.

It keeps objects by (group/version, resource, namespace, name) and answers the way kube-apiserver does
for what install needs: GET (object and paginated-free lists), POST (409 AlreadyExists), PUT with
optimistic concurrency (409 Conflict on a stale `metadata.resourceVersion`), DELETE, PATCH as JSON
merge patch and as server-side apply (`application/apply-patch+yaml`, `fieldManager` required, create
when absent, deep merge otherwise), and `dryRun=All` (answer without storing). Every write bumps a
global resourceVersion. Tests inject faults with `fail_write(n, status)` (the n-th write answers
`status`) and `before_write(hook)` (e.g. a concurrent edit just before a PUT lands).

Deployments behave like the controller manager's: `metadata.generation` counts spec changes, and the
status (kept across writes, as the API server ignores it on the main resource) catches up with the
spec only when the simulated rollout completes — after `ready_after` GETs of the object since its last
spec change (`None`: never, a webhook whose pods cannot start). `mark_ready` completes it at once.
`events` logs every 2xx write and every rollout completion in order (`("READY", path)`), so a test can
prove what was written only after a Deployment became ready. Deleting a Namespace deletes what is in it.
"""

from __future__ import annotations

import copy
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import yaml
from kubernetes.client import ApiClient, Configuration
from pytest_httpserver import HTTPServer
from werkzeug import Request, Response

from tests.kube.conftest import TOKEN, write_kubeconfig
from vgpuctl.kube.kubeconfig import tune_configuration

NAMESPACED = {"configmaps", "serviceaccounts", "pods", "daemonsets", "deployments", "secrets", "services",
              "poddisruptionbudgets", "networkpolicies", "statefulsets", "resourcequotas"}
_CORE = re.compile(r"^/api/v1/(?:namespaces/(?P<ns>[^/]+)/)?(?P<res>[a-z]+)(?:/(?P<name>[^/]+))?$")
_GROUP = re.compile(r"^/apis/(?P<gv>[^/]+/[^/]+)/(?:namespaces/(?P<ns>[^/]+)/)?(?P<res>[a-z]+)(?:/(?P<name>[^/]+))?$")
KINDS = {"configmaps": "ConfigMap", "serviceaccounts": "ServiceAccount", "pods": "Pod", "nodes": "Node",
         "daemonsets": "DaemonSet", "deployments": "Deployment", "clusterroles": "ClusterRole",
         "clusterrolebindings": "ClusterRoleBinding", "namespaces": "Namespace", "secrets": "Secret",
         "services": "Service", "poddisruptionbudgets": "PodDisruptionBudget", "networkpolicies": "NetworkPolicy",
         "statefulsets": "StatefulSet", "mutatingwebhookconfigurations": "MutatingWebhookConfiguration",
         "validatingwebhookconfigurations": "ValidatingWebhookConfiguration", "runtimeclasses": "RuntimeClass",
         "resourcequotas": "ResourceQuota"}

Key = tuple[str, str, str | None, str]
Hook = Callable[["StatefulCluster", Request], None]


def _status(code: int, reason: str, message: str) -> Response:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message, "reason": reason,
            "code": code}
    return Response(orjson.dumps(body), status=code, content_type="application/json")


def _json(doc: Any, status: int = 200) -> Response:
    return Response(orjson.dumps(doc), status=status, content_type="application/json")


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def apply_merge(target: Any, patch: Any) -> Any:
    """Server-side apply, simplified: maps merge, everything else (lists included) is replaced."""
    if isinstance(target, dict) and isinstance(patch, dict):
        result = dict(target)
        for key, value in patch.items():
            result[key] = apply_merge(result.get(key), value)
        return result
    return copy.deepcopy(patch)


class StatefulCluster:
    def __init__(self, server: HTTPServer) -> None:
        self.server = server
        self.objects: dict[Key, dict[str, Any]] = {}
        self.rv = 100
        self.lock = threading.Lock()
        self.writes: list[tuple[str, str]] = []  # (method, path) of every write that was answered 2xx
        self.attempts = 0  # writes received, failed ones included
        self.faults: dict[int, int] = {}
        self.fault_messages: dict[int, str] = {}
        self.hooks: list[Hook] = []
        self.version = {"major": "1", "minor": "30", "gitVersion": "v1.30.2"}
        self.events: list[tuple[str, str]] = []  # 2xx writes and ("READY", path) rollout completions, in order
        self.ready_after: int | None = 1  # GETs of a Deployment until its rollout completes; None: never
        self.polls: dict[Key, int] = {}
        self.poll_faults: list[int] = []  # statuses for the next GETs of a Deployment this run has written
        server.expect_request(re.compile(".*")).respond_with_handler(self._dispatch)

    # --- state ------------------------------------------------------------------------------------
    @property
    def url(self) -> str:
        return self.server.url_for("").rstrip("/")

    def _next_rv(self) -> str:
        self.rv += 1
        return str(self.rv)

    @staticmethod
    def key_of(obj: dict[str, Any]) -> Key:
        kind = obj["kind"]
        resource = next(r for r, k in KINDS.items() if k == kind)
        meta = obj["metadata"]
        return obj["apiVersion"], resource, meta.get("namespace") if resource in NAMESPACED else None, meta["name"]

    def put(self, obj: dict[str, Any]) -> dict[str, Any]:
        stored = copy.deepcopy(obj)
        key = self.key_of(stored)
        if stored["kind"] == "Deployment":
            previous = self.objects.get(key)
            generation = int((previous or {}).get("metadata", {}).get("generation", 0))
            if previous is None or previous.get("spec") != stored.get("spec"):
                generation += 1
                self.polls.pop(key, None)
            stored["metadata"]["generation"] = generation
            if previous is not None and "status" in previous:
                stored["status"] = previous["status"]  # status is the controller's, never the writer's
            elif previous is None:
                stored.pop("status", None)
        stored["metadata"]["resourceVersion"] = self._next_rv()
        stored["metadata"].setdefault("uid", f"uid-{self.rv}")
        self.objects[key] = stored
        return stored

    def mark_ready(self, namespace: str, name: str) -> None:
        """Complete the Deployment's rollout: every replica of the current generation updated and available."""
        deployment = self.objects[("apps/v1", "deployments", namespace, name)]
        replicas = deployment.get("spec", {}).get("replicas", 1)
        deployment["status"] = {
            "observedGeneration": deployment["metadata"]["generation"], "replicas": replicas,
            "updatedReplicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
            "conditions": [{"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"},
                           {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable"}]}
        deployment["metadata"]["resourceVersion"] = self._next_rv()
        self.events.append(("READY", f"/apis/apps/v1/namespaces/{namespace}/deployments/{name}"))

    def mark_stuck(self, namespace: str, name: str) -> None:
        """A rollout whose pods never become available (image pull errors, crash loops)."""
        deployment = self.objects[("apps/v1", "deployments", namespace, name)]
        replicas = deployment.get("spec", {}).get("replicas", 1)
        deployment["status"] = {
            "observedGeneration": deployment["metadata"]["generation"], "replicas": replicas,
            "updatedReplicas": replicas, "unavailableReplicas": replicas,
            "conditions": [{"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
                            "message": "Deployment does not have minimum availability."}]}

    def _observe(self, key: Key) -> None:
        """A GET of a Deployment: the simulated controller gets one step further with its rollout."""
        deployment = self.objects[key]
        status = deployment.get("status") or {}
        if status.get("observedGeneration") == deployment["metadata"]["generation"] and \
                status.get("availableReplicas") == deployment.get("spec", {}).get("replicas", 1):
            return
        self.polls[key] = self.polls.get(key, 0) + 1
        if self.ready_after is not None and self.polls[key] >= self.ready_after:
            self.mark_ready(key[2] or "", key[3])
        else:
            self.mark_stuck(key[2] or "", key[3])

    def get(self, api_version: str, kind: str, namespace: str | None, name: str) -> dict[str, Any] | None:
        resource = next(r for r, k in KINDS.items() if k == kind)
        return self.objects.get((api_version, resource, namespace, name))

    def of_kind(self, kind: str) -> list[dict[str, Any]]:
        return [o for o in self.objects.values() if o["kind"] == kind]

    def snapshot(self) -> dict[Key, Any]:
        """Every object without resourceVersion/uid (for "nothing changed" comparisons)."""
        out = {}
        for key, obj in self.objects.items():
            clean = copy.deepcopy(obj)
            clean["metadata"].pop("resourceVersion", None)
            clean["metadata"].pop("uid", None)
            out[key] = clean
        return out

    # --- faults -----------------------------------------------------------------------------------
    def fail_write(self, n: int, status: int = 500, message: str | None = None) -> None:
        """The n-th write request from now (1-based) answers `status` (with `message`) and changes nothing."""
        self.faults[self.attempts + n] = status
        if message is not None:
            self.fault_messages[self.attempts + n] = message

    def fail_polls(self, *statuses: int) -> None:
        """The next GETs of a Deployment after it was written (the install's rollout polls) answer these
        statuses, one each, and change nothing; reads before the write are not affected."""
        self.poll_faults = list(statuses)

    def before_write(self, hook: Hook) -> None:
        self.hooks.append(hook)

    # --- HTTP -------------------------------------------------------------------------------------
    def _dispatch(self, request: Request) -> Response:
        with self.lock:
            return self._handle(request)

    def _handle(self, request: Request) -> Response:
        if request.path in ("/version", "/version/"):
            return _json(self.version)
        match = _CORE.match(request.path)
        gv = "v1"
        if match is None:
            match = _GROUP.match(request.path)
            if match is None:
                return _status(404, "NotFound", f"the server could not find the requested resource ({request.path})")
            gv = match.group("gv")
        resource, namespace, name = match.group("res"), match.group("ns"), match.group("name")
        if resource not in KINDS:
            return _status(404, "NotFound", f"the server could not find the requested resource ({request.path})")
        if request.method == "GET":
            if name is None:
                return self._list(gv, resource, namespace)
            obj = self.objects.get((gv, resource, namespace, name))
            if obj is None:
                return _status(404, "NotFound", f'{resource} "{name}" not found')
            if resource == "deployments":
                if self.poll_faults and any(path == request.path for _, path in self.events):
                    code = self.poll_faults.pop(0)
                    return _status(code, "InternalError" if code >= 500 else "Forbidden",
                                   f"injected failure of a poll of {name}")
                self._observe((gv, resource, namespace, name))
            return _json(self.objects[(gv, resource, namespace, name)])
        self.attempts += 1
        for hook in list(self.hooks):
            hook(self, request)
        if self.attempts in self.faults:
            code = self.faults.pop(self.attempts)
            message = self.fault_messages.pop(self.attempts, f"injected failure of write {self.attempts}")
            return _status(code, "InternalError", message)
        response = self._write(request, gv, resource, namespace, name)
        if 200 <= response.status_code <= 299 and request.args.get("dryRun") != "All":
            self.writes.append((request.method, request.path))
            self.events.append((request.method, request.path))
        return response

    def _list(self, gv: str, resource: str, namespace: str | None) -> Response:
        items = [copy.deepcopy(o) for (g, r, ns, _), o in sorted(self.objects.items(), key=lambda kv: str(kv[0]))
                 if g == gv and r == resource and (namespace is None or ns == namespace)]
        for item in items:  # list items come without apiVersion/kind, as kube-apiserver sends them
            item.pop("apiVersion", None)
            item.pop("kind", None)
        return _json({"kind": KINDS[resource] + "List", "apiVersion": gv, "metadata": {"resourceVersion": str(self.rv)},
                      "items": items})

    def _write(self, request: Request, gv: str, resource: str, namespace: str | None, name: str | None) -> Response:
        dry = request.args.get("dryRun") == "All"
        key = (gv, resource, namespace, name or "")
        current = self.objects.get(key)
        if request.method == "DELETE":
            if current is None:
                return _status(404, "NotFound", f'{resource} "{name}" not found')
            if not dry:
                del self.objects[key]
                if resource == "namespaces":  # the namespace controller empties it
                    for inner in [k for k in self.objects if k[1] in NAMESPACED and k[2] == name]:
                        del self.objects[inner]
            return _json({"kind": "Status", "apiVersion": "v1", "status": "Success"})
        body = request.get_data()
        content_type = request.headers.get("Content-Type", "")
        if request.method == "POST":
            obj = orjson.loads(body)
            obj_name = obj["metadata"]["name"]
            key = (gv, resource, namespace, obj_name)
            if key in self.objects:
                return _status(409, "AlreadyExists", f'{resource} "{obj_name}" already exists')
            if namespace:
                obj["metadata"]["namespace"] = namespace
            return _json(obj if dry else self.put(obj), 201)
        if request.method == "PUT":
            obj = orjson.loads(body)
            if current is None:
                return _status(404, "NotFound", f'{resource} "{name}" not found')
            sent = obj["metadata"].get("resourceVersion")
            if sent and sent != current["metadata"]["resourceVersion"]:
                return _status(409, "Conflict", f'Operation cannot be fulfilled on {resource} "{name}": the object '
                                                "has been modified; please apply your changes to the latest version "
                                                "and try again")
            return _json(obj if dry else self.put(obj))
        if request.method == "PATCH":
            if content_type.startswith("application/apply-patch+yaml"):
                if not request.args.get("fieldManager"):
                    return _status(422, "Invalid", "fieldManager is required for apply requests")
                patch = yaml.safe_load(body)
                if current is None:
                    if namespace:
                        patch["metadata"]["namespace"] = namespace
                    return _json(patch if dry else self.put(patch), 201)
                merged = apply_merge(current, patch)
            elif content_type.startswith("application/merge-patch+json"):
                if current is None:
                    return _status(404, "NotFound", f'{resource} "{name}" not found')
                merged = merge_patch(current, orjson.loads(body))
            else:
                return _status(415, "UnsupportedMediaType", f"the body of the request was in an unknown format: "
                                                            f"{content_type}")
            return _json(merged if dry else self.put(merged))
        return _status(405, "MethodNotAllowed", request.method)


SCHEDULER_CONF = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
  - name: conformance
- plugins:
  - name: overcommit
  - name: drf
    enablePreemptable: false
  - name: predicates
  - name: proportion
  - name: nodeorder
  - name: binpack
"""


def seed_volcano(cluster: StatefulCluster, conf: str = SCHEDULER_CONF, *, version: str = "v1.15.1",
                 nodes: dict[str, dict[str, str]] | None = None) -> None:
    """A cluster with Volcano installed (scheduler ConfigMap and Deployment) and some nodes."""
    image = f"docker.io/volcanosh/vc-scheduler:{version}"
    cluster.put({"apiVersion": "v1", "kind": "ConfigMap",
                 "metadata": {"name": "volcano-scheduler-configmap", "namespace": "volcano-system"},
                 "data": {"volcano-scheduler.conf": conf}})
    cluster.put({"apiVersion": "apps/v1", "kind": "Deployment",
                 "metadata": {"name": "volcano-scheduler", "namespace": "volcano-system"},
                 "spec": {"selector": {"matchLabels": {"app": "volcano-scheduler"}},
                          "template": {"metadata": {"labels": {"app": "volcano-scheduler"}},
                                       "spec": {"containers": [{"name": "volcano-scheduler", "image": image}]}}}})
    for name, labels in (nodes if nodes is not None else {"gpu-0": {"gpu": "on"}, "npu-0": {"npu": "yes"},
                                                          "cpu-0": {}}).items():
        cluster.put({"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
                     "status": {"nodeInfo": {"kubeletVersion": "v1.30.2"}}})


@pytest.fixture
def kube(httpserver: HTTPServer) -> StatefulCluster:
    cluster = StatefulCluster(httpserver)
    seed_volcano(cluster)
    return cluster


@pytest.fixture
def api(kube: StatefulCluster) -> Iterator[ApiClient]:
    configuration = Configuration(host=kube.url)
    configuration.api_key["BearerToken"] = TOKEN
    configuration.api_key_prefix["BearerToken"] = "Bearer"
    with ApiClient(tune_configuration(configuration)) as client:
        yield client


@pytest.fixture
def kubeconfig(kube: StatefulCluster, tmp_path: Path) -> str:
    return write_kubeconfig(tmp_path / "kubeconfig", {"fake": kube.url}, current="fake")
