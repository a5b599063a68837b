"""VGP018 through `vgpuctl lint`: reported as a warning (exit 0 by default, 1 with --fail-on warning).

Evidence: volcano-sh/volcano ed72c7c81 `pkg/scheduler/api/devices/nvidia/vgpu/type.go` (GPUModeAnnotation is
`volcano.sh/vgpu-mode`; nothing under `pkg/` reads HAMi's `nvidia.com/vgpu-mode`).
"""

from __future__ import annotations

from pathlib import Path

POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: from-hami
  annotations: {{{annotation}: hami-core}}
spec:
  schedulerName: volcano
  containers:
  - name: trainer
    resources:
      limits: {{volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 3072}}
"""


def test_lint_warns_on_a_hami_annotation(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "pod.yaml"
    path.write_text(POD.format(annotation="nvidia.com/vgpu-mode"))
    report = run("lint", str(path), "-o", "json")
    assert report.exit_code == 0
    (item,) = report.json()["items"]
    (finding,) = [f for f in item["findings"] if f["code"] == "VGP018"]
    assert finding["severity"] == "warning" and "volcano.sh/vgpu-mode" in finding["message"]
    assert run("lint", str(path), "--fail-on", "warning").exit_code == 1


def test_lint_is_silent_on_the_annotation_volcano_reads(run, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "pod.yaml"
    path.write_text(POD.format(annotation="volcano.sh/vgpu-mode"))
    report = run("lint", str(path), "-o", "json", "--fail-on", "warning")
    assert report.exit_code == 0 and report.json()["items"][0]["findings"] == []
