"""The batched review log: whole lines only, batches within PIPE_BUF, written on time, in order, at exit.

Write boundaries are observed on a SOCK_SEQPACKET socket pair: each `write` arrives as one message."""

from __future__ import annotations

import logging
import os
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator

import pytest

from tests.webhook.live import wait_for
from vgpuctl.webhook import admission as webhook_admission
from vgpuctl.webhook.reviewlog import PIPE_BUF, LineBatcher
from vgpuctl.webhook.server import _Handler


@pytest.fixture
def seqpacket() -> Iterator[tuple[socket.socket, socket.socket]]:
    reader, writer = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    reader.setblocking(False)
    yield reader, writer
    reader.close()
    writer.close()


def messages(reader: socket.socket) -> list[bytes]:
    out = []
    while True:
        try:
            out.append(reader.recv(1 << 20))
        except BlockingIOError:
            return out


def line(n: int, size: int = 100) -> bytes:
    head = f'{{"n":{n},"pad":"'.encode()
    return head + b"x" * (size - len(head) - 3) + b'"}\n'


def test_lines_wait_for_the_batch_and_flush_writes_them_in_one_write(seqpacket):
    reader, writer = seqpacket
    batcher = LineBatcher(writer.fileno(), interval=3600)
    for n in range(5):
        batcher.write(line(n))
    assert messages(reader) == []
    batcher.flush()
    assert messages(reader) == [b"".join(line(n) for n in range(5))]
    batcher.flush()
    assert messages(reader) == []


def test_batches_hold_whole_lines_and_never_exceed_pipe_buf(seqpacket):
    reader, writer = seqpacket
    batcher = LineBatcher(writer.fileno(), interval=3600)
    sent = [line(n, size=300 + n % 7) for n in range(100)]
    for one in sent:
        batcher.write(one)
    batcher.flush()
    got = messages(reader)
    assert len(got) > 1
    assert all(len(m) <= PIPE_BUF and m.endswith(b"\n") for m in got)
    assert b"".join(got) == b"".join(sent)
    # every batch but the last was full: one more line would not have fitted
    assert all(len(m) + 310 > PIPE_BUF for m in got[:-1])


def test_a_line_longer_than_a_batch_is_written_alone_after_the_pending_ones(seqpacket):
    reader, writer = seqpacket
    batcher = LineBatcher(writer.fileno(), interval=3600)
    batcher.write(line(1))
    long = line(2, size=PIPE_BUF + 500)
    batcher.write(long)
    batcher.write(line(3))
    assert messages(reader) == [line(1), long]
    batcher.flush()
    assert messages(reader) == [line(3)]


def test_pending_lines_are_written_within_the_interval_without_a_flush(seqpacket):
    reader, writer = seqpacket
    batcher = LineBatcher(writer.fileno(), interval=0.05)
    batcher.write(line(1))
    batcher.write(line(2))
    got: list[bytes] = []
    wait_for(lambda: got.extend(messages(reader)) or b"".join(got) == line(1) + line(2), 5, "the timed flush")
    batcher.write(line(3))  # a later batch is timed again
    wait_for(lambda: got.extend(messages(reader)) or got[-1] == line(3), 5, "the second timed flush")


def test_other_log_records_are_written_after_the_review_lines_before_them(tmp_path):
    path = tmp_path / "stderr.log"
    with open(path, "w") as stream:
        webhook_admission.write_review_lines_to(stream.fileno())
        try:
            batcher = webhook_admission._review_lines
            assert batcher is not None
            batcher.interval = 3600
            batcher.write(b'{"msg":"admission review"}\n')
            handler = _Handler(stream)
            handler.emit(logging.LogRecord("vgpuctl.webhook", logging.ERROR, __file__, 1, "boom", None, None))
            handler.flush()
        finally:
            webhook_admission.write_review_lines_to(None)
    assert path.read_text().splitlines() == ['{"msg":"admission review"}', "boom"]


def test_pending_lines_are_written_at_interpreter_exit_and_a_fork_writes_only_its_own(tmp_path):
    """The parent queues a line and forks; the child writes its own line and exits normally."""
    out = tmp_path / "out.log"
    script = textwrap.dedent(f"""
        import os, sys
        from vgpuctl.webhook.reviewlog import LineBatcher
        fd = os.open({str(out)!r}, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
        batcher = LineBatcher(fd, interval=3600)
        batcher.write(b"parent\\n")
        pid = os.fork()
        if pid == 0:
            batcher.write(b"child\\n")
            sys.exit(0)
        os.waitpid(pid, 0)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60,
                          cwd=os.getcwd())
    assert done.returncode == 0, done.stderr
    assert sorted(out.read_text().splitlines()) == ["child", "parent"]
