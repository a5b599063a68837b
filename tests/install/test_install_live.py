"""`vgpuctl install` / `uninstall` end to end: the real CLI and the real kubernetes client, over real HTTP,
against the stateful API server of conftest.py."""

from __future__ import annotations

import json
from typing import Any

import yaml
from typer.testing import CliRunner

from tests.install.conftest import SCHEDULER_CONF, StatefulCluster
from vgpuctl.cli.app import app
from vgpuctl.core.install.scheduler_edit import RECORD_ANNOTATION
from vgpuctl.core.scheduler_config import deviceshare_args, parse_scheduler_conf


class Run:
    def __init__(self, exit_code: int, stdout: str, stderr: str) -> None:
        self.exit_code, self.stdout, self.stderr = exit_code, stdout, stderr


def run(*args: str) -> Run:
    result = CliRunner().invoke(app, list(args), catch_exceptions=False)
    return Run(result.exit_code, result.stdout, result.stderr)


def scheduler_conf(kube: StatefulCluster) -> str:
    cm = kube.get("v1", "ConfigMap", "volcano-system", "volcano-scheduler-configmap")
    assert cm is not None
    return str(cm["data"]["volcano-scheduler.conf"])


def device_payload(kube: StatefulCluster) -> Any:
    cm = kube.get("v1", "ConfigMap", "kube-system", "volcano-vgpu-device-config")
    assert cm is not None
    return yaml.safe_load(cm["data"]["device-config.yaml"])


def restart_annotations(kube: StatefulCluster) -> dict[str, str]:
    deployment = kube.get("apps/v1", "Deployment", "volcano-system", "volcano-scheduler")
    assert deployment is not None
    return dict(deployment["spec"]["template"]["metadata"].get("annotations") or {})


VGPU_OBJECTS = [("v1", "ConfigMap", "kube-system", "volcano-vgpu-device-config"),
                ("v1", "ConfigMap", "kube-system", "volcano-vgpu-node-config"),
                ("v1", "ServiceAccount", "kube-system", "volcano-device-plugin"),
                ("rbac.authorization.k8s.io/v1", "ClusterRole", None, "volcano-device-plugin"),
                ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", None, "volcano-device-plugin"),
                ("apps/v1", "DaemonSet", "kube-system", "volcano-device-plugin")]


def test_install_creates_every_object_and_turns_vgpu_on(kube: StatefulCluster, kubeconfig: str) -> None:
    result = run("install", "--mode", "vgpu", "--nodes", "gpu=on", "--kubeconfig", kubeconfig)
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    for api_version, kind, namespace, name in VGPU_OBJECTS:
        obj = kube.get(api_version, kind, namespace, name)
        assert obj is not None, (kind, name)
        assert obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "vgpuctl"
    args = deviceshare_args(parse_scheduler_conf(scheduler_conf(kube)).plugin("deviceshare"))
    assert args.vgpu and args.schedule_weight == 10 and not args.issues
    assert (args.geometries_cm_name, args.geometries_cm_namespace) == ("volcano-vgpu-device-config", "kube-system")
    assert "knownMigGeometries" in device_payload(kube)["nvidia"]
    backups = [c for c in kube.of_kind("ConfigMap") if "-backup-" in c["metadata"]["name"]]
    assert [b["data"]["volcano-scheduler.conf"] for b in backups] == [SCHEDULER_CONF]
    assert "vgpuctl.io/device-config-hash" in restart_annotations(kube)
    daemonset = kube.get("apps/v1", "DaemonSet", "kube-system", "volcano-device-plugin")
    assert daemonset is not None
    terms = daemonset["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    assert terms == [{"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["on"]}]}]
    assert "Applied" in result.stdout
    assert "scheduler-config" in result.stdout  # the doctor checks ran afterwards


def test_second_install_writes_nothing_and_says_so(kube: StatefulCluster, kubeconfig: str) -> None:
    first = run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig)
    assert first.exit_code in (0, 1), first.stdout + first.stderr
    before, writes = kube.snapshot(), len(kube.writes)
    second = run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig)
    assert second.exit_code in (0, 1)
    assert len(kube.writes) == writes
    assert kube.snapshot() == before
    assert "Nothing to change" in second.stdout and "0 writes" in second.stdout


def test_a_409_on_the_scheduler_configmap_is_reread_and_replanned(kube: StatefulCluster, kubeconfig: str) -> None:
    """Someone edits the scheduler config between vgpuctl's read and its write: their edit survives."""
    done = []

    def concurrent_edit(cluster: StatefulCluster, request: Any) -> None:
        if request.method == "PUT" and request.path.endswith("/volcano-scheduler-configmap") and not done:
            done.append(True)
            cm = cluster.get("v1", "ConfigMap", "volcano-system", "volcano-scheduler-configmap")
            assert cm is not None
            cm["data"]["volcano-scheduler.conf"] = SCHEDULER_CONF.replace("  - name: binpack\n",
                                                                          "  - name: binpack\n  - name: tdm\n")
            cluster.put(cm)

    kube.before_write(concurrent_edit)
    result = run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig)
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    conf = parse_scheduler_conf(scheduler_conf(kube))
    assert conf.plugin("tdm") is not None  # the concurrent edit is kept
    assert deviceshare_args(conf.plugin("deviceshare")).vgpu
    puts = [w for w in kube.writes if w[0] == "PUT" and w[1].endswith("volcano-scheduler-configmap")]
    assert len(puts) == 1


def test_a_500_on_the_third_write_stops_with_a_report_and_a_rerun_completes(kube: StatefulCluster,
                                                                             kubeconfig: str) -> None:
    kube.fail_write(3, 500)
    failed = run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig)
    assert failed.exit_code == 3
    assert "× stopped at create ServiceAccount kube-system/volcano-device-plugin" in failed.stdout
    assert "injected failure of write 3" in failed.stdout
    applied = failed.stdout.split("applied (2):")[1].split("not applied")[0]
    assert "√ create ConfigMap kube-system/volcano-vgpu-device-config" in applied
    assert "√ create ConfigMap kube-system/volcano-vgpu-node-config" in applied
    not_applied = failed.stdout.split("not applied (")[1]
    assert "× update ConfigMap volcano-system/volcano-scheduler-configmap" in not_applied
    assert "rerun" in failed.stdout
    # nothing after the failure was written: the scheduler config is still the original
    assert scheduler_conf(kube) == SCHEDULER_CONF

    rerun = run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig)
    assert rerun.exit_code in (0, 1), rerun.stdout
    for api_version, kind, namespace, name in VGPU_OBJECTS:
        assert kube.get(api_version, kind, namespace, name) is not None
    assert "  = unchanged ConfigMap kube-system/volcano-vgpu-device-config" in rerun.stdout
    assert deviceshare_args(parse_scheduler_conf(scheduler_conf(kube)).plugin("deviceshare")).vgpu
    third = run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig)
    assert "Nothing to change" in third.stdout


def test_uninstall_restores_the_scheduler_config_and_deletes_only_vgpuctls_objects(kube: StatefulCluster,
                                                                                   kubeconfig: str) -> None:
    kube.put({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "user-stuff", "namespace": "kube-system"},
              "data": {"a": "b"}})
    assert run("install", "--mode", "vgpu", "--mode", "vnpu-hami", "--nodes", "npu=yes",
               "--kubeconfig", kubeconfig).exit_code in (0, 1)
    node = kube.get("v1", "Node", None, "npu-0")
    assert node is not None and node["metadata"]["labels"]["ascend"] == "on"
    result = run("uninstall", "--kubeconfig", kubeconfig)
    assert result.exit_code in (0, 1), result.stdout + result.stderr
    assert yaml.safe_load(scheduler_conf(kube)) == yaml.safe_load(SCHEDULER_CONF)
    cm = kube.get("v1", "ConfigMap", "volcano-system", "volcano-scheduler-configmap")
    assert cm is not None and RECORD_ANNOTATION not in (cm["metadata"].get("annotations") or {})
    for api_version, kind, namespace, name in VGPU_OBJECTS:
        assert kube.get(api_version, kind, namespace, name) is None, name
    assert kube.get("apps/v1", "DaemonSet", "kube-system", "hami-ascend-device-plugin") is None
    assert kube.get("v1", "ConfigMap", "kube-system", "user-stuff") is not None
    node = kube.get("v1", "Node", None, "npu-0")
    assert node is not None and node["metadata"]["labels"] == {"npu": "yes"}
    assert [c for c in kube.of_kind("ConfigMap") if "-backup-" in c["metadata"]["name"]]  # backups are kept
    again = run("uninstall", "--kubeconfig", kubeconfig)
    assert "Nothing to change" in again.stdout


def test_install_keeps_an_existing_device_configmap_and_adds_only_the_missing_section(kube: StatefulCluster,
                                                                                     kubeconfig: str) -> None:
    vnpus = {"hamiVnpuCore": False, "configs": [{"commonWord": "Ascend310P", "chipName": "310P3",
                                                 "resourceName": "huawei.com/Ascend310P",
                                                 "resourceMemoryName": "huawei.com/Ascend310P-memory",
                                                 "memoryAllocatable": 21527, "memoryCapacity": 24576,
                                                 "aiCore": 8, "templates": [{"name": "vir01", "memory": 3072,
                                                                             "aiCore": 1}]}]}
    kube.put({"apiVersion": "v1", "kind": "ConfigMap",
              "metadata": {"name": "volcano-vgpu-device-config", "namespace": "kube-system"},
              "data": {"device-config.yaml": yaml.safe_dump({"vnpus": vnpus})}})
    assert run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig).exit_code in (0, 1)
    payload = device_payload(kube)
    assert payload["vnpus"] == vnpus
    assert payload["nvidia"]["resourceCountName"] == "volcano.sh/vgpu-number"
    cm = kube.get("v1", "ConfigMap", "kube-system", "volcano-vgpu-device-config")
    assert cm is not None and "app.kubernetes.io/managed-by" not in (cm["metadata"].get("labels") or {})
    assert run("uninstall", "--kubeconfig", kubeconfig).exit_code in (0, 1)
    cm = kube.get("v1", "ConfigMap", "kube-system", "volcano-vgpu-device-config")
    assert cm is not None, "an admin's ConfigMap is never deleted"
    assert yaml.safe_load(cm["data"]["device-config.yaml"]) == {"vnpus": vnpus}


def test_dry_run_prints_a_diff_per_object_and_writes_nothing(kube: StatefulCluster, kubeconfig: str) -> None:
    before = kube.snapshot()
    result = run("install", "--mode", "vgpu", "--dry-run", "--kubeconfig", kubeconfig)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert kube.writes == [] and kube.snapshot() == before
    out = result.stdout
    assert out.startswith("install plan for Volcano 1.15.1: ")
    assert "  + create    ConfigMap kube-system/volcano-vgpu-device-config" in out
    assert "  ~ update    ConfigMap volcano-system/volcano-scheduler-configmap" in out
    assert "  ↻ restart   Deployment volcano-system/volcano-scheduler" in out
    assert "--- ConfigMap volcano-system/volcano-scheduler-configmap (cluster)" in out
    assert "+++ ConfigMap volcano-system/volcano-scheduler-configmap (after install)" in out
    assert "+    - name: deviceshare\n" in out
    assert "+        deviceshare.VGPUEnable: true\n" in out
    assert "+        deviceshare.ScheduleWeight: 10\n" in out
    assert "+++ DaemonSet kube-system/volcano-device-plugin (planned)" in out
    assert "image: docker.io/projecthami/volcano-vgpu-device-plugin:v1.12.0" in out
    assert out.rstrip().endswith("Dry run: nothing was written.")


def test_refused_combination_is_a_usage_error_and_touches_nothing(kube: StatefulCluster, kubeconfig: str) -> None:
    result = run("install", "--mode", "vgpu", "--mode", "gpushare", "--kubeconfig", kubeconfig)
    assert result.exit_code == 2
    assert "gpu-share and vgpu can't be used together" in result.stderr
    assert kube.writes == []


def test_refused_against_what_the_cluster_already_has(kube: StatefulCluster, kubeconfig: str) -> None:
    assert run("install", "--mode", "gpushare", "--kubeconfig", kubeconfig).exit_code in (0, 1)
    writes = len(kube.writes)
    result = run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig)
    assert result.exit_code == 3
    assert "already has gpushare on" in result.stderr
    assert len(kube.writes) == writes
    assert json.loads(json.dumps(kube.writes))  # the log itself stays a plain list of writes


def test_a_restart_left_undone_is_done_by_the_next_install(kube: StatefulCluster, kubeconfig: str) -> None:
    first = run("install", "--mode", "vgpu", "--no-restart", "--kubeconfig", kubeconfig)
    assert "--no-restart" in first.stdout and "VGC011" in first.stdout
    assert restart_annotations(kube) == {}
    second = run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig)
    assert "↻ restart" in second.stdout
    assert "vgpuctl.io/device-config-hash" in restart_annotations(kube)
    assert "Nothing to change" in run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig).stdout


def test_endless_conflicts_stop_after_a_bounded_number_of_rereads(kube: StatefulCluster, kubeconfig: str) -> None:
    def always_edit(cluster: StatefulCluster, request: Any) -> None:
        if request.method == "PUT" and request.path.endswith("/volcano-scheduler-configmap"):
            cm = cluster.get("v1", "ConfigMap", "volcano-system", "volcano-scheduler-configmap")
            assert cm is not None
            cluster.put(cm)  # a new resourceVersion every time

    kube.before_write(always_edit)
    result = run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig)
    assert result.exit_code == 3
    assert "still conflicting after 5 re-reads" in result.stdout
    assert scheduler_conf(kube) == SCHEDULER_CONF


def test_uninstall_dry_run_shows_what_would_be_taken_back(kube: StatefulCluster, kubeconfig: str) -> None:
    assert run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig).exit_code in (0, 1)
    before, writes = kube.snapshot(), len(kube.writes)
    result = run("uninstall", "--dry-run", "--kubeconfig", kubeconfig)
    assert result.exit_code == 0
    assert kube.snapshot() == before and len(kube.writes) == writes
    out = result.stdout
    assert out.startswith("uninstall plan for Volcano 1.15.1: ")
    assert "  - delete    DaemonSet kube-system/volcano-device-plugin" in out
    assert "+++ ConfigMap volcano-system/volcano-scheduler-configmap (after uninstall)" in out
    assert "-    - name: deviceshare\n" in out
    assert "Dry run: nothing was written." in out


def test_an_unreachable_cluster_exits_3_with_one_line(tmp_path: Any) -> None:
    import socket

    from tests.kube.conftest import write_kubeconfig

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    kubeconfig = write_kubeconfig(tmp_path / "kc", {"gone": f"http://127.0.0.1:{port}"}, current="gone")
    result = run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig)
    assert result.exit_code == 3
    assert result.stderr.startswith("vgpuctl: cannot reach the Kubernetes API") and result.stderr.count("\n") == 1


def test_an_api_error_message_cannot_control_the_terminal(kube: StatefulCluster, kubeconfig: str) -> None:
    """Issue 23 item 8: what the API server says is cluster data too. Before, install echoed it raw."""
    kube.fail_write(3, 500, "bad\x1b]0;pwned\x07\x1b[2J\nvgpuctl: install finished")
    failed = run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig)
    assert failed.exit_code == 3
    for text in (failed.stdout, failed.stderr):
        assert "\x1b" not in text and "\x07" not in text
    assert "HTTP 500: bad\\x1b]0;pwned\\x07\\x1b[2J vgpuctl: install finished; fix the cause" in failed.stderr
    assert failed.stderr.count("vgpuctl: install stopped at") == 1
