"""Small, generic builders for pod-rule tests (shared by every `tests/unit/podrules/test_*.py`).

Everything here builds plain JSON-shaped dicts, exactly what the webhook or `lint` hands to
`vgpuctl.core.podrules.review`; nothing is mocked.

    pod(container("trainer", limits={"volcano.sh/vgpu-number": 1}))          # a Pod on scheduler volcano
    pod(containers=[...], annotations={...}, labels={...}, scheduler=None)    # no spec.schedulerName
    pod(container("c"), initContainers=[container("init")])                  # extra **spec keys
    deployment(pod(...)), cronjob(pod(...)), vcjob(("worker", pod(...)))      # workload wrappers
    codes(review(obj))        -> [("VGP002", Severity.INFO), ...]             # in report order
    find(review(obj), "VGP002") -> the findings with that code; only(review(obj), "VGP002") -> the one
    device_config({"nvidia": {...}}) / load_device_config(path) / fixture upstream_vgpu_config
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from vgpuctl.core.deviceconfig import DeviceConfig, parse_device_config, payload_from_document
from vgpuctl.core.findings import Finding, Severity

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
UPSTREAM_VGPU_CONFIG = FIXTURES / "volcano-vgpu-device-config.yaml"

ERROR, WARNING, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO


def container(
    name: str = "main",
    *,
    limits: dict[str, Any] | None = None,
    requests: dict[str, Any] | None = None,
    privileged: bool = False,
    image: str = "busybox",
    **extra: Any,
) -> dict[str, Any]:
    """A container dict. `limits`/`requests` go under `resources` only when given (values kept as-is,
    so pass strings like "3Gi" or numbers like 1 or 1.5 exactly as a manifest would carry them).
    `privileged=True` sets `securityContext.privileged`; `**extra` is merged into the container."""
    c: dict[str, Any] = {"name": name, "image": image}
    resources: dict[str, Any] = {}
    if limits is not None:
        resources["limits"] = dict(limits)
    if requests is not None:
        resources["requests"] = dict(requests)
    if resources:
        c["resources"] = resources
    if privileged:
        c["securityContext"] = {"privileged": True}
    c.update(extra)
    return c


def pod(
    *positional: dict[str, Any],
    containers: list[dict[str, Any]] | None = None,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    scheduler: str | None = "volcano",
    name: str = "p",
    namespace: str = "default",
    **spec: Any,
) -> dict[str, Any]:
    """A Pod manifest. Containers come positionally or as `containers=` (default: one plain `main`).
    `scheduler=None` omits `spec.schedulerName`; any other `**spec` key (initContainers,
    ephemeralContainers, nodeSelector, …) is set on `spec` verbatim."""
    ctrs = list(positional) + list(containers or [])
    if not ctrs:
        ctrs = [container()]
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if annotations is not None:
        meta["annotations"] = dict(annotations)
    if labels is not None:
        meta["labels"] = dict(labels)
    body: dict[str, Any] = {"containers": ctrs}
    if scheduler is not None:
        body["schedulerName"] = scheduler
    body.update(spec)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": body}


def template_of(p: dict[str, Any]) -> dict[str, Any]:
    """A pod template (metadata + spec) from a `pod(...)` manifest."""
    meta = {k: v for k, v in p.get("metadata", {}).items() if k in ("annotations", "labels")}
    return {"metadata": meta, "spec": p["spec"]}


def deployment(p: dict[str, Any], *, name: str = "d", kind: str = "Deployment") -> dict[str, Any]:
    """An apps/v1 Deployment (or StatefulSet/DaemonSet/ReplicaSet via `kind=`) wrapping `p`'s template."""
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": name}}, "template": template_of(p)},
    }


def job(p: dict[str, Any], *, name: str = "j") -> dict[str, Any]:
    """A batch/v1 Job wrapping `p`'s template."""
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"},
            "spec": {"template": template_of(p)}}


def cronjob(p: dict[str, Any], *, name: str = "cj") -> dict[str, Any]:
    """A batch/v1 CronJob wrapping `p`'s template under spec.jobTemplate.spec.template."""
    return {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"schedule": "* * * * *", "jobTemplate": {"spec": {"template": template_of(p)}}},
    }


def vcjob(
    *tasks: tuple[str, dict[str, Any]],
    name: str = "vj",
    scheduler: str | None = None,
    annotations: dict[str, str] | None = None,
    **spec: Any,
) -> dict[str, Any]:
    """A Volcano `batch.volcano.sh/v1alpha1` Job; each task is `(task_name, pod(...))` with 1 replica.
    `scheduler` sets the Job's `spec.schedulerName` (omitted by default — Volcano fills it in)."""
    body: dict[str, Any] = {
        "minAvailable": len(tasks),
        "tasks": [{"name": t, "replicas": 1, "template": template_of(p)} for t, p in tasks],
    }
    if scheduler is not None:
        body["schedulerName"] = scheduler
    body.update(spec)
    meta: dict[str, Any] = {"name": name, "namespace": "default"}
    if annotations is not None:
        meta["annotations"] = dict(annotations)
    return {"apiVersion": "batch.volcano.sh/v1alpha1", "kind": "Job", "metadata": meta, "spec": body}


def codes(review: Any) -> list[tuple[str, Severity]]:
    """`[(code, severity), ...]` of a `Review`, in report order."""
    return [(f.code, f.severity) for f in review.findings]


def find(review: Any, code: str) -> list[Finding]:
    """The findings of `review` with `code`."""
    return [f for f in review.findings if f.code == code]


def only(review: Any, code: str) -> Finding:
    """The single finding with `code` (fails the test if there are none or several)."""
    found = find(review, code)
    assert len(found) == 1, f"expected exactly one {code}, got {codes(review)}"
    return found[0]


def device_config(payload: dict[str, Any]) -> DeviceConfig:
    """A device config from an inline `device-config.yaml` payload, e.g. `{"nvidia": {"defaultGPUNum": 2}}`
    or `{"vnpus": [...]}`; fails the test if Volcano would reject it."""
    parsed = parse_device_config(payload)
    assert parsed.config is not None, parsed.problems
    return parsed.config


def load_device_config(path: Path) -> DeviceConfig:
    """Parse a device-config ConfigMap/payload file as Volcano would; fails if Volcano would reject it."""
    parsed = parse_device_config(payload_from_document(yaml.safe_load(path.read_text())))
    assert parsed.config is not None, parsed.problems
    return parsed.config


@pytest.fixture(scope="session")
def upstream_vgpu_config() -> DeviceConfig:
    """The real upstream volcano-vgpu-device-plugin ConfigMap (percentage resource, MIG geometries)."""
    return load_device_config(UPSTREAM_VGPU_CONFIG)
