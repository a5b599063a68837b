"""Issue 16 §3: `install --mode vnpu-hami` creates ascend-device-plugin's `ascend` RuntimeClass, and
`uninstall` takes it back — never one that existed before install; and the plugin version install picks.

Upstream (Project-HAMi/ascend-device-plugin): `ascend-runtimeclass.yaml`, added in commit 880b827 and shipped
from tag v1.3.0 (b1713de) on, unchanged at v1.4.0 (ed35e1c):

    apiVersion: node.k8s.io/v1
    kind: RuntimeClass
    metadata:
      name: ascend
    handler: ascend

and `docs/volcano.md` at v1.4.0: "`runtimeClassName: ascend` (deployed in Deployment above) is required
for all Ascend Pods regardless of slicing mode" ("Deploy RuntimeClass" comes before the plugin)."""

from __future__ import annotations

import copy
import json

import kubernetes_validate
import pytest
from kubernetes_validate import utils as kv_utils

from tests.install.conftest import StatefulCluster, seed_volcano
from tests.install.test_install_live import run
from vgpuctl.core.install.modes import Mode
from vgpuctl.core.install.plugins import PluginChoice, render_plugin

UPSTREAM = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "ascend"},
            "handler": "ascend"}
VERSIONS = sorted({v for v in kv_utils.all_versions() if tuple(map(int, v.split(".")[:2])) >= (1, 28)},
                  key=lambda v: tuple(map(int, v.split(".")[:2])))


def _runtime_classes(tag: str) -> list[dict[str, object]]:
    rendered = render_plugin(PluginChoice(Mode.VNPU_HAMI, tag, ""), "npu=yes", "volcano-vgpu-device-config")
    return [o for o in rendered.objects if o["kind"] == "RuntimeClass"]


@pytest.mark.parametrize("version", VERSIONS)
def test_the_runtime_class_is_upstreams_plus_the_label_and_valid(version: str) -> None:
    [runtime_class] = _runtime_classes("v1.4.0")
    kubernetes_validate.validate(runtime_class, version, strict=True)
    unlabelled = copy.deepcopy(runtime_class)
    assert unlabelled["metadata"].pop("labels") == {"app.kubernetes.io/managed-by": "vgpuctl"}  # type: ignore[union-attr]
    assert unlabelled == UPSTREAM


@pytest.mark.parametrize(("tag", "shipped"), [("v1.2.0", False), ("v1.3.0", True), ("v1.4.0", True),
                                              ("latest", True)])
def test_the_runtime_class_comes_with_the_plugin_releases_that_ship_it(tag: str, shipped: bool) -> None:
    assert bool(_runtime_classes(tag)) is shipped


def test_install_creates_it_and_uninstall_deletes_it(kube: StatefulCluster, kubeconfig: str) -> None:
    result = run("install", "--mode", "vnpu-hami", "--nodes", "npu=yes", "--kubeconfig", kubeconfig)
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    assert "  + create    RuntimeClass ascend" in result.stdout
    found = kube.get("node.k8s.io/v1", "RuntimeClass", None, "ascend")
    assert found is not None and found["handler"] == "ascend"
    assert found["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "vgpuctl"
    assert "Nothing to change" in run("install", "--mode", "vnpu-hami", "--nodes", "npu=yes",
                                      "--kubeconfig", kubeconfig).stdout
    removed = run("uninstall", "--kubeconfig", kubeconfig)
    assert removed.exit_code == 0, removed.stdout + removed.stderr
    assert "  - delete    RuntimeClass ascend" in removed.stdout
    assert kube.get("node.k8s.io/v1", "RuntimeClass", None, "ascend") is None


def test_a_runtime_class_that_existed_before_install_is_kept_by_both(kube: StatefulCluster, kubeconfig: str) -> None:
    """Applied by hand from upstream's manifest (no vgpuctl label): install leaves it, uninstall too."""
    kube.put(copy.deepcopy(UPSTREAM))
    before = json.dumps(kube.get("node.k8s.io/v1", "RuntimeClass", None, "ascend"), sort_keys=True)
    installed = run("install", "--mode", "vnpu-hami", "--kubeconfig", kubeconfig)
    assert installed.exit_code in (0, 1), installed.stdout + installed.stderr
    assert "  ! keep      RuntimeClass ascend" in installed.stdout
    assert run("uninstall", "--kubeconfig", kubeconfig).exit_code == 0
    assert json.dumps(kube.get("node.k8s.io/v1", "RuntimeClass", None, "ascend"), sort_keys=True) == before
    assert kube.get("apps/v1", "DaemonSet", "kube-system", "hami-ascend-device-plugin") is None


@pytest.mark.parametrize("volcano", ["v1.16.0", "v1.16.1", "v1.17.0"])
def test_volcano_1_16_and_later_get_ascend_device_plugin_v1_4_0(kube: StatefulCluster, kubeconfig: str,
                                                                volcano: str) -> None:
    """From Volcano 1.16 the scheduler leaves its Ascend HAMi node lock (a bare timestamp) to the plugin to
    release (volcano-sh/volcano 3347c2025); only ascend-device-plugin v1.4.0 releases such a lock, so that is
    the tag install must deploy (read from the running vc-scheduler image)."""
    seed_volcano(kube, version=volcano)
    result = run("install", "--mode", "vnpu-hami", "--kubeconfig", kubeconfig)
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    daemonset = kube.get("apps/v1", "DaemonSet", "kube-system", "hami-ascend-device-plugin")
    assert daemonset is not None
    [container] = daemonset["spec"]["template"]["spec"]["containers"]
    assert container["image"] == "docker.io/projecthami/ascend-device-plugin:v1.4.0"
    assert kube.get("node.k8s.io/v1", "RuntimeClass", None, "ascend") is not None


def test_an_override_that_never_releases_the_1_16_node_lock_is_refused_before_any_write(kube: StatefulCluster,
                                                                                       kubeconfig: str) -> None:
    """ascend-device-plugin v1.3.0 deletes only a node lock naming the pod (its vendored HAMi); Volcano 1.16's
    lock holds only a time (volcano-sh/volcano 3347c2025): install refuses the tag, from the same matrix
    the doctor's VGK005 reads, and writes nothing."""
    seed_volcano(kube, version="v1.16.0")
    result = run("install", "--mode", "vnpu-hami", "--device-plugin-version", "vnpu-hami=v1.3.0",
                 "--kubeconfig", kubeconfig)
    assert result.exit_code == 3, result.stdout + result.stderr
    assert "v1.3.0" in result.stderr and "v1.4.0" in result.stderr
    assert kube.writes == []
