"""`vgpuctl webhook certs|serve` as a user runs them: exit codes, messages, and a plain install."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from vgpuctl.cli.app import app


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_certs_requires_both_ca_files(tmp_path: Path) -> None:
    code, out, err = run("webhook", "certs", "--service", "s", "--namespace", "n", "--out", str(tmp_path),
                         "--ca-cert", str(tmp_path / "ca.crt"))
    assert code == 2 and "go together" in err and out == ""


def test_certs_renews_with_the_same_ca(tmp_path: Path) -> None:
    code, first, _ = run("webhook", "certs", "--service", "s", "--namespace", "n", "--out", str(tmp_path),
                         "--write-ca-key")
    assert code == 0
    code, second, _ = run("webhook", "certs", "--service", "s", "--namespace", "n", "--out", str(tmp_path / "new"),
                          "--ca-cert", str(tmp_path / "ca.crt"), "--ca-key", str(tmp_path / "ca.key"))
    assert code == 0 and first == second  # same caBundle: the webhook configurations need no change
    assert (tmp_path / "tls.crt").read_bytes() != (tmp_path / "new" / "tls.crt").read_bytes()
    assert not (tmp_path / "new" / "ca.key").exists()


def test_serve_rejects_bad_input_with_exit_2(tmp_path: Path) -> None:
    code, _, err = run("webhook", "serve", "--cert", str(tmp_path / "missing.crt"))
    assert code == 2 and "--cert and --key go together" in err
    code, _, err = run("webhook", "serve", "--cert", str(tmp_path / "a"), "--key", str(tmp_path / "b"))
    assert code == 2 and "no such file" in err
    code, _, err = run("webhook", "serve", "--volcano-version", "banana")
    assert code == 2 and "--volcano-version" in err
    bad = tmp_path / "device-config.yaml"
    bad.write_text("nvidia: [unclosed")
    code, _, err = run("webhook", "serve", "--device-config", str(bad))
    assert code == 2 and str(bad) in err


def test_serve_cluster_options(tmp_path: Path) -> None:
    code, _, err = run("webhook", "serve", "--kubeconfig", str(tmp_path / "kc"))
    assert code == 2 and "--kubeconfig/--context are for --cluster-aware" in err
    code, _, err = run("webhook", "serve", "--cluster-aware", "--kubeconfig", str(tmp_path / "kc"))
    assert code == 2 and f"--kubeconfig {tmp_path / 'kc'}: no such file" in err
    (tmp_path / "kc").write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n")
    code, _, err = run("webhook", "serve", "--cluster-aware", "--kubeconfig", str(tmp_path / "kc"), "--context", "x")
    assert code == 2 and "x" in err and "Traceback" not in err


def test_without_the_webhook_extra_lint_works_and_serve_says_what_to_install(tmp_path: Path) -> None:
    """A plain `pip install vgpuctl` has no flask/gunicorn/cryptography: simulate that in a fresh interpreter."""
    script = (
        "import sys\n"
        "for name in ('flask', 'gunicorn', 'cryptography', 'prometheus_client'):\n"
        "    sys.modules[name] = None  # makes `import name` raise ImportError, as when it is not installed\n"
        "from vgpuctl.cli.app import main\n"
        "main()\n"
    )
    root = Path(__file__).resolve().parents[2]
    example = str(root / "examples" / "vgpu" / "hami-core-pod.yaml")
    lint = subprocess.run([sys.executable, "-c", script, "lint", example], capture_output=True, text=True, timeout=60)
    assert lint.returncode == 0, lint.stderr
    serve = subprocess.run([sys.executable, "-c", script, "webhook", "serve"], capture_output=True, text=True,
                           timeout=60)
    assert serve.returncode == 3
    assert serve.stderr == ("vgpuctl: this command needs flask, gunicorn, cryptography, prometheus_client from the "
                            "[webhook] extra, which this install lacks: pip install 'vgpuctl[webhook]'\n")
