"""Wires the commands into one typer app. Each command lives in its own module."""

from __future__ import annotations

import importlib
import os
import re
import sys
from typing import Any

import typer
from typer.core import TyperGroup

from vgpuctl import __version__
from vgpuctl.cli.env import (
    StdoutClosed,
    StdoutUnwritable,
    exit_for_closed_stdout,
    exit_for_unwritable_stdout,
    exit_if_stdout_closed,
    fail,
    prepare_environment,
    set_debug,
    stdout_closed_escapes,
    stdout_file,
)
from vgpuctl.errors import RECURSION_LIMIT

HELP_OPTIONS = ["-h", "--help"]
# Command name → the module under vgpuctl.cli that defines it (its `register(app)` adds it), in help order.
COMMANDS = {
    "doctor": "doctor",
    "lint": "lint",
    "explain": "explain",
    "geometry": "geometry",
    "nodes": "nodes",
    "snapshot": "snapshot",
    "webhook": "webhook",
    "why": "why",
    "install": "install",
    "uninstall": "install",
    "schema": "schema",
    "completion": "completion",  # `vgpuctl completion SHELL`, like kubectl's (typer's --install-completion is off)
}


class _LazyCommands(TyperGroup):
    """Imports a command's module when that command runs (or a help page lists it), not at start-up:
    `vgpuctl explain` need not load the doctor's checks, the Kubernetes client and the webhook first."""

    def list_commands(self, ctx: Any) -> list[str]:
        return list(COMMANDS)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        return super().parse_args(ctx, kubectl_style(args))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            holder = typer.Typer(rich_markup_mode="rich")
            importlib.import_module(f"vgpuctl.cli.{COMMANDS[cmd_name]}").register(holder)
            loaded = typer.main.get_group(holder).commands
            for command in loaded.values():
                _plain_metavars(command)
                _refuse_repeated_options(command)
            self.commands.update(loaded)
        return self.commands.get(cmd_name)

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        # The root context is made once per run, before anything is printed; resilient: shell completion.
        prepare_environment(quiet=bool(kwargs.get("resilient_parsing")))
        with stdout_closed_escapes():  # --help and --version write stdout while parsing
            return super().make_context(*args, **kwargs)

    def invoke(self, ctx: Any) -> Any:
        with stdout_closed_escapes():
            return super().invoke(ctx)

    def get_params(self, ctx: Any) -> list[Any]:
        params: list[Any] = super().get_params(ctx)
        _plain_metavars_of(params)
        return params


def _plain_metavars(command: Any) -> None:
    """Help shows what an option takes the way kubectl does: nothing after a flag, `a|b|c` for a choice.
    (typer would print `<bool>` after a flag and `<error|warning>` for a choice.) The command's help option
    is made here, as its first help or parse would make it (and keep it)."""
    help_option = command.get_help_option(command.context_class(command, help_option_names=HELP_OPTIONS))
    _plain_metavars_of([*getattr(command, "params", ()), *([help_option] if help_option else [])])
    for sub in (getattr(command, "commands", None) or {}).values():
        _plain_metavars(sub)


def _plain_metavars_of(params: Any) -> None:
    for param in params:
        if param.metavar is not None or param.param_type_name != "option":
            continue
        if param.is_flag:
            param.metavar = ""
        elif getattr(param.type, "choices", None):
            param.metavar = "|".join(str(c) for c in param.type.choices)

def _refuse_repeated_options(command: Any) -> None:
    """An option that takes one value, given twice with different values (`--snapshot a.yaml --snapshot
    b.yaml`), is a usage error naming both: click would keep the last without a word. The same value twice
    is harmless and allowed. Groups (`geometry`) check their own options; each subcommand checks its."""
    parse = command.parse_args

    def parse_args(ctx: Any, args: list[str]) -> Any:
        if not ctx.resilient_parsing:  # shell completion: never an error
            _check_repeats(ctx, command, args)
        return parse(ctx, args)

    command.parse_args = parse_args
    for sub in (getattr(command, "commands", None) or {}).values():
        _refuse_repeated_options(sub)


def _check_repeats(ctx: Any, command: Any, args: list[str]) -> None:
    options = {name: param for param in getattr(command, "params", ()) if param.param_type_name == "option"
               for name in (*param.opts, *param.secondary_opts)}
    seen: dict[str, list[str]] = {}
    index = 0
    while index < len(args):
        arg = args[index]
        index += 1
        if arg == "--":
            return
        if not arg.startswith("-") or arg == "-":
            if getattr(command, "commands", None) is not None:  # a group: the rest is the subcommand's
                return
            continue
        name, eq, value = arg.partition("=") if arg.startswith("--") else (arg[:2], "", arg[2:])
        param = options.get(name)
        if param is None or param.is_flag or param.count:
            continue
        if not (eq or value):
            if index >= len(args):
                return  # click says the value is missing
            value = args[index]
            index += 1
        if param.multiple or param.nargs != 1:
            continue
        values = seen.setdefault(param.name, [])
        values.append(value)
        if len(set(values)) > 1:
            shown = " and ".join(repr(v) for v in dict.fromkeys(values))
            raise fail(f"{'/'.join(param.opts)} given twice ({shown}): {ctx.command_path} takes one")


app = typer.Typer(
    name="vgpuctl",
    help="Check, explain and guard GPU/NPU sharing on the Volcano scheduler "
    "(NVIDIA vGPU and dynamic MIG, gpushare, Ascend vNPU).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
    context_settings={"help_option_names": HELP_OPTIONS},
    cls=_LazyCommands,
)


# Short options that take a value: kubectl (pflag) reads `-o=json` as `-o json`, click as the value "=json".
_SHORT_WITH_VALUE = re.compile(r"-([onfl])=(.*)", re.DOTALL)


def kubectl_style(args: list[str]) -> list[str]:
    """The command line as kubectl users write it, in click's terms: `-o=json` is `-o json`, and the global
    `--debug` may come anywhere (kubectl's global flags do), not only before the command. Nothing after
    `--` is touched."""
    out: list[str] = []
    debug = False
    for index, arg in enumerate(args):
        if arg == "--":
            out.extend(args[index:])
            break
        if arg == "--debug":
            debug = True
            continue
        short = _SHORT_WITH_VALUE.fullmatch(arg)
        out.extend((f"-{short.group(1)}", short.group(2)) if short else (arg,))
    return ["--debug", *out] if debug else out


def _version(value: bool) -> None:
    if value:
        typer.echo(f"vgpuctl {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks for internal errors."),
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                 help="Print the version and exit."),
) -> None:
    """vgpuctl: lint manifests and explain finding codes for Volcano device sharing."""
    set_debug(debug)


def program_name(argv0: str) -> str:
    """What help and usage call the program: `kubectl vgpu` when run as the kubectl plugin (kubectl runs
    `kubectl-vgpu` from PATH), else `vgpuctl`."""
    return "kubectl vgpu" if os.path.basename(argv0).startswith("kubectl-vgpu") else "vgpuctl"


def main() -> None:
    sys.setrecursionlimit(max(sys.getrecursionlimit(), RECURSION_LIMIT))  # a 1,000-deep snapshot value
    started_with = stdout_file()
    if "_VGPUCTL_COMPLETE" in os.environ:  # a completion script asking (vgpuctl.cli.completion)
        importlib.import_module("vgpuctl.cli.completion").enable()
    try:
        app(prog_name=program_name(sys.argv[0]))
    except StdoutClosed:  # `vgpuctl … | head -1`: the reader has gone
        exit_for_closed_stdout()
    except StdoutUnwritable as exc:  # `vgpuctl … >&-`, `> /dev/full`
        exit_for_unwritable_stdout(exc.failure)
    except SystemExit as done:
        exit_if_stdout_closed(started_with)
        _exit_fast_after_a_big_load(done)
        raise


def _exit_fast_after_a_big_load(done: SystemExit) -> None:
    """After a command that loaded a large snapshot (its objects were frozen out of the collector, see
    `snapshotfile.gc_paused`), tearing the interpreter down frees millions of objects one by one: ~0.2 s
    of a 5,000-node `why`, after the answer is printed. The command has finished and its files are
    closed, so flush what is buffered and leave without the teardown. Small runs exit normally."""
    snapshotfile = sys.modules.get("vgpuctl.snapshotfile")  # not imported: no snapshot was loaded
    if snapshotfile is None or not snapshotfile.froze_a_big_load():
        return
    code = done.code if isinstance(done.code, int) else (0 if done.code is None else 1)
    if not isinstance(done.code, int | None):
        print(done.code, file=sys.stderr)
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe: let the normal exit report it
        return
    os._exit(code)
