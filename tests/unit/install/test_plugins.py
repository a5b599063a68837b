"""The device plugin of every install mode: valid Kubernetes (kubernetes-validate --strict, 1.28 → newest),
labelled, on the right nodes, with the upstream facts that matter, at a version the matrix in
`vgpuctl.core.versions` allows; and one dispatch (`render_plugin`) for all modes."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import kubernetes_validate
import pytest
from kubernetes_validate import utils as kv_utils

from vgpuctl.core import spec
from vgpuctl.core.doctor.checks.cluster import preset_virtual_device
from vgpuctl.core.install.modes import InstallError, Mode
from vgpuctl.core.install.plan import (
    SCHEDULER_CM,
    ClusterState,
    InstallOptions,
    Method,
    Ref,
    plan,
    ref_of,
    refs_to_read,
)
from vgpuctl.core.install.plugins import (
    GPUSHARE_IMAGE,
    MINDCLUSTER_DAEMONSET,
    MINDCLUSTER_IMAGE,
    PluginChoice,
    choose_version,
    every_plugin_object,
    render_plugin,
)
from vgpuctl.core.versions import (
    MINDCLUSTER_DOCUMENTED_RELEASE,
    PluginRole,
    Version,
    parse_version,
    plugin_problem,
    recommended_plugin,
)

OLDEST = (1, 28)
VERSIONS = sorted({v for v in kv_utils.all_versions() if tuple(map(int, v.split(".")[:2])) >= OLDEST},
                  key=lambda v: tuple(map(int, v.split(".")[:2])))
NOW = datetime(2026, 11, 21, 12, 0, 0, tzinfo=UTC)
CONF = "actions: allocate\ntiers:\n- plugins:\n  - name: predicates\n"
NODES = [{"metadata": {"name": "npu-1", "labels": {"npu": "yes", "accelerator": "huawei-Ascend310P"}}},
         {"metadata": {"name": "npu-2", "labels": {"npu": "yes"}}},
         {"metadata": {"name": "gpu-1", "labels": {"nvidia.com/gpu.present": "true"}}}]


def state(volcano: str = "v1.15.1", extra: dict[Ref, Any] | None = None) -> ClusterState:
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": spec.SCHEDULER_CONFIGMAP,
                                                                "namespace": spec.SCHEDULER_NAMESPACE,
                                                                "resourceVersion": "7"},
          "data": {spec.SCHEDULER_CONF_KEY: CONF}}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "volcano-scheduler", "namespace": "volcano-system"},
                  "spec": {"template": {"spec": {"containers": [{"image": f"volcanosh/vc-scheduler:{volcano}"}]}}}}
    return ClusterState({SCHEDULER_CM: cm, **(extra or {})}, NODES, deployment)


def plugin_objects(mode: Mode, nodes: str | None = None) -> list[dict[str, Any]]:
    """The plugin objects a plan for `mode` writes (not the scheduler, device or backup ConfigMaps)."""
    the_plan = plan(state(), InstallOptions((mode,), nodes=nodes), now=NOW)
    return [s.body for s in the_plan.steps if s.body is not None and s.method is Method.APPLY
            and s.ref.kind != "Node"]


def daemonset(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return next(o for o in objects if o["kind"] == "DaemonSet")


def pod_spec(objects: list[dict[str, Any]]) -> dict[str, Any]:
    return dict(daemonset(objects)["spec"]["template"]["spec"])


def affinity_terms(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return list(pod_spec(objects)["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"])


# --- every object is valid and vgpuctl's ----------------------------------------------------------

NEW_MODES = (Mode.GPUSHARE, Mode.GPUNUMBER, Mode.VNPU_MINDCLUSTER)


@pytest.mark.parametrize("version", VERSIONS)
def test_every_new_plugin_object_passes_strict_validation(version: str) -> None:
    for mode in NEW_MODES:
        for obj in [*plugin_objects(mode), *plugin_objects(mode, nodes="npu=yes,zone in (a,b)")]:
            kubernetes_validate.validate(obj, version, strict=True)


@pytest.mark.parametrize("mode", list(Mode))
def test_every_mode_renders_rbac_and_a_labelled_daemonset(mode: Mode) -> None:
    objects = plugin_objects(mode, nodes="npu=yes")
    kinds = sorted(o["kind"] for o in objects)
    assert {"ServiceAccount", "ClusterRole", "ClusterRoleBinding", "DaemonSet"} <= set(kinds)
    for obj in objects:
        assert obj["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "vgpuctl", obj["metadata"]["name"]
    template = daemonset(objects)["spec"]["template"]
    assert template["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "vgpuctl"
    binding = next(o for o in objects if o["kind"] == "ClusterRoleBinding")
    role = next(o for o in objects if o["kind"] == "ClusterRole")
    account = next(o for o in objects if o["kind"] == "ServiceAccount")
    assert binding["roleRef"]["name"] == role["metadata"]["name"]
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": account["metadata"]["name"],
                                    "namespace": "kube-system"}]
    assert template["spec"]["serviceAccountName"] == account["metadata"]["name"]


def test_no_mode_is_left_to_the_admin_any_more() -> None:
    for mode in Mode:
        the_plan = plan(state(), InstallOptions((mode,)), now=NOW)
        assert not [n for n in the_plan.notes if "yourself" in n and "deploy" in n], mode
        assert [s for s in the_plan.steps if s.ref.kind == "DaemonSet"], mode


# --- gpushare / gpunumber (volcano-sh/devices) ----------------------------------------------------

@pytest.mark.parametrize(("mode", "strategy"), [(Mode.GPUSHARE, "share"), (Mode.GPUNUMBER, "number")])
def test_gpushare_plugin_follows_volcano_device_plugin_yml(mode: Mode, strategy: str) -> None:
    objects = plugin_objects(mode)
    ds = daemonset(objects)
    assert (ds["metadata"]["namespace"], ds["metadata"]["name"]) == ("kube-system", "volcano-device-plugin")
    (container,) = pod_spec(objects)["containers"]
    assert container["image"] == f"{GPUSHARE_IMAGE}:latest"
    env = {e["name"]: e for e in container["env"]}
    assert env["GPU_STRATEGY"]["value"] == strategy
    assert env["NODE_NAME"]["valueFrom"]["fieldRef"]["fieldPath"] == "spec.nodeName"
    assert "args" not in container  # v1.0.0's flag parser would exit on --gpu-strategy
    assert container["securityContext"] == {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    assert [v["hostPath"]["path"] for v in pod_spec(objects)["volumes"]] == ["/var/lib/kubelet/device-plugins"]
    assert {"key": "volcano.sh/gpu-memory", "operator": "Exists", "effect": "NoSchedule"} in \
        pod_spec(objects)["tolerations"]
    rules = next(o for o in objects if o["kind"] == "ClusterRole")["rules"]
    assert {"apiGroups": [""], "resources": ["nodes/status"], "verbs": ["patch"]} in rules
    assert not [s for s in plan(state(), InstallOptions((mode,)), now=NOW).steps
                if s.ref.name == spec.DEVICE_CONFIGMAP], "gpushare reads no device ConfigMap"


def test_gpushare_lands_on_gpu_nodes_or_the_selected_ones() -> None:
    assert affinity_terms(plugin_objects(Mode.GPUSHARE)) == [
        {"matchExpressions": [{"key": "nvidia.com/gpu.present", "operator": "In", "values": ["true"]}]}]
    assert affinity_terms(plugin_objects(Mode.GPUNUMBER, nodes="gpu in (a100),!cpu-only")) == [
        {"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["a100"]},
                              {"key": "cpu-only", "operator": "DoesNotExist"}]}]


# --- vnpu-mindcluster (Ascend/mind-cluster) ----------------------------------------------------------

def test_mindcluster_plugin_runs_dynamic_vnpu_for_volcano_on_310p_nodes() -> None:
    objects = plugin_objects(Mode.VNPU_MINDCLUSTER)
    ds = daemonset(objects)
    assert ds["metadata"]["name"] == MINDCLUSTER_DAEMONSET
    assert preset_virtual_device(ds) is False  # what the doctor's VGK007 reads
    (container,) = pod_spec(objects)["containers"]
    assert container["image"] == f"{MINDCLUSTER_IMAGE}:{MINDCLUSTER_DOCUMENTED_RELEASE}"
    assert "-volcanoType=true" in container["args"]
    assert not [a for a in container["args"] if "useAscendDocker" in a]  # removed in v26.1: the plugin would exit
    assert container["securityContext"]["privileged"] is True
    assert pod_spec(objects)["nodeSelector"] == {"accelerator": "huawei-Ascend310P"}
    assert affinity_terms(objects) == [{"matchExpressions": [{"key": "servertype", "operator": "NotIn",
                                                              "values": ["soc"]}]}]
    volumes = {v["name"]: v["hostPath"] for v in pod_spec(objects)["volumes"]}
    assert volumes["vnpucfg"] == {"path": "/etc/vnpu.cfg", "type": "File"}
    assert volumes["hiai-driver"] == {"path": "/usr/local/Ascend/driver"}
    mounts = {m["name"]: m for m in container["volumeMounts"]}
    assert mounts["hiai-driver"]["readOnly"] is True
    rules = next(o for o in objects if o["kind"] == "ClusterRole")["rules"]
    assert {"apiGroups": [""], "resources": ["configmaps"],
            "verbs": ["get", "create", "update", "list", "watch"]} in rules


def test_mindcluster_honours_nodes_and_says_which_selected_nodes_lack_the_310p_label() -> None:
    objects = plugin_objects(Mode.VNPU_MINDCLUSTER, nodes="npu=yes")
    assert affinity_terms(objects) == [{"matchExpressions": [
        {"key": "servertype", "operator": "NotIn", "values": ["soc"]},
        {"key": "npu", "operator": "In", "values": ["yes"]}]}]
    the_plan = plan(state(), InstallOptions((Mode.VNPU_MINDCLUSTER,), nodes="npu=yes"), now=NOW)
    assert not [s for s in the_plan.steps if s.ref.kind == "Node"], "vgpuctl does not label 310P nodes"
    assert any("selects 1 node(s) without accelerator=huawei-Ascend310P (npu-2)" in n for n in the_plan.notes)
    assert any("NodeD and ClusterD" in n for n in the_plan.notes)


# --- the dispatch -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("mode", "name"), [(Mode.VGPU, "volcano-device-plugin"),
                                            (Mode.GPUSHARE, "volcano-device-plugin"),
                                            (Mode.GPUNUMBER, "volcano-device-plugin"),
                                            (Mode.VNPU_HAMI, "hami-ascend-device-plugin"),
                                            (Mode.VNPU_MINDCLUSTER, MINDCLUSTER_DAEMONSET)])
def test_render_plugin_dispatches_every_mode(mode: Mode, name: str) -> None:
    rendered = render_plugin(PluginChoice(mode, "v9.9.9", "test"), None, "my-device-config")
    ds = daemonset(rendered.objects)
    assert ds["metadata"]["name"] == name
    assert ds["spec"]["template"]["spec"]["containers"][0]["image"].endswith(":v9.9.9")
    assert rendered.notes  # where the plugin runs, without --nodes
    assert not rendered.label_nodes


def test_render_plugin_labels_nodes_only_for_vnpu_hami_with_nodes() -> None:
    assert render_plugin(PluginChoice(Mode.VNPU_HAMI, "v1.4.0", ""), "npu=yes", "cm").label_nodes
    for mode in (Mode.VGPU, Mode.GPUSHARE, Mode.VNPU_MINDCLUSTER):
        assert not render_plugin(PluginChoice(mode, "v1", ""), "npu=yes", "cm").label_nodes
    hami = render_plugin(PluginChoice(Mode.VNPU_HAMI, "v1.4.0", ""), None, "my-device-config")
    volumes = {v["name"]: v for v in daemonset(hami.objects)["spec"]["template"]["spec"]["volumes"]}
    assert volumes["device-config"]["configMap"]["name"] == "my-device-config"


def test_every_plugin_object_covers_every_mode_with_and_without_nodes() -> None:
    known = {ref_of(o) for o in every_plugin_object()}
    for mode in Mode:
        for nodes in (None, "npu=yes"):
            rendered = render_plugin(PluginChoice(mode, "v1", ""), nodes, spec.DEVICE_CONFIGMAP)
            assert {ref_of(o) for o in rendered.objects} <= known, mode


def test_install_reads_every_object_it_may_render() -> None:
    read = set(refs_to_read(None, tuple(Mode)))
    assert {ref_of(o) for o in every_plugin_object()} <= read


# --- versions: one matrix for install and the doctor --------------------------------------------------

@pytest.mark.parametrize(("mode", "volcano", "expected"), [
    (Mode.GPUSHARE, Version(1, 9, 0), "latest"),
    (Mode.GPUNUMBER, Version(1, 16, 0), "latest"),
    (Mode.VNPU_MINDCLUSTER, Version(1, 14, 0), "v7.2.RC1"),
    (Mode.VNPU_MINDCLUSTER, Version(1, 16, 0), "v7.2.RC1"),
    (Mode.VGPU, Version(1, 15, 1), "v1.12.0"),
    (Mode.VGPU, Version(1, 12, 0), "v1.12.0"),
    (Mode.VGPU, Version(1, 16, 0), "v1.12.0"),
    (Mode.VGPU, Version(1, 11, 0), "v1.9.0"),
    (Mode.VNPU_HAMI, Version(1, 15, 1), "v1.4.0"),
    (Mode.VNPU_HAMI, Version(1, 14, 4), "v1.4.0"),
    (Mode.VNPU_HAMI, Version(1, 15, 0), "v1.2.0"),
    (Mode.VNPU_HAMI, Version(1, 14, 3), "v1.2.0"),
])
def test_plugin_versions_follow_the_matrix(mode: Mode, volcano: Version, expected: str) -> None:
    choice = choose_version(mode, volcano, None)
    assert (choice.mode, choice.version) == (mode, expected)
    assert choice.reason == recommended_plugin(PluginRole(mode.value), volcano).reason


def test_overrides_are_checked_against_the_same_matrix() -> None:
    with pytest.raises(InstallError, match=re.escape("v1.0.0 predates --gpu-strategy")):
        choose_version(Mode.GPUNUMBER, Version(1, 15, 1), "v1.0.0")
    assert choose_version(Mode.GPUSHARE, Version(1, 15, 1), "v1.0.0").version == "v1.0.0"  # share: its default
    with pytest.raises(InstallError, match=re.escape("writes 5-field register entries; Volcano 1.15.1 needs 6")):
        choose_version(Mode.VGPU, Version(1, 15, 1), "v1.9.0")
    with pytest.raises(InstallError, match=re.escape("no longer writes volcano.sh/node-vgpu-handshake; Volcano 1.15")):
        choose_version(Mode.VGPU, Version(1, 15, 0), "v1.13.0")
    with pytest.raises(InstallError, match="--device-plugin-version: not a version"):
        choose_version(Mode.VNPU_HAMI, Version(1, 15, 1), "newest")
    assert choose_version(Mode.VNPU_MINDCLUSTER, Version(1, 15, 1), "v26.0.1").reason == "--device-plugin-version"


@pytest.mark.parametrize("volcano", ["1.9.0", "1.11.0", "1.12.0", "1.14.2", "1.14.3", "1.14.4", "1.15.0", "1.15.1",
                                     "1.16.0"])
def test_the_recommended_tag_never_has_a_problem(volcano: str) -> None:
    version = parse_version(volcano)
    for role in PluginRole:
        release = recommended_plugin(role, version)
        assert plugin_problem(role, release.tag, version) is None, (role, volcano)


@pytest.mark.parametrize(("tag", "problem"), [("v1.0.0", True), ("1.0.0-ubuntu20.04", True), ("latest", False),
                                              ("master", False), ("sha-1234", False)])
def test_gpu_number_needs_a_master_build(tag: str, problem: bool) -> None:
    assert (plugin_problem(PluginRole.GPUNUMBER, tag, Version(1, 15, 1)) is not None) is problem
    assert plugin_problem(PluginRole.GPUSHARE, tag, Version(1, 15, 1)) is None
