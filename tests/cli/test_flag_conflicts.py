"""Conflicting or ignored flags are a usage error (exit 2) with one line saying so, never silently resolved
(issue 27): kubectl users expect `why ml/x -n other` or `doctor --snapshot F --context C` to be refused rather
than half-obeyed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.conftest import EXAMPLES

HEALTHY = str(EXAMPLES / "clusters" / "healthy.yaml")
BROKEN = str(EXAMPLES / "clusters" / "broken.yaml")
MIG_POD = EXAMPLES / "vgpu" / "mig-pod.yaml"


def one_line(result: Any) -> str:
    assert result.exit_code == 2, (result.exit_code, result.stdout, result.stderr)
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("vgpuctl: ")
    return lines[0]


def test_why_namespace_in_the_name_and_a_different_n(run: Any) -> None:
    line = one_line(run("why", "ml/x", "-n", "other", "--snapshot", HEALTHY))
    assert "namespace ml" in line and "-n other" in line


def test_why_namespace_given_twice_alike_is_fine(run: Any) -> None:
    result = run("why", "ml/nobody", "-n", "ml", "--snapshot", HEALTHY)
    assert "no pod ml/nobody" in one_line(result)  # got past the options to the lookup


@pytest.mark.parametrize("flags", [("--kubeconfig", "/nonexistent"), ("--context", "prod")])
@pytest.mark.parametrize("command", [("doctor",), ("nodes",), ("why", "ml/x")])
def test_snapshot_with_a_live_cluster_option(run: Any, command: tuple[str, ...], flags: tuple[str, str]) -> None:
    line = one_line(run(*command, "--snapshot", HEALTHY, *flags))
    assert flags[0] in line and "--snapshot" in line


@pytest.mark.parametrize("flags", [("--device-config", str(EXAMPLES / "volcano-vgpu-device-config.yaml")),
                                   ("--root", "/")])
def test_doctor_node_only_options_without_node(run: Any, flags: tuple[str, str]) -> None:
    line = one_line(run("doctor", "--snapshot", BROKEN, *flags))
    assert flags[0] in line and "--node" in line


@pytest.mark.parametrize("flags", [("--context", "prod"), ("--kubeconfig", "/x"), ("--pre",),
                                   ("--scheduler-name", "volcano"), ("--privileged", "warning")])
def test_doctor_cluster_only_options_with_node(run: Any, flags: tuple[str, ...]) -> None:
    line = one_line(run("doctor", "--node", *flags))
    assert flags[0] in line and "--node" in line


@pytest.mark.parametrize("second", [["--snapshot", BROKEN], [f"--snapshot={BROKEN}"]])
def test_repeated_snapshot_with_different_files(run: Any, second: list[str]) -> None:
    line = one_line(run("doctor", "--snapshot", HEALTHY, *second))
    assert "--snapshot given twice" in line and "healthy.yaml" in line and "broken.yaml" in line


def test_repeated_option_of_a_subcommand(run: Any) -> None:
    line = one_line(run("geometry", "validate", str(EXAMPLES / "volcano-vgpu-device-config.yaml"),
                        "-o", "json", "-oyaml"))
    assert "-o/--output given twice" in line


def test_the_same_value_twice_is_harmless(run: Any) -> None:
    result = run("doctor", "--snapshot", HEALTHY, "--snapshot", HEALTHY, "-o", "json")
    assert result.exit_code == 0, result.stderr
    assert result.json()["kind"] == "DoctorReport"


def test_repeatable_options_stay_repeatable(run: Any) -> None:
    result = run("doctor", "--snapshot", HEALTHY, "--scheduler-name", "a", "--scheduler-name", "volcano",
                 "-o", "json")
    assert result.exit_code == 0, result.stderr


def test_why_f_on_several_pods(run: Any, tmp_path: Path) -> None:
    pods = tmp_path / "pods.yaml"
    pods.write_text((EXAMPLES / "vgpu" / "broken-pod.yaml").read_text() + "\n---\n" + MIG_POD.read_text())
    line = one_line(run("why", "-f", str(pods), "--snapshot", HEALTHY))
    assert "2 objects with pods" in line and "mig-pod" in line and "broken-gpu-pod" in line


def test_why_f_on_a_list_of_one_pod_answers_for_it(run: Any, tmp_path: Path) -> None:
    listed = tmp_path / "list.yaml"
    listed.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "List",
                                      "items": [yaml.safe_load(MIG_POD.read_text())]}))
    result = run("why", "-f", str(listed), "--snapshot", HEALTHY, "-o", "json")
    direct = run("why", "-f", str(MIG_POD), "--snapshot", HEALTHY, "-o", "json")
    assert result.exit_code == direct.exit_code, result.stderr
    assert result.json() == direct.json()


def test_why_f_on_a_list_of_two_pods(run: Any, tmp_path: Path) -> None:
    pod = yaml.safe_load(MIG_POD.read_text())
    other = {**pod, "metadata": {**pod["metadata"], "name": "other"}}
    listed = tmp_path / "list.yaml"
    listed.write_text(yaml.safe_dump({"apiVersion": "v1", "kind": "PodList", "items": [pod, other]}))
    assert "2 objects with pods" in one_line(run("why", "-f", str(listed), "--snapshot", HEALTHY))


def test_why_f_on_a_multi_task_volcano_job_is_one_workload(run: Any) -> None:
    result = run("why", "-f", str(EXAMPLES / "vgpu" / "multi-task-job.yaml"), "--snapshot", HEALTHY, "-o", "json")
    assert result.exit_code in (0, 1), result.stderr
    assert result.json()["gang"]["kind"] == "Job"


def test_why_f_with_a_namespace_the_manifest_contradicts(run: Any, tmp_path: Path) -> None:
    pod = yaml.safe_load(MIG_POD.read_text())
    pod["metadata"]["namespace"] = "ml"
    path = tmp_path / "pod.yaml"
    path.write_text(yaml.safe_dump(pod))
    line = one_line(run("why", "-f", str(path), "-n", "other", "--snapshot", HEALTHY))
    assert "ml" in line and "-n other" in line
