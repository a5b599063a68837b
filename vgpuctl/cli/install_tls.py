"""The admission webhook's certificates for `install --webhook`: kept while they can serve, else made anew.
`cryptography` lives here, at the edge, never in the core (which plans with PEM text)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from vgpuctl.cli.env import fail
from vgpuctl.core.findings import ExitStatus
from vgpuctl.core.install.modes import InstallError
from vgpuctl.core.install.plan import ClusterState, owned
from vgpuctl.core.install.webhook import CA_KEY, CERT_KEY, KEY_KEY, WebhookLayout, WebhookTLS, decode_b64_text

#: Renew the webhook's certificates when either expires within this (the doctor's VGK006 threshold).
RENEW_BEFORE = timedelta(days=30)
CLOCK_SKEW = timedelta(minutes=5)


def require_cryptography() -> None:
    try:
        import cryptography  # noqa: F401
    except ImportError:
        raise fail("install --webhook makes the webhook's certificates with `cryptography`, which this install "
                   "lacks: pip install 'vgpuctl[webhook]'", ExitStatus.INCOMPLETE) from None


def _pem(secret: Mapping[str, Any], key: str) -> str | None:
    return decode_b64_text((secret.get("data") or {}).get(key)) or None


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d")


def webhook_tls(state: ClusterState, lay: WebhookLayout, now: datetime) -> WebhookTLS:
    """Keep the pair in the webhook's Secret when it can serve; otherwise make a new CA and serving pair.

    A pair is kept when it parses, the key matches, the CA issued the certificate, the certificate names
    every DNS name of the Service, and neither expires within 30 days. A caBundle that does not match a
    kept CA is not a reason for new certificates: the pods serve what the Secret holds, so the caBundle is
    what gets corrected (and a rerun after an interrupted rotation converges instead of rotating again)."""
    from vgpuctl.webhook import certs

    names = certs.service_dns_names(lay.service, lay.namespace)
    current = state.get(lay.secret)
    if current is not None and not owned(current):
        ca = _pem(current, CA_KEY)
        if ca is None:
            raise InstallError(f"{lay.secret} exists, is not vgpuctl's, and has no ca.crt to put into the webhook "
                               "configurations' caBundle: add ca.crt to it, or delete it so that vgpuctl makes the "
                               "certificates")
        return WebhookTLS(ca, note=f"TLS: {lay.secret} is not vgpuctl's: left as it is; its ca.crt is the caBundle")
    reason = f"{lay.secret} does not exist yet"
    if current is not None:
        texts = {k: _pem(current, k) for k in (CA_KEY, CERT_KEY, KEY_KEY)}
        missing = [k for k, text in texts.items() if text is None]
        ca, crt, key = (texts[k] or "" for k in (CA_KEY, CERT_KEY, KEY_KEY))
        problem = f"it has no usable {', '.join(missing)}" if missing else certs.pair_problem(
            ca, crt, key, names, now, renew_before=RENEW_BEFORE, skew=CLOCK_SKEW)
        if problem is None:
            from cryptography import x509

            until = x509.load_pem_x509_certificate(crt.encode()).not_valid_after_utc
            kept = (f"TLS: {lay.secret} holds a valid pair (for {names[2]}, valid until {_when(until)}): kept, "
                    "no new certificates")
            stale = [str(ref) for ref in lay.configs
                     if (config := state.get(ref)) is not None and owned(config)
                     and not all(certs.bundle_trusts(decode_b64_text((h.get("clientConfig") or {}).get("caBundle")),
                                                     ca) for h in config.get("webhooks") or [])]
            if stale:
                kept += f"; the caBundle of {' and '.join(stale)} does not match its CA and is set to it"
            return WebhookTLS(ca, crt, key, kept)
        reason = f"the pair in {lay.secret} cannot serve: {problem}"
    ca_pair = certs.generate_ca()
    leaf = certs.issue_serving_cert(ca_pair, names)
    return WebhookTLS(ca_pair.cert_pem().decode(), leaf.cert_pem().decode(), leaf.key_pem().decode(),
                      note=f"TLS: new CA and serving certificate for {names[2]}, valid until "
                           f"{_when(leaf.cert.not_valid_after_utc)} ({reason})")
