"""`vgpuctl explain CODE`: the offline page for a finding code."""

from __future__ import annotations

import typer

from vgpuctl.cli.env import guarded, make_console, stdout
from vgpuctl.cli.options import output_option
from vgpuctl.core.catalogue import CATALOGUE, lookup
from vgpuctl.core.catalogue.evidence import Evidence, evidence
from vgpuctl.errors import UsageError
from vgpuctl.render import OutputFormat, dump

API_VERSION = "vgpuctl.io/v1alpha1"  # every report's (docs/contracts.md#interfaces)

EPILOG = """[bold]Examples[/bold]

  vgpuctl explain VGP005
  vgpuctl explain --list
  vgpuctl explain --list -o json
"""


def complete_codes(incomplete: str) -> list[tuple[str, str]]:
    """Shell completion of CODE: the codes starting with what was typed (any case), each with its title."""
    start = incomplete.upper()
    return [(info.code, info.title) for info in CATALOGUE.values() if info.code.startswith(start)]


@guarded
def explain_command(
    code: str | None = typer.Argument(None, metavar="CODE", autocompletion=complete_codes,
                                      help="A finding code, e.g. VGP005."),
    list_codes: bool = typer.Option(False, "--list", help="List every code with its severity and title."),
    output: OutputFormat = output_option(),
) -> None:
    """Explain a finding code: what is checked, what Volcano does, and how to fix it."""
    out = stdout()
    if list_codes:
        rows = [{"code": c.code, "severity": c.severity.value, "family": c.family, "title": c.title}
                for c in CATALOGUE.values()]
        if output is OutputFormat.TABLE:
            from rich.table import Table

            table = Table(box=None, pad_edge=False, show_edge=False)
            for column in ("CODE", "SEVERITY", "FAMILY", "TITLE"):
                table.add_column(column, no_wrap=column != "TITLE")
            for row in rows:
                table.add_row(row["code"], row["severity"], row["family"], row["title"])
            make_console(out).print(table)
        else:
            out.write(dump({"apiVersion": API_VERSION, "kind": "CodeList", "items": rows}, output))
        return
    if not code:
        raise UsageError("give a CODE (e.g. vgpuctl explain VGP005) or --list")
    try:
        info = lookup(code)
    except KeyError:
        raise UsageError(f"unknown code {code!r}; see vgpuctl explain --list") from None
    if output is not OutputFormat.TABLE:
        out.write(dump({"apiVersion": API_VERSION, "kind": "CodeExplanation", "code": info.code,
                        "severity": info.severity.value,
                        "severities": [s.value for s in info.severities], "family": info.family,
                        "title": info.title, "hint": info.hint, "doc": info.doc,
                        "evidence": [{"kind": e.kind, "ref": _openable(e)} for e in evidence(info.doc)]}, output))
        return
    from rich.markdown import Markdown  # markdown-it and its plugins: only this page needs them

    from vgpuctl.render.style import text

    console = make_console(out)
    console.print(text((info.code, "bold"), f" ({info.severity.value}) — {info.title}"))
    console.print()
    console.print(Markdown(info.doc))
    console.print()
    console.print(text(("Fix:", "bold"), f" {info.hint}"))
    refs = evidence(info.doc)
    if refs:
        console.print()
        console.print(text(("Evidence you can open:", "bold")))
        for ref in refs:
            console.print(text(f"  {_openable(ref)}"), soft_wrap=True)


def _openable(ref: Evidence) -> str:
    """A docs reference as the page installed with vgpuctl (a file: URL), an upstream one as it is."""
    if ref.kind != "docs":
        return ref.ref
    from importlib import resources
    from pathlib import Path

    page, _, anchor = ref.ref.partition("#")
    path = Path(str(resources.files("vgpuctl").joinpath("docs", page)))
    if not path.is_file():
        return f"docs/{ref.ref}"  # a package built without its docs: the repository path
    return path.resolve().as_uri() + (f"#{anchor}" if anchor else "")


def register(app: typer.Typer) -> None:
    app.command("explain", epilog=EPILOG)(explain_command)
