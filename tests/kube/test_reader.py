"""The live reader: the real `kubernetes` client over real HTTP against a scripted API server."""

from __future__ import annotations

import json
import math
import threading
import time

import pytest
from kubernetes.client import ApiClient
from werkzeug import Request, Response

from tests.kube.conftest import TOKEN, FakeCluster, client_for, configmap, pod
from vgpuctl.core.catalogue import hint_for
from vgpuctl.core.findings import Severity
from vgpuctl.kube.errors import ClusterUnreachable
from vgpuctl.kube.reader import LiveRead, read_cluster


def names(live: LiveRead, kind: str) -> list[str]:
    return [o["metadata"]["name"] for o in live.data.objects if o["kind"] == kind]


def test_pagination_follows_continue_tokens_across_pages(cluster: FakeCluster, api: ApiClient) -> None:
    cluster.serve(nodes=1201, pods=1100)
    seen: list[tuple[str, int]] = []
    live = read_cluster(api, page_size=500, progress=lambda resource, n: seen.append((resource, n)))

    assert live.problems == []
    assert live.data.server_version == "v1.30.2"
    assert names(live, "Node") == [f"gpu-{i}" for i in range(1201)]
    assert len(names(live, "Pod")) == 1100
    for path in ("/api/v1/nodes", "/api/v1/pods"):
        requests = cluster.requests(path)
        assert [r.args.get("limit") for r in requests] == ["500", "500", "500"]
        assert [r.args.get("continue") for r in requests] == [None, "page-500-rv42", "page-1000-rv42"]
    assert all(r.headers["Authorization"] == f"Bearer {TOKEN}" for r in cluster.requests())
    assert all(r.headers["Accept"] == "application/json" for r in cluster.requests())
    assert [s for s in seen if s[0] == "nodes"] == [("nodes", 500), ("nodes", 1000), ("nodes", 1201)]


def test_items_get_kind_and_api_version_and_lose_managed_fields(cluster: FakeCluster, api: ApiClient) -> None:
    cluster.serve(nodes=1, pods=1)
    objects = read_cluster(api).data.objects
    assert [(o["apiVersion"], o["kind"]) for o in objects] == [
        ("v1", "Node"), ("v1", "Pod"), ("apps/v1", "DaemonSet"), ("apps/v1", "Deployment"),
        ("v1", "ConfigMap"), ("v1", "ConfigMap")]
    assert "managedFields" not in objects[0]["metadata"]


@pytest.mark.parametrize("node_count", [10, 1000, 5000])
def test_request_count_grows_only_by_pages(cluster: FakeCluster, api: ApiClient, node_count: int) -> None:
    cluster.serve(nodes=node_count, pods=800)
    live = read_cluster(api, page_size=500)
    assert len(names(live, "Node")) == node_count
    # /version + node pages + 2 pod pages + daemonsets + deployments + runtimeclasses + the DRA group (404 here)
    # + 2 ConfigMap namespaces
    assert len(cluster.requests()) == 1 + math.ceil(node_count / 500) + 2 + 1 + 1 + 1 + 1 + 2


def test_only_the_configmaps_that_matter(cluster: FakeCluster, api: ApiClient) -> None:
    kube_system = ["coredns", "volcano-vgpu-device-config", "kubeadm-config", "volcano-vgpu-node-config",
                   "hami-scheduler-device", "hami-device-node-config", "mindx-dl-deviceinfo-node-1",
                   "mindx-dl-deviceinfo-node-2", "mindx-dl-deviceinfo", "hami-scheduler-device-old"]
    cluster.serve(configmaps={"volcano-system": ["volcano-scheduler-configmap", "volcano-admission-configmap"],
                              "kube-system": kube_system})
    cluster.serve_list("/api/v1/configmaps", "v1", "ConfigMapList", [configmap("ml", "volcano-vgpu-device-config")])
    live = read_cluster(api, page_size=3)  # kube-system's 10 ConfigMaps span 4 pages

    found = sorted((o["metadata"]["namespace"], o["metadata"]["name"])
                   for o in live.data.objects if o["kind"] == "ConfigMap")
    assert found == [
        ("kube-system", "hami-device-node-config"), ("kube-system", "hami-scheduler-device"),
        ("kube-system", "mindx-dl-deviceinfo-node-1"), ("kube-system", "mindx-dl-deviceinfo-node-2"),
        ("kube-system", "volcano-vgpu-device-config"), ("kube-system", "volcano-vgpu-node-config"),
        ("volcano-system", "volcano-scheduler-configmap")]
    assert len(cluster.requests("/api/v1/namespaces/kube-system/configmaps")) == 4
    assert cluster.requests("/api/v1/configmaps") == []  # never all namespaces
    assert not any("secrets" in r.path for r in cluster.requests())


def test_namespaces_restrict_the_namespaced_lists(cluster: FakeCluster, api: ApiClient) -> None:
    cluster.serve()
    cluster.serve_list("/api/v1/namespaces/ml/pods", "v1", "PodList", [pod("ml", "a"), pod("ml", "b")])
    cluster.serve_list("/api/v1/namespaces/ci/pods", "v1", "PodList", [pod("ci", "c")])
    for path in ("/apis/apps/v1/namespaces/ml/daemonsets", "/apis/apps/v1/namespaces/ci/daemonsets",
                 "/apis/apps/v1/namespaces/ml/deployments", "/apis/apps/v1/namespaces/ci/deployments"):
        cluster.serve_list(path, "apps/v1", "List", [])
    live = read_cluster(api, namespaces=["ml", "ci"])
    assert live.problems == []
    assert names(live, "Pod") == ["a", "b", "c"]
    assert cluster.requests("/api/v1/pods") == []


@pytest.mark.parametrize(
    ("code", "reason", "expected"),
    [
        (401, "Unauthorized", "HTTP 401 UNAUTHORIZED: Unauthorized"),
        (403, "Forbidden", 'HTTP 403 FORBIDDEN: pods is forbidden: User "dev" cannot list resource "pods"'),
        (404, "NotFound", "HTTP 404 NOT FOUND: the server could not find the requested resource"),
        (500, "InternalError", "HTTP 500 INTERNAL SERVER ERROR: etcdserver: request timed out"),
    ],
)
def test_a_failed_list_is_a_vgk001_finding_and_the_read_goes_on(
        cluster: FakeCluster, api: ApiClient, code: int, reason: str, expected: str) -> None:
    cluster.serve()
    message = expected.split(": ", 1)[1]
    cluster.fail_status("/api/v1/pods", code, reason, message)
    live = read_cluster(api)

    [problem] = live.problems
    assert (problem.code, problem.severity, problem.subject) == ("VGK001", Severity.ERROR, "list/pods")
    assert problem.message.lower().startswith(f"cannot list pods: {expected.lower()}")
    assert problem.hint == hint_for("VGK001")
    assert names(live, "Node") == ["gpu-0", "gpu-1", "gpu-2"] and names(live, "Pod") == []
    assert len(names(live, "ConfigMap")) == 2


def test_invalid_json_and_non_list_answers(cluster: FakeCluster, api: ApiClient) -> None:
    cluster.serve()
    cluster.route("/api/v1/nodes", lambda _r: Response(b'{"kind": "NodeList", "items": ['))
    cluster.route("/apis/apps/v1/daemonsets", lambda _r: Response(b'{"kind": "Status"}'))
    live = read_cluster(api)
    by_subject = {p.subject: p.message for p in live.problems}
    assert by_subject.keys() == {"list/nodes", "list/daemonsets"}
    assert "invalid JSON in the answer from" in by_subject["list/nodes"]
    assert "no items list (kind 'Status')" in by_subject["list/daemonsets"]
    assert len(names(live, "Pod")) == 4


def test_failure_on_a_later_page_drops_the_partial_list(cluster: FakeCluster, api: ApiClient) -> None:
    cluster.serve(pods=30)
    serve_pods = cluster.routes["/api/v1/pods"]
    cluster.route("/api/v1/pods", lambda r: serve_pods(r) if not r.args.get("continue") else Response(
        b'{"kind":"Status","code":410,"message":"The provided continue parameter is too old"}', status=410))
    live = read_cluster(api, page_size=10)
    assert names(live, "Pod") == []
    assert "HTTP 410 GONE: The provided continue parameter is too old" in live.problems[0].message


def test_timeout_is_a_finding_for_that_list(cluster: FakeCluster, api: ApiClient, release: threading.Event) -> None:
    cluster.serve()

    def stall(_request: Request) -> Response:
        release.wait(5)  # released at teardown; the client gives up after 0.2 s
        return Response(b"{}", content_type="application/json")

    cluster.route("/apis/apps/v1/daemonsets", stall)
    started = time.monotonic()
    live = read_cluster(api, timeout=(2, 0.2))
    assert time.monotonic() - started < 3
    [problem] = live.problems
    assert problem.subject == "list/daemonsets"
    assert "no answer from http://127.0.0.1:" in problem.message and "within 0.2s (read timeout)" in problem.message
    assert len(names(live, "Deployment")) == 1 and len(names(live, "ConfigMap")) == 2


def test_version_timeout_means_unreachable(cluster: FakeCluster, api: ApiClient, release: threading.Event) -> None:
    cluster.serve()
    cluster.route("/version", lambda _r: Response(b"{}" if release.wait(5) else b""))
    with pytest.raises(ClusterUnreachable, match=r"^cannot reach the Kubernetes API: no answer from .* within 0.2s"):
        read_cluster(api, timeout=(2, 0.2))


def test_401_on_the_first_call_means_unreachable(cluster: FakeCluster, api: ApiClient) -> None:
    cluster.serve()
    cluster.fail_status("/version", 401, "Unauthorized", "Unauthorized")
    with pytest.raises(ClusterUnreachable) as caught:
        read_cluster(api)
    assert str(caught.value) == (f"the Kubernetes API at {cluster.url} rejected the credentials "
                                 "(HTTP 401 UNAUTHORIZED: Unauthorized); check the kubeconfig user or token")
    assert len(cluster.requests()) == 1


def test_other_version_failures_are_findings(cluster: FakeCluster, api: ApiClient) -> None:
    cluster.serve()
    cluster.fail_status("/version", 403, "Forbidden", "forbidden")
    live = read_cluster(api)
    assert [(p.subject, p.message) for p in live.problems] == [
        ("get/version", "cannot read the API server version: HTTP 403 FORBIDDEN: forbidden")]
    assert live.data.server_version is None and len(names(live, "Node")) == 3


def test_connection_refused_means_unreachable(closed_port: int) -> None:
    started = time.monotonic()
    with client_for(f"http://127.0.0.1:{closed_port}") as api, pytest.raises(ClusterUnreachable) as caught:
        read_cluster(api)
    assert str(caught.value) == (f"cannot reach the Kubernetes API: cannot connect to http://127.0.0.1:{closed_port}: "
                                 "connection refused")
    assert time.monotonic() - started < 2  # one quick reconnect at most, no retry storm


def test_pages_of_big_objects_are_asked_for_again_smaller(cluster: FakeCluster, api: ApiClient) -> None:
    """Issue 23: every read has a size bound. 40 pods with 1 MiB each: the 500- and 100-item pages (40 MiB)
    are over the 32 MiB bound, so the list asks again for 20 at a time, reads every pod, and never holds
    40 MiB at once."""
    from vgpuctl.kube.reader import MAX_PAGE_BYTES, RawClient

    big = [pod("ml", f"big-{i}") | {"metadata": {"name": f"big-{i}", "namespace": "ml",
                                                 "annotations": {"x": "y" * (1 << 20)}}} for i in range(40)]
    cluster.serve_list("/api/v1/pods", "v1", "PodList", big)
    client = RawClient(api, (5, 30))
    pages = list(client.pages("/api/v1/pods", [], 500))
    assert sum(len(p["items"]) for p in pages) == 40
    limits = [int(r.args["limit"]) for r in cluster.requests("/api/v1/pods")]
    assert limits == [500, 100, 20, 20]  # two refused pages, then two pages of 20
    assert MAX_PAGE_BYTES < 40 * (1 << 20)


def test_an_answer_over_the_bound_is_an_error_not_memory(cluster: FakeCluster, api: ApiClient) -> None:
    from vgpuctl.kube.reader import PageTooLargeError, RawClient

    cluster.route("/huge", lambda _r: Response(b'{"a": "' + b"x" * (3 << 20) + b'"}', content_type="application/json"))
    with pytest.raises(PageTooLargeError, match="over 2 MiB"):
        RawClient(api, (5, 30)).get("/huge", [], max_bytes=2 << 20)
    big = [pod("ml", f"big-{i}") | {"metadata": {"name": f"b{i}", "namespace": "ml",
                                                 "annotations": {"x": "y" * (3 << 20)}}} for i in range(2)]
    cluster.serve_list("/api/v1/pods", "v1", "PodList", big)
    with pytest.raises(PageTooLargeError):  # even one item per page is over the bound
        list(RawClient(api, (5, 30)).pages("/api/v1/pods", [], 500, max_bytes=2 << 20))


def _dra_group(cluster: FakeCluster, *versions: str) -> None:
    body = {"kind": "APIGroup", "apiVersion": "v1", "name": "resource.k8s.io",
            "versions": [{"groupVersion": f"resource.k8s.io/{v}", "version": v} for v in versions]}
    cluster.route("/apis/resource.k8s.io", lambda _r: Response(json.dumps(body), content_type="application/json"))


@pytest.mark.parametrize(("served", "read"), [(("v1", "v1beta2"), "v1"), (("v1beta2", "v1beta1"), "v1beta2"),
                                              (("v1beta1",), "v1beta1")])
def test_dra_objects_are_read_at_the_newest_version_served(cluster: FakeCluster, api: ApiClient,
                                                            served: tuple[str, ...], read: str) -> None:
    """Issue 25: ResourceSlices, DeviceClasses, ResourceClaims and ResourceClaimTemplates are collected, at the
    newest version of resource.k8s.io the server serves (v1 from Kubernetes 1.34), paginated like the rest."""
    cluster.serve()
    _dra_group(cluster, *served)
    base = f"/apis/resource.k8s.io/{read}"
    slice_ = {"metadata": {"name": "gpu-0-slice"}, "spec": {"driver": "gpu.nvidia.com", "nodeName": "gpu-0",
                                                            "devices": [{"name": "gpu-0"}]}}
    cluster.serve_list(f"{base}/resourceslices", f"resource.k8s.io/{read}", "ResourceSliceList", [slice_] * 3)
    cluster.serve_list(f"{base}/deviceclasses", f"resource.k8s.io/{read}", "DeviceClassList",
                       [{"metadata": {"name": "gpu.nvidia.com"}}])
    cluster.serve_list(f"{base}/resourceclaims", f"resource.k8s.io/{read}", "ResourceClaimList",
                       [{"metadata": {"name": "c", "namespace": "ml"}}])
    cluster.serve_list(f"{base}/resourceclaimtemplates", f"resource.k8s.io/{read}", "ResourceClaimTemplateList", [])
    live = read_cluster(api, page_size=2)
    kinds = {o["kind"]: o["apiVersion"] for o in live.data.objects if o["apiVersion"].startswith("resource.k8s.io")}
    assert kinds == {"ResourceSlice": f"resource.k8s.io/{read}", "DeviceClass": f"resource.k8s.io/{read}",
                     "ResourceClaim": f"resource.k8s.io/{read}"}
    assert sum(o["kind"] == "ResourceSlice" for o in live.data.objects) == 3
    assert len(cluster.requests(f"{base}/resourceslices")) == 2  # two pages of 2
    assert live.data.kinds is not None and {"ResourceSlice", "DeviceClass", "ResourceClaim",
                                            "ResourceClaimTemplate"} <= live.data.kinds
    assert live.problems == []


def test_a_server_without_dra_is_not_an_error(cluster: FakeCluster, api: ApiClient) -> None:
    """No resource.k8s.io (404), or only versions vgpuctl does not read: not collected, no finding."""
    cluster.serve()
    live = read_cluster(api)
    assert live.problems == [] and live.data.kinds is not None and "ResourceSlice" not in live.data.kinds
    _dra_group(cluster, "v1alpha3")
    live = read_cluster(api)
    assert live.problems == [] and "ResourceSlice" not in (live.data.kinds or set())
    assert cluster.requests("/apis/resource.k8s.io/v1alpha3/resourceslices") == []


def test_a_dra_list_the_api_refuses_is_a_finding(cluster: FakeCluster, api: ApiClient) -> None:
    cluster.serve()
    _dra_group(cluster, "v1")
    for plural, kind in (("resourceslices", "ResourceSliceList"), ("deviceclasses", "DeviceClassList"),
                         ("resourceclaimtemplates", "ResourceClaimTemplateList")):
        cluster.serve_list(f"/apis/resource.k8s.io/v1/{plural}", "resource.k8s.io/v1", kind, [])
    cluster.fail_status("/apis/resource.k8s.io/v1/resourceclaims", 403, "Forbidden", "resourceclaims is forbidden")
    live = read_cluster(api)
    assert [f.subject for f in live.problems] == ["list/resourceclaims"]
    assert "ResourceClaim" not in (live.data.kinds or set())
