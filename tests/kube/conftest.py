"""A scripted Kubernetes API server on 127.0.0.1 (pytest-httpserver) for the real `kubernetes` client.

`FakeCluster` serves `/version` and paginated lists the way kube-apiserver does (`limit`, opaque
`continue` tokens, `remainingItemCount`), items without apiVersion/kind as real list answers have them,
and lets a test replace any endpoint with a fault. The server is threaded, so a handler that stalls
(the timeout test) does not hold up the requests after it.
"""

from __future__ import annotations

import re
import socket
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

from vgpuctl.kube.kubeconfig import tune_configuration

TOKEN = "t0ken-for-tests"
LIST_PATHS = {
    "nodes": ("/api/v1/nodes", "v1", "NodeList"),
    "pods": ("/api/v1/pods", "v1", "PodList"),
    "daemonsets": ("/apis/apps/v1/daemonsets", "apps/v1", "DaemonSetList"),
    "deployments": ("/apis/apps/v1/deployments", "apps/v1", "DeploymentList"),
    "runtimeclasses": ("/apis/node.k8s.io/v1/runtimeclasses", "node.k8s.io/v1", "RuntimeClassList"),
}


def node(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "managedFields": [{"manager": "kubelet"}]},
            "status": {"allocatable": {"volcano.sh/vgpu-number": "10"}}}


def pod(namespace: str, name: str, node_name: str = "gpu-0") -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace}, "spec": {"nodeName": node_name, "containers": []}}


def configmap(namespace: str, name: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "namespace": namespace}, "data": {"k": "v"}}


def status_body(code: int, reason: str, message: str) -> bytes:
    return orjson.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message,
                         "reason": reason, "code": code})


class FakeCluster:
    def __init__(self, server: HTTPServer) -> None:
        self.server = server
        self.version: dict[str, Any] = {"major": "1", "minor": "30", "gitVersion": "v1.30.2"}
        self.routes: dict[str, Callable[[Request], Response]] = {}
        # recorded here, not from the server's log: a handler a previous test stalled may finish late
        self.seen: list[Request] = []
        # one catch-all handler routing by path: unknown paths get the API server's own 404 Status
        server.expect_request(re.compile(".*")).respond_with_handler(self._dispatch)

    def _dispatch(self, request: Request) -> Response:
        self.seen.append(request)
        handler = self.routes.get(request.path)
        if handler is None:
            body = status_body(404, "NotFound", f"the server could not find the requested resource ({request.path})")
            return Response(body, status=404, content_type="application/json")
        return handler(request)

    @property
    def url(self) -> str:
        return self.server.url_for("").rstrip("/")

    def serve(self, *, nodes: int = 3, pods: int = 4, configmaps: dict[str, list[str]] | None = None,
              daemonsets: int = 1, deployments: int = 1, runtimeclasses: tuple[str, ...] = ()) -> None:
        self.routes["/version"] = lambda _request: Response(orjson.dumps(self.version),
                                                            content_type="application/json")
        self.serve_list("/api/v1/nodes", "v1", "NodeList", [node(f"gpu-{i}") for i in range(nodes)])
        self.serve_list("/api/v1/pods", "v1", "PodList", [pod("ml", f"p-{i}", f"gpu-{i % 7}") for i in range(pods)])
        self.serve_list("/apis/apps/v1/daemonsets", "apps/v1", "DaemonSetList",
                        [{"metadata": {"name": f"ds-{i}", "namespace": "kube-system"}} for i in range(daemonsets)])
        self.serve_list("/apis/apps/v1/deployments", "apps/v1", "DeploymentList",
                        [{"metadata": {"name": f"d-{i}", "namespace": "ml"}} for i in range(deployments)])
        self.serve_list("/apis/node.k8s.io/v1/runtimeclasses", "node.k8s.io/v1", "RuntimeClassList",
                        [{"metadata": {"name": name}, "handler": name} for name in runtimeclasses])
        wanted = configmaps if configmaps is not None else {
            "volcano-system": ["volcano-scheduler-configmap"], "kube-system": ["volcano-vgpu-device-config"]}
        for namespace in ("volcano-system", "kube-system"):
            items = [configmap(namespace, name) for name in wanted.get(namespace, [])]
            self.serve_list(f"/api/v1/namespaces/{namespace}/configmaps", "v1", "ConfigMapList", items)

    def serve_list(self, path: str, api_version: str, kind: str, items: list[dict[str, Any]]) -> None:
        """Pages of `limit` items; the continue token is opaque to the client (`page-<offset>-rv42`)."""

        def handle(request: Request) -> Response:
            limit = int(request.args.get("limit") or 0) or len(items) or 1
            token = request.args.get("continue", "")
            start = int(token.split("-")[1]) if token else 0
            end = start + limit
            metadata: dict[str, Any] = {"resourceVersion": "42"}
            if end < len(items):
                metadata |= {"continue": f"page-{end}-rv42", "remainingItemCount": len(items) - end}
            body = {"kind": kind, "apiVersion": api_version, "metadata": metadata, "items": items[start:end]}
            return Response(orjson.dumps(body), content_type="application/json")

        self.route(path, handle)

    def route(self, path: str, handler: Callable[[Request], Response]) -> None:
        """Make `path` answer with `handler`, replacing what `serve` registered."""
        self.routes[path] = handler

    def fail_status(self, path: str, code: int, reason: str, message: str) -> None:
        body = status_body(code, reason, message)
        self.route(path, lambda _request: Response(body, status=code, content_type="application/json"))

    def requests(self, path: str | None = None) -> list[Request]:
        return [request for request in self.seen if path is None or request.path == path]


@pytest.fixture
def cluster(httpserver: HTTPServer) -> FakeCluster:
    return FakeCluster(httpserver)


def client_for(host: str) -> ApiClient:
    configuration = Configuration(host=host)
    configuration.api_key["BearerToken"] = TOKEN
    configuration.api_key_prefix["BearerToken"] = "Bearer"
    return ApiClient(tune_configuration(configuration))


@pytest.fixture
def api(cluster: FakeCluster) -> Iterator[ApiClient]:
    with client_for(cluster.url) as client:
        yield client


@pytest.fixture
def closed_port() -> int:
    """A port nothing listens on: bound, then released (connection refused, not a timeout)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def release() -> Iterator[threading.Event]:
    """Set at teardown, so a stalled handler ends with the test instead of lingering."""
    event = threading.Event()
    yield event
    event.set()


def write_kubeconfig(path: Path, servers: dict[str, str], current: str | None = None) -> str:
    """A kubeconfig with one context per server (named after it), all using a bearer token."""
    doc: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": name, "cluster": {"server": url}} for name, url in servers.items()],
        "users": [{"name": "tester", "user": {"token": TOKEN}}],
        "contexts": [{"name": name, "context": {"cluster": name, "user": "tester"}} for name in servers],
    }
    if current:
        doc["current-context"] = current
    path.write_text(yaml.safe_dump(doc))
    return str(path)
