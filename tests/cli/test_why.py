"""`vgpuctl why`: Pending, bound and what-if pods from snapshots; JSON contract; exit codes."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.cli.conftest import EXAMPLES, validate

BROKEN = str(EXAMPLES / "clusters" / "broken.yaml")
HEALTHY = str(EXAMPLES / "clusters" / "healthy.yaml")


def test_pending_pod_with_an_invalid_mode_fits_nowhere(run) -> None:
    result = run("why", "notebook-bob", "-n", "ml", "--snapshot", BROKEN, "-o", "json")
    assert result.exit_code == 1
    report = result.json()
    validate("why-report.schema.json", report)
    assert report["pod"] == "ml/notebook-bob" and report["phase"] == "Pending" and report["families"] == ["vgpu"]
    assert report["fits"] == [] and report["node"] is None
    groups = {g["reason"]: g for g in report["unfit"]}
    assert groups["mode-mismatch"]["nodes"] == ["gpu-mig-0", "gpu-node-0"]
    assert "pod wants volcano.sh/vgpu-mode MIG, node mode is mig" in groups["mode-mismatch"]["message"]
    counts = [g["count"] for g in report["unfit"]]
    assert counts == sorted(counts, reverse=True)
    assert "5 fields" in next(c["message"] for c in report["closest"] if c["node"] == "gpu-node-1")


def test_table_and_namespace_slash_name(run) -> None:
    result = run("why", "ml/notebook-bob", "--snapshot", BROKEN)
    assert result.exit_code == 1
    assert "fits no node" in result.stdout and "mode-mismatch" in result.stdout and "Closest nodes" in result.stdout
    assert "\x1b[" not in result.stdout


def test_bound_pod_reports_what_it_got(run) -> None:
    result = run("why", "llm-finetune-0", "-n", "ml", "--snapshot", BROKEN, "-o", "json")
    assert result.exit_code == 0
    report = result.json()
    validate("why-report.schema.json", report)
    assert report["node"] == "gpu-node-0" and report["phase"] == "Running"
    devices = report["fits"][0]["devices"]
    assert [(d["memory"], d["cores"]) for d in devices] == [(20480, 50), (20480, 50)]
    npu = run("why", "ai/npu-infer-0", "--snapshot", BROKEN, "-o", "json").json()
    assert npu["fits"][0]["devices"][0]["template"] == "vir05_1c_16g"


def test_what_if_from_a_file(run, tmp_path: Path) -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "try", "namespace": "ml"},
           "spec": {"containers": [{"name": "c", "resources": {"limits": {
               "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "8000"}}}]}}
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(pod))
    result = run("why", "-f", str(path), "--snapshot", BROKEN, "-o", "json")
    report = result.json()
    validate("why-report.schema.json", report)
    assert result.exit_code == 0 and report["phase"] == "WhatIf"
    assert {p["node"] for p in report["fits"]} == {"gpu-node-0", "gpu-mig-0"}
    big = {**pod, "spec": {"containers": [{"name": "c", "resources": {"limits": {
        "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "100000"}}}]}}
    path.write_text(yaml.safe_dump(big))
    result = run("why", "-f", str(path), "--snapshot", BROKEN, "-o", "yaml")
    assert result.exit_code == 1 and "insufficient-memory" in result.stdout


def test_usage_errors(run, tmp_path: Path) -> None:
    missing = run("why", "nope", "-n", "ml", "--snapshot", BROKEN)
    assert missing.exit_code == 2 and "no pod ml/nope" in missing.stderr
    assert run("why", "--snapshot", BROKEN).exit_code == 2
    assert run("why", "x", "-f", "y.yaml", "--snapshot", BROKEN).exit_code == 2
    empty = tmp_path / "cm.yaml"
    empty.write_text("kind: ConfigMap\nmetadata: {name: x}\n")
    assert run("why", "-f", str(empty), "--snapshot", BROKEN).exit_code == 2


def test_every_pod_of_the_healthy_example_is_explained(run) -> None:
    from vgpuctl.snapshotfile import load_snapshot

    for obj in load_snapshot(HEALTHY).objects:
        if obj.get("kind") != "Pod":
            continue
        meta = obj["metadata"]
        result = run("why", f"{meta['namespace']}/{meta['name']}", "--snapshot", HEALTHY, "-o", "json")
        assert result.exit_code in (0, 1)
        validate("why-report.schema.json", result.json())


def test_snapshot_commands_never_import_the_kubernetes_client(tmp_path: Path) -> None:
    """`--snapshot` reads a file: the client (~0.3 s of imports) is for live clusters only."""
    import json
    import subprocess
    import sys

    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps({"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "resources": {"limits": {"volcano.sh/vgpu-number": "1"}}}]}}))
    code = ("import sys\nfrom vgpuctl.cli.app import app\n"
            "for argv in (['why', '-f', sys.argv[1], '-o', 'json', '--snapshot', sys.argv[2]],\n"
            "             ['nodes', '-o', 'json', '--snapshot', sys.argv[2]]):\n"
            "    try:\n        app(argv, prog_name='vgpuctl')\n    except SystemExit as exc:\n"
            "        assert exc.code in (0, 1), exc.code\n"
            "leaked = sorted(m for m in sys.modules if m.split('.')[0] in ('kubernetes', 'urllib3'))\n"
            "print('LEAKED', leaked, file=sys.stderr)\nsys.exit(1 if leaked else 0)\n")
    done = subprocess.run([sys.executable, "-c", code, str(pod), HEALTHY], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]


def test_after_a_big_snapshot_the_process_exits_fast_with_its_output_and_exit_code(tmp_path: Path) -> None:
    """A snapshot big enough to be frozen out of the collector skips interpreter teardown (main's fast
    exit): the answer, flushed, and the exit code must come out exactly as from a normal exit."""
    import json
    import subprocess
    import sys

    from benchmarks.snapshot_gen import generate

    fleet = tmp_path / "fleet.json"
    fleet.write_text(json.dumps(generate(400)))  # ~3,200 pods: well over the freeze threshold
    pod = tmp_path / "pod.json"
    pod.write_text(json.dumps({"kind": "Pod", "metadata": {"name": "p", "namespace": "ml"}, "spec": {
        "schedulerName": "volcano", "containers": [{"name": "c", "resources": {"limits": {
            "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "999999"}}}]}}))
    # An atexit handler runs only when the interpreter tears down: it tells the two exits apart.
    code = ("import atexit, sys\nfrom vgpuctl.cli.app import main\n"
            "atexit.register(lambda: print('TEARDOWN', file=sys.stderr))\n"
            "sys.argv = ['vgpuctl', *sys.argv[1:]]\nmain()\n")

    def why(snapshot: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-c", code, "why", "-f", str(pod), "-o", "json", "--snapshot",
                               snapshot], capture_output=True, text=True, timeout=120)

    done = why(str(fleet))
    report = json.loads(done.stdout)
    assert report["kind"] == "WhyReport" and report["fits"] == []
    assert done.returncode == 1, done.stderr[-2000:]  # nothing fits: findings
    assert "TEARDOWN" not in done.stderr and "Traceback" not in done.stderr
    small = why(HEALTHY)  # a small snapshot exits the normal way
    assert json.loads(small.stdout)["kind"] == "WhyReport" and "TEARDOWN" in small.stderr
