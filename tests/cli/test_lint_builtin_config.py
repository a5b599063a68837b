"""Issue 15 §1 through `vgpuctl lint`: with no --device-config, Volcano's built-in device config is judged.

Volcano runs on `GetDefaultDevicesConfig()` when its device ConfigMap is missing or unreadable
(volcano-sh/volcano `pkg/scheduler/api/devices/config/config.go`): the Ascend310P vNPU entry
(memoryCapacity 24576), default vGPU names, no MIG geometries. `lint` judges what that config declares,
says so in one note on stderr (stdout stays pure JSON), and never calls an undeclared chip unknown.
"""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.cli.conftest import EXAMPLES

P310_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: npu, namespace: ai}
spec:
  schedulerName: volcano
  runtimeClassName: ascend
  containers:
  - name: c
    resources:
      limits: {LIMITS}
"""

# A cluster with no node: `snapshot save` says it listed the Nodes (a file with none that does not is refused).
LISTED = {"annotations": {"vgpuctl.io/kinds": "Node,Pod,ConfigMap,DaemonSet,Deployment"}}
EMPTY_CLUSTER = json.dumps({"apiVersion": "v1", "kind": "List", "metadata": LISTED, "items": []})


def pod_file(tmp_path: Path, limits: str, name: str = "pod.yaml") -> str:
    path = tmp_path / name
    path.write_text(P310_POD.replace("{LIMITS}", limits))
    return str(path)


def codes(result) -> list[str]:  # type: ignore[no-untyped-def]
    return [f["code"] for item in result.json()["items"] for f in item["findings"]]


def test_more_memory_than_the_310p_has_fails_without_a_device_config(run, tmp_path: Path) -> None:
    result = run("lint", pod_file(tmp_path, "{huawei.com/Ascend310P: 1, huawei.com/Ascend310P-memory: 30000}"),
                 "-o", "json")
    assert result.exit_code == 1
    assert "VGH003" in codes(result)


def test_several_310p_with_a_partial_card_fails_without_a_device_config(run, tmp_path: Path) -> None:
    result = run("lint", pod_file(tmp_path, "{huawei.com/Ascend310P: 2, huawei.com/Ascend310P-memory: 4096}"),
                 "-o", "json")
    assert result.exit_code == 1 and "VGH004" in codes(result)


def test_one_note_on_stderr_and_pure_json_on_stdout(run, tmp_path: Path) -> None:
    a = pod_file(tmp_path, "{huawei.com/Ascend310P: 1, huawei.com/Ascend310P-memory: 4096}", "a.yaml")
    b = pod_file(tmp_path, "{huawei.com/Ascend310P: 1}", "b.yaml")
    result = run("lint", a, b, "-o", "json")
    assert result.exit_code == 0
    json.loads(result.stdout)  # nothing else on stdout
    lines = result.stderr.splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("note: no --device-config: judging against Volcano's built-in device config (")
    assert "Ascend310P" in lines[0] and "no MIG geometries" in lines[0]


def test_a_chip_the_builtin_config_does_not_declare_is_not_unknown(run, tmp_path: Path) -> None:
    result = run("lint", pod_file(tmp_path, "{huawei.com/Ascend910B3: 1, huawei.com/Ascend910B3-memory: 16384}"),
                 "-o", "json")
    assert result.exit_code == 0 and "VGH008" not in codes(result)


def test_a_given_config_is_judged_instead_and_no_note(run, tmp_path: Path) -> None:
    """The example vGPU ConfigMap declares no vnpus: with it, the same 310P pod is unknown to Volcano."""
    path = pod_file(tmp_path, "{huawei.com/Ascend310P: 1, huawei.com/Ascend310P-memory: 4096}")
    result = run("lint", path, "-o", "json", "--device-config", str(EXAMPLES / "volcano-vgpu-device-config.yaml"))
    assert result.exit_code == 1 and "VGH008" in codes(result)
    assert result.stderr == ""


def test_a_snapshot_without_the_configmap_judges_the_config_volcano_runs_on(run, tmp_path: Path) -> None:
    """With --snapshot the cluster says which config the scheduler runs on: no ConfigMap means the built-in
    one for real, so the undeclared 910B3 is unknown (VGH008) — the verdict the doctor gives the same pod."""
    snapshot = tmp_path / "cluster.json"
    snapshot.write_text(EMPTY_CLUSTER)
    path = pod_file(tmp_path, "{huawei.com/Ascend910B3: 1}")
    result = run("lint", path, "--snapshot", str(snapshot), "-o", "json")
    assert result.exit_code == 1 and "VGH008" in codes(result)
    assert "note:" not in result.stderr
    pod = yaml.safe_load(Path(path).read_text())
    pod["status"] = {"phase": "Pending"}
    snapshot.write_text(json.dumps({"apiVersion": "v1", "kind": "List", "metadata": LISTED, "items": [pod]}))
    doctor = run("doctor", "--snapshot", str(snapshot), "-o", "json").json()
    assert "VGH008" in [f["code"] for f in doctor["findings"] if f["subject"].startswith("pod/ai/npu")]


def test_the_good_ascend_example_is_clean_and_the_broken_one_still_fails(run) -> None:
    """examples/ascend-hami/: the good pod carries runtimeClassName: ascend (ascend-device-plugin v1.4.0
    docs/volcano.md), so only its template note (VGH009) remains."""
    good = run("lint", str(EXAMPLES / "ascend-hami" / "vnpu-pod.yaml"), "-o", "json")
    assert good.exit_code == 0 and codes(good) == ["VGH009"]
    broken = run("lint", str(EXAMPLES / "ascend-hami" / "broken-pod.yaml"), "-o", "json")
    assert broken.exit_code == 1 and {"VGH001", "VGH007", "VGH010"} <= set(codes(broken))
