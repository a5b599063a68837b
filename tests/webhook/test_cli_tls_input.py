"""`webhook certs` and `webhook serve` refuse TLS input that could only produce a webhook the API server
cannot call (issue 15 §6): exit 2 and one line, before anything is written or anything listens.

A validating webhook that fails closed (deploy/base: `failurePolicy: Fail`) with a certificate its
caBundle does not verify denies every GPU pod, so these are checked up front, not discovered in the
API server's log.
"""

from __future__ import annotations

import base64
import datetime as dt
import subprocess
import sys
from pathlib import Path

import pytest
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID
from typer.testing import CliRunner

from vgpuctl.cli.app import app

ROOT = Path(__file__).resolve().parents[2]


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def certs(out: Path, *extra: str, service: str = "vgpuctl-webhook", namespace: str = "vgpuctl-system") -> tuple[
        int, str, str]:
    return run("webhook", "certs", "--service", service, "--namespace", namespace, "--out", str(out), *extra)


def verifies(ca_file: Path, leaf_file: Path) -> None:
    """What the API server checks of the serving certificate against the caBundle, with cryptography's
    own X.509 path validation (not our code): chain, validity now, and the Service's DNS name."""
    from cryptography.x509.verification import PolicyBuilder, Store

    ca = x509.load_pem_x509_certificate(ca_file.read_bytes())
    leaf = x509.load_pem_x509_certificate(leaf_file.read_bytes())
    verifier = PolicyBuilder().store(Store([ca])).time(dt.datetime.now(dt.UTC)).build_server_verifier(
        x509.DNSName("vgpuctl-webhook.vgpuctl-system.svc"))
    verifier.verify(leaf, [])


def one_line(err: str) -> str:
    assert err.endswith("\n") and err.count("\n") == 1 and "Traceback" not in err, err
    return err


@pytest.fixture
def ca_dir(tmp_path: Path) -> Path:
    code, _, err = certs(tmp_path / "ca", "--write-ca-key")
    assert code == 0, err
    return tmp_path / "ca"


# ---- webhook certs ---------------------------------------------------------------------------------

def test_certs_refuses_a_ca_key_that_is_not_the_ca_certificates(ca_dir: Path, tmp_path: Path) -> None:
    """Before: exit 0, and a tls.crt signed by other.key that ca.crt does not verify."""
    other = tmp_path / "other"
    assert certs(other, "--write-ca-key")[0] == 0
    out = tmp_path / "out"
    code, stdout, err = certs(out, "--ca-cert", str(ca_dir / "ca.crt"), "--ca-key", str(other / "ca.key"))
    assert code == 2 and stdout == ""
    assert one_line(err) == (f"vgpuctl: --ca-cert/--ca-key: {other / 'ca.key'} is not the key of "
                             f"{ca_dir / 'ca.crt'} (their public keys differ)\n")
    assert not out.exists()


def test_certs_refuses_a_leaf_as_ca_and_files_that_are_not_pem(ca_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, _, err = certs(out, "--ca-cert", str(ca_dir / "tls.crt"), "--ca-key", str(ca_dir / "tls.key"))
    assert code == 2 and "is not a CA certificate" in one_line(err)
    junk = tmp_path / "junk"
    junk.write_text("not pem\n")
    code, _, err = certs(out, "--ca-cert", str(junk), "--ca-key", str(ca_dir / "ca.key"))
    assert code == 2 and f"{junk}: not a PEM certificate" in one_line(err)
    code, _, err = certs(out, "--ca-cert", str(ca_dir / "ca.crt"), "--ca-key", str(junk))
    assert code == 2 and f"{junk}: not a PEM private key" in one_line(err)
    code, _, err = certs(out, "--ca-cert", str(ca_dir / "ca.crt"), "--ca-key", str(tmp_path / "absent"))
    assert code == 2 and "cannot read: No such file or directory" in one_line(err)
    assert not out.exists()


def test_certs_with_the_ca_writes_a_certificate_the_ca_verifies(ca_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    code, bundle, _ = certs(out, "--ca-cert", str(ca_dir / "ca.crt"), "--ca-key", str(ca_dir / "ca.key"))
    assert code == 0 and base64.b64decode(bundle) == (ca_dir / "ca.crt").read_bytes()  # the caBundle stays
    verifies(ca_dir / "ca.crt", out / "tls.crt")
    verifies(out / "ca.crt", out / "tls.crt")
    verifies(ca_dir / "ca.crt", ca_dir / "tls.crt")


def test_certs_signs_with_an_rsa_ca_as_openssl_makes_them(tmp_path: Path) -> None:
    """An operator's own CA is often RSA (`openssl req -x509 -newkey rsa:2048`); it was refused before."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "team CA")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=1))
            .not_valid_after(now + dt.timedelta(days=30))
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(x509.KeyUsage(digital_signature=False, content_commitment=False, key_encipherment=False,
                                         data_encipherment=False, key_agreement=False, key_cert_sign=True,
                                         crl_sign=True, encipher_only=False, decipher_only=False), critical=True)
            .sign(key, hashes.SHA256()))
    (tmp_path / "ca.crt").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    (tmp_path / "ca.key").write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                                        serialization.PrivateFormat.TraditionalOpenSSL,
                                                        serialization.NoEncryption()))
    code, _, err = certs(tmp_path / "out", "--ca-cert", str(tmp_path / "ca.crt"), "--ca-key", str(tmp_path / "ca.key"))
    assert code == 0, err
    verifies(tmp_path / "ca.crt", tmp_path / "out" / "tls.crt")


@pytest.mark.parametrize(("flag", "value"), [
    ("--namespace", "équipe"),  # before: "internal error" (cryptography refuses a non-ASCII DNSName), exit 3
    ("--namespace", "Team-A"),
    ("--service", "web_hook"),
    ("--service", "-webhook"),
    ("--namespace", "a" * 64),
    ("--service", "svc.other"),  # a dot would make the certificate name another Service
    ("--namespace", ""),
])
def test_certs_refuses_names_that_are_not_dns_labels(tmp_path: Path, flag: str, value: str) -> None:
    """Namespace names are RFC 1123 labels (k8s.io/apimachinery pkg/util/validation/validation.go,
    IsDNS1123Label); Service names RFC 1035 labels, or RFC 1123 ones with RelaxedServiceNameValidation
    (alpha in Kubernetes v1.34, KEP-5311): the wider RFC 1123 form is what is accepted."""
    names = {"--service": "vgpuctl-webhook", "--namespace": "vgpuctl-system", flag: value}
    code, stdout, err = certs(tmp_path / "out", service=names["--service"], namespace=names["--namespace"])
    assert code == 2 and stdout == ""
    assert one_line(err).startswith(f"vgpuctl: {flag} {value!r} ")
    assert not (tmp_path / "out").exists()


def test_certs_accepts_the_longest_labels_and_a_leading_digit(tmp_path: Path) -> None:
    """Two 63-character labels: the CA's name `S.N.svc CA` would exceed a commonName's 64 characters
    (before: "internal error", exit 3)."""
    code, _, err = certs(tmp_path / "long", service="s" * 63, namespace="n" * 63)
    assert code == 0, err
    code, _, err = certs(tmp_path / "digit", service="0webhook", namespace="1team")
    assert code == 0, err


# ---- webhook serve -----------------------------------------------------------------------------------

def serve(*args: str) -> subprocess.CompletedProcess[str]:
    """A real process: were the check after gunicorn's start, it would be listening and this would time
    out instead of returning."""
    return subprocess.run([sys.executable, "-c", "from vgpuctl.cli.app import main; main()", "webhook", "serve",
                           "--host", "127.0.0.1", "--port", "0", "--metrics-port", "0", *args],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)


def test_serve_refuses_files_that_are_not_pem_before_listening(ca_dir: Path, tmp_path: Path) -> None:
    """Before: gunicorn started listening and every handshake failed."""
    junk = tmp_path / "junk.pem"
    junk.write_text("hello\n")
    for cert, key, message in (
        (junk, ca_dir / "tls.key", f"vgpuctl: {junk}: not a PEM certificate (expected -----BEGIN CERTIFICATE-----)\n"),
        (ca_dir / "tls.crt", junk, f"vgpuctl: {junk}: not a PEM private key (expected -----BEGIN PRIVATE KEY-----)\n"),
        (ca_dir / "tls.crt", ca_dir / "ca.key",
         f"vgpuctl: {ca_dir / 'ca.key'} is not the key of {ca_dir / 'tls.crt'} (their public keys differ)\n"),
    ):
        done = serve("--cert", str(cert), "--key", str(key))
        assert (done.returncode, done.stderr) == (2, message)
        assert "gunicorn" not in done.stderr.lower()
