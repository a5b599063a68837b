"""What `install` / `uninstall` print: the plan (one line per object), diffs, notes, and the outcome —
for people (rich) or, with `-o json|yaml`, as an `InstallReport` (schemas/install-report.schema.json).

Terraform-style marks so a plan reads at a glance: `+` create, `~` update, `-` delete, `↻` restart,
`…` wait (until the webhook's pods are ready), `=` unchanged, `!` left alone (exists, not vgpuctl's).
Diffs come from the planner already redacted: no Secret value is ever printed.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.text import Text

from vgpuctl.core.doctor.report import API_VERSION, DoctorReport
from vgpuctl.core.install.plan import Action, Plan, Step
from vgpuctl.render.style import plural, text

MARKS = {Action.CREATE: ("+", "green"), Action.UPDATE: ("~", "yellow"), Action.DELETE: ("-", "red"),
         Action.RESTART: ("↻", "cyan"), Action.UNCHANGED: ("=", "dim"), Action.KEEP: ("!", "yellow"),
         Action.WAIT: ("…", "cyan")}
CONFIG_KINDS = ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")


def step_line(step: Step) -> Text:
    mark, style = MARKS[step.action]
    note = f"  ({step.note})" if step.note and step.action is not Action.UNCHANGED else ""
    return text((f"  {mark} {step.action.value:<9} ", style), str(step.ref), (note, "dim"))


def summary(plan: Plan) -> str:
    counts: dict[Action, int] = {}
    for step in plan.steps:
        counts[step.action] = counts.get(step.action, 0) + 1
    parts = [f"{counts[a]} to {a.value}" for a in (Action.CREATE, Action.UPDATE, Action.DELETE, Action.RESTART)
             if counts.get(a)]
    parts += [f"{counts[a]} {a.value}" for a in (Action.UNCHANGED, Action.KEEP) if counts.get(a)]
    if counts.get(Action.WAIT):
        parts.append(f"{plural(counts[Action.WAIT], 'readiness wait')}")
    return ", ".join(parts) or "nothing"


def render_plan(plan: Plan, console: Console, *, verb: str, diffs: bool) -> None:
    console.print(text(f"{verb} plan for Volcano {plan.volcano_version}: {summary(plan)}", style="bold"))
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
                console.print(text(raw, style=style))
    if plan.notes:
        console.print()
        console.print(Text("Notes:", style="bold"))
        for note in plan.notes:
            console.print(text(f"  - {note}"))


def render_outcome(plan: Plan, applied: list[Step], failed: Step | None, error: str, not_applied: list[Step],
                   console: Console, *, rerun: str) -> None:
    console.print()
    if failed is None:
        if not plan.writes:
            console.print(Text("Nothing to change: the cluster already matches (0 writes).", style="green"))
        else:
            console.print(Text(f"Applied {plural(sum(1 for s in applied if s.writes), 'change')}.", style="green"))
        return
    console.print(text(f"× stopped at {failed.action.value} {failed.ref}: {error}", style="bold red"))
    console.print(Text(f"  applied ({len(applied)}):", style="bold"))
    for step in applied:
        console.print(text(f"    √ {step.action.value} {step.ref}"))
    console.print(Text(f"  not applied ({len(not_applied) + 1}):", style="bold"))
    for step in [failed, *not_applied]:
        console.print(text(f"    × {step.action.value} {step.ref}"))
    configs = [s for s in [failed, *not_applied] if s.ref.kind in CONFIG_KINDS and s.writes]
    if failed.action is Action.WAIT and configs:
        console.print(text(f"  The webhook configurations were not applied ({', '.join(str(s.ref) for s in configs)}):"
                           " the API server does not call the webhook yet, so nothing is blocked. Find out why its "
                           f"pods are not ready (kubectl -n {failed.ref.namespace} get pods), then rerun `{rerun}` "
                           "(--webhook-timeout SECONDS waits longer); the certificates are kept.", style="bold"))
        return
    console.print(text(f"  Fix the cause and rerun `{rerun}`: what is already applied is left as it is.", style="bold"))


# --- -o json / yaml -------------------------------------------------------------------------------

def _step_dict(step: Step, status: str, error: str = "") -> dict[str, Any]:
    ref = step.ref
    out: dict[str, Any] = {
        "object": str(ref),
        "ref": {"apiVersion": ref.api_version, "kind": ref.kind, "namespace": ref.namespace, "name": ref.name},
        "action": step.action.value,
        "method": step.method.value,
        "status": status,
        "note": step.note,
        "diff": step.diff,
    }
    if error:
        out["error"] = error
    return out


def install_report(plan: Plan, *, verb: str, dry_run: bool, applied: Sequence[Step] = (), failed: Step | None = None,
                   error: str = "", not_applied: Sequence[Step] = (), rerun: str | None = None,
                   notes: Sequence[str] = (), doctor: DoctorReport | None = None) -> dict[str, Any]:
    """The plan, and what became of each step: `planned` (dry run), `applied`, `failed`, `skipped` (after a
    failure), or `none` (nothing to do: unchanged, or not vgpuctl's)."""
    position = 0
    steps: list[dict[str, Any]] = []
    for step in plan.steps:
        if not (step.writes or step.action is Action.WAIT):  # what the writer skips (see Plan.todo)
            steps.append(_step_dict(step, "none"))
            continue
        index, position = position, position + 1
        if dry_run:
            steps.append(_step_dict(step, "planned"))
        elif index < len(applied):
            steps.append(_step_dict(applied[index], "applied"))  # as done (a 409 may have re-planned it)
        elif failed is not None and index == len(applied):
            steps.append(_step_dict(failed, "failed", error))
        else:
            steps.append(_step_dict(step, "skipped"))
    if dry_run:
        outcome = "planned" if plan.writes else "unchanged"
    elif failed is not None:
        outcome = "failed"
    else:
        outcome = "applied" if plan.writes else "unchanged"
    count = {s: sum(1 for d in steps if d["status"] == s) for s in ("planned", "applied", "failed", "skipped")}
    report: dict[str, Any] = {
        "apiVersion": API_VERSION,
        "kind": "InstallReport",
        "command": verb,
        "dryRun": dry_run,
        "volcanoVersion": str(plan.volcano_version),
        "outcome": outcome,
        "steps": steps,
        "notes": [*plan.notes, *notes],
        "summary": {"writes": len(plan.writes), **count,
                    "unchanged": sum(1 for s in plan.steps if s.action is Action.UNCHANGED),
                    "kept": sum(1 for s in plan.steps if s.action is Action.KEEP)},
        "error": f"stopped at {failed.action.value} {failed.ref}: {error}" if failed is not None else None,
        "rerun": rerun if failed is not None else None,
        "doctor": None,
    }
    if doctor is not None:
        full = doctor.to_dict()
        report["doctor"] = {k: full[k] for k in ("versions", "checks", "findings", "summary")}
    return report
