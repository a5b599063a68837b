"""`geometry … cluster:NS/NAME` reads the ConfigMap live with the real client over real HTTP."""

from __future__ import annotations

from pathlib import Path

import orjson
import yaml
from typer.testing import CliRunner
from werkzeug import Response

from tests.kube.conftest import FakeCluster, write_kubeconfig
from vgpuctl.cli.app import app

VGPU_CM = Path(__file__).resolve().parents[1] / "fixtures" / "volcano-vgpu-device-config.yaml"
PATH = "/api/v1/namespaces/kube-system/configmaps/volcano-vgpu-device-config"


def test_validate_reads_the_configmap_from_the_cluster(cluster: FakeCluster, tmp_path: Path) -> None:
    body = {k: v for k, v in yaml.safe_load(VGPU_CM.read_text()).items() if k not in ("apiVersion", "kind")}
    cluster.route(PATH, lambda _r: Response(orjson.dumps(body), content_type="application/json"))
    config = write_kubeconfig(tmp_path / "config", {"fake": cluster.url}, current="fake")
    result = CliRunner().invoke(app, ["geometry", "validate", "cluster:kube-system/volcano-vgpu-device-config",
                                      "-o", "json"], env={"KUBECONFIG": config})
    assert result.exit_code == 0, result.stderr
    codes = [f["code"] for f in orjson.loads(result.stdout)["findings"]]
    assert "VGM007" in codes  # the upstream A100-40GB entry lists a model twice
    assert cluster.requests(PATH)


def test_a_missing_configmap_is_one_line_and_exit_3(cluster: FakeCluster, tmp_path: Path) -> None:
    cluster.serve()
    config = write_kubeconfig(tmp_path / "config", {"fake": cluster.url}, current="fake")
    result = CliRunner().invoke(app, ["geometry", "show", "cluster:kube-system/nope"], env={"KUBECONFIG": config})
    assert result.exit_code == 3
    assert "configmap kube-system/nope" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_show_and_export_take_kubeconfig_and_context_options(cluster: FakeCluster, tmp_path: Path) -> None:
    """No $KUBECONFIG: --kubeconfig and --context say where cluster:NS/NAME is read, as for merge."""
    body = {k: v for k, v in yaml.safe_load(VGPU_CM.read_text()).items() if k not in ("apiVersion", "kind")}
    cluster.route(PATH, lambda _r: Response(orjson.dumps(body), content_type="application/json"))
    config = write_kubeconfig(tmp_path / "config", {"other": "http://127.0.0.1:9", "fake": cluster.url},
                              current="other")
    ref = "cluster:kube-system/volcano-vgpu-device-config"
    env = {"KUBECONFIG": str(tmp_path / "nowhere")}
    live = ["--kubeconfig", config, "--context", "fake"]
    shown = CliRunner().invoke(app, ["geometry", "show", ref, "-o", "json", *live], env=env)
    assert shown.exit_code == 0, shown.stderr
    assert orjson.loads(shown.stdout)["source"] == ref
    exported = CliRunner().invoke(app, ["geometry", "export", ref, *live], env=env)
    assert exported.exit_code == 0 and yaml.safe_load(exported.stdout)["kind"] == "ConfigMap"
    assert len(cluster.requests(PATH)) == 2
