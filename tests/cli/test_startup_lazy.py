"""Start-up of the cluster commands: modules only another command (or a rare input) needs stay unimported.

Real processes (`python -m vgpuctl …`), as a user runs them: what a module imports at its top is what counts.
"""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import yaml

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "what-if", "namespace": "ml"},
       "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "resources": {"limits": {
           "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "1024"}}}]}}
WATCHED = ("vgpuctl.core.lintreport", "vgpuctl.core.lintlines", "vgpuctl.core.host", "tempfile", "gzip",
           "vgpuctl.core.why.gang", "vgpuctl.core.why.gangmodel", "vgpuctl.core.why.ascend",
           "vgpuctl.core.why.mindcluster")
# What a GPU pod's `why` never needs (the doctor reads NPU allocations, so `doctor` and `nodes` load them)
NPU_CODECS = ("vgpuctl.core.codecs.ascend", "vgpuctl.core.codecs.ascend_pod")


def loaded_after(*argv: str, watched: tuple[str, ...] = WATCHED) -> tuple[int, set[str]]:
    code = ("import json, runpy, sys\n"
            "try:\n    runpy.run_module('vgpuctl', run_name='__main__')\nfinally:\n"
            f"    sys.stderr.write('MODULES' + json.dumps(sorted(m for m in {watched!r} if m in sys.modules)))\n")
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, timeout=120)
    return done.returncode, set(json.loads(done.stderr.rsplit("MODULES", 1)[1]))


def _json_files(tmp_path: Path) -> tuple[str, str]:
    snapshot = yaml.safe_load(Path("tests/fixtures/clusters/mixed-stacks.yaml").read_text())
    (tmp_path / "cluster.json").write_text(json.dumps(snapshot, default=str))
    (tmp_path / "pod.json").write_text(json.dumps(POD))
    return str(tmp_path / "pod.json"), str(tmp_path / "cluster.json")


def test_why_f_for_a_pod_loads_neither_lints_machinery_nor_the_gang_replay(tmp_path: Path) -> None:
    pod, cluster = _json_files(tmp_path)
    code, modules = loaded_after("why", "-f", pod, "--snapshot", cluster, "-o", "json")
    assert code in (0, 1) and modules == set()


def test_why_f_for_a_gpu_pod_on_a_gpu_fleet_loads_no_npu_codec(tmp_path: Path) -> None:
    """The scale goldens' fleet (vGPU nodes only; the pod asks for more than any node has free, so no fit brings in
    the doctor's node checks)."""
    fleet = tmp_path / "fleet.json"
    fleet.write_bytes(gzip.decompress(Path("tests/fixtures/scale/fleet-150.json.gz").read_bytes()))
    big = {**POD, "spec": {**POD["spec"], "containers": [{"name": "c", "resources": {"limits": {
        "volcano.sh/vgpu-number": "8", "volcano.sh/vgpu-memory": "40960"}}}]}}
    (tmp_path / "pod.json").write_text(json.dumps(big))
    code, modules = loaded_after("why", "-f", str(tmp_path / "pod.json"), "--snapshot", str(fleet), "-o", "json",
                                 watched=WATCHED + NPU_CODECS)
    assert code == 1 and modules == set()


def test_doctor_and_nodes_on_a_snapshot_do_not_load_the_node_probe_parsers(tmp_path: Path) -> None:
    _, cluster = _json_files(tmp_path)
    for command in ("doctor", "nodes"):
        code, modules = loaded_after(command, "--snapshot", cluster, "-o", "json")
        assert code in (0, 1) and modules == set(), command
