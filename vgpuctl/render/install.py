"""What `install` / `uninstall` print: the plan (one line per object), diffs, notes, and the outcome.

Terraform-style marks so a plan reads at a glance: `+` create, `~` update, `-` delete, `↻` restart,
`=` unchanged, `!` left alone (exists, not vgpuctl's).
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from vgpuctl.core.install import Action, Plan, Step
from vgpuctl.render.style import plural

MARKS = {Action.CREATE: ("+", "green"), Action.UPDATE: ("~", "yellow"), Action.DELETE: ("-", "red"),
         Action.RESTART: ("↻", "cyan"), Action.UNCHANGED: ("=", "dim"), Action.KEEP: ("!", "yellow")}


def step_line(step: Step) -> Text:
    mark, style = MARKS[step.action]
    line = Text.assemble((f"  {mark} {step.action.value:<9} ", style), str(step.ref))
    if step.note and step.action is not Action.UNCHANGED:
        line.append(f"  ({step.note})", "dim")
    return line


def summary(plan: Plan) -> str:
    counts: dict[Action, int] = {}
    for step in plan.steps:
        counts[step.action] = counts.get(step.action, 0) + 1
    parts = [f"{counts[a]} to {a.value}" for a in (Action.CREATE, Action.UPDATE, Action.DELETE, Action.RESTART)
             if counts.get(a)]
    parts += [f"{counts[a]} {a.value}" for a in (Action.UNCHANGED, Action.KEEP) if counts.get(a)]
    return ", ".join(parts) or "nothing"


def render_plan(plan: Plan, console: Console, *, verb: str, diffs: bool) -> None:
    console.print(Text(f"{verb} plan for Volcano {plan.volcano_version}: {summary(plan)}", style="bold"))
    for step in plan.steps:
        console.print(step_line(step))
    if diffs:
        for step in plan.writes:
            if not step.diff:
                continue
            console.print()
            for raw in step.diff.splitlines():
                style = "green" if raw.startswith("+") else "red" if raw.startswith("-") else (
                    "cyan" if raw.startswith("@@") else "")
                console.print(Text(raw, style=style))
    if plan.notes:
        console.print()
        console.print(Text("Notes:", style="bold"))
        for note in plan.notes:
            console.print(Text(f"  - {note}"))


def render_outcome(plan: Plan, applied: list[Step], failed: Step | None, error: str, not_applied: list[Step],
                   console: Console, *, rerun: str) -> None:
    console.print()
    if failed is None:
        if not plan.writes:
            console.print(Text("Nothing to change: the cluster already matches (0 writes).", style="green"))
        else:
            console.print(Text(f"Applied {plural(len(applied), 'change')}.", style="green"))
        return
    console.print(Text(f"× stopped at {failed.action.value} {failed.ref}: {error}", style="bold red"))
    console.print(Text(f"  applied ({len(applied)}):", style="bold"))
    for step in applied:
        console.print(Text(f"    √ {step.action.value} {step.ref}"))
    console.print(Text(f"  not applied ({len(not_applied) + 1}):", style="bold"))
    for step in [failed, *not_applied]:
        console.print(Text(f"    × {step.action.value} {step.ref}"))
    console.print(Text(f"  Fix the cause and rerun `{rerun}`: what is already applied is left as it is.", style="bold"))
