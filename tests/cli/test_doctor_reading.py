"""Reading the doctor (issue 27): the same problem on many subjects is one finding for every code, a
problems-only view (`-q`, as `lint -q`), and a summary that counts checks and findings apart."""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import EXAMPLES, validate

FLEET = str(Path(__file__).resolve().parents[1] / "fixtures" / "scale" / "fleet-150.json.gz")
BROKEN = str(EXAMPLES / "clusters" / "broken.yaml")
HEALTHY = str(EXAMPLES / "clusters" / "healthy.yaml")


def _expanded(findings: list[dict[str, Any]]) -> Counter[tuple[str, str, str]]:
    """(code, subject, message) of every subject of every (grouped) finding."""
    out: Counter[tuple[str, str, str]] = Counter()
    for f in findings:
        subjects = f.get("subjects", [f["subject"]])
        messages = f.get("messages", [f["message"]] * len(subjects))
        assert len(messages) == len(subjects)
        out.update((f["code"], s, m) for s, m in zip(subjects, messages, strict=True))
    return out


@pytest.mark.parametrize("snapshot", [FLEET, BROKEN])
def test_every_code_is_one_finding_per_category_and_severity(run: Any, snapshot: str) -> None:
    grouped = run("doctor", "--snapshot", snapshot, "-o", "json").json()
    validate("doctor-report.schema.json", grouped)
    keys = Counter((f["code"], f["severity"], f["category"]) for f in grouped["findings"])
    assert keys and max(keys.values()) == 1, [k for k, n in keys.items() if n > 1]
    every = run("doctor", "--snapshot", snapshot, "--all", "-o", "json").json()
    assert all("subjects" not in f and "messages" not in f for f in every["findings"])
    # nothing lost: the grouped report names every subject with its own message
    assert _expanded(grouped["findings"]) == _expanded(every["findings"])


def test_subjects_with_their_own_details_keep_them(run: Any) -> None:
    report = run("doctor", "--snapshot", FLEET, "-o", "json").json()
    vgx002 = [f for f in report["findings"] if f["code"] == "VGX002"]
    assert len(vgx002) == 1 and len(vgx002[0]["subjects"]) > 1
    finding = vgx002[0]
    assert len(set(finding["messages"])) == len(finding["messages"])  # each names its own GPU or node
    assert finding["message"].endswith(f"e.g. {finding['subjects'][0]}: {finding['messages'][0]}")
    table = run("doctor", "--snapshot", FLEET).stdout
    assert table.count("VGX002") == 2  # the finding and its hint's `vgpuctl explain VGX002`


def test_problems_only_shows_checks_that_warn_or_fail(run: Any) -> None:
    full = run("doctor", "--snapshot", BROKEN)
    quiet = run("doctor", "--snapshot", BROKEN, "-q")
    assert quiet.exit_code == full.exit_code == 1
    checks = [line for line in full.stdout.splitlines() if re.match(r"[√‼×–] ", line)]
    shown = [line for line in quiet.stdout.splitlines() if re.match(r"[√‼×–] ", line)]
    assert shown and shown[:-1] == [line for line in checks[:-1] if line[0] in "‼×"]
    assert full.stdout.splitlines()[-1] == quiet.stdout.splitlines()[-1]  # the summary counts every check
    assert not [line for line in quiet.stdout.splitlines() if line.startswith(("√ ", "– "))]


def test_problems_only_on_a_healthy_cluster_says_so(run: Any) -> None:
    result = run("doctor", "--snapshot", HEALTHY, "--quiet")
    assert result.exit_code == 0
    assert result.stdout.splitlines()[0] == "√ no check warns or fails"


def test_summary_counts_checks_and_findings_apart(run: Any) -> None:
    report = run("doctor", "--snapshot", FLEET, "-o", "json").json()
    last = run("doctor", "--snapshot", FLEET).stdout.splitlines()[-1]
    statuses = Counter(c["status"] for c in report["checks"])
    severities = Counter(f["severity"] for f in report["findings"])
    subjects = sum(len(set(f.get("subjects", [f["subject"]]))) for f in report["findings"])
    assert last.startswith(f"× {len(report['checks'])} checks: {statuses['pass']} passed, ")
    assert f"{statuses['warn']} warned" in last and f"{statuses['fail']} failed" in last
    assert f" · {len(report['findings'])} findings ({subjects} subjects): " in last
    assert f"{severities['error']} error" in last and f"{severities['warning']} warnings" in last
    # the JSON summary keeps its contract: findings per subject
    assert report["summary"]["warnings"] > severities["warning"]
