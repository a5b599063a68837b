"""`vgpuctl doctor` on a Volcano newer than the newest release the matrix knows (`versions.VOLCANO_TAGS`):
judged as the newest, said on stderr (like an unknown version) and in the report (the version check's reason)."""

from __future__ import annotations

from pathlib import Path

from tests.cli.conftest import EXAMPLES, validate

HEALTHY = EXAMPLES / "clusters" / "healthy.yaml"
NOTE = "Volcano 1.17.0 is newer than the newest release vgpuctl knows (1.16.0)"


def _snapshot(tmp_path: Path, tag: str) -> str:
    text = HEALTHY.read_text().replace("vc-scheduler:v1.15.1", f"vc-scheduler:{tag}")
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    return str(path)


def test_newer_volcano_is_said_on_stderr_and_in_the_report(run, tmp_path: Path) -> None:
    result = run("doctor", "--snapshot", _snapshot(tmp_path, "v1.17.0"), "-o", "json")
    assert f"vgpuctl: {NOTE}" in result.stderr
    report = result.json()
    validate("doctor-report.schema.json", report)
    assert report["versions"]["volcano"] == "1.17.0"
    (check,) = [c for c in report["checks"] if c["description"] == "Volcano is recent enough for the features in use"]
    assert check["status"] == "skip" and NOTE in check["reason"]


def test_newer_volcano_from_the_flag_is_said_too(run) -> None:
    result = run("doctor", "--snapshot", str(HEALTHY), "--volcano-version", "v1.17.0", "-o", "json")
    assert NOTE in result.stderr


def test_known_volcano_says_nothing(run, tmp_path: Path) -> None:
    for tag in ("v1.15.1", "v1.16.0", "v1.16.0-alpha.1"):
        result = run("doctor", "--snapshot", _snapshot(tmp_path, tag), "-o", "json")
        assert "newer than the newest release" not in result.stderr
        (check,) = [c for c in result.json()["checks"]
                    if c["description"] == "Volcano is recent enough for the features in use"]
        assert check["status"] == "pass"
