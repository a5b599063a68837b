"""Issue 15 §4: `uninstall` takes back exactly what install changed, and says it did so with exit 0.

Through the real CLI and kubernetes client against the stateful API server of conftest.py."""

from __future__ import annotations

import copy
import json
from typing import Any

import yaml

from tests.install.conftest import StatefulCluster
from tests.install.test_install_live import run

VGPU_PAYLOAD = "tests/fixtures/upstream/volcano-vgpu-device-config.yaml"
REGISTER = "volcano.sh/node-vgpu-register"
A100 = ("GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448,10,40960,NVIDIA-NVIDIA A100-PCIE-40GB,true,hami-core:"
        "GPU-1c9b7f61-52e8-4a1b-9d1e-2b2f3c4d5e6f,10,40960,NVIDIA-NVIDIA A100-PCIE-40GB,true,hami-core")


def _merged_configmap(tmp_path: Any) -> dict[str, Any]:
    """What a user applies after `vgpuctl geometry merge` (the README's recipe), made by the real command."""
    vgpu = tmp_path / "vgpu.yaml"
    vnpu = tmp_path / "vnpu.yaml"
    vgpu.write_text(yaml.safe_dump({"nvidia": {
        "resourceCountName": "volcano.sh/vgpu-number", "resourceMemoryName": "volcano.sh/vgpu-memory",
        "resourceCoreName": "volcano.sh/vgpu-cores", "deviceSplitCount": 10, "deviceCoreScaling": 1,
        "gpuMemoryFactor": 1}}))
    vnpu.write_text(yaml.safe_dump({"vnpus": [{
        "chipName": "310P3", "commonWord": "Ascend310P", "resourceName": "huawei.com/Ascend310P",
        "resourceMemoryName": "huawei.com/Ascend310P-memory", "memoryAllocatable": 21527,
        "memoryCapacity": 24576, "aiCore": 8, "aiCPU": 7,
        "templates": [{"name": "vir01", "memory": 3072, "aiCore": 1, "aiCPU": 1}]}]}))
    merged = run("geometry", "merge", "--vgpu", str(vgpu), "--vnpu", str(vnpu), "--volcano-version", "v1.15.1")
    assert merged.exit_code == 0, merged.stderr
    document = yaml.safe_load(merged.stdout)
    assert isinstance(document, dict) and document["kind"] == "ConfigMap"
    return document


def test_geometry_merge_does_not_claim_management_of_its_output(tmp_path: Any) -> None:
    """`geometry merge` prints a ConfigMap for the user to apply; vgpuctl does not manage it afterwards,
    so it carries no `app.kubernetes.io/managed-by: vgpuctl` (a label install used to read as its own)."""
    document = _merged_configmap(tmp_path)
    assert "labels" not in document["metadata"], document["metadata"]


def test_a_merged_configmap_applied_before_install_survives_uninstall_byte_identical(
        kube: StatefulCluster, kubeconfig: str, tmp_path: Any) -> None:
    merged = _merged_configmap(tmp_path)
    # As applied by an older vgpuctl, whose merge labelled its output: the label must not decide deletion.
    merged["metadata"]["labels"] = {"app.kubernetes.io/managed-by": "vgpuctl"}
    kube.put(merged)
    before = copy.deepcopy(kube.get("v1", "ConfigMap", "kube-system", "volcano-vgpu-device-config"))
    installed = run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig)
    assert installed.exit_code == 0, installed.stdout + installed.stderr
    assert "  = unchanged ConfigMap kube-system/volcano-vgpu-device-config" in installed.stdout
    dry = run("uninstall", "--dry-run", "--kubeconfig", kubeconfig)
    assert "  ! keep      ConfigMap kube-system/volcano-vgpu-device-config" in dry.stdout
    assert "delete    ConfigMap kube-system/volcano-vgpu-device-config" not in dry.stdout
    removed = run("uninstall", "--kubeconfig", kubeconfig)
    assert removed.exit_code == 0, removed.stdout + removed.stderr
    after = kube.get("v1", "ConfigMap", "kube-system", "volcano-vgpu-device-config")
    assert after is not None, "uninstall deleted a ConfigMap install did not create"
    assert json.dumps(after, sort_keys=True) == json.dumps(before, sort_keys=True)  # not even rewritten
    # what install did create is gone
    assert kube.get("apps/v1", "DaemonSet", "kube-system", "volcano-device-plugin") is None
    assert kube.get("v1", "ConfigMap", "kube-system", "volcano-vgpu-node-config") is None


def test_a_merged_configmap_install_completed_loses_only_the_section_install_added(
        kube: StatefulCluster, kubeconfig: str, tmp_path: Any) -> None:
    merged = _merged_configmap(tmp_path)
    payload = yaml.safe_load(merged["data"]["device-config.yaml"])
    del payload["nvidia"]  # install adds the section the vGPU mode needs, and records that it did
    merged["data"]["device-config.yaml"] = yaml.safe_dump(payload)
    merged["metadata"]["labels"] = {"app.kubernetes.io/managed-by": "vgpuctl"}
    kube.put(merged)
    assert run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig).exit_code == 0
    cm = kube.get("v1", "ConfigMap", "kube-system", "volcano-vgpu-device-config")
    assert cm is not None and "nvidia" in yaml.safe_load(cm["data"]["device-config.yaml"])
    assert run("uninstall", "--kubeconfig", kubeconfig).exit_code == 0
    cm = kube.get("v1", "ConfigMap", "kube-system", "volcano-vgpu-device-config")
    assert cm is not None
    assert yaml.safe_load(cm["data"]["device-config.yaml"]) == payload
    assert "vgpuctl.io/installed" not in (cm["metadata"].get("annotations") or {})


def test_uninstall_on_device_nodes_exits_0_and_shows_deviceshare_off_as_expected(kube: StatefulCluster,
                                                                                kubeconfig: str) -> None:
    """After uninstall the nodes still register their GPUs and deviceshare is in no tier: VGC002 is the
    very state uninstall was asked for, so it is shown as info (expected), and the run exits 0."""
    node = kube.get("v1", "Node", None, "gpu-0")
    assert node is not None
    node["metadata"]["annotations"] = {REGISTER: A100}
    kube.put(node)
    assert run("install", "--mode", "vgpu", "--nodes", "gpu=on", "--kubeconfig", kubeconfig).exit_code in (0, 1)
    result = run("uninstall", "--kubeconfig", kubeconfig, "-o", "json", "--fail-on", "warning")
    assert result.exit_code == 0, result.stdout + result.stderr
    report = json.loads(result.stdout)
    # VGC002: deviceshare in no tier; VGM001: the device ConfigMap install created (and uninstall deleted)
    for code in ("VGC002", "VGM001"):
        [finding] = [f for f in report["doctor"]["findings"] if f["code"] == code]
        assert finding["severity"] == "info" and "(expected after uninstall: " in finding["message"], finding
        assert next(c for c in report["doctor"]["checks"] if c["code"] == code)["status"] == "pass"
    assert report["doctor"]["summary"]["errors"] == report["doctor"]["summary"]["warnings"] == 0
    table = run("uninstall", "--kubeconfig", kubeconfig)  # nothing left to do: still 0, still shown
    assert table.exit_code == 0, table.stdout + table.stderr
    assert "VGC002" in table.stdout and "expected after uninstall" in table.stdout
    # The same state judged by the doctor is an error: only uninstall reads it as its own result.
    doctor = run("doctor", "--kubeconfig", kubeconfig, "-o", "json")
    assert any(f["code"] == "VGC002" and f["severity"] == "error" for f in json.loads(doctor.stdout)["findings"])


def test_with_a_family_of_yours_still_on_a_missing_device_configmap_stays_a_warning(kube: StatefulCluster,
                                                                                    kubeconfig: str) -> None:
    """The Ascend HAMi family was on before install (yours): after uninstall Volcano still reads the device
    ConfigMap for it, so its absence (VGM001) is a real problem, not the uninstall's intended result."""
    cm = kube.get("v1", "ConfigMap", "volcano-system", "volcano-scheduler-configmap")
    assert cm is not None
    cm["data"]["volcano-scheduler.conf"] += ("  - name: deviceshare\n    arguments:\n"
                                             "      deviceshare.AscendHAMiVNPUEnable: true\n")
    kube.put(cm)
    node = kube.get("v1", "Node", None, "gpu-0")
    assert node is not None
    node["metadata"]["annotations"] = {REGISTER: A100}
    kube.put(node)
    assert run("install", "--mode", "vgpu", "--nodes", "gpu=on", "--kubeconfig", kubeconfig).exit_code in (0, 1)
    assert kube.get("v1", "ConfigMap", "kube-system", "volcano-vgpu-device-config") is not None
    result = run("uninstall", "--kubeconfig", kubeconfig, "-o", "json", "--fail-on", "warning")
    assert result.exit_code == 1, result.stdout + result.stderr
    [vgm001] = [f for f in json.loads(result.stdout)["doctor"]["findings"] if f["code"] == "VGM001"]
    assert vgm001["severity"] == "warning" and "expected after uninstall" not in vgm001["message"]


def test_uninstall_still_fails_on_a_problem_it_did_not_cause(kube: StatefulCluster, kubeconfig: str) -> None:
    """Only the findings that restate the uninstall's result are settled: a broken scheduler config
    (no allocate action: VGC013) is still an error and exit 1."""
    assert run("install", "--mode", "vgpu", "--kubeconfig", kubeconfig).exit_code in (0, 1)
    cm = kube.get("v1", "ConfigMap", "volcano-system", "volcano-scheduler-configmap")
    assert cm is not None
    assert "allocate, " in cm["data"]["volcano-scheduler.conf"]
    cm["data"]["volcano-scheduler.conf"] = cm["data"]["volcano-scheduler.conf"].replace("allocate, ", "")
    kube.put(cm)
    result = run("uninstall", "--kubeconfig", kubeconfig)
    assert result.exit_code == 1, result.stdout + result.stderr
    assert "VGC013" in result.stdout


def test_a_labelled_configmap_in_the_webhooks_namespace_is_not_taken_for_installs(kube: StatefulCluster,
                                                                                 kubeconfig: str,
                                                                                 tmp_path: Any) -> None:
    """In the namespace install --webhook created, too, only the objects install writes (its manifests'
    names) are deleted: a merged ConfigMap applied there with the old label stays, and so does the namespace."""
    from tests.install.test_install_webhook import NS, install

    assert install(kubeconfig).exit_code == 0
    merged = _merged_configmap(tmp_path)
    merged["metadata"].update(namespace=NS, labels={"app.kubernetes.io/managed-by": "vgpuctl"})
    kube.put(merged)
    result = run("uninstall", "--kubeconfig", kubeconfig)
    assert result.exit_code == 0, result.stdout + result.stderr
    assert kube.get("v1", "ConfigMap", NS, "volcano-vgpu-device-config") is not None
    assert kube.get("v1", "Namespace", None, NS) is not None
    assert kube.get("apps/v1", "Deployment", NS, "vgpuctl-webhook") is None
