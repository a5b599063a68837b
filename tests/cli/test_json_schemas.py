"""Every `-o json` has a schema in schemas/ and real output validates against it (issue 27). The table below
names one command line per command that offers `-o json`; a test walks the command tree, so a new command
with `-o json` and no entry here fails."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from typer.main import get_command

from tests.cli.conftest import EXAMPLES, ROOT, SCHEMAS, validate
from vgpuctl.cli.app import COMMANDS, app

BROKEN = str(EXAMPLES / "clusters" / "broken.yaml")
HEALTHY = str(EXAMPLES / "clusters" / "healthy.yaml")
VGPU_CONFIG = str(EXAMPLES / "volcano-vgpu-device-config.yaml")
VNPU_CONFIG = str(ROOT / "tests" / "fixtures" / "hami-scheduler-device.yaml")

# command path → (arguments after it, the schema its JSON follows, a document inside a ConfigMap's data)
REPORTS: dict[str, tuple[list[str], str]] = {
    "doctor": (["--snapshot", BROKEN], "doctor-report"),
    "nodes": (["--snapshot", BROKEN], "node-report"),
    "lint": ([str(EXAMPLES / "vgpu")], "lint-report"),
    "why": (["-f", str(EXAMPLES / "vgpu" / "deployment.yaml"), "--snapshot", HEALTHY], "why-report"),
    "explain": (["VGP005"], "code-explanation"),
    "explain --list": (["--list"], "code-list"),
    "geometry validate": ([VGPU_CONFIG], "geometry-report"),
    "geometry show": ([VGPU_CONFIG], "geometry-view"),
    "geometry explain": (["--model", "NVIDIA A100-SXM4-40GB", "--memory", "3000", "--config", VGPU_CONFIG],
                         "geometry-explanation"),
    "install": (["--mode", "vgpu", "--dry-run", "--snapshot", HEALTHY], "install-report"),
    "uninstall": (["--dry-run", "--snapshot", HEALTHY], "install-report"),
}
# Commands whose -o json prints a Kubernetes document (a ConfigMap) rather than a report: its payload follows
# the device config's schema.
DOCUMENTS: dict[str, list[str]] = {
    "geometry export": [VGPU_CONFIG],
    "geometry merge": ["--vgpu", VGPU_CONFIG, "--vnpu", VNPU_CONFIG],
}


def _json_commands() -> set[str]:
    """Every command path whose -o/--output offers json."""
    root = get_command(app)
    found: set[str] = set()

    def walk(command: Any, path: str) -> None:
        for param in getattr(command, "params", ()):
            if "--output" in getattr(param, "opts", ()) and "json" in getattr(param.type, "choices", ()):
                found.add(path)
        for name, sub in (getattr(command, "commands", None) or {}).items():
            walk(sub, f"{path} {name}".strip())

    for name in COMMANDS:
        walk(root.get_command(None, name), name)  # type: ignore[attr-defined]
    return found


def test_every_command_with_json_output_is_listed() -> None:
    listed = {path.split(" --")[0] for path in REPORTS} | set(DOCUMENTS)
    assert _json_commands() == listed


def test_every_report_schema_exists_and_names_its_kind() -> None:
    for _, schema in REPORTS.values():
        assert (SCHEMAS / f"{schema}.schema.json").is_file(), schema


@pytest.mark.parametrize("path", sorted(REPORTS))
def test_the_json_validates(run: Any, path: str) -> None:
    args, schema = REPORTS[path]
    result = run(*path.split(" --")[0].split(), *args, "-o", "json")
    assert result.exit_code in (0, 1), result.stderr
    report = result.json()
    validate(f"{schema}.schema.json", report)
    assert report["apiVersion"] == "vgpuctl.io/v1alpha1" and isinstance(report["kind"], str)
    if path == "geometry show":  # the config inside is the document geometry reads
        validate("device-config.schema.json", report["config"])


@pytest.mark.parametrize("path", sorted(DOCUMENTS))
def test_the_documents_carry_a_valid_device_config(run: Any, path: str) -> None:
    result = run(*path.split(), *DOCUMENTS[path], "-o", "json")
    assert result.exit_code == 0, result.stderr
    configmap = result.json()
    assert configmap["kind"] == "ConfigMap"
    validate("device-config.schema.json", yaml.safe_load(configmap["data"]["device-config.yaml"]))
