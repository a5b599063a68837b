"""Issue 23 §7, §9 and §12: the CLI on hostile input — alias bombs, endless or huge input, deep nesting, a
closed stdin — answers with a finding (VGL001, VGM002) or a one-line usage error (exit 2), never exit 3.

Every hostile input runs for real. Where the old behaviour was to eat memory (a billion laughs, /dev/zero),
the command runs in a child process under a 1 GiB address-space limit, so a regression fails (MemoryError,
exit 3) instead of taking the machine; the size caps are lowered through their environment variables.
"""

from __future__ import annotations

import gzip
import json
import os
import resource
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli.conftest import EXAMPLES
from tests.hostile import laughs

HEALTHY = EXAMPLES / "clusters" / "healthy.yaml"
POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "ml"},
       "spec": {"schedulerName": "volcano", "containers": [
           {"name": "c", "resources": {"limits": {"volcano.sh/vgpu-number": 1, "volcano.sh/vgpu-memory": 3072}}}]}}


def bomb_configmap() -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "volcano-vgpu-device-config", "namespace": "kube-system"},
            "data": {"device-config.yaml": laughs()}}


def write(tmp_path: Path, name: str, content: str | bytes) -> str:
    path = tmp_path / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return str(path)


def cli(*args: str, input: bytes | None = None, env: dict[str, str] | None = None,
        closed_stdin: bool = False) -> subprocess.CompletedProcess[str]:
    """vgpuctl in a child process with at most 1 GiB of address space (and fd 0 closed on request)."""
    def limits() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
        if closed_stdin:
            os.close(0)

    done = subprocess.run([sys.executable, "-c", "from vgpuctl.cli.app import main; main()", *args],
                          input=input, capture_output=True, env={**os.environ, **(env or {})},
                          preexec_fn=limits, timeout=120)
    return subprocess.CompletedProcess(done.args, done.returncode, done.stdout.decode(), done.stderr.decode())


def one_line_usage_error(result: Any) -> str:
    code = result.returncode if isinstance(result, subprocess.CompletedProcess) else result.exit_code
    assert code == 2, result.stderr
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1, result.stderr
    line: str = result.stderr
    return line


# ---- §7 alias bombs -------------------------------------------------------------------------------------

def test_geometry_validate_and_show_refuse_a_billion_laughs_as_vgm002(tmp_path: Path) -> None:
    configmap = write(tmp_path, "cm.yaml", yaml.safe_dump(bomb_configmap(), width=1 << 16))
    validated = cli("geometry", "validate", configmap, "-o", "json")
    assert validated.returncode == 1, validated.stderr
    (finding,) = json.loads(validated.stdout)["findings"]
    assert finding["code"] == "VGM002" and "excessive aliasing" in finding["message"]
    assert finding["line"] == 3  # the payload's first line, inside the manifest
    shown = cli("geometry", "show", write(tmp_path, "payload.yaml", laughs()))
    assert shown.returncode == 1 and "VGM002" in shown.stderr and "excessive aliasing" in shown.stderr


def test_doctor_reports_a_billion_laughs_in_the_device_configmap(tmp_path: Path) -> None:
    cluster = yaml.safe_load(HEALTHY.read_text())
    for obj in cluster["items"]:
        if obj["kind"] == "ConfigMap" and obj["metadata"]["name"] == "volcano-vgpu-device-config":
            obj["data"]["device-config.yaml"] = laughs()
    result = cli("doctor", "--snapshot", write(tmp_path, "cluster.yaml", yaml.safe_dump(cluster)), "-o", "json")
    assert result.returncode == 1, result.stderr
    vgm002 = [f for f in json.loads(result.stdout)["findings"] if f["code"] == "VGM002"]
    assert vgm002 and "excessive aliasing" in vgm002[0]["message"]


def test_lint_reports_the_bomb_document_and_checks_the_others(run) -> None:
    text = json.dumps(POD) + "\n---\n" + laughs() + "---\n" + json.dumps(POD) + "\n"
    result = run("lint", "-", "-o", "json", input=text)
    assert result.exit_code == 1
    items = result.json()["items"]
    last = 3 + len(laughs().splitlines()) + 1  # after the POD line, the `---`, the bomb and its `---`
    assert [(i["source"], i["allowed"]) for i in items] == [("<stdin>:1", True), ("<stdin>:3", False),
                                                            (f"<stdin>:{last}", True)]
    assert [f["code"] for f in items[1]["findings"]] == ["VGL001"]
    assert "excessive aliasing" in items[1]["findings"][0]["message"]


def test_a_bomb_given_as_device_config_is_a_usage_error(run, tmp_path: Path) -> None:
    configmap = write(tmp_path, "cm.yaml", yaml.safe_dump(bomb_configmap(), width=1 << 16))
    line = one_line_usage_error(run("lint", str(EXAMPLES / "vgpu" / "mig-pod.yaml"), "--device-config", configmap))
    assert f"--device-config {configmap}: refused: excessive aliasing" in line


def test_a_bomb_where_the_whole_file_is_needed_is_a_usage_error(run, tmp_path: Path) -> None:
    snapshot = write(tmp_path, "cluster.yaml", "kind: List\nitems: []\nbomb:\n" + laughs().replace("a", "  a", 1))
    assert "excessive aliasing" in one_line_usage_error(run("nodes", "--snapshot", snapshot))
    pod = write(tmp_path, "pod.yaml", laughs() + "---\n" + yaml.safe_dump(POD))
    assert "pod.yaml:1: refused at line 1: excessive aliasing" in one_line_usage_error(
        run("why", "-f", pod, "--snapshot", str(HEALTHY)))


def test_a_bomb_in_a_kubeconfig_is_a_usage_error(tmp_path: Path) -> None:
    kubeconfig = write(tmp_path, "config", "current-context: lab\ncontexts: [{name: lab}]\n" + laughs())
    line = one_line_usage_error(cli("doctor", "--kubeconfig", kubeconfig))
    assert "cannot read kubeconfig" in line and "excessive aliasing" in line


# ---- §9 unbounded input -----------------------------------------------------------------------------------

SMALL = {"VGPUCTL_MAX_INPUT_SIZE": "1Mi", "VGPUCTL_MAX_SNAPSHOT_SIZE": "1Mi"}


def test_dev_zero_stops_at_the_cap() -> None:
    line = one_line_usage_error(cli("lint", "/dev/zero", env=SMALL))
    assert line == ("vgpuctl: /dev/zero: is larger than 1 MiB, the most vgpuctl reads from one input; "
                    "set VGPUCTL_MAX_INPUT_SIZE to read more\n")
    line = one_line_usage_error(cli("doctor", "--snapshot", "/dev/zero", env=SMALL))
    assert "/dev/zero: is larger than 1 MiB, the most vgpuctl reads from a snapshot" in line
    assert "VGPUCTL_MAX_SNAPSHOT_SIZE" in line
    assert "larger than 1 MiB" in one_line_usage_error(cli("geometry", "validate", "/dev/zero", env=SMALL))


def test_endless_stdin_and_a_pipe_named_as_a_file_stop_at_the_cap() -> None:
    yes = b"y\n" * (1 << 20)  # `yes | vgpuctl lint -`, 2 MiB of it
    assert "<stdin>: is larger than 1 MiB" in one_line_usage_error(cli("lint", "-", input=yes, env=SMALL))
    assert "/dev/stdin: is larger than 1 MiB" in one_line_usage_error(cli("lint", "/dev/stdin", input=yes, env=SMALL))
    piped = cli("lint", "/dev/stdin", "-o", "json", input=json.dumps(POD).encode(), env=SMALL)  # a FIFO is read
    assert piped.returncode == 0 and json.loads(piped.stdout)["summary"]["objects"] == 1


def test_a_file_over_the_cap_is_refused_before_it_is_read(run, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("VGPUCTL_MAX_INPUT_SIZE", "1Ki")
    big = write(tmp_path, "big.yaml", json.dumps(POD) + " " * 1024)
    assert f"{big}: is larger than 1 KiB" in one_line_usage_error(run("lint", big))
    assert "larger than 1 KiB" in one_line_usage_error(run("lint", "-", input=json.dumps(POD) + " " * 1024))
    monkeypatch.setenv("VGPUCTL_MAX_INPUT_SIZE", "lots")
    line = one_line_usage_error(run("lint", big))
    assert "VGPUCTL_MAX_INPUT_SIZE=lots: expected a size in bytes, or with Ki, Mi or Gi" in line


def test_a_gzip_bomb_stops_at_the_snapshot_cap(run, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("VGPUCTL_MAX_SNAPSHOT_SIZE", "1Mi")
    bomb = write(tmp_path, "cluster.yaml.gz", gzip.compress(b" " * (8 << 20)))  # 8 KiB that become 8 MiB
    assert Path(bomb).stat().st_size < 64 << 10
    line = one_line_usage_error(run("nodes", "--snapshot", bomb))
    assert "cluster.yaml.gz: decompresses to more than 1 MiB, the most vgpuctl reads from a snapshot" in line


def test_the_caps_are_said_in_the_help(run) -> None:
    def words(*args: str) -> str:
        return " ".join(run(*args, "--help").stdout.replace("│", " ").split())

    assert "at most 64 MiB (VGPUCTL_MAX_INPUT_SIZE)" in words("lint")
    assert "at most 256 MiB (VGPUCTL_MAX_SNAPSHOT_SIZE)" in words("lint")
    assert "at most 256 MiB (VGPUCTL_MAX_SNAPSHOT_SIZE)" in words("doctor")
    assert "at most 64 MiB (VGPUCTL_MAX_INPUT_SIZE)" in words("geometry", "validate")


DEEP_JSON = "[" * 100_000 + "]" * 100_000


def test_100000_deep_json_is_vgl001_vgm002_or_a_usage_error(run, tmp_path: Path) -> None:
    deep = write(tmp_path, "deep.json", DEEP_JSON)
    linted = run("lint", deep, "-o", "json")
    assert linted.exit_code == 1
    assert linted.json()["items"][0]["findings"][0]["message"].startswith("not valid JSON: depth limit exceeded")
    assert "depth limit exceeded" in one_line_usage_error(run("why", "-f", deep, "--snapshot", str(HEALTHY)))
    validated = run("geometry", "validate", deep, "-o", "json")
    assert validated.exit_code == 1 and validated.json()["findings"][0]["code"] == "VGM002"


def test_nesting_libyaml_accepts_but_python_cannot_print_is_vgl001(run, tmp_path: Path) -> None:
    """995 levels: under libyaml's 1,000, so it parses — and a rule quoting the value used to hit RecursionError."""
    deep = "[" * 995 + "]" * 995
    pod = yaml.safe_dump(POD).replace("volcano.sh/vgpu-memory: 3072", f"volcano.sh/vgpu-memory: {deep}")
    linted = run("lint", write(tmp_path, "pod.yaml", pod), "-o", "json")
    assert linted.exit_code == 1
    (item,) = linted.json()["items"]
    assert item["findings"][0]["code"] == "VGL001"
    assert item["findings"][0]["message"].endswith("nested deeper than 256 levels")


def test_values_pyyaml_cannot_build_are_vgl001_not_exit_3(run) -> None:
    """An impossible date (PyYAML raises ValueError, not a YAMLError) and a 5,000-digit integer."""
    text = json.dumps(POD) + "\n---\nkind: Pod\nmetadata: {creationTimestamp: 2020-13-45}\n---\nn: " + "9" * 5000
    result = run("lint", "-", "-o", "json", input=text)
    assert result.exit_code == 1
    messages = [i["findings"][0]["message"] for i in result.json()["items"][1:]]
    assert "month must be in 1..12" in messages[0] and "4300 digits" in messages[1]


def test_a_fifo_in_a_directory_is_vgl001_and_the_rest_is_checked(tmp_path: Path) -> None:
    (tmp_path / "pod.yaml").write_text(json.dumps(POD))
    os.mkfifo(tmp_path / "pipe.yaml")  # nobody writes it: opening it would wait for ever
    result = cli("lint", str(tmp_path), "-o", "json")
    assert result.returncode == 1, result.stderr
    items = {i["source"]: i for i in json.loads(result.stdout)["items"]}
    assert items[f"{tmp_path}/pod.yaml:1"]["allowed"] is True
    assert "not a regular file" in items[f"{tmp_path}/pipe.yaml"]["findings"][0]["message"]


# ---- §12 a closed stdin --------------------------------------------------------------------------------

@pytest.mark.parametrize("args", [("lint", "-"), ("doctor", "--snapshot", "-"), ("geometry", "validate", "-")])
def test_a_closed_stdin_is_one_line_and_exit_2(args: tuple[str, ...]) -> None:
    line = one_line_usage_error(cli(*args, closed_stdin=True))
    assert line == "vgpuctl: <stdin>: standard input is closed\n"
