"""Issue 16 §3: which ascend-device-plugin runs, as `ClusterFacts` (read by VGH010, and open to VGK008).

Evidence: Project-HAMi/ascend-device-plugin ships `ascend-runtimeclass.yaml` (RuntimeClass `ascend`) from
tag v1.3.0 (not in v1.2.0), and its `docs/volcano.md` (v1.4.0) requires `runtimeClassName: ascend` on every
Ascend pod. The plugin's version is its DaemonSet image tag (`projecthami/ascend-device-plugin:v1.4.0`);
Huawei MindCluster's plugin is a different image (`ascend-k8sdeviceplugin`) and says nothing here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.rule_facts import facts_from_snapshot
from vgpuctl.core.doctor import diagnose
from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.findings import Severity


def daemonset(image: str, name: str = "hami-ascend-device-plugin") -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": name, "namespace": "kube-system"},
            "spec": {"template": {"spec": {"containers": [{"name": "device-plugin", "image": image}]}}}}


def ascend_pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "ai"},
            "spec": {"schedulerName": "volcano", **spec, "containers": [
                {"name": "c", "image": "x", "resources": {"limits": {"huawei.com/Ascend310P": "1"}}}]},
            "status": {"phase": "Pending"}}


@pytest.mark.parametrize(("images", "tags", "required"), [
    (["docker.io/projecthami/ascend-device-plugin:v1.4.0"], ("v1.4.0",), True),
    (["projecthami/ascend-device-plugin:v1.3.0@sha256:abc"], ("v1.3.0",), True),
    (["projecthami/ascend-device-plugin:latest"], ("latest",), True),
    (["projecthami/ascend-device-plugin:v1.2.0"], ("v1.2.0",), False),
    (["projecthami/ascend-device-plugin:v1.2.0", "projecthami/ascend-device-plugin:v1.4.0"],
     ("v1.2.0", "v1.4.0"), True),
    (["projecthami/ascend-device-plugin"], ("",), None),  # untagged: the version is not known
    (["swr.cn-south-1.myhuaweicloud.com/ascendhub/ascend-k8sdeviceplugin:v7.2.RC1"], (), None),
    ([], (), None),
])
def test_plugin_tags_come_from_the_daemonset_images(images: list[str], tags: tuple[str, ...],
                                                    required: bool | None) -> None:
    objects = [daemonset(image, f"ds-{i}") for i, image in enumerate(images)]
    facts = facts_from_snapshot(build_snapshot(objects, None))
    assert facts.ascend_plugin_tags == tags
    assert facts.ascend_runtimeclass_required is required


def test_without_cluster_facts_nothing_is_known() -> None:
    assert ClusterFacts().ascend_plugin_tags is None and ClusterFacts().ascend_runtimeclass_required is None


def test_the_doctor_reviews_existing_pods_with_the_plugin_facts() -> None:
    """VGX003 reviews each pod shape once: runtimeClassName is part of the shape, so a pod with it and a pod
    without it (otherwise identical) get their own verdicts."""
    snapshot = build_snapshot([daemonset("projecthami/ascend-device-plugin:v1.4.0"),
                               ascend_pod("with", runtimeClassName="ascend"), ascend_pod("without")], None)
    report = diagnose(snapshot, now=datetime(2026, 11, 25, tzinfo=UTC))
    found = [f for r in report.results for f in r.findings if f.code == "VGH010"]
    assert [(f.subject, f.severity) for f in found] == [("pod/ai/without/spec.runtimeClassName", Severity.WARNING)]
