"""RuntimeClasses in snapshots, and VGK008 judged only when they were collected.

Upstream evidence: Project-HAMi/ascend-device-plugin ships `ascend-runtimeclass.yaml` (RuntimeClass `ascend`,
handler `ascend`, `node.k8s.io/v1`) from v1.3.0 (commit 880b827; its README deploys it) and v1.4.0's
`docs/volcano.md` requires `runtimeClassName: ascend` on every Ascend pod; v1.2.0 has neither.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.unit.doctor.cluster_builders import DEVICESHARE_ASCEND_HAMI, ds_status, scheduler
from tests.unit.doctor.conftest import doctor, found, result, scheduler_cm, workload
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.snapshotfile import KINDS_ANNOTATION, SnapshotData, load_snapshot, save_snapshot

NODE = {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}}
ASCEND_RC = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "ascend"},
             "handler": "ascend"}
NVIDIA_RC = {"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "nvidia"},
             "handler": "nvidia"}


def ascend_plugin(tag: str) -> dict[str, Any]:
    return workload("DaemonSet", "kube-system", "hami-ascend-device-plugin",
                    f"docker.io/projecthami/ascend-device-plugin:{tag}", status=ds_status(1, 1))


def base(tag: str = "v1.4.0") -> list[dict[str, Any]]:
    return [scheduler_cm(DEVICESHARE_ASCEND_HAMI), scheduler("v1.16.0"), ascend_plugin(tag)]


def kubectl_list(items: list[dict[str, Any]], annotations: dict[str, str] | None = None) -> str:
    return yaml.safe_dump({"apiVersion": "v1", "kind": "List", "metadata": {"annotations": annotations or {}},
                           "items": items})


# ---- the snapshot file and the model ---------------------------------------------------------------

def test_plain_kubectl_snapshot_has_no_runtimeclass_list(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(kubectl_list([NODE]))
    data = load_snapshot(str(path))
    assert data.kinds is None
    assert build_snapshot(data.objects, kinds=data.kinds).runtime_classes is None


def test_runtimeclass_objects_mean_they_were_collected(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(kubectl_list([NODE, NVIDIA_RC]))
    data = load_snapshot(str(path))
    snap = build_snapshot(data.objects, kinds=data.kinds)
    assert [rc["metadata"]["name"] for rc in snap.runtime_classes or []] == ["nvidia"]


def test_kinds_annotation_says_none_exist(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(kubectl_list([NODE], {KINDS_ANNOTATION: "Node,RuntimeClass"}))
    data = load_snapshot(str(path))
    assert data.kinds == frozenset({"Node", "RuntimeClass"})
    assert build_snapshot(data.objects, kinds=data.kinds).runtime_classes == []
    assert build_snapshot(data.objects, kinds=frozenset({"Node"})).runtime_classes is None


@pytest.mark.parametrize("name", ["s.yaml", "s.json.gz"])
def test_save_records_the_kinds_listed(tmp_path: Path, name: str) -> None:
    target = str(tmp_path / name)
    save_snapshot(target, SnapshotData([NODE], "v1.31.0", frozenset({"Node", "RuntimeClass"})))
    again = load_snapshot(target)
    assert again == SnapshotData([NODE], "v1.31.0", frozenset({"Node", "RuntimeClass"}))


# ---- VGK008 ------------------------------------------------------------------------------------------

def test_vgk008_missing_runtimeclass_with_a_plugin_that_requires_it() -> None:
    report = doctor(build_snapshot(base("v1.3.0"), kinds=frozenset({"RuntimeClass"})), version="1.16.0")
    (f,) = found(report, "VGK008")
    assert (f.severity.value, f.subject) == ("error", "runtimeclass/ascend")
    assert "no RuntimeClass 'ascend'" in f.message and "(v1.3.0)" in f.message


@pytest.mark.parametrize(("objects", "kinds"), [
    ([ASCEND_RC], None),  # present (found among the objects)
    ([ASCEND_RC, NVIDIA_RC], frozenset({"RuntimeClass"})),
])
def test_vgk008_passes_when_ascend_exists(objects: list[dict[str, Any]], kinds: frozenset[str] | None) -> None:
    report = doctor(build_snapshot([*base(), *objects], kinds=kinds), version="1.16.0")
    assert found(report, "VGK008") == [] and result(report, "VGK008").status.value == "pass"


@pytest.mark.parametrize("tag", ["v1.2.0", "v1.0.1", "sha-abc"])
def test_vgk008_not_for_plugins_that_do_not_require_it(tag: str) -> None:
    """Before v1.3.0 the plugin neither ships nor mentions the RuntimeClass; an unreadable tag says nothing."""
    report = doctor(build_snapshot(base(tag), kinds=frozenset({"RuntimeClass"})), version="1.16.0")
    assert found(report, "VGK008") == []


def test_vgk008_skips_a_snapshot_without_runtimeclasses() -> None:
    """`kubectl get nodes,pods,configmaps,daemonsets,deployments -A -o yaml` (the README's old command) has none:
    the check cannot tell a missing RuntimeClass from one never listed, so it skips with the reason."""
    report = doctor(build_snapshot(base("v1.4.0")), version="1.16.0")
    assert found(report, "VGK008") == []
    check = result(report, "VGK008")
    assert check.status.value == "skip" and "no RuntimeClass list" in check.reason


def test_vgk008_without_any_ascend_plugin_passes_even_without_the_list() -> None:
    report = doctor(build_snapshot([scheduler_cm(), scheduler("v1.16.0")]), version="1.16.0")
    assert result(report, "VGK008").status.value == "pass"
