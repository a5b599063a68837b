"""Builders for host tests: recorded outputs, a fake command runner, and temporary host trees.

    fixture("nvidia-smi/query-tesla-t4.csv")           -> the recorded text
    runner = FakeRunner({"nvidia-smi --query-gpu=...": ok(text), "npu-smi info": missing()})
    root = host_tree(tmp_path, {"/etc/containerd/config.toml": fixture("runtime/…"), "/dev/nvidiactl": ""})
    facts = collect(root, runner, node_name="gpu-1")

The runner is the adapter's port (argv, timeout) -> CommandResult: tests inject recorded outputs through
it, exactly as the real runner would return them; nothing is monkeypatched.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from vgpuctl.core.host.npu_smi import INFO_ARGS
from vgpuctl.core.host.nvidia_smi import LEGACY_QUERY_ARGS, MIG_PROFILES_ARGS, QUERY_ARGS
from vgpuctl.core.host.observed import CommandResult, Outcome

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "host"

QUERY = " ".join(QUERY_ARGS)
LEGACY_QUERY = " ".join(LEGACY_QUERY_ARGS)
LGIP = " ".join(MIG_PROFILES_ARGS)
NPU_INFO = " ".join(INFO_ARGS)


def fixture(name: str) -> str:
    return (FIXTURES / name).read_text(encoding="utf-8")


class Reply:
    """What a command answers: outcome, stdout, the first stderr line, exit code."""

    def __init__(self, outcome: Outcome, stdout: str = "", detail: str = "", returncode: int | None = 0) -> None:
        self.outcome, self.stdout, self.detail, self.returncode = outcome, stdout, detail, returncode


def ok(stdout: str) -> Reply:
    return Reply(Outcome.OK, stdout)


def failed(detail: str, returncode: int = 1, stdout: str = "") -> Reply:
    return Reply(Outcome.FAILED, stdout, detail, returncode)


def missing() -> Reply:
    return Reply(Outcome.MISSING, detail="not found", returncode=None)


def timeout() -> Reply:
    return Reply(Outcome.TIMEOUT, detail="no answer within 20 s", returncode=None)


class FakeRunner:
    """Answers commands from a table keyed by the joined argv; anything not in it is missing."""

    def __init__(self, replies: Mapping[str, Reply]) -> None:
        self.replies = dict(replies)
        self.calls: list[tuple[tuple[str, ...], float]] = []

    def __call__(self, argv: Sequence[str], timeout: float) -> CommandResult:
        args = tuple(argv)
        self.calls.append((args, timeout))
        reply = self.replies.get(" ".join(args), missing())
        return CommandResult(args, reply.outcome, reply.stdout, reply.detail, reply.returncode)

    @property
    def commands(self) -> list[str]:
        return [" ".join(a) for a, _ in self.calls]


def host_tree(tmp_path: Path, files: Mapping[str, str]) -> Path:
    """A fake host root: every absolute path in `files` is written under tmp_path/root."""
    root = tmp_path / "root"
    root.mkdir(exist_ok=True)
    for path, text in files.items():
        target = root / path.lstrip("/")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return root
