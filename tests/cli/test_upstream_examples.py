"""`vgpuctl lint` on the upstream example manifests: no false positive on an example that works.

The manifests are stored copies (tests/fixtures/upstream-examples/SOURCES.txt names repository, path and
commit of each). Each is linted with the device ConfigMap its guide installs, as a user following that
guide would have, and must get exactly the verdict below: the exit code and, per object, the codes at
warning or error (informational findings explain a request and are not a verdict). Where an upstream
example is really wrong for Volcano, the case says why.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.conftest import ROOT

UPSTREAM = ROOT / "tests" / "fixtures" / "upstream-examples"
VGPU_CONFIG = UPSTREAM / "device-configs" / "volcano-vgpu-device-config.yaml"
ASCEND_CONFIG = UPSTREAM / "device-configs" / "hami-scheduler-device.yaml"

CASES: list[tuple[str, Path | None, int, dict[str, set[str]]]] = [
    # --- Volcano user guide (volcano-sh/volcano docs/user-guide/) ---------------------------------------
    # No schedulerName: the mutating default sets it (VGP015 at info), as vgpuctl's webhook would.
    ("volcano-user-guide/gpu-number-pod.yaml", None, 0, {"gpu-pod1": set()}),
    ("volcano-user-guide/gpu-sharing-pods.yaml", None, 0, {"gpu-pod1": set(), "gpu-pod2": set()}),
    ("volcano-user-guide/vgpu-hami-core-pod.yaml", VGPU_CONFIG, 0, {"hami-pod": set()}),
    # 3000 MiB on the plugin's knownMigGeometries: 1g.5gb on an A100-40GB (VGP017, info).
    ("volcano-user-guide/vgpu-mig-pod.yaml", VGPU_CONFIG, 0, {"mig-pod": set()}),
    ("volcano-user-guide/vgpu-exclusive-training-pod.yaml", VGPU_CONFIG, 0, {"training-job": set()}),
    ("volcano-user-guide/vnpu-hami-pod.yaml", ASCEND_CONFIG, 0, {"ascend-pod": set()}),
    ("volcano-user-guide/vnpu-hami-core-pod.yaml", ASCEND_CONFIG, 0, {"ascend-pod": set()}),
    # Really (mildly) wrong: `npu-core: 8` is a whole 310P chip, and for a whole chip Volcano never reads
    # the `vnpu-dvpp` / `vnpu-level` labels the guide sets (volcano-sh/volcano ed72c7c81
    # pkg/scheduler/api/devices/ascend/mindcluster/ascend310p/vnpu/device_manage.go GetPodResource:
    # IsResourceWholeCard returns before GetVTaskDVPP / GetVTaskLevel). The pod runs; the labels do nothing.
    ("volcano-user-guide/vnpu-mindcluster-job.yaml", None, 0, {"mindx-dls": {"VGA006"}}),
    # --- Project-HAMi/volcano-vgpu-device-plugin examples/ ---------------------------------------------
    ("volcano-vgpu-device-plugin/gpu-share.yml", None, 0, {"pod1": set()}),
    ("volcano-vgpu-device-plugin/vgpu-case01.yml", VGPU_CONFIG, 0, {"test1": set()}),
    ("volcano-vgpu-device-plugin/vgpu-case02.yml", VGPU_CONFIG, 0, {"pod1": set()}),
    # Really wrong, though the pod runs: containers are vGPU, no vGPU, vGPU. Volcano writes two blocks
    # (ExtractResourceRequest skips the middle container) and the plugin pairs block 1 with
    # spec.containers[1] (pkg/util/util.go GetNextDeviceRequest), so "ubuntu-container1"'s cache directory
    # is named after "ubuntu-container0" and CUDA_DISABLE_CONTROL is read from its env (pkg/plugin/server.go
    # Allocate). Both vGPU containers do get their GPUs: the warning is VGP013's narrow one.
    ("volcano-vgpu-device-plugin/vgpu-case03.yml", VGPU_CONFIG, 0, {"gpu-pod12": {"VGP013"}}),
    ("volcano-vgpu-device-plugin/vgpu-deployment.yaml", VGPU_CONFIG, 0, {"resnet101-deployment": set()}),
    # --- Project-HAMi/ascend-device-plugin v1.4.0 ------------------------------------------------------
    # HAMi's own examples carry no schedulerName: the default sets volcano (VGP015, info).
    ("ascend-device-plugin/ascendjob-310p.yaml", ASCEND_CONFIG, 0, {"ascend310p-job": set()}),
    # Really wrong: the plugin's own ascend-device-configmap.yaml (same tag) declares Ascend910B2, B3,
    # B4 and B4-1 but no `huawei.com/Ascend910B`; the plugin advertises the resourceName of its chip's
    # entry (internal/server/server.go) and Volcano registers no device type for it, so the pod can never
    # be placed (VGH008).
    ("ascend-device-plugin/ascendjob-910b.yaml", ASCEND_CONFIG, 1, {"ascend910b-job": {"VGH008"}}),
    ("ascend-device-plugin/docs-volcano-pod.yaml", ASCEND_CONFIG, 0, {"ascend-pod": set()}),
    ("ascend-device-plugin/docs-volcano-hami-core-pod.yaml", ASCEND_CONFIG, 0, {"ascend-pod": set()}),
]


def test_every_stored_example_has_a_verdict() -> None:
    stored = {p.relative_to(UPSTREAM).as_posix() for p in UPSTREAM.glob("*/*")
              if p.suffix in (".yaml", ".yml") and p.parent.name != "device-configs"}
    assert stored == {path for path, *_ in CASES}


@pytest.mark.parametrize(("path", "config", "exit_code", "verdict"), CASES, ids=[c[0] for c in CASES])
def test_lint_verdict_on_upstream_example(run, path: str, config: Path | None, exit_code: int,
                                         verdict: dict[str, set[str]]) -> None:
    args = ["lint", str(UPSTREAM / path), "-o", "json"]
    if config is not None:
        args += ["--device-config", str(config)]
    result = run(*args)
    assert result.exit_code == exit_code, result.stdout + result.stderr
    got = {item["name"]: {f["code"] for f in item["findings"] if f["severity"] in ("warning", "error")}
           for item in result.json()["items"]}
    assert got == verdict
