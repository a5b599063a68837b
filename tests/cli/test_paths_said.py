"""A path that is not what the option wants is said for what it is (issue 27): a directory given as a file
was "no such file", a file given as --out "File exists"."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from vgpuctl.paths import not_a_directory, not_a_file


def _vgpuctl(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", "from vgpuctl.cli.app import main; main()", *args],
                          capture_output=True, text=True, timeout=60, env=env)


def test_the_path_is_named_for_what_it_is(tmp_path: Path) -> None:
    folder = tmp_path / "certs"
    folder.mkdir()
    (tmp_path / "file").write_text("x")
    assert not_a_file(str(folder)) == "is a directory, not a file"
    assert not_a_file("/dev/null") == "is not a regular file (a device, pipe or socket)"
    assert not_a_file(str(tmp_path / "nope")) == "no such file"
    assert not_a_file(str(tmp_path / "file" / "below")).startswith("no such file (a part of the path")
    assert not_a_file(str(tmp_path / "file")) is None
    assert not_a_directory(str(tmp_path / "file")) == "exists and is not a directory"
    assert not_a_directory(str(folder)) is None and not_a_directory(str(tmp_path / "new")) is None


@pytest.mark.parametrize(("args", "said"), [
    (("webhook", "serve", "--port", "0", "--metrics-port", "0", "--cert", "{dir}", "--key", "{dir}"),
     "vgpuctl: --cert {dir}: is a directory, not a file\n"),
    (("webhook", "certs", "--service", "s", "--namespace", "n", "--out", "{file}"),
     "vgpuctl: --out {file}: exists and is not a directory\n"),
    (("nodes", "--kubeconfig", "{dir}"), "vgpuctl: --kubeconfig {dir}: is a directory, not a file\n"),
])
def test_options_say_what_is_wrong_with_the_path(tmp_path: Path, args: tuple[str, ...], said: str) -> None:
    (tmp_path / "file").write_text("x")
    names = {"dir": str(tmp_path), "file": str(tmp_path / "file")}
    result = _vgpuctl(*(a.format(**names) for a in args))
    assert (result.returncode, result.stderr) == (2, said.format(**names))


def test_kubeconfig_variable_naming_a_directory(tmp_path: Path) -> None:
    import os

    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"} | {"KUBECONFIG": str(tmp_path)}
    result = _vgpuctl("nodes", env=env)
    assert (result.returncode, result.stderr) == (2, f"vgpuctl: KUBECONFIG={tmp_path}: is a directory, not a file\n")
