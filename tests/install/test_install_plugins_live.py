"""`vgpuctl install --mode gpushare|gpunumber|vnpu-mindcluster` end to end: the real CLI and kubernetes client
over real HTTP, against the stateful API server of conftest.py — the plugins these modes deploy."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from tests.install.conftest import SCHEDULER_CONF, StatefulCluster
from vgpuctl.cli.app import app
from vgpuctl.core.scheduler_config import deviceshare_args, parse_scheduler_conf

GPUSHARE_OBJECTS = [("v1", "ServiceAccount", "kube-system", "volcano-device-plugin"),
                    ("rbac.authorization.k8s.io/v1", "ClusterRole", None, "volcano-device-plugin"),
                    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", None, "volcano-device-plugin"),
                    ("apps/v1", "DaemonSet", "kube-system", "volcano-device-plugin")]
RBAC = "rbac.authorization.k8s.io/v1"
MINDCLUSTER_OBJECTS = [("v1", "ServiceAccount", "kube-system", "ascend-device-plugin-sa-310p"),
                       (RBAC, "ClusterRole", None, "pods-node-ascend-device-plugin-role-310p"),
                       (RBAC, "ClusterRoleBinding", None, "pods-node-ascend-device-plugin-rolebinding-310p"),
                       ("apps/v1", "DaemonSet", "kube-system", "ascend-device-plugin3-daemonset-310p")]


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout + result.stderr


def scheduler_conf(kube: StatefulCluster) -> str:
    cm = kube.get("v1", "ConfigMap", "volcano-system", "volcano-scheduler-configmap")
    assert cm is not None
    return str(cm["data"]["volcano-scheduler.conf"])


def container(kube: StatefulCluster, name: str) -> dict[str, Any]:
    ds = kube.get("apps/v1", "DaemonSet", "kube-system", name)
    assert ds is not None
    return dict(ds["spec"]["template"]["spec"]["containers"][0])


def assert_created(kube: StatefulCluster, objects: list[tuple[str, str, str | None, str]]) -> None:
    for api_version, kind, namespace, name in objects:
        obj = kube.get(api_version, kind, namespace, name)
        assert obj is not None, (kind, name)
        assert obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "vgpuctl"


@pytest.mark.parametrize(("mode", "strategy"), [("gpushare", "share"), ("gpunumber", "number")])
def test_gpushare_modes_deploy_the_volcano_device_plugin(kube: StatefulCluster, kubeconfig: str, mode: str,
                                                         strategy: str) -> None:
    code, out = run("install", "--mode", mode, "--nodes", "gpu=on", "--kubeconfig", kubeconfig)
    assert code in (0, 1), out
    assert "yourself" not in out
    assert_created(kube, GPUSHARE_OBJECTS)
    plugin = container(kube, "volcano-device-plugin")
    assert plugin["image"] == "docker.io/volcanosh/volcano-device-plugin:latest"
    assert {"name": "GPU_STRATEGY", "value": strategy} in plugin["env"]
    args = deviceshare_args(parse_scheduler_conf(scheduler_conf(kube)).plugin("deviceshare"))
    assert (args.gpu_sharing, args.gpu_number) == (mode == "gpushare", mode == "gpunumber")
    assert kube.get("v1", "ConfigMap", "kube-system", "volcano-vgpu-device-config") is None

    before, writes = kube.snapshot(), len(kube.writes)
    code, out = run("install", "--mode", mode, "--nodes", "gpu=on", "--kubeconfig", kubeconfig)
    assert "Nothing to change" in out and len(kube.writes) == writes and kube.snapshot() == before

    code, out = run("uninstall", "--kubeconfig", kubeconfig)
    assert code in (0, 1), out
    for api_version, kind, namespace, name in GPUSHARE_OBJECTS:
        assert kube.get(api_version, kind, namespace, name) is None, name
    assert yaml.safe_load(scheduler_conf(kube)) == yaml.safe_load(SCHEDULER_CONF)


def test_vnpu_mindcluster_deploys_the_310p_plugin_with_dynamic_vnpu(kube: StatefulCluster, kubeconfig: str) -> None:
    code, out = run("install", "--mode", "vnpu-mindcluster", "--kubeconfig", kubeconfig)
    assert code in (0, 1), out
    assert_created(kube, MINDCLUSTER_OBJECTS)
    plugin = container(kube, "ascend-device-plugin3-daemonset-310p")
    assert plugin["image"] == "swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-k8sdeviceplugin:v7.2.RC1"
    assert "-presetVirtualDevice=false" in plugin["args"] and "-volcanoType=true" in plugin["args"]
    conf = parse_scheduler_conf(scheduler_conf(kube))
    assert deviceshare_args(conf.plugin("deviceshare")).ascend_mindcluster
    init = conf.configuration("init-params")
    assert init is not None and init["arguments"]["presetVirtualDevice"] == "false"
    assert "NodeD and ClusterD" in out


def test_vnpu_mindcluster_rerun_writes_nothing_and_uninstall_removes_it(kube: StatefulCluster,
                                                                       kubeconfig: str) -> None:
    code, out = run("install", "--mode", "vnpu-mindcluster", "--kubeconfig", kubeconfig)
    assert code in (0, 1), out
    writes = len(kube.writes)
    code, out = run("install", "--mode", "vnpu-mindcluster", "--kubeconfig", kubeconfig)
    assert "Nothing to change" in out and len(kube.writes) == writes
    code, out = run("uninstall", "--kubeconfig", kubeconfig)
    assert code in (0, 1), out
    for api_version, kind, namespace, name in MINDCLUSTER_OBJECTS:
        assert kube.get(api_version, kind, namespace, name) is None, name


def test_device_plugin_version_takes_branch_tags_and_refuses_what_the_doctor_flags(kube: StatefulCluster,
                                                                                  kubeconfig: str) -> None:
    code, out = run("install", "--mode", "gpushare", "--device-plugin-version", "gpushare=master", "--dry-run",
                    "--kubeconfig", kubeconfig)
    assert code == 0, out
    assert "gpushare device plugin master: --device-plugin-version" in out
    assert "volcano-device-plugin:master" in out
    code, out = run("install", "--mode", "gpushare", "--device-plugin-version", "v1 beta", "--kubeconfig", kubeconfig)
    assert code == 2 and "gpushare=v1 beta: not an image tag" in out
    code, out = run("install", "--mode", "vgpu", "--device-plugin-version", "v1.9.0", "--volcano-version", "v1.15.1",
                    "--dry-run", "--kubeconfig", kubeconfig)
    assert code == 3 and "writes 5-field register entries" in out, out  # refused against the cluster: 3
    assert kube.writes == []
