"""`schemas/install-report.schema.json` is a valid 2020-12 schema, embeds the doctor report's shapes
unchanged, and rejects what is not an InstallReport (real output is validated in tests/install)."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from typing import Any

import jsonschema
import pytest

from tests.cli.conftest import SCHEMAS, validate
from vgpuctl.core import spec
from vgpuctl.core.install.modes import Mode
from vgpuctl.core.install.plan import SCHEDULER_CM, ClusterState, InstallOptions, plan
from vgpuctl.render.install import install_report

SCHEMA = json.loads((SCHEMAS / "install-report.schema.json").read_text())
DOCTOR = json.loads((SCHEMAS / "doctor-report.schema.json").read_text())


def report(**kwargs: Any) -> dict[str, Any]:
    cm = {"apiVersion": "v1", "kind": "ConfigMap",
          "metadata": {"name": spec.SCHEDULER_CONFIGMAP, "namespace": spec.SCHEDULER_NAMESPACE},
          "data": {spec.SCHEDULER_CONF_KEY: "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n"}}
    the_plan = plan(ClusterState({SCHEDULER_CM: cm}), InstallOptions((Mode.VGPU,)),
                    now=datetime(2026, 1, 1, tzinfo=UTC))
    return install_report(the_plan, verb="install", **{"dry_run": True, **kwargs})


def test_schema_is_valid_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


def test_the_doctor_part_is_the_doctor_reports_own_shapes() -> None:
    (_, embedded) = SCHEMA["properties"]["doctor"]["oneOf"]
    for key in ("versions", "checks", "findings", "summary"):
        assert embedded["properties"][key] == DOCTOR["properties"][key], key


def test_a_planned_report_validates() -> None:
    document = report()
    validate("install-report.schema.json", document)
    assert document["outcome"] == "planned" and document["summary"]["writes"] > 0


@pytest.mark.parametrize("breakage", [
    lambda d: d.pop("steps"),
    lambda d: d["steps"][0].update(status="maybe"),
    lambda d: d["steps"][0].update(action="patch"),
    lambda d: d.update(outcome="ok"),
    lambda d: d["summary"].update(failed=2),
    lambda d: d.update(extra=True),
])
def test_what_is_not_an_install_report_is_rejected(breakage: Any) -> None:
    document = copy.deepcopy(report())
    breakage(document)
    with pytest.raises(jsonschema.ValidationError):
        validate("install-report.schema.json", document)
