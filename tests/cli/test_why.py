"""`vgpuctl why`: Pending, bound and what-if pods from snapshots; JSON contract; exit codes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.cli.conftest import EXAMPLES, validate

BROKEN = str(EXAMPLES / "clusters" / "broken.yaml")
HEALTHY = str(EXAMPLES / "clusters" / "healthy.yaml")


def test_pending_pod_volcano_never_places_is_answered_by_the_pod_rules(run) -> None:
    """notebook-bob asks for `vgpu-mode: MIG` and `vgpu-memory: 3Gi`: `review(existing=True)` (the doctor's
    view) rejects both, so `why` says Volcano never places it, with those findings, and simulates nothing."""
    result = run("why", "notebook-bob", "-n", "ml", "--snapshot", BROKEN, "-o", "json")
    assert result.exit_code == 1
    report = result.json()
    validate("why-report.schema.json", report)
    assert report["pod"] == "ml/notebook-bob" and report["phase"] == "Pending" and report["families"] == ["vgpu"]
    assert report["verdict"] == "rejected" and report["fits"] == [] and report["unfit"] == []
    assert report["node"] is None
    assert [f["code"] for f in report["findings"]] == ["VGP001", "VGP005"]
    assert "never places it" in report["hints"][0]


def _two_gpus(tmp_path: Path, memory: str) -> str:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "try", "namespace": "ml"},
           "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "resources": {"limits": {
               "volcano.sh/vgpu-number": "2", "volcano.sh/vgpu-memory": memory}}}]}}
    path = tmp_path / "two.yaml"
    path.write_text(yaml.safe_dump(pod))
    return str(path)


def test_a_valid_request_that_fits_nowhere_groups_the_reasons(run, tmp_path: Path) -> None:
    result = run("why", "-f", _two_gpus(tmp_path, "30000"), "--snapshot", BROKEN, "-o", "json")
    assert result.exit_code == 1
    report = result.json()
    validate("why-report.schema.json", report)
    assert report["verdict"] == "no-fit" and report["findings"] == []
    groups = {g["reason"]: g for g in report["unfit"]}
    assert groups["insufficient-memory"]["nodes"] == ["gpu-node-0"]
    assert "GPU 1: free memory 20480 MiB < 30000 MiB" in groups["insufficient-memory"]["message"]
    counts = [g["count"] for g in report["unfit"]]
    assert counts == sorted(counts, reverse=True)
    assert "5 fields" in next(c["message"] for c in report["closest"] if c["node"] == "gpu-node-1")


def test_table_and_namespace_slash_name(run, tmp_path: Path) -> None:
    result = run("why", "-f", _two_gpus(tmp_path, "30000"), "--snapshot", BROKEN)
    assert result.exit_code == 1
    assert "fits no node" in result.stdout and "insufficient-memory" in result.stdout
    assert "Closest nodes" in result.stdout and "\x1b[" not in result.stdout
    named = run("why", "ml/notebook-bob", "--snapshot", BROKEN)
    assert named.exit_code == 1 and "rejected by the pod rules" in named.stdout and "VGP001" in named.stdout


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
    # Larger than every GPU of the snapshot: VGP005 with the cluster's facts, as lint --snapshot says.
    assert result.exit_code == 1 and "verdict: rejected" in result.stdout and "VGP005" in result.stdout


def test_usage_errors(run, tmp_path: Path) -> None:
    missing = run("why", "nope", "-n", "ml", "--snapshot", BROKEN)
    assert missing.exit_code == 2 and "no pod ml/nope" in missing.stderr
    assert run("why", "--snapshot", BROKEN).exit_code == 2
    assert run("why", "x", "-f", "y.yaml", "--snapshot", BROKEN).exit_code == 2
    empty = tmp_path / "cm.yaml"
    empty.write_text("kind: ConfigMap\nmetadata: {name: x}\n")
    assert run("why", "-f", str(empty), "--snapshot", BROKEN).exit_code == 2


def test_every_pod_of_the_healthy_example_is_explained(run) -> None:
    """Every pod of the healthy example is on a node: `why` says so (verdict bound, the node named) and exits 0
    (docs/contracts.md#exit-codes: 1 only when the pod fits no node or the rules reject it)."""
    from vgpuctl.snapshotfile import load_snapshot

    pods = [obj for obj in load_snapshot(HEALTHY).objects if obj.get("kind") == "Pod"]
    assert pods
    for obj in pods:
        meta = obj["metadata"]
        result = run("why", f"{meta['namespace']}/{meta['name']}", "--snapshot", HEALTHY, "-o", "json")
        report = result.json()
        validate("why-report.schema.json", report)
        assert (result.exit_code, report["verdict"], report["node"]) == (0, "bound", obj["spec"]["nodeName"]), \
            meta["name"]


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
            "        assert exc.code == 0, (argv[0], exc.code)\n"
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


def _bad_pod(tmp_path: Path, limits: dict[str, str]) -> str:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad", "namespace": "ml"},
           "spec": {"schedulerName": "volcano", "containers": [{"name": "c", "resources": {"limits": limits}}]}}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(pod, allow_unicode=True))
    return str(path)


@pytest.mark.parametrize("limits", [
    {"volcano.sh/vgpu-number": "-1"}, {"volcano.sh/vgpu-number": "1e38"}, {"volcano.sh/vgpu-number": "３０００"},
    {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "3Gi"},
])
def test_why_and_lint_agree_on_a_request_volcano_never_places(run, tmp_path: Path, limits: dict[str, str]) -> None:
    """Issue 15 §3: the same file and snapshot through `lint` and `why -f`: both fail, with the same errors."""
    path = _bad_pod(tmp_path, limits)
    lint = run("lint", path, "--snapshot", HEALTHY, "-o", "json")
    why = run("why", "-f", path, "--snapshot", HEALTHY, "-o", "json")
    assert lint.exit_code == why.exit_code == 1
    report = why.json()
    validate("why-report.schema.json", report)
    errors = [(f["code"], f["message"]) for f in lint.json()["items"][0]["findings"] if f["severity"] == "error"]
    assert errors and [(f["code"], f["message"]) for f in report["findings"] if f["severity"] == "error"] == errors
    assert report["verdict"] == "rejected" and report["fits"] == [] and report["unfit"] == []
    assert "18446744072635809792" not in why.stdout
    table = run("why", "-f", path, "--snapshot", HEALTHY)
    assert table.exit_code == 1 and "rejected by the pod rules" in table.stdout and errors[0][0] in table.stdout


def test_gang_what_if_on_the_bundled_examples(run) -> None:
    """Issue 16 §2: the Deployment's two replicas both fit on the healthy cluster, each booking its own GPU;
    the MindCluster vNPU Job's gang cannot start there: the family is off in its scheduler, a cause no node gets
    past, said once (`cause`) instead of replaying the gang on every node."""
    result = run("why", "-f", str(EXAMPLES / "vgpu" / "deployment.yaml"), "--snapshot", HEALTHY, "-o", "json")
    assert result.exit_code == 0
    report = result.json()
    validate("why-report.schema.json", report)
    gang = report["gang"]
    assert (gang["kind"], gang["replicas"], gang["minAvailable"], gang["fitAtOnce"], gang["starts"]) == \
        ("Deployment", 2, 1, 2, True)
    placed = [(p["replica"], p["node"], p["devices"][0]["id"]) for p in gang["placements"]]
    assert [r for r, _, _ in placed] == ["ml/inference-0", "ml/inference-1"]
    assert len({(n, d) for _, n, d in placed}) == 2  # the second replica did not reuse the first one's booking
    job = run("why", "-f", str(EXAMPLES / "mindcluster" / "vnpu-job.yaml"), "--snapshot", HEALTHY, "-o", "json")
    assert job.exit_code == 1
    data = job.json()
    validate("why-report.schema.json", data)
    assert data["verdict"] == "no-fit" and "gang" not in data and data["unfit"] == [] and data["closest"] == []
    assert data["cause"]["code"] is None
    assert data["cause"]["message"].startswith("deviceshare.AscendMindClusterVNPUEnable is off")
    table = run("why", "-f", str(EXAMPLES / "mindcluster" / "vnpu-job.yaml"), "--snapshot", HEALTHY)
    assert table.exit_code == 1
    assert "× fits no node: deviceshare.AscendMindClusterVNPUEnable is off" in table.stdout
    assert "set deviceshare.AscendMindClusterVNPUEnable: true" in table.stdout and "Closest" not in table.stdout


def test_gang_what_if_table_lists_each_replica_and_the_first_failure(run, tmp_path: Path) -> None:
    deployment = yaml.safe_load((EXAMPLES / "vgpu" / "deployment.yaml").read_text())
    deployment["spec"]["replicas"] = 12
    path = tmp_path / "many.yaml"
    path.write_text(yaml.safe_dump(deployment))
    result = run("why", "-f", str(path), "--snapshot", HEALTHY)
    assert result.exit_code == 0  # a Deployment's PodGroup asks for one member
    assert "of 12 replicas fit at once" in result.stdout and "First replica that does not fit" in result.stdout
    report = run("why", "-f", str(path), "--snapshot", HEALTHY, "-o", "json").json()
    validate("why-report.schema.json", report)
    gang = report["gang"]
    assert 0 < gang["fitAtOnce"] < 12 and len(gang["placements"]) == gang["fitAtOnce"]
    assert gang["firstFailure"]["replica"] == gang["unplaced"][0]


MANIFESTS = sorted(p for d in ("vgpu", "gpushare", "ascend-hami", "mindcluster") for p in (EXAMPLES / d).glob("*.yaml"))
MANIFESTS += sorted((EXAMPLES.parent / "tests" / "fixtures" / "upstream-examples").glob("[!d]*/*.yaml"))


@pytest.mark.parametrize("path", MANIFESTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_why_rejects_exactly_what_lint_denies(run, path: Path, tmp_path: Path) -> None:
    """Issue 15: one truth. The same manifest and snapshot through `lint` and `why -f`: `why` answers
    `rejected` exactly when lint denies the object. `why -f` answers for one object, so a file of several
    is asked object by object (issue 27: it refuses the whole file)."""
    documents = [d for d in yaml.safe_load_all(path.read_text()) if d]
    items = run("lint", str(path), "--snapshot", HEALTHY, "-o", "json").json()["items"]
    assert items
    if len(items) > 1:
        refused = run("why", "-f", str(path), "--snapshot", HEALTHY)
        assert refused.exit_code == 2 and f"{len(items)} objects with pods" in refused.stderr
    for lint in items:
        one = tmp_path / "one.yaml"
        one.write_text(yaml.safe_dump(documents[lint["document"]]))
        why = run("why", "-f", str(one), "--snapshot", HEALTHY, "-o", "json")
        report = why.json()
        validate("why-report.schema.json", report)
        assert (report["verdict"] == "rejected") is (not lint["allowed"])
        errors = sorted(f["code"] for f in lint["findings"] if f["severity"] == "error")
        assert sorted(f["code"] for f in report["findings"] if f["severity"] == "error") == errors
        if not lint["allowed"]:
            assert why.exit_code == 1


# ---- issue 24: the node-level checks (docs/volcano.md#allocate-predicate) ------------------------------------------

def _pod_file(tmp_path: Path, name: str, **spec: object) -> str:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ml"},
           "spec": {"schedulerName": "volcano", **spec}}
    pod["spec"].setdefault("containers", [{"name": "c", "resources": {"limits": {
        "volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "1024"}}}])
    path = tmp_path / f"{name}.yaml"
    path.write_text(yaml.safe_dump(pod))
    return str(path)


def test_a_selector_nobody_has_and_500_cpu_fit_no_node(run, tmp_path: Path) -> None:
    """The issue's example: once "fits 4 nodes", now no node, the allocate action's cpu check first."""
    big = {"requests": {"cpu": "500", "memory": "4Ti"},
           "limits": {"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "1024", "cpu": "500", "memory": "4Ti"}}
    path = _pod_file(tmp_path, "big", nodeSelector={"zone": "nowhere"}, containers=[{"name": "c", "resources": big}])
    result = run("why", "-f", path, "--snapshot", HEALTHY, "-o", "json")
    assert result.exit_code == 1
    report = result.json()
    validate("why-report.schema.json", report)
    assert report["verdict"] == "no-fit" and report["fits"] == []
    [group] = report["unfit"]
    assert group["reason"] == "insufficient-resource" and group["count"] == 5
    assert "Insufficient cpu: the pod requests 500; the node has 64 allocatable, 64 idle" in group["message"]
    assert "node-selector (nodeSelector zone=nowhere)" in group["message"]
    table = run("why", "-f", path, "--snapshot", HEALTHY)
    assert table.exit_code == 1 and "fits no node" in table.stdout and "insufficient-resource" in table.stdout


def test_taints_and_cordons_in_a_snapshot(run, tmp_path: Path) -> None:
    objects = yaml.safe_load(Path(HEALTHY).read_text())
    for item in objects["items"]:
        name = item["metadata"]["name"]
        if item["kind"] == "Node" and name in ("gpu-node-0", "gpu-node-1"):
            item.setdefault("spec", {})["taints"] = [{"key": "nvidia.com/gpu", "value": "present",
                                                      "effect": "NoSchedule"}]
        if item["kind"] == "Node" and name == "gpu-mig-0":
            item.setdefault("spec", {})["unschedulable"] = True
    snapshot = tmp_path / "tainted.yaml"
    snapshot.write_text(yaml.safe_dump(objects))
    result = run("why", "-f", _pod_file(tmp_path, "small"), "--snapshot", str(snapshot), "-o", "json")
    assert result.exit_code == 1
    report = result.json()
    validate("why-report.schema.json", report)
    groups = {g["reason"]: g for g in report["unfit"]}
    assert groups["taint"]["nodes"] == ["gpu-node-0", "gpu-node-1"]
    assert "untolerated taint nvidia.com/gpu=present:NoSchedule" in groups["taint"]["message"]
    assert groups["node-unschedulable"]["nodes"] == ["gpu-mig-0"]
    assert report["closest"][0]["reason"] == "taint"  # its devices fit: closer than the nodes without GPUs
    tolerant = _pod_file(tmp_path, "tolerant", tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists"}])
    fits = run("why", "-f", tolerant, "--snapshot", str(snapshot), "-o", "json")
    assert fits.exit_code == 0 and [p["node"] for p in fits.json()["fits"]] == ["gpu-node-0", "gpu-node-1"]


# ---- issue 24 §2: multi-task Volcano Jobs (docs/volcano.md#gang-scheduling) ------------------------------------------

def _master_and_workers(tmp_path: Path, worker_limits: dict[str, str]) -> str:
    """The issue's Job: a CPU-only `master` task first, then four `worker`s."""
    job = yaml.safe_load((EXAMPLES / "vgpu" / "multi-task-job.yaml").read_text())
    job["spec"]["tasks"][1]["template"]["spec"]["containers"][0]["resources"] = {"limits": worker_limits}
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(job))
    return str(path)


def test_a_cpu_master_and_four_whole_gpu_workers_on_too_few_gpus(run, tmp_path: Path) -> None:
    """Once "the pod asks for no device…", exit 0 (the master alone): now the Job, stopped by the worker task. The
    healthy cluster has one whole GPU free: one worker fits, the second finds no GPU with all its memory free."""
    path = _master_and_workers(tmp_path, {"volcano.sh/vgpu-number": "1"})
    result = run("why", "-f", path, "--snapshot", HEALTHY, "-o", "json")
    assert result.exit_code == 1
    report = result.json()
    validate("why-report.schema.json", report)
    assert report["verdict"] == "no-fit" and report["families"] == ["vgpu"]
    gang = report["gang"]
    assert [(t["name"], t["replicas"], t["minAvailable"], t["fitAtOnce"]) for t in gang["tasks"]] == \
        [("master", 1, 1, 1), ("worker", 4, 4, 1)]
    assert [p["task"] for p in gang["placements"]] == ["master", "worker"]
    stop = gang["stoppedBy"]
    assert (stop["task"], stop["replica"], stop["rule"]) == ("worker", "ml/train-worker-1", "task-minAvailable")
    assert stop["reason"] == "insufficient-memory" and stop["unfit"][0]["nodes"][0] == "gpu-mig-0"
    assert stop["message"].startswith("task worker: 1 of its 4 replicas fit, its minAvailable is 4")
    table = run("why", "-f", path, "--snapshot", HEALTHY)
    assert table.exit_code == 1 and "the gang never starts" in table.stdout
    assert "What stops the Job (task-minAvailable)" in table.stdout and "task worker: 1 of its 4" in table.stdout
    assert "asks for no device" not in table.stdout


def test_the_multi_task_example_places_every_task(run) -> None:
    path = str(EXAMPLES / "vgpu" / "multi-task-job.yaml")
    result = run("why", "-f", path, "--snapshot", HEALTHY, "-o", "json")
    assert result.exit_code == 0
    report = result.json()
    validate("why-report.schema.json", report)
    gang = report["gang"]
    assert report["verdict"] == "fits" and gang["starts"] and gang["stoppedBy"] is None
    assert [p["replica"] for p in gang["placements"]] == ["ml/train-master-0"] + [f"ml/train-worker-{i}"
                                                                                for i in range(4)]
    assert gang["placements"][0]["devices"] == [] and all(p["devices"] for p in gang["placements"][1:])
    table = run("why", "-f", path, "--snapshot", HEALTHY)
    assert table.exit_code == 0 and "5 of 5 replicas fit at once" in table.stdout
    assert "Tasks (each task's minAvailable counts)" in table.stdout and "master" in table.stdout
