"""`vgpuctl lint` end to end: exit codes, output formats, inputs, and the JSON contract."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.cli.conftest import EXAMPLES, validate

BAD_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: bad, namespace: ml}
spec:
  schedulerName: volcano
  containers:
  - name: trainer
    resources:
      limits: {volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 3Gi}
"""

GOOD_POD = """\
apiVersion: v1
kind: Pod
metadata: {name: good}
spec:
  schedulerName: volcano
  containers:
  - name: trainer
    resources:
      limits: {volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 3072}
"""

WARN_POD = """\
apiVersion: v1
kind: Pod
metadata:
  name: warn
  annotations: {volcano.sh/vgpu-podgroup-policy: pack}
spec:
  schedulerName: volcano
  containers:
  - name: trainer
    resources:
      limits: {volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 3072}
"""


def write(tmp_path: Path, name: str, text: str) -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_examples_json_is_schema_valid_and_reports_the_broken_ones(run) -> None:
    result = run("lint", str(EXAMPLES), "-o", "json")
    assert result.exit_code == 1
    report = result.json()
    validate("lint-report.schema.json", report)
    by_name = {item["name"]: item for item in report["items"]}
    assert by_name["gpu-pod12"]["allowed"] is True and by_name["gpu-pod12"]["findings"] == []
    assert not by_name["broken-gpu-pod"]["allowed"]
    codes = {f["code"] for f in by_name["broken-gpu-pod"]["findings"]}
    assert {"VGP001", "VGP004", "VGP005", "VGP007"} <= codes
    assert report["summary"]["objects"] == len(report["items"])
    assert report["summary"]["denied"] == sum(1 for i in report["items"] if not i["allowed"])


def test_a_clean_file_exits_0_and_says_so(run, tmp_path: Path) -> None:
    result = run("lint", write(tmp_path, "good.yaml", GOOD_POD))
    assert result.exit_code == 0
    assert "1 object checked" in result.stdout and "0 errors" in result.stdout
    assert "\x1b[" not in result.stdout  # no colour when stdout is not a terminal


def test_table_lists_code_subject_message_and_hint(run, tmp_path: Path) -> None:
    result = run("lint", write(tmp_path, "bad.yaml", BAD_POD))
    assert result.exit_code == 1
    assert "Pod ml/bad" in result.stdout
    assert "VGP005" in result.stdout and "write 3072" in result.stdout
    assert "vgpuctl explain VGP005" in result.stdout
    # stderr holds only the one note on the device config judged against (tests/cli/test_lint_builtin_config.py)
    assert result.stderr.startswith("note: no --device-config") and result.stderr.count("\n") == 1


def test_fail_on_warning_turns_warnings_into_exit_1(run, tmp_path: Path) -> None:
    path = write(tmp_path, "warn.yaml", WARN_POD)
    assert run("lint", path).exit_code == 0
    assert run("lint", path, "--fail-on", "warning").exit_code == 1


def test_exit_code_does_not_depend_on_output_format(run, tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", BAD_POD)
    assert {run("lint", path, "-o", fmt).exit_code for fmt in ("table", "json", "yaml")} == {1}


def test_yaml_output_matches_json_output(run, tmp_path: Path) -> None:
    path = write(tmp_path, "bad.yaml", BAD_POD)
    assert yaml.safe_load(run("lint", path, "-o", "yaml").stdout) == run("lint", path, "-o", "json").json()


def test_stdin_multi_document_and_kind_list(run) -> None:
    listing = {"apiVersion": "v1", "kind": "List", "items": [yaml.safe_load(GOOD_POD), yaml.safe_load(BAD_POD)]}
    text = GOOD_POD + "---\n" + json.dumps(listing) + "\n---\n{kind: ConfigMap, metadata: {name: x}}\n"
    result = run("lint", "-", "-o", "json", input=text)
    assert result.exit_code == 1
    report = result.json()
    first = len(GOOD_POD.splitlines()) + 2  # the List's line: after the Pod and the `---`
    assert [i["source"] for i in report["items"]] == [
        "<stdin>:1", f"<stdin>:{first}/items[0]", f"<stdin>:{first}/items[1]"]  # flow style: one line, by index
    assert [i["document"] for i in report["items"]] == [0, 1, 1]
    assert report["summary"]["objects"] == 3


def test_sources_are_the_lines_where_objects_start(run, tmp_path: Path) -> None:
    """Issue 27: `file:line` (as kubeconform and editors place things), not the document index; a YAML List's
    items each at their own line; `document` keeps the index."""
    listing = yaml.safe_dump({"apiVersion": "v1", "kind": "List",
                              "items": [yaml.safe_load(GOOD_POD), yaml.safe_load(BAD_POD)]}, sort_keys=False)
    text = "# a comment\n\n" + BAD_POD + "---\n---\n" + listing
    path = write(tmp_path, "many.yaml", text)
    report = run("lint", path, "-o", "json").json()
    validate("lint-report.schema.json", report)
    lines = text.splitlines()
    starts = [int(i["source"].rsplit(":", 1)[1]) for i in report["items"]]
    assert [i["source"].rsplit(":", 1)[0] for i in report["items"]] == [path] * 3
    assert [i["document"] for i in report["items"]] == [0, 2, 2]  # the empty document counts, as kubectl's index
    assert lines[starts[0] - 1] == BAD_POD.splitlines()[0]
    assert starts[1] < starts[2] and lines[starts[1] - 1].startswith("- ") and lines[starts[2] - 1].startswith("- ")
    assert [i["name"] for i in report["items"]] == ["bad", "good", "bad"]
    table = run("lint", path).stdout
    assert f"{path}:{starts[0]}" in table and f"{path}:{starts[2]}" in table and f"{path}:0" not in table


def test_invalid_yaml_is_reported_and_other_files_still_checked(run, tmp_path: Path) -> None:
    write(tmp_path, "a-broken.yaml", "kind: Pod\nspec: [unclosed\n")
    write(tmp_path, "b-good.yaml", GOOD_POD)
    (tmp_path / "notes.txt").write_text("not a manifest")
    result = run("lint", str(tmp_path), "-o", "json")
    assert result.exit_code == 1
    items = result.json()["items"]
    assert items[0]["findings"][0]["code"] == "VGL001"
    assert "at line 3, column 1" in items[0]["findings"][0]["message"]
    assert items[1]["name"] == "good" and items[1]["allowed"]


def test_missing_path_is_a_usage_error(run, tmp_path: Path) -> None:
    result = run("lint", str(tmp_path / "nope.yaml"))
    assert result.exit_code == 2
    assert "no such file" in result.stderr and result.stdout == ""


def test_bad_flag_value_is_a_usage_error(run, tmp_path: Path) -> None:
    assert run("lint", write(tmp_path, "g.yaml", GOOD_POD), "-o", "xml").exit_code == 2
    result = run("lint", write(tmp_path, "g.yaml", GOOD_POD), "--volcano-version", "banana")
    assert result.exit_code == 2 and "--volcano-version" in result.stderr


def test_device_config_enables_config_rules(run, tmp_path: Path) -> None:
    mig = write(tmp_path, "mig.yaml", GOOD_POD.replace("metadata: {name: good}",
                                                      "metadata: {name: m, annotations: {volcano.sh/vgpu-mode: mig}}"))
    without = run("lint", mig, "-o", "json").json()
    with_config = run("lint", mig, "-o", "json", "--device-config",
                      str(EXAMPLES / "volcano-vgpu-device-config.yaml")).json()
    assert not any(f["code"] == "VGP017" for f in without["items"][0]["findings"])
    slices = [f["message"] for f in with_config["items"][0]["findings"] if f["code"] == "VGP017"]
    assert slices and "1g.5gb" in slices[0]


def test_unusable_device_config_is_a_usage_error_naming_the_key(run, tmp_path: Path) -> None:
    config = write(tmp_path, "dc.yaml", "nvidia:\n  gpuMemoryFactor: '2'\n")
    result = run("lint", write(tmp_path, "g.yaml", GOOD_POD), "--device-config", config)
    assert result.exit_code == 2
    assert "nvidia.gpuMemoryFactor" in result.stderr and "fall back" in result.stderr


def test_scheduler_name_option(run, tmp_path: Path) -> None:
    path = write(tmp_path, "p.yaml", GOOD_POD.replace("schedulerName: volcano", "schedulerName: vc-gpu"))
    assert run("lint", path).exit_code == 1
    assert run("lint", path, "--scheduler-name", "volcano", "--scheduler-name", "vc-gpu").exit_code == 0


def test_no_defaults_judges_like_the_validating_webhook(run, tmp_path: Path) -> None:
    path = write(tmp_path, "p.yaml", GOOD_POD.replace("volcano.sh/vgpu-number: 1, ", ""))
    assert run("lint", path).exit_code == 0
    result = run("lint", path, "--no-defaults", "-o", "json")
    assert result.exit_code == 1
    assert [f["code"] for f in result.json()["items"][0]["findings"]] == ["VGP002"]


def test_patch_is_reported_for_defaults(run, tmp_path: Path) -> None:
    path = write(tmp_path, "p.yaml", GOOD_POD.replace("  schedulerName: volcano\n", ""))
    item = run("lint", path, "-o", "json").json()["items"][0]
    assert item["allowed"] is True
    assert item["patch"] == [{"op": "add", "path": "/spec/schedulerName", "value": "volcano"}]


def test_snapshot_enables_cluster_aware_rules(run, tmp_path: Path) -> None:
    mixed = str(Path(__file__).resolve().parents[1] / "fixtures" / "clusters" / "mixed.yaml")
    three = write(tmp_path, "p.yaml", GOOD_POD.replace("volcano.sh/vgpu-number: 1", "volcano.sh/vgpu-number: 3"))
    assert run("lint", three).exit_code == 0
    result = run("lint", three, "--snapshot", mixed, "-o", "json")
    assert result.exit_code == 1
    assert [f["code"] for f in result.json()["items"][0]["findings"]] == ["VGP003"]


def test_findings_are_placed_at_the_line_of_their_field(run, tmp_path: Path) -> None:
    """Issue 27: each finding at the line of what its subject names — a container's `- name:`, an annotation's
    key, a task's labels — in the table and the JSON, as kubeconform and kube-linter place theirs."""
    path = EXAMPLES / "vgpu" / "broken-pod.yaml"
    lines = path.read_text().splitlines()
    report = run("lint", str(path), "-o", "json").json()
    validate("lint-report.schema.json", report)
    placed = {f["code"]: f["line"] for f in report["items"][0]["findings"]}
    assert lines[placed["VGP005"] - 1].strip() == "- name: trainer"
    assert lines[placed["VGP007"] - 1].strip() == "- name: warmup"
    assert lines[placed["VGP001"] - 1].strip().startswith("volcano.sh/vgpu-mode: MIG")
    table = run("lint", str(path)).stdout
    assert f"VGP005  line {placed['VGP005']}  container \"trainer\"" in table
    job = EXAMPLES / "mindcluster" / "broken-job.yaml"
    job_lines = job.read_text().splitlines()
    found = run("lint", str(job), "-o", "json").json()["items"][0]["findings"]
    vgw001 = next(f for f in found if f["code"] == "VGW001")  # the Job's own labels, named from its top
    assert job_lines[vgw001["line"] - 1].strip().startswith("ring-controller.atlas:")


def test_a_list_item_finding_is_placed_inside_that_item(run, tmp_path: Path) -> None:
    listing = yaml.safe_dump({"apiVersion": "v1", "kind": "List",
                              "items": [yaml.safe_load(GOOD_POD), yaml.safe_load(BAD_POD)]}, sort_keys=False)
    path = write(tmp_path, "list.yaml", listing)
    item = run("lint", path, "-o", "json").json()["items"][1]
    start = int(item["source"].rsplit(":", 1)[1])
    text = listing.splitlines()
    for finding in item["findings"]:
        assert finding["line"] >= start  # inside the second item, not the first
        assert text[finding["line"] - 1].strip() == "- name: trainer"


def test_json_input_has_no_field_lines(run, tmp_path: Path) -> None:
    path = write(tmp_path, "bad.json", json.dumps(yaml.safe_load(BAD_POD)))
    report = run("lint", path, "-o", "json").json()
    validate("lint-report.schema.json", report)
    assert report["items"][0]["findings"] and all("line" not in f for f in report["items"][0]["findings"])
