"""Every object install renders is valid Kubernetes (kubernetes-validate --strict, 1.28 → newest), carries
`app.kubernetes.io/managed-by: vgpuctl`, and follows the upstream facts and the version matrix."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import kubernetes_validate
import pytest
import yaml
from kubernetes_validate import utils as kv_utils

from vgpuctl.core import spec
from vgpuctl.core.geometry.validate import validate_payload
from vgpuctl.core.install.devconf import plan_device_config, plan_device_config_removal
from vgpuctl.core.install.modes import InstallError, Mode
from vgpuctl.core.install.modes import parse_nodes as parse_selector
from vgpuctl.core.install.plan import SCHEDULER_CM, ClusterState, InstallOptions, Method, Ref, plan
from vgpuctl.core.install.plugins import choose_version, render_ascend, render_vgpu
from vgpuctl.core.versions import Version

OLDEST = (1, 28)
VERSIONS = sorted({v for v in kv_utils.all_versions() if tuple(map(int, v.split(".")[:2])) >= OLDEST},
                  key=lambda v: tuple(map(int, v.split(".")[:2])))
NOW = datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)
CONF = "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n"


def state(conf: str = CONF, extra: dict[Ref, Any] | None = None) -> ClusterState:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": spec.SCHEDULER_CONFIGMAP,
                                                                "namespace": spec.SCHEDULER_NAMESPACE,
                                                                "resourceVersion": "7"},
          "data": {spec.SCHEDULER_CONF_KEY: conf}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "volcano-scheduler", "namespace": "volcano-system"},
                  "spec": {"template": {"spec": {"containers": [{"image": "volcanosh/vc-scheduler:v1.15.1"}]}}}}
    nodes = [{"metadata": {"name": "n1", "labels": {"npu": "yes"}}}, {"metadata": {"name": "n2"}}]
    return ClusterState({SCHEDULER_CM: cm, **(extra or {})}, nodes, deployment)


def all_rendered() -> list[dict[str, Any]]:
    the_plan = plan(state(), InstallOptions((Mode.VGPU, Mode.VNPU_HAMI), nodes="npu=yes"), now=NOW)
    objects = [s.body for s in the_plan.steps if s.body is not None and s.method is not Method.MERGE]
    # device CM, 2 node CMs, 2 × (SA, ClusterRole, binding, DaemonSet), the `ascend` RuntimeClass, backup, scheduler
    assert len(objects) == 14
    return [o for o in objects if o is not None]


@pytest.mark.parametrize("version", VERSIONS)
def test_every_rendered_object_passes_strict_validation(version: str) -> None:
    for obj in all_rendered():
        clean = {**obj, "metadata": {k: v for k, v in obj["metadata"].items() if k != "resourceVersion"}}
        kubernetes_validate.validate(clean, version, strict=True)


def test_strict_validation_would_catch_a_bad_field() -> None:
    daemonset = next(o for o in all_rendered() if o["kind"] == "DaemonSet")
    daemonset["spec"]["template"]["spec"]["nodeSelectr"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(daemonset, VERSIONS[-1], strict=True)


def test_objects_vgpuctl_owns_are_labelled() -> None:
    for obj in all_rendered():
        if obj["metadata"]["name"] != spec.SCHEDULER_CONFIGMAP:
            assert obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "vgpuctl", obj["metadata"]["name"]


def test_an_ascend_override_the_volcano_form_cannot_serve_is_refused() -> None:
    with pytest.raises(InstallError, match="reads only the vnpus wrapper form"):
        choose_version(Mode.VNPU_HAMI, Version(1, 15, 0), "v1.4.0")
    with pytest.raises(InstallError, match="reads only the vnpus list form"):
        choose_version(Mode.VNPU_HAMI, Version(1, 15, 1), "v1.2.0")
    assert choose_version(Mode.VGPU, Version(1, 15, 1), "v1.11.0").version == "v1.11.0"


def test_daemonsets_land_only_on_selected_nodes() -> None:
    vgpu = next(o for o in render_vgpu("v1.12.0", parse_selector("gpu in (a100,h100),!cpu-only"))
                if o["kind"] == "DaemonSet")
    expressions = vgpu["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"][0]["matchExpressions"]
    assert expressions == [{"key": "gpu", "operator": "In", "values": ["a100", "h100"]},
                           {"key": "cpu-only", "operator": "DoesNotExist"}]
    ascend = next(o for o in render_ascend("v1.4.0", "volcano-vgpu-device-config") if o["kind"] == "DaemonSet")
    assert ascend["spec"]["template"]["spec"]["nodeSelector"] == {"ascend": "on"}
    volumes = {v["name"]: v for v in ascend["spec"]["template"]["spec"]["volumes"]}
    assert volumes["device-config"]["configMap"]["name"] == "volcano-vgpu-device-config"


def test_selector_matching_and_errors() -> None:
    selector = parse_selector("a=b,c!=d,e,!f,g notin (x, y)")
    assert selector.matches({"a": "b", "e": ""})
    assert not selector.matches({"a": "b", "e": "", "f": "1"})
    assert not selector.matches({"a": "b", "e": "", "g": "x"})
    with pytest.raises(InstallError):
        parse_selector("a=b,,c")
    with pytest.raises(InstallError):
        parse_selector("a in ()")


def test_only_the_selected_nodes_are_labelled_ascend_on() -> None:
    the_plan = plan(state(), InstallOptions((Mode.VNPU_HAMI,), nodes="npu=yes"), now=NOW)
    labelled = [s for s in the_plan.steps if s.ref.kind == "Node"]
    assert [s.ref.name for s in labelled] == ["n1"]
    assert labelled[0].body == {"metadata": {"labels": {"ascend": "on"},
                                             "annotations": {"vgpuctl.io/added-labels": "ascend"}}}


# --- device ConfigMap -----------------------------------------------------------------------------

def device_cm(payload: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": spec.DEVICE_CONFIGMAP, "namespace": "kube-system", "resourceVersion": "3"},
            "data": {spec.DEVICE_CONFIG_KEY: yaml.safe_dump(payload)}}


def test_a_new_device_configmap_is_valid_for_volcano() -> None:
    edit = plan_device_config(None, name=spec.DEVICE_CONFIGMAP, namespace="kube-system",
                              modes=(Mode.VGPU, Mode.VNPU_HAMI), version=Version(1, 15, 0))
    payload = yaml.safe_load(edit.payload_text)
    assert isinstance(payload["vnpus"], list)  # 1.15.0 reads only the list form
    errors = [f for f in validate_payload(payload, source="x", version=Version(1, 15, 0), vgpu_enabled=True,
                                          ascend_hami_enabled=True) if f.finding.severity.value == "error"]
    assert errors == []


def test_an_admins_section_is_never_replaced_and_unchanged_means_no_write() -> None:
    mine = {"nvidia": {"resourceCountName": "example.com/gpu", "deviceSplitCount": 4}}
    edit = plan_device_config(device_cm(mine), name=spec.DEVICE_CONFIGMAP, namespace="kube-system",
                              modes=(Mode.VGPU,), version=Version(1, 15, 1))
    assert not edit.changed
    both = plan_device_config(device_cm(mine), name=spec.DEVICE_CONFIGMAP, namespace="kube-system",
                              modes=(Mode.VGPU, Mode.VNPU_HAMI), version=Version(1, 15, 1))
    payload = yaml.safe_load(both.payload_text)
    assert payload["nvidia"] == mine["nvidia"]
    assert payload["vnpus"]["configs"]
    assert both.desired is not None
    action, restored, _ = plan_device_config_removal(both.desired)
    assert action == "update" and restored is not None
    assert yaml.safe_load(restored["data"][spec.DEVICE_CONFIG_KEY]) == mine


def test_a_wrapper_form_volcano_cannot_read_is_rewritten_as_a_list() -> None:
    wrapper = {"vnpus": {"hamiVnpuCore": False, "configs": [{"commonWord": "Ascend310P", "resourceName": "x"}]}}
    edit = plan_device_config(device_cm(wrapper), name=spec.DEVICE_CONFIGMAP, namespace="kube-system",
                              modes=(Mode.VNPU_HAMI,), version=Version(1, 15, 0))
    assert yaml.safe_load(edit.payload_text)["vnpus"] == wrapper["vnpus"]["configs"]
    assert any("list form" in n for n in edit.notes)


def test_an_edited_section_survives_uninstall() -> None:
    created = plan_device_config(None, name=spec.DEVICE_CONFIGMAP, namespace="kube-system", modes=(Mode.VGPU,),
                                 version=Version(1, 15, 1)).desired
    assert created is not None
    payload = yaml.safe_load(created["data"][spec.DEVICE_CONFIG_KEY])
    payload["nvidia"]["deviceSplitCount"] = 3
    created["data"][spec.DEVICE_CONFIG_KEY] = yaml.safe_dump(payload)
    action, _, notes = plan_device_config_removal(created)
    assert action == "update" and any("edited after vgpuctl added it" in n for n in notes)
    untouched = plan_device_config(None, name=spec.DEVICE_CONFIGMAP, namespace="kube-system", modes=(Mode.VGPU,),
                                   version=Version(1, 15, 1)).desired
    assert plan_device_config_removal(untouched)[0] == "delete"


# --- plan -----------------------------------------------------------------------------------------

def test_objects_that_exist_but_are_not_vgpuctls_are_left_alone() -> None:
    foreign = {"apiVersion": "apps/v1", "kind": "DaemonSet",
               "metadata": {"name": "volcano-device-plugin", "namespace": "kube-system"}, "spec": {}}
    ref = next(s.ref for s in plan(state(), InstallOptions((Mode.VGPU,)), now=NOW).steps if s.ref.kind == "DaemonSet")
    the_plan = plan(state(extra={ref: foreign}), InstallOptions((Mode.VGPU,)), now=NOW)
    step = next(s for s in the_plan.steps if s.ref == ref)
    assert step.action.value == "keep" and not step.writes


def test_the_scheduler_is_changed_last_after_a_backup_then_restarted() -> None:
    steps = plan(state(), InstallOptions((Mode.VGPU,)), now=NOW).steps
    kinds = [(s.action.value, s.ref.name) for s in steps if s.writes]
    assert kinds[-3:] == [("create", "volcano-scheduler-configmap-backup-20261121-120000z-" + kinds[-3][1][-6:]),
                          ("update", spec.SCHEDULER_CONFIGMAP), ("restart", "volcano-scheduler")]


def test_no_restart_leaves_a_note_instead() -> None:
    the_plan = plan(state(), InstallOptions((Mode.VGPU,), restart=False), now=NOW)
    assert not [s for s in the_plan.steps if s.action.value == "restart"]
    assert any("--no-restart" in n and "VGC011" in n for n in the_plan.notes)


def test_gpushare_renders_its_plugin_but_no_device_configmap() -> None:
    the_plan = plan(state(), InstallOptions((Mode.GPUSHARE,)), now=NOW)
    assert [s.ref.name for s in the_plan.steps if s.ref.kind == "DaemonSet"] == ["volcano-device-plugin"]
    assert any("volcano-sh/devices" in n for n in the_plan.notes)
    assert not [s for s in the_plan.steps if s.ref.name == spec.DEVICE_CONFIGMAP]
