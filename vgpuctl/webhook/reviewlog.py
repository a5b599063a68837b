"""The review log: one JSON line per review, batched into few writes.

A line per review is the webhook's busiest output. Written one `write` each, the system calls cost the
serving worker more CPU than the review itself (~20 µs a line under gunicorn, measured with
`benchmarks/webhook_load.py`). Like zap's BufferedWriteSyncer or Envoy's access-log flush interval, lines
are collected and written together:
- a batch is written when the next line would take it over `max_bytes` (default PIPE_BUF, 4096: a write
  of at most that many bytes to a pipe is atomic, so a batch never interleaves with another writer's line
  on the same stderr), and at the latest `interval` seconds (default 0.1) after its first line: a thread
  looks every `interval` (a tick, rather than a wake-up per batch, which cost the request path more than
  the ticks of an idle webhook cost anyone);
- every batch holds whole lines only; a line longer than `max_bytes` is written on its own;
- `flush()` writes what is pending: called before any other log record of the process is written (so
  lines stay in order), when the worker exits, and at interpreter exit.
A process killed outright (SIGKILL, OOM) loses at most the last `interval` of review lines.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import threading
import time

PIPE_BUF = 4096


class LineBatcher:
    def __init__(self, fd: int, *, max_bytes: int = PIPE_BUF, interval: float = 0.1) -> None:
        self.fd = fd
        self.max_bytes = max_bytes
        self.interval = interval
        self._lock = threading.Lock()
        self._lines: list[bytes] = []
        self._size = 0
        self._started = False  # whether this process's flusher thread runs (a forked worker starts its own)
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        """In a forked child: the parent's pending lines are the parent's to write, its thread is gone."""
        self._lock = threading.Lock()
        self._lines = []
        self._size = 0
        self._started = False

    def write(self, line: bytes) -> None:
        """Queue one complete line (ending in a newline). Raises OSError when a due batch cannot be written."""
        with self._lock:
            lines = self._lines
            size = self._size + len(line)
            if lines and size <= self.max_bytes:  # the usual case: the line joins the batch under way
                lines.append(line)
                self._size = size
                return
            if not self._started:
                self._start()
            if lines:  # the batch is full
                self._write_pending()
            if len(line) > self.max_bytes:
                _write_all(self.fd, line)
                return
            lines.append(line)
            self._size = len(line)

    def flush(self) -> None:
        with self._lock:
            self._write_pending()

    def _write_pending(self) -> None:
        if self._lines:
            data = b"".join(self._lines)
            self._lines.clear()
            self._size = 0
            _write_all(self.fd, data)

    def _start(self) -> None:
        self._started = True
        atexit.register(self.flush_quietly)
        threading.Thread(target=self._run, name="review-log", daemon=True).start()

    def _run(self) -> None:
        while True:
            time.sleep(self.interval)
            if self._lines:  # read without the lock: a line missed now is seen at the next tick
                self.flush_quietly()

    def flush_quietly(self) -> None:
        with contextlib.suppress(OSError):  # stderr gone: nothing left to report it on
            self.flush()


def _write_all(fd: int, data: bytes) -> None:
    written = os.write(fd, data)
    if written == len(data):  # always, but for a full disk or a signal mid-write
        return
    view = memoryview(data)[written:]
    while view:
        written = os.write(fd, view)
        view = view[written:]
