"""What the webhook is configured with, read once from flags and the environment.

A frozen value: the app, the config watcher and the TLS checks all read the same settings, and a test
builds one directly instead of patching globals. Flags win over the environment (`VGPUCTL_*`), which
lets a Deployment set options without rewriting the container command.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.findings import Severity
from vgpuctl.core.versions import Version, VersionError, parse_version

DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024  # the API server's own request limit is 3 MiB
DEFAULT_EXPIRY_MARGIN_DAYS = 7

ENV_PREFIX = "VGPUCTL_"


class SettingsError(ValueError):
    """A flag or environment value the webhook cannot start with."""


@dataclass(frozen=True)
class Settings:
    device_config_path: str | None = None  # None: the rules judge against Volcano's built-in device config
    scheduler_names: tuple[str, ...] = spec.DEFAULT_SCHEDULER_NAMES
    volcano_version: Version | None = None
    privileged_severity: Severity = Severity.ERROR
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES
    cert_file: str | None = None
    key_file: str | None = None
    # How often (seconds) a request may stat the device-config file to notice a change; 0 = every time.
    config_check_interval: float = 2.0
    # /readyz fails when the serving certificate expires within this many days.
    expiry_margin_days: int = DEFAULT_EXPIRY_MARGIN_DAYS
    # Watch nodes and bound pods: cluster-aware rules and the fits-now warning on /validate.
    cluster_aware: bool = False
    # What starts that watch, given the app's cluster state (`webhook.cluster_state.WatchFactory`). The CLI
    # passes one built on `vgpuctl.kube.watch` (the webhook package itself never imports the Kubernetes
    # client); tests pass one aimed at a local API server. None with `cluster_aware`: nothing ever syncs.
    cluster_watch: Callable[[Any], Any] | None = field(default=None, compare=False, repr=False)
    # What starts the watch of DeviceClasses, ResourceClaims and templates (VGP020), given the app's DRA state
    # (`webhook.dra_state.DraState`); the CLI passes `vgpuctl.kube.dra_watch`'s. None: VGP020 is skipped.
    dra_watch: Callable[[Any], Any] | None = field(default=None, compare=False, repr=False)

    def with_tls(self, cert_file: str, key_file: str) -> Settings:
        return replace(self, cert_file=cert_file, key_file=key_file)


def _split_names(text: str) -> tuple[str, ...]:
    return tuple(n.strip() for n in text.split(",") if n.strip())


_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


def _flag(text: str, name: str) -> bool:
    value = text.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise SettingsError(f"{ENV_PREFIX}{name}: expected true or false, got {text!r}")


def build_settings(
    *,
    device_config: str | None = None,
    scheduler_names: tuple[str, ...] | list[str] = (),
    volcano_version: str | None = None,
    privileged: str | None = None,
    max_body_bytes: int | None = None,
    cert_file: str | None = None,
    key_file: str | None = None,
    config_check_interval: float | None = None,
    cluster_aware: bool | None = None,
    env: Mapping[str, str] | None = None,
) -> Settings:
    """Settings from flags (given here) falling back to `VGPUCTL_*` environment variables.

    Environment: VGPUCTL_DEVICE_CONFIG, VGPUCTL_SCHEDULER_NAMES (comma-separated),
    VGPUCTL_VOLCANO_VERSION, VGPUCTL_PRIVILEGED (error|warning), VGPUCTL_MAX_BODY_BYTES,
    VGPUCTL_TLS_CERT, VGPUCTL_TLS_KEY, VGPUCTL_CONFIG_CHECK_INTERVAL, VGPUCTL_CLUSTER_AWARE (true|false).
    `cluster_aware=None` (flag not given) falls back to the environment.
    """
    env = env if env is not None else {}

    def pick(flag: Any, name: str) -> Any:
        if flag not in (None, "", ()):
            return flag
        value = env.get(ENV_PREFIX + name)
        return value if value not in (None, "") else None

    names = tuple(scheduler_names) or _split_names(pick(None, "SCHEDULER_NAMES") or "")
    version_text = pick(volcano_version, "VOLCANO_VERSION")
    try:
        version = parse_version(version_text) if version_text else None
    except VersionError as exc:
        raise SettingsError(f"--volcano-version: {exc}") from None
    privileged_text = (pick(privileged, "PRIVILEGED") or "error").lower()
    if privileged_text not in ("error", "warning"):
        raise SettingsError(f"--privileged: expected error or warning, got {privileged_text!r}")
    body = pick(max_body_bytes, "MAX_BODY_BYTES")
    interval = pick(config_check_interval, "CONFIG_CHECK_INTERVAL")
    try:
        body_limit = int(body) if body is not None else DEFAULT_MAX_BODY_BYTES
        check_interval = float(interval) if interval is not None else 2.0
    except ValueError as exc:
        raise SettingsError(f"not a number: {exc}") from None
    if body_limit < 1024:
        raise SettingsError("the body size limit must be at least 1024 bytes")
    if check_interval < 0:
        raise SettingsError("the config check interval must not be negative")
    aware = cluster_aware if cluster_aware is not None else _flag(pick(None, "CLUSTER_AWARE") or "false",
                                                                  "CLUSTER_AWARE")
    cert = pick(cert_file, "TLS_CERT")
    key = pick(key_file, "TLS_KEY")
    if bool(cert) != bool(key):
        raise SettingsError("--cert and --key go together: give both or neither")
    return Settings(
        device_config_path=pick(device_config, "DEVICE_CONFIG"),
        scheduler_names=names or spec.DEFAULT_SCHEDULER_NAMES,
        volcano_version=version,
        privileged_severity=Severity(privileged_text),
        max_body_bytes=body_limit,
        cert_file=cert,
        key_file=key,
        config_check_interval=check_interval,
        cluster_aware=aware,
    )
