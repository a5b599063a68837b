"""Default container runtime from recorded containerd (v2, v3, imports), Docker and CRI-O configs."""

from __future__ import annotations

import pytest

from tests.unit.host.helpers import fixture
from vgpuctl.core.host.runtime import (
    ConfigDocument,
    containerd_imports,
    containerd_runtime,
    crio_runtime,
    docker_runtime,
    engine_for_endpoint,
    kubelet_runtime_endpoint,
    pick_engine,
)


def doc(name: str, path: str = "") -> ConfigDocument:
    return ConfigDocument(path or f"/etc/{name}", fixture(f"runtime/{name}"))


@pytest.mark.parametrize(("name", "default", "nvidia"), [
    ("containerd-v2-nvidia-default.toml", "nvidia", True),
    ("containerd-v3-nvidia-default.toml", "nvidia", True),
    ("containerd-v3-runc-default-nvidia-declared.toml", "runc", False),
])
def test_containerd_default_runtime(name: str, default: str, nvidia: bool) -> None:
    config = containerd_runtime([doc(name)])
    assert config.problems == ()
    assert config.default_runtime == default and config.is_nvidia is nvidia
    assert config.nvidia_runtimes == ("nvidia",)
    assert config.binaries["nvidia"] == "/usr/bin/nvidia-container-runtime"


def test_containerd_version_decides_the_plugin_key() -> None:
    # A v3 file carrying the v2 key: containerd 2.x does not read it there, so the default stays runc.
    text = fixture("runtime/containerd-v2-nvidia-default.toml").replace("version = 2", "version = 3")
    config = containerd_runtime([ConfigDocument("/etc/containerd/config.toml", text)])
    assert config.default_runtime is None and config.effective == "runc" and not config.is_nvidia
    assert "not set" in config.source


def test_containerd_v1_layout() -> None:
    text = '[plugins.cri.containerd]\n  default_runtime_name = "nvidia"\n'
    assert containerd_runtime([ConfigDocument("/etc/containerd/config.toml", text)]).is_nvidia


def test_containerd_imports_override_the_main_file() -> None:
    main = doc("containerd-v2-imports-main.toml", "/etc/containerd/config.toml")
    assert containerd_imports(main.text) == ("/etc/containerd/conf.d/*.toml",)
    alone = containerd_runtime([main])
    assert alone.default_runtime == "runc" and not alone.is_nvidia
    dropin = doc("containerd-v2-dropin-99-nvidia.toml", "/etc/containerd/conf.d/99-nvidia.toml")
    merged = containerd_runtime([main, dropin])
    assert merged.is_nvidia and merged.source.startswith("/etc/containerd/conf.d/99-nvidia.toml")
    assert merged.files == ("/etc/containerd/config.toml", "/etc/containerd/conf.d/99-nvidia.toml")


def test_containerd_garbage_file_is_a_problem_not_a_guess() -> None:
    config = containerd_runtime([doc("containerd-garbage.toml", "/etc/containerd/config.toml")])
    assert config.default_runtime is None and not config.is_nvidia
    assert "not valid TOML" in config.problems[0]
    assert containerd_imports(fixture("runtime/containerd-garbage.toml")) == ()


def test_containerd_unknown_version_and_no_file() -> None:
    odd = containerd_runtime([ConfigDocument("/etc/containerd/config.toml", "version = 9\n")])
    assert "unsupported config version 9" in odd.problems[0]
    none = containerd_runtime([])
    assert none.effective == "runc" and "built-in default" in none.source and "runc" in none.describe()


def test_docker_daemon_json() -> None:
    assert docker_runtime(doc("docker-daemon-nvidia-default.json")).is_nvidia
    runtimes_only = docker_runtime(doc("docker-daemon-runtimes-only.json"))
    assert runtimes_only.default_runtime is None and runtimes_only.effective == "runc"
    assert runtimes_only.nvidia_runtimes == ("nvidia",) and not runtimes_only.is_nvidia
    assert docker_runtime(None).effective == "runc"


@pytest.mark.parametrize("text", ["{not json", "[1, 2]"])
def test_docker_garbage(text: str) -> None:
    config = docker_runtime(ConfigDocument("/etc/docker/daemon.json", text))
    assert config.problems and not config.is_nvidia


def test_docker_empty_file_is_an_empty_config() -> None:
    config = docker_runtime(ConfigDocument("/etc/docker/daemon.json", ""))
    assert config.problems == () and config.effective == "runc"


def test_crio_drop_ins_in_order_later_wins() -> None:
    main = doc("crio.conf", "/etc/crio/crio.conf")
    nvidia = doc("crio-99-nvidia.conf", "/etc/crio/crio.conf.d/99-nvidia.conf")
    assert not crio_runtime([main]).is_nvidia
    config = crio_runtime([main, nvidia])
    assert config.is_nvidia and config.source == "/etc/crio/crio.conf.d/99-nvidia.conf"
    reverted = crio_runtime([main, nvidia, doc("crio-99-nvidia-crun.conf", "/etc/crio/crio.conf.d/999-crun.conf")])
    assert reverted.default_runtime == "crun" and not reverted.is_nvidia


def test_crio_runtimes_declared_without_a_default() -> None:
    config = crio_runtime([doc("crio-nvidia-ctk-no-default.conf", "/etc/crio/crio.conf")])
    assert config.default_runtime is None and config.effective == "crun" and not config.is_nvidia
    assert config.nvidia_runtimes == ("nvidia", "nvidia-cdi", "nvidia-legacy")


def test_a_default_runtime_pointing_at_the_nvidia_binary_counts() -> None:
    text = ('[crio.runtime]\ndefault_runtime = "gpu"\n'
            '[crio.runtime.runtimes.gpu]\nruntime_path = "/usr/local/nvidia/toolkit/nvidia-container-runtime"\n')
    assert crio_runtime([ConfigDocument("/etc/crio/crio.conf", text)]).is_nvidia


def test_crio_garbage() -> None:
    config = crio_runtime([ConfigDocument("/etc/crio/crio.conf.d/bad.conf", "[crio.runtime\n")])
    assert config.problems and config.effective == "crun"


def test_kubelet_endpoint_from_config_and_flags() -> None:
    config, flags = fixture("runtime/kubelet-config.yaml"), fixture("runtime/kubeadm-flags.env")
    assert kubelet_runtime_endpoint(config, None) == "unix:///var/run/crio/crio.sock"
    assert kubelet_runtime_endpoint(None, flags) == "unix:///var/run/containerd/containerd.sock"
    assert kubelet_runtime_endpoint(config, flags) == "unix:///var/run/containerd/containerd.sock"
    assert kubelet_runtime_endpoint("kind: KubeletConfiguration\n", "") is None


@pytest.mark.parametrize(("endpoint", "engine"), [
    ("unix:///run/containerd/containerd.sock", "containerd"),
    ("unix:///run/k3s/containerd/containerd.sock", "containerd"),
    ("unix:///var/run/crio/crio.sock", "crio"),
    ("unix:///var/run/cri-dockerd.sock", "docker"),
    ("unix:///var/run/something-else.sock", None),
])
def test_engine_for_endpoint(endpoint: str, engine: str | None) -> None:
    assert engine_for_endpoint(endpoint) == engine


def test_pick_engine_prefers_the_kubelet_then_cri_dockerd_over_containerd() -> None:
    assert pick_engine("unix:///var/run/crio/crio.sock", ["/run/containerd/containerd.sock"])[0] == "crio"
    engine, evidence = pick_engine(None, ["/run/containerd/containerd.sock", "/run/cri-dockerd.sock"])
    assert engine == "docker" and "cri-dockerd" in evidence
    assert pick_engine(None, []) == (None, "no kubelet runtime endpoint and no CRI socket found")
