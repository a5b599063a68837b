"""`vgpuctl explain`: offline pages for every finding code."""

from __future__ import annotations

from vgpuctl.core.catalogue import CATALOGUE


def test_explain_prints_title_doc_and_fix(run) -> None:
    result = run("explain", "vgp005")
    assert result.exit_code == 0
    assert result.stdout.startswith("VGP005 (error)")
    assert CATALOGUE["VGP005"].title in result.stdout
    assert "Fix:" in result.stdout


def test_explain_json(run) -> None:
    data = run("explain", "VGC005", "-o", "json").json()
    assert data["code"] == "VGC005" and data["severity"] == "error" and "ParseBool" in data["doc"]


def test_list_covers_the_whole_catalogue(run) -> None:
    listing = run("explain", "--list", "-o", "json").json()
    assert listing["kind"] == "CodeList"
    assert [r["code"] for r in listing["items"]] == list(CATALOGUE)
    table = run("explain", "--list")
    assert table.exit_code == 0 and "VGN002" in table.stdout


def test_unknown_code_is_a_usage_error_with_suggestions(run) -> None:
    result = run("explain", "VGP05")
    assert result.exit_code == 2
    assert "unknown code" in result.stderr


def test_no_code_is_a_usage_error(run) -> None:
    assert run("explain").exit_code == 2


def test_version_and_help(run) -> None:
    assert run("--version").stdout.startswith("vgpuctl ")
    help_text = run("lint", "--help").stdout
    assert "Examples" in help_text and "--device-config" in help_text


def test_explain_prints_evidence_a_user_can_open(run) -> None:
    """Issue 19: `explain VGP005` printed "Evidence: docs/vgpu.md#vgpu-pod-request,
    docs/device-plugins.md#vgpu-memory-units", sections of documents not in the
    repository. It now lists the installed docs pages (file: URLs with their anchors) and upstream files."""
    from pathlib import Path
    from urllib.parse import urlparse

    result = run("explain", "VGP005")
    opened = result.stdout.split("Evidence you can open:")[1].split()
    pages = [urlparse(ref) for ref in opened if ref.startswith("file:")]
    assert pages and all(Path(page.path).is_file() and page.fragment for page in pages)
    assert any(ref.startswith("https://github.com/volcano-sh/volcano/blob/HEAD/") for ref in opened)
    data = run("explain", "VGP005", "-o", "json").json()
    assert [e["ref"] for e in data["evidence"]] == opened
