"""A CA and a serving certificate for the webhook, made with `cryptography` (no openssl, no extra image).

One code path for `vgpuctl webhook certs` (what an operator or an init container runs), for
`vgpuctl webhook serve` without `--cert/--key` (a throw-away pair for local use) and for the tests.
Keys are ECDSA P-256: small, fast to handshake, accepted by every API server. The serving certificate
names the Service the way the API server dials it (`S.N.svc`) plus the shorter and longer forms.
"""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cryptography import x509
from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# Clocks of the API server and the webhook pod may disagree a little; a certificate valid from "now"
# could be rejected as not yet valid.
BACKDATE = dt.timedelta(minutes=5)


# A CA vgpuctl makes has an EC key; one the user brings (`--ca-cert/--ca-key`) may be RSA, as openssl's are.
SigningKey = ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey


@dataclass(frozen=True)
class CertKey:
    cert: x509.Certificate
    key: SigningKey

    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def key_pem(self) -> bytes:
        return self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption())


# An RFC 1123 DNS label, as Kubernetes requires of a namespace name (k8s.io/apimachinery
# pkg/util/validation/validation.go IsDNS1123Label). A Service name is an RFC 1035 label (no leading digit)
# unless the RelaxedServiceNameValidation gate (alpha in v1.34, KEP-5311) allows RFC 1123: accept the wider
# form, so no Service name a cluster accepts is refused here.
_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?", re.ASCII)
DNS_LABEL_MAX = 63


def dns_label_problem(name: str) -> str | None:
    """Why `name` is not an RFC 1123 DNS label (what a Service or namespace name must be), or None."""
    if not name:
        return "is empty"
    if len(name) > DNS_LABEL_MAX:
        return f"is {len(name)} characters long (a DNS label has at most {DNS_LABEL_MAX})"
    if not _DNS_LABEL.fullmatch(name):
        return ("is not a DNS label: lower-case letters a-z, digits and '-' only, starting and ending with a "
                "letter or digit")
    return None


def service_dns_names(service: str, namespace: str) -> list[str]:
    return [service, f"{service}.{namespace}", f"{service}.{namespace}.svc",
            f"{service}.{namespace}.svc.cluster.local"]


COMMON_NAME_MAX = 64  # X.509 upper bound for a commonName (RFC 5280 ub-common-name)


def ca_common_name(service: str, namespace: str) -> str:
    """`S.N.svc CA`, or a fixed name when that is longer than a commonName may be (two long labels)."""
    name = f"{service}.{namespace}.svc CA"
    return name if len(name) <= COMMON_NAME_MAX else "vgpuctl-webhook-ca"


def _now() -> dt.datetime:
    return dt.datetime.now(dt.UTC)


#: The last instant a certificate can name (RFC 5280 §4.1.2.5: 99991231235959Z, also "no well-defined
#: expiration"); Python's datetime ends there too.
LATEST_NOT_AFTER = dt.datetime(9999, 12, 31, 23, 59, 59, tzinfo=dt.UTC)


def max_days(now: dt.datetime | None = None) -> int:
    """The most days of validity a certificate made now may be given (`generate_ca`, `issue_serving_cert`),
    a day short of `LATEST_NOT_AFTER` so that the clock moving on while it is made cannot pass it."""
    return (LATEST_NOT_AFTER - (now or _now())).days - 1


def generate_ca(common_name: str = "vgpuctl-webhook-ca", *, days: int = 3650) -> CertKey:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = _now()
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(now + dt.timedelta(days=days))
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                                     content_commitment=False, key_encipherment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return CertKey(cert, key)


def issue_serving_cert(ca: CertKey, dns_names: Sequence[str], ip_addresses: Sequence[str] = (), *,
                       days: int = 365) -> CertKey:
    if not dns_names and not ip_addresses:
        raise ValueError("a serving certificate needs at least one DNS name or IP address")
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = [x509.DNSName(n) for n in dns_names]
    sans += [x509.IPAddress(ipaddress.ip_address(ip)) for ip in ip_addresses]
    now = _now()
    not_after = min(now + dt.timedelta(days=days), ca.cert.not_valid_after_utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, (list(dns_names) or list(ip_addresses))[0])]))
        .issuer_name(ca.cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - BACKDATE)
        .not_valid_after(not_after)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_encipherment=False, key_cert_sign=False,
                                     crl_sign=False, content_commitment=False, data_encipherment=False,
                                     key_agreement=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False)
        .sign(ca.key, hashes.SHA256())
    )
    return CertKey(cert, key)


class PairError(ValueError):
    """A certificate/key pair on disk that cannot be used, said in one line naming the file."""


def read_pem_pair(cert_file: str, key_file: str) -> tuple[x509.Certificate, Any]:
    """The first certificate of `cert_file` and the unencrypted private key of `key_file` (both PEM, as
    gunicorn and `kubectl create secret tls` take them); whether they belong together is `key_matches`."""
    def read(path: str) -> bytes:
        try:
            return Path(path).read_bytes()
        except OSError as exc:
            raise PairError(f"{path}: cannot read: {exc.strerror or exc}") from None

    cert_bytes, key_bytes = read(cert_file), read(key_file)
    try:
        cert = x509.load_pem_x509_certificate(cert_bytes)
    except ValueError:
        raise PairError(f"{cert_file}: not a PEM certificate (expected -----BEGIN CERTIFICATE-----)") from None
    try:
        key = serialization.load_pem_private_key(key_bytes, password=None)
    except TypeError:  # cryptography: "Password was not given but private key is encrypted"
        raise PairError(f"{key_file}: the private key is encrypted; give it unencrypted") from None
    except (ValueError, UnsupportedAlgorithm) as exc:
        what = "not a PEM private key (expected -----BEGIN PRIVATE KEY-----)" if b"-----BEGIN" not in key_bytes \
            else f"not a usable PEM private key ({_first_line(exc)})"
        raise PairError(f"{key_file}: {what}") from None
    return cert, key


def read_matching_pair(cert_file: str, key_file: str) -> tuple[x509.Certificate, Any]:
    """`read_pem_pair`, refused (`PairError`) unless the key is the certificate's."""
    cert, key = read_pem_pair(cert_file, key_file)
    if not key_matches(key, cert):
        raise PairError(f"{key_file} is not the key of {cert_file} (their public keys differ)")
    return cert, key


def _first_line(exc: BaseException) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def load_ca(cert_file: str, key_file: str, now: dt.datetime | None = None) -> CertKey:
    """An existing CA (to renew the serving certificate without changing the webhook's caBundle). Refused,
    with `PairError`, unless a serving certificate it signs would verify: the key must be the certificate's,
    the certificate a CA's, and valid now."""
    cert, key = read_matching_pair(cert_file, key_file)
    if not isinstance(key, SigningKey):
        raise PairError(f"{key_file}: a {type(key).__name__}; vgpuctl signs with an EC or RSA CA key")
    try:
        is_ca = cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca
    except x509.ExtensionNotFound:
        is_ca = False
    if not is_ca:
        raise PairError(f"{cert_file} is not a CA certificate (no basicConstraints CA:TRUE): a certificate it "
                        "signed would not verify")
    now = now or _now()
    if cert.not_valid_after_utc <= now:
        raise PairError(f"{cert_file}: the CA expired on {cert.not_valid_after_utc:%Y-%m-%d}")
    if cert.not_valid_before_utc > now + BACKDATE:
        raise PairError(f"{cert_file}: the CA is not valid before {cert.not_valid_before_utc:%Y-%m-%d}")
    return CertKey(cert, key)


def ca_bundle(ca: CertKey) -> str:
    """The base64 `caBundle` value of a webhook configuration's clientConfig."""
    return base64.b64encode(ca.cert_pem()).decode()


def _write_atomic(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_pem_files(out_dir: str | Path, ca: CertKey, leaf: CertKey, *, write_ca_key: bool = False) -> list[Path]:
    """ca.crt, tls.crt, tls.key (and ca.key) in `out_dir`, each replaced atomically; keys mode 0600.

    The key is written before the certificate, so a server that re-reads the pair mid-way sees at worst a
    new key with the old certificate, which fails to load and leaves the previous pair serving."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "ca.crt", out / "tls.key", out / "tls.crt"]
    _write_atomic(out / "ca.crt", ca.cert_pem(), 0o644)
    _write_atomic(out / "tls.key", leaf.key_pem(), 0o600)
    _write_atomic(out / "tls.crt", leaf.cert_pem(), 0o644)
    if write_ca_key:
        _write_atomic(out / "ca.key", ca.key_pem(), 0o600)
        written.append(out / "ca.key")
    return written


def self_signed_pair(out_dir: str | Path, hostnames: Sequence[str] = ("localhost",),
                     ips: Sequence[str] = ("127.0.0.1", "::1"), *, days: int = 30) -> tuple[str, str, str]:
    """A throw-away CA and serving pair for local use; returns (tls.crt, tls.key, ca.crt) paths."""
    ca = generate_ca("vgpuctl-webhook-local-ca", days=days)
    leaf = issue_serving_cert(ca, hostnames, ips, days=days)
    write_pem_files(out_dir, ca, leaf)
    out = Path(out_dir)
    return str(out / "tls.crt"), str(out / "tls.key"), str(out / "ca.crt")


# ---- checking a pair that already exists (install --webhook keeps a good one) ------------------------

def key_matches(key: Any, cert: x509.Certificate) -> bool:
    """Whether the private key belongs to the certificate."""
    fmt = (serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return bool(key.public_key().public_bytes(*fmt) == cert.public_key().public_bytes(*fmt))


def pair_problem(ca_pem: str, cert_pem: str, key_pem: str, names: Sequence[str], now: dt.datetime, *,
                 renew_before: dt.timedelta, skew: dt.timedelta) -> str | None:
    """Why a CA + serving pair cannot serve `names` (it must parse, the key match, the CA have issued the
    certificate, every name be covered, and neither certificate expire within `renew_before`), or None."""
    from cryptography.exceptions import InvalidSignature

    try:
        ca = x509.load_pem_x509_certificate(ca_pem.encode())
        leaf = x509.load_pem_x509_certificate(cert_pem.encode())
        key = serialization.load_pem_private_key(key_pem.encode(), password=None)
    except (ValueError, TypeError) as exc:
        return f"its certificates or key do not parse ({exc})"
    if not key_matches(key, leaf):
        return "tls.key does not belong to tls.crt"
    try:
        leaf.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return "tls.crt is not issued by ca.crt"
    try:
        covered = set(leaf.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
                      .get_values_for_type(x509.DNSName))
    except x509.ExtensionNotFound:
        covered = set()
    uncovered = [n for n in names if n not in covered]
    if uncovered:
        return f"tls.crt does not name {', '.join(uncovered)}"
    for label, cert in (("tls.crt", leaf), ("ca.crt", ca)):
        if cert.not_valid_before_utc > now + skew:
            return f"{label} is not valid before {cert.not_valid_before_utc:%Y-%m-%d}"
        if cert.not_valid_after_utc - now < renew_before:
            verb = "expired" if cert.not_valid_after_utc <= now else "expires"
            return f"{label} {verb} on {cert.not_valid_after_utc:%Y-%m-%d} (renewed within {renew_before.days} days)"
    return None


def bundle_trusts(bundle_pem: str, ca_pem: str) -> bool:
    """Whether a caBundle (PEM text, possibly several certificates) contains the CA."""
    ca = x509.load_pem_x509_certificate(ca_pem.encode())
    try:
        return ca in x509.load_pem_x509_certificates(bundle_pem.encode()) if bundle_pem else False
    except ValueError:
        return False
