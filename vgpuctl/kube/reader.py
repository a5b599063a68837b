"""Read a live cluster into `SnapshotData`: paginated lists of raw JSON, failures as VGK001 findings.

Two rules shape this module. Every read is a paginated list (`limit` + `continue`), so a 5,000-node
cluster costs a handful of requests per resource, never one per node (docs/design.md#speed). And nothing goes
through the client's models: the 37.x models are pydantic and reject partial objects, and parsing 40,000
pods into them is much slower than `orjson` on the raw bytes. The client is still what makes the
requests, so kubeconfig auth (tokens, exec plugins, client certificates, proxies) works unchanged.

A list that fails becomes a VGK001 finding and the read goes on, so the doctor can skip exactly the
checks that needed it. Only when the very first request cannot reach the server, or is refused with
401, is the cluster unusable altogether: that raises `ClusterUnreachable` (exit 3).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

import orjson
import urllib3
from kubernetes.client import ApiClient
from kubernetes.client.exceptions import ApiException

from vgpuctl.core import spec
from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.findings import Finding, Severity
from vgpuctl.core.scheduler_config import SchedulerConfError, deviceshare_args, parse_scheduler_conf
from vgpuctl.kube.errors import ClusterUnreachable, not_kubernetes_api, transport_message
from vgpuctl.snapshotfile import SnapshotData

__all__ = ["WANTED_CONFIGMAPS", "LiveRead", "read_cluster"]

Progress = Callable[[str, int], None]
Timeout = float | tuple[float, float]


@dataclass(frozen=True)
class LiveRead:
    data: SnapshotData
    problems: list[Finding]


@dataclass(frozen=True)
class _Resource:
    plural: str
    group_path: str  # "/api/v1" or "/apis/apps/v1"
    api_version: str
    kind: str


NODES = _Resource("nodes", "/api/v1", "v1", "Node")
PODS = _Resource("pods", "/api/v1", "v1", "Pod")
DAEMONSETS = _Resource("daemonsets", "/apis/apps/v1", "apps/v1", "DaemonSet")
DEPLOYMENTS = _Resource("deployments", "/apis/apps/v1", "apps/v1", "Deployment")
CONFIGMAPS = _Resource("configmaps", "/api/v1", "v1", "ConfigMap")
#: Cluster-scoped and few (the doctor's VGK008 looks for `ascend`). An API server without node.k8s.io/v1
#: (Kubernetes < 1.20) answers 404: then they are simply not collected, and the checks needing them skip.
RUNTIMECLASSES = _Resource("runtimeclasses", "/apis/node.k8s.io/v1", "node.k8s.io/v1", "RuntimeClass")

#: The DRA group's kinds (issue: one GPU, one owner): ResourceSlices and DeviceClasses are cluster-scoped,
#: ResourceClaims and their templates namespaced. Served as resource.k8s.io/v1 from Kubernetes 1.34,
#: v1beta2 (1.33) and v1beta1 (1.32) before: the version is the first of `DRA_VERSIONS` the server lists
#: (`dra_version`); none (a server without DRA) means not collected, and the checks needing them skip.
DRA_GROUP = "resource.k8s.io"
DRA_VERSIONS = ("v1", "v1beta2", "v1beta1")
DRA_KINDS = (("resourceslices", "ResourceSlice", False), ("deviceclasses", "DeviceClass", False),
             ("resourceclaims", "ResourceClaim", True), ("resourceclaimtemplates", "ResourceClaimTemplate", True))


def dra_resources(version: str) -> list[tuple[_Resource, bool]]:
    """(the resource, namespaced) of each DRA kind at `version` of resource.k8s.io."""
    path = f"/apis/{DRA_GROUP}/{version}"
    return [(_Resource(plural, path, f"{DRA_GROUP}/{version}", kind), namespaced)
            for plural, kind, namespaced in DRA_KINDS]


def dra_version(client: RawClient) -> str | None:
    """The newest version of resource.k8s.io vgpuctl reads that the server serves; None when it serves the
    group in none of them (or not at all: 404)."""
    try:
        group = client.get(f"/apis/{DRA_GROUP}")
    except ReadError as exc:
        if exc.status == 404:
            return None
        raise
    served = {v.get("version") for v in group.get("versions") or [] if isinstance(v, dict)}
    return next((v for v in DRA_VERSIONS if v in served), None)


#: Namespace → ConfigMap names (a trailing `*` is a prefix) the model reads: the scheduler config,
#: the device configs of the vGPU and Ascend plugins, per-node configs, and MindCluster's device info.
WANTED_CONFIGMAPS: dict[str, tuple[str, ...]] = {
    "volcano-system": ("volcano-scheduler-configmap",),
    "kube-system": (
        "volcano-vgpu-device-config",
        "volcano-vgpu-node-config",
        "hami-scheduler-device",
        "hami-device-node-config",
        "mindx-dl-deviceinfo-*",
    ),
}


class ReadError(Exception):
    def __init__(self, message: str, *, status: int | None = None, transport: bool = False,
                 connect: bool = False) -> None:
        super().__init__(message)
        self.status = status
        self.transport = transport  # no HTTP answer at all
        self.connect = connect  # not even a connection: the server is gone, later requests would fail too


def _one_line(text: str, limit: int = 240) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def status_message(status: int, reason: str, body: bytes) -> str:
    """`HTTP 403 Forbidden: <the API server's Status message>` (the body is a `kind: Status` when it can)."""
    detail = ""
    try:
        doc = orjson.loads(body)
        if isinstance(doc, dict) and isinstance(doc.get("message"), str):
            detail = doc["message"]
    except orjson.JSONDecodeError:
        detail = body[:200].decode("utf-8", "replace") if body.strip() else ""
    head = f"HTTP {status} {reason}".rstrip()
    return _one_line(f"{head}: {detail}") if detail.strip() else head


# Bounds on what one answer may cost: a list page is asked for again with fewer items beyond
# MAX_PAGE_BYTES; any other answer beyond MAX_RESPONSE_BYTES is an error.
MAX_PAGE_BYTES = 32 * 1024 * 1024
MAX_RESPONSE_BYTES = 64 * 1024 * 1024


class PageTooLargeError(ReadError):
    """An answer longer than the bound it was read with (`RawClient.get`)."""


class RawClient:
    """GET raw JSON through the kubernetes client's request machinery (auth, TLS, proxy, pool)."""

    def __init__(self, api_client: ApiClient, timeout: Timeout) -> None:
        self.api = api_client
        self.timeout = timeout
        self.host = api_client.configuration.host

    def get(self, path: str, query: list[tuple[str, Any]] | None = None,
            max_bytes: int = MAX_RESPONSE_BYTES) -> dict[str, Any]:
        """One JSON object; `PageTooLargeError` when the body is longer than `max_bytes` (read no further)."""
        request = self.api.param_serialize(
            method="GET", resource_path=path, query_params=query or [],
            header_params={"Accept": "application/json"}, auth_settings=["BearerToken"])
        started = time.monotonic()
        try:
            response = self.api.call_api(*request, _request_timeout=self.timeout)
            body = _read_capped(response.response, max_bytes)
        except (urllib3.exceptions.HTTPError, OSError) as exc:
            gone = isinstance(getattr(exc, "reason", None) or exc, urllib3.exceptions.ConnectTimeoutError)
            raise ReadError(transport_message(exc, self.host, self.timeout, time.monotonic() - started),
                            transport=True, connect=gone) from None
        except ApiException as exc:  # the client reports TLS failures this way, with status 0
            raise ReadError(transport_message(exc, self.host, self.timeout), transport=True) from None
        if body is None:
            raise PageTooLargeError(f"the answer from {self.host}{path} is over {max_bytes >> 20} MiB")
        if not 200 <= response.status <= 299:
            raise ReadError(status_message(response.status, response.reason or "", body), status=response.status)
        try:
            doc = orjson.loads(body)
        except orjson.JSONDecodeError as exc:
            raise ReadError(f"invalid JSON in the answer from {self.host}{path}: {exc}") from None
        if not isinstance(doc, dict):
            raise ReadError(f"unexpected answer from {self.host}{path}: a JSON {type(doc).__name__}")
        return doc

    def pages(self, path: str, query: list[tuple[str, Any]], page_size: int,
              max_bytes: int = MAX_PAGE_BYTES) -> Iterator[dict[str, Any]]:
        """The pages of one list (`limit`/`continue`). A page whose body is over `max_bytes` is asked for
        again with a fifth of the items, down to one: big objects make smaller pages, not bigger memory."""
        token = ""
        limit = page_size
        while True:
            page_query = [*query, ("limit", limit), *((("continue", token),) if token else ())]
            try:
                page = self.get(path, page_query, max_bytes)
            except PageTooLargeError:
                if limit == 1:
                    raise
                limit = max(1, limit // 5)
                continue
            yield page
            next_token = (page.get("metadata") or {}).get("continue") or ""
            if not next_token:
                return
            if next_token == token:
                raise ReadError(f"{self.host}{path} returned the same continue token twice")
            token = next_token

    def list_all(self, resource: _Resource, namespace: str | None, page_size: int,
                 on_page: Callable[[int], None]) -> list[dict[str, Any]]:
        """Every item of one list, page by page. A failure drops the pages already read: half a pod list
        would look like free devices to the doctor, which is worse than a skipped check."""
        where = f"/namespaces/{namespace}" if namespace else ""
        path = f"{resource.group_path}{where}/{resource.plural}"
        items: list[dict[str, Any]] = []
        for page in self.pages(path, [], page_size):
            raw_items = page.get("items")
            if not isinstance(raw_items, list):
                raise ReadError(f"unexpected answer from {self.host}{path}: no items list "
                                  f"(kind {page.get('kind')!r})")
            for item in raw_items:
                if isinstance(item, dict):
                    metadata = item.get("metadata")
                    if isinstance(metadata, dict):
                        metadata.pop("managedFields", None)  # kubectl -o yaml hides them too; they are bulky
                    items.append({"apiVersion": resource.api_version, "kind": resource.kind, **item})
            on_page(len(raw_items))
        return items


def _read_capped(response: Any, max_bytes: int) -> bytes | None:
    """The whole body, or None (and the connection dropped) once it passes `max_bytes`."""
    declared = response.headers.get("Content-Length")
    if declared is not None and declared.isdigit() and int(declared) > max_bytes:
        _drop(response)
        return None
    chunks: list[bytes] = []
    size = 0
    while True:
        chunk = response.read(1 << 20, decode_content=True)
        if not chunk:
            break
        size += len(chunk)
        if size > max_bytes:
            _drop(response)
            return None
        chunks.append(chunk)
    response.release_conn()
    return b"".join(chunks)


def _drop(response: Any) -> None:
    """Close a response whose body is not read to the end: it cannot go back to the pool."""
    with contextlib.suppress(Exception):  # already closed: nothing to do
        response.close()


def _wanted(name: str, patterns: Iterable[str]) -> bool:
    return any(name.startswith(p[:-1]) if p.endswith("*") else name == p for p in patterns)


def _ignore(_: int) -> None:
    pass


def _finding(subject: str, message: str) -> Finding:
    return Finding("VGK001", Severity.ERROR, subject, message, hint_for("VGK001"))


def _growing(plan: list[Any]) -> Iterator[Any]:
    """Iterate a plan that may gain entries while it runs (the device ConfigMap the scheduler names)."""
    index = 0
    while index < len(plan):
        yield plan[index]
        index += 1


def _geometry_configmap(scheduler_cms: list[dict[str, Any]], plan: list[Any]) -> list[Any]:
    """The device ConfigMap `deviceshare.KnownGeometriesCM*` names, when it is not one already planned."""
    cm = next((c for c in scheduler_cms if (c.get("metadata") or {}).get("name") == spec.SCHEDULER_CONFIGMAP), None)
    text = ((cm or {}).get("data") or {}).get(spec.SCHEDULER_CONF_KEY)
    if not isinstance(text, str):
        return []
    try:
        args = deviceshare_args(parse_scheduler_conf(text).plugin(spec.PLUGIN_DEVICESHARE))
    except SchedulerConfError:
        return []
    namespace, name = args.geometries_cm_namespace, args.geometries_cm_name
    for resource, ns, names in plan:
        if resource is CONFIGMAPS and ns == namespace and names is not None and _wanted(name, names):
            return []
    return [(CONFIGMAPS, namespace, (name,))]


def read_cluster(
    api_client: ApiClient,
    *,
    namespaces: Iterable[str] | None = None,
    page_size: int = 500,
    timeout: Timeout = (5, 30),
    progress: Progress | None = None,
) -> LiveRead:
    """Nodes, Pods, DaemonSets and Deployments (all namespaces, or only `namespaces`), RuntimeClasses, the DRA
    objects (`DRA_KINDS`, where the server has DRA), the ConfigMaps in `WANTED_CONFIGMAPS`, and the server's
    `gitVersion` — or `ClusterUnreachable`."""
    client = RawClient(api_client, timeout)
    problems: list[Finding] = []
    objects: list[dict[str, Any]] = []
    server_version: str | None = None

    try:
        version = client.get("/version").get("gitVersion")
        server_version = version if isinstance(version, str) and version else None
    except ReadError as exc:
        if exc.status == 401:
            raise ClusterUnreachable(f"the Kubernetes API at {client.host} rejected the credentials ({exc}); "
                                     "check the kubeconfig user or token") from None
        if exc.transport:
            raise ClusterUnreachable(f"cannot reach the Kubernetes API: {exc}") from None
        problems.append(_finding("get/version", f"cannot read the API server version: {exc}"))

    scopes: list[str | None] = list(namespaces) if namespaces is not None else [None]
    plan: list[tuple[_Resource, str | None, tuple[str, ...] | None]] = [(NODES, None, None)]
    plan += [(r, ns, None) for r in (PODS, DAEMONSETS, DEPLOYMENTS) for ns in scopes]
    plan.append((RUNTIMECLASSES, None, None))
    try:
        version = dra_version(client)
    except ReadError as exc:
        version = None
        problems.append(_finding(f"get/{DRA_GROUP}", f"cannot read which versions of {DRA_GROUP} the API server "
                                                     f"serves: {exc}; DRA objects not collected"))
    if version is not None:
        for resource, namespaced in dra_resources(version):
            plan += [(resource, ns, None) for ns in scopes] if namespaced else [(resource, None, None)]
    # ConfigMaps: one paginated list per namespace, filtered by name here. A field selector matches only
    # exact names (no `mindx-dl-deviceinfo-*` prefix, one name per request), and a GET per name would be
    # one call per node for MindCluster's per-node ConfigMaps; the two namespaces hold few ConfigMaps.
    plan += [(CONFIGMAPS, ns, names) for ns, names in WANTED_CONFIGMAPS.items()]
    planned = len(plan)

    counts: dict[str, int] = {}
    collected: set[str] = set()  # kinds listed (in at least one scope), recorded in the snapshot

    def count(plural: str, n: int) -> None:
        counts[plural] = counts.get(plural, 0) + n
        if progress:
            progress(plural, counts[plural])

    gone: ReadError | None = None  # once the server stops accepting connections, stop knocking
    for resource, namespace, names in _growing(plan):
        # filtered lists (ConfigMaps) count what is kept, once the page loop is done
        on_page = partial(count, resource.plural) if names is None else _ignore
        try:
            if gone is not None:
                raise gone
            items = client.list_all(resource, namespace, page_size, on_page)
        except ReadError as exc:
            gone = exc if exc.connect else gone
            if resource is NODES and exc.status == 404:  # not an API server: every other list would say 404 too
                raise ClusterUnreachable(not_kubernetes_api(client.host, exc.status)) from None
            if resource is RUNTIMECLASSES and exc.status == 404:
                continue  # no node.k8s.io/v1 here: not collected, not a failure
            scope = f" in namespace {namespace}" if namespace else ""
            subject = f"list/{resource.plural}" + (f"/{namespace}" if namespace else "")
            problems.append(_finding(subject, f"cannot list {resource.plural}{scope}: {exc}; "
                                              "checks that need them are skipped"))
            continue
        if names is not None:
            items = [i for i in items if _wanted(str((i.get("metadata") or {}).get("name", "")), names)]
            count(resource.plural, len(items))
            if namespace == spec.SCHEDULER_NAMESPACE and len(plan) == planned:
                plan.extend(_geometry_configmap(items, plan))
        objects.extend(items)
        collected.add(resource.kind)
    return LiveRead(SnapshotData(objects, server_version, frozenset(collected)), problems)


def read_configmap(api_client: ApiClient, namespace: str, name: str, *, timeout: Timeout = (5, 30)) -> dict[str, Any]:
    """One ConfigMap as raw JSON (with apiVersion/kind); `ClusterUnreachable` for any failure, with the reason."""
    client = RawClient(api_client, timeout)
    try:
        doc = client.get(f"/api/v1/namespaces/{namespace}/configmaps/{name}")
    except ReadError as exc:
        raise ClusterUnreachable(f"cannot read configmap {namespace}/{name}: {exc}") from None
    doc.setdefault("apiVersion", "v1")
    doc.setdefault("kind", "ConfigMap")
    return doc
