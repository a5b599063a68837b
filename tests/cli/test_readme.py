"""The README cannot drift (issue 27): every `vgpuctl` example in its shell blocks is read from README.md; each
that needs no cluster, node or server is run here, and must succeed (exit 0, or 1 for findings; the exit code
its comment promises, when it says one); every file an example names is shipped in the repository or made by
an earlier line of its block. The one example shown with its output (```console) prints exactly that."""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.cli.conftest import ROOT

README = ROOT / "README.md"
LIVE_COMMANDS = {"doctor", "nodes", "why", "install", "uninstall", "snapshot"}


@dataclass
class Example:
    line: int
    words: list[str]  # after `vgpuctl`
    comment: str
    kind: str  # run | live | node | serves | piped | made
    output: list[str] = field(default_factory=list)  # a console block's lines after the command
    made: set[str] = field(default_factory=set)  # files earlier lines of the block wrote


def _split_comment(text: str) -> tuple[str, str]:
    match = re.search(r"\s+#\s(.*)$", text)
    return (text[: match.start()], match.group(1)) if match else (text, "")


def _kind(words: list[str], piped: bool, made: set[str]) -> str:
    if piped:
        return "piped"  # its input comes from kubectl
    if made & set(words):
        return "made"  # it reads what an earlier line wrote from the cluster (kubectl get … > cluster.json)
    if words[:2] == ["webhook", "serve"]:
        return "serves"
    if words[0] == "doctor" and "--node" in words:
        return "node"
    if "--snapshot" in words or any(w.startswith("--snapshot=") for w in words):
        return "run"
    if words[0] in LIVE_COMMANDS or any(w.startswith("cluster:") for w in words):
        return "live"
    return "run"


def examples() -> list[Example]:
    found: list[Example] = []
    text = README.read_text()
    for block in re.finditer(r"```(bash|console|sh)\n(.*?)```", text, re.S):
        start = text.count("\n", 0, block.start()) + 2
        lines = block.group(2).replace("\\\n", " ").splitlines()
        made: set[str] = set()
        for offset, raw in enumerate(lines):
            line = raw.strip()
            console = block.group(1) == "console"
            if console and not line.startswith("$ "):
                continue
            line = line.removeprefix("$ ")
            command, comment = _split_comment(line)
            for part in re.split(r"&&|;", command):
                piped, _, tail = part.rpartition("|") if "| vgpuctl" in part else ("", "", part)
                tail = tail.strip()
                redirect = re.search(r"\s>\s*(\S+)", tail)
                if not tail.startswith("vgpuctl "):
                    if redirect:
                        made.add(redirect.group(1))  # kubectl get … > cluster.json
                    continue
                words = shlex.split(tail[: redirect.start()] if redirect else tail)[1:]
                example = Example(start + offset, words, comment, _kind(words, bool(piped), made), made=set(made))
                if console:
                    example.output = [out.rstrip() for out in lines[offset + 1:]]
                found.append(example)
                if redirect:
                    made.add(redirect.group(1))
                if words[:2] == ["snapshot", "save"] and len(words) > 2:
                    made.add(words[2])
    return found


EXAMPLES = examples()
RUNNABLE = [e for e in EXAMPLES if e.kind == "run"]


def test_the_readme_has_examples_of_each_kind() -> None:
    kinds = {e.kind for e in EXAMPLES}
    assert {"run", "live", "node", "serves", "piped", "made"} <= kinds
    assert len(RUNNABLE) >= 20  # the parser did not silently drop blocks


def _paths(words: list[str]) -> list[str]:
    out = []
    for word in words:
        value = word.split("=", 1)[1] if word.startswith("--") and "=" in word else word
        top = value.split("/", 1)[0]
        if re.fullmatch(r"[\w./-]+\.(ya?ml|json)(\.gz)?", value) or ("/" in value and (ROOT / top).is_dir()) \
                or value.endswith("/"):
            out.append(value)
    return out


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: f"README.md:{e.line}")
def test_every_file_an_example_names_is_shipped_or_made(example: Example) -> None:
    for path in _paths(example.words):
        if path.startswith(("cluster:", "tls/")) or path in example.made:
            continue  # a ConfigMap, a directory `webhook certs --out tls/` writes, a file an earlier line made
        assert (ROOT / path).exists(), f"README.md:{example.line} names {path}, which the repository does not ship"


@pytest.mark.parametrize("example", RUNNABLE, ids=lambda e: f"README.md:{e.line}")
def test_every_example_that_needs_no_cluster_runs(run: Any, example: Example, monkeypatch: Any) -> None:
    monkeypatch.chdir(ROOT)  # the README's paths are the repository's
    result = run(*example.words)
    promised = re.search(r"\bexit (\d)\b", example.comment)
    expected = {int(promised.group(1))} if promised else {0, 1}
    assert result.exit_code in expected, (example.line, result.exit_code, result.stderr)
    assert "internal error" not in result.stderr and "Traceback" not in result.stderr
    if example.output:
        assert [line.rstrip() for line in result.stdout.splitlines()] == example.output
