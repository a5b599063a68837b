"""The device config, re-read when the mounted file changes, so an edited ConfigMap needs no restart.

Kubernetes updates a mounted ConfigMap by writing a new timestamped directory and swapping the `..data`
symlink to it; the file we were given (`device-config.yaml` → `..data/device-config.yaml`) keeps its
path but resolves to a new inode. Inotify on the path misses that (the watched inode never changes), so
we `stat` through the symlinks — cheap, and right for every way a file can be replaced — at most every
`interval` seconds, from whichever request thread notices first (no background thread: gunicorn forks
workers, and a thread started before the fork would not exist in them).

A new config that fails to load never replaces a good one: the last good config stays in use, the
failure is logged and counted once per file version, and readiness fails only while no config was
ever loaded.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from vgpuctl.core.deviceconfig import DeviceConfig
from vgpuctl.errors import UsageError
from vgpuctl.sources import load_device_config

FileIdentity = tuple[int, int, int, int]  # st_dev, st_ino, st_size, st_mtime_ns of the resolved file

log = logging.getLogger("vgpuctl.webhook")


def file_identity(path: str) -> FileIdentity | None:
    try:
        st = os.stat(path)  # follows the ..data symlink chain to the current file
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)


@dataclass(frozen=True)
class ConfigState:
    config: DeviceConfig | None
    loaded_from: FileIdentity | None  # the file version `config` came from
    error: str | None  # why the newest file version could not be loaded (None: it was)


class DeviceConfigWatcher:
    def __init__(
        self,
        path: str,
        *,
        interval: float = 2.0,
        on_reload: Callable[[bool], None] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.path = path
        self.interval = interval
        self._on_reload = on_reload or (lambda ok: None)
        self._clock = clock
        self._lock = threading.Lock()
        self._seen: FileIdentity | None = None  # the file version we last tried, good or bad
        self._tried = False
        self._state = ConfigState(None, None, None)
        self._next_check = 0.0
        self.check(force=True)

    @property
    def state(self) -> ConfigState:
        return self._state

    def current(self) -> DeviceConfig | None:
        """The config to judge with now; looks for a new file version if the interval has passed."""
        if self._clock() >= self._next_check:
            self.check()
        return self._state.config

    def check(self, force: bool = False) -> ConfigState:
        """Reload if the file changed. A concurrent caller does not wait: it keeps using the current config."""
        if not self._lock.acquire(blocking=force):
            return self._state
        try:
            self._next_check = self._clock() + self.interval
            identity = file_identity(self.path)
            if self._tried and identity == self._seen:
                return self._state
            self._tried = True
            self._seen = identity
            try:
                config = load_device_config(self.path)
            except UsageError as exc:
                self._state = ConfigState(self._state.config, self._state.loaded_from, str(exc))
                self._on_reload(False)
                kept = "keeping the last good config" if self._state.config else "no device config in use"
                log.error("device config %s could not be loaded (%s): %s", self.path, kept, exc)
            except Exception as exc:  # a parser bug must not take the webhook down with it
                self._state = ConfigState(self._state.config, self._state.loaded_from, f"{type(exc).__name__}: {exc}")
                self._on_reload(False)
                log.exception("device config %s: unexpected error while loading", self.path)
            else:
                self._state = ConfigState(config, identity, None)
                self._on_reload(True)
                log.info("device config %s loaded", self.path)
            return self._state
        finally:
            self._lock.release()
