"""The `nodes` table's fast layout (`_aligned`, one Text) draws what a borderless rich Table draws whenever
every column fits: the same characters in the same styles, in colour and without. The fast layout exists
because the Table took 20 s for 5,000 nodes; it must never be told apart. (Narrower, it moves pods under their
row and cuts or drops columns: tests/cli/test_narrow_tables.py.)"""

from __future__ import annotations

import io

import pytest
from rich.console import Console, RenderableType
from rich.style import Style
from rich.table import Table
from rich.text import Text

from benchmarks.snapshot_gen import fleet
from vgpuctl.core.cluster.build import build_snapshot
from vgpuctl.core.cluster.model import DeviceState, NodeState
from vgpuctl.core.spec import Family
from vgpuctl.render import nodes as render
from vgpuctl.render.terminal import safe


def _console(color: bool) -> Console:
    return Console(file=io.StringIO(), width=200, force_terminal=color, no_color=not color, highlight=False,
                   emoji=False, color_system="truecolor" if color else None)


def _styled(renderable: RenderableType, color: bool) -> list[tuple[str, Style | None]]:
    """Each character drawn with its style (what a terminal shows), line breaks included."""
    console = _console(color)
    drawn: list[tuple[str, Style | None]] = []
    for segment in console.render(renderable, console.options):
        style = segment.style if color and segment.style else None
        drawn.extend((ch, style) for ch in segment.text)
    return drawn


def _rich_table(rows: list[dict[str, render._Cell]]) -> Table:
    """The reference: the borderless rich Table the renderer drew before its one-Text layout."""
    table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1))
    for column in rows[0]:
        table.add_column(column, no_wrap=True, overflow="ellipsis")
    for row in rows:
        table.add_row(*(cell.text() for cell in row.values()))
    return table


def _device_sets() -> list[list[DeviceState]]:
    snapshot = build_snapshot(fleet(12)["items"])
    sets = [n.devices for n in snapshot.nodes if n.devices]
    vgpu = Family.VGPU
    odd = [
        DeviceState("GPU-短い名前-ü", 0, vgpu, "NVIDIA-NVIDIA H100 80GB HBM3", "mig", False, 81920, 100, 7,
                    memory_used=81920, cores_used=95, slots_used=7, pods=["ns/a", "ns/ü-pod"], slices=["1g.10gb-0"]),
        DeviceState("x", 12, Family.GPUSHARE, "NVIDIA", "gpushare", True, 0, 0, 0),
        DeviceState("GPU-" + "f" * 40, 3, vgpu, "T4", "hami-core", True, 15360, 100, 10, memory_used=14000,
                    cores_used=61, slots_used=1, pods=["team/p"]),
    ]
    return [*sets, odd, odd[:1]]


@pytest.mark.parametrize("color", [False, True])
@pytest.mark.parametrize("bars", [True, False])
def test_the_aligned_layout_draws_what_the_rich_table_draws(color: bool, bars: bool) -> None:
    for devices in _device_sets():
        rows = [render._cells(d, bars=bars) for d in devices]
        table = _rich_table([dict(r) for r in (render._cells(d, bars=bars) for d in devices)])
        aligned = render._aligned(rows)
        assert _styled(aligned, color) == _styled(table, color)


def test_too_narrow_the_pods_go_under_their_row() -> None:
    device = DeviceState("GPU-a", 0, Family.VGPU, "T4", "hami-core", True, 100, 100, 10,
                         pods=["ns/a-long-pod-name", "ns/b"])
    narrow = render._device_table([device], 50).plain.splitlines()
    assert narrow[0].split()[-1] == "SLOTS" and narrow[2] == "   pods: ns/a-long-pod-name, ns/b"
    wide = render._device_table([device], 200).plain.splitlines()
    assert wide[0].split()[-1] == "PODS" and len(wide) == 2


def test_a_line_break_in_a_value_is_shown_not_laid_out() -> None:
    device = DeviceState("GPU-a\nb", 0, Family.VGPU, "T4", "hami-core", True, 100, 100, 10, pods=["ns/a\n√ ok"])
    cells = render._cells(device, bars=True)
    assert (cells["DEVICE"].plain, cells["PODS"].plain) == ("GPU-a\\nb", "ns/a\\n√ ok")
    assert isinstance(render._device_table([device], 200), render.Text)


@pytest.mark.parametrize("text", [
    "gpu-node-1  vgpu · mode hami-core\n#  DEVICE\n0  GPU-1  ██░░ 10/100  –",
    "tab\there", "carriage\rreturn", "bell\x07 backspace\x08 vt\x0b ff\x0c", "escape \x1b[31mred\x1b[0m",
    "wide 名前 ü", "",
])
def test_plain_printing_writes_what_rich_prints_where_no_style_shows(text: str) -> None:
    ours, rich_own = io.StringIO(), io.StringIO()
    for out in (ours, rich_own):
        assert Console(file=out, width=80, soft_wrap=True).color_system is None  # not a terminal
    render._print_plain(Console(file=ours, width=80, soft_wrap=True), text)
    Console(file=rich_own, width=80, soft_wrap=True).print(Text(text))
    assert ours.getvalue() == rich_own.getvalue()


def test_the_unstyled_layout_has_the_same_characters() -> None:
    for devices in _device_sets():
        rows = [render._cells(d, bars=True) for d in devices]
        styled, plain = render._aligned(rows), render._aligned(rows, styled=False)
        assert plain.plain == styled.plain and not plain.spans and styled.spans


def _as_rich_builds_it(d: DeviceState, bars: bool) -> dict[str, Text]:
    """The cells as rich Text built from the strings made `safe` (their control characters escaped), the way
    the renderer built them before it had `_Cell`s: an independent reference."""
    pods = Text(safe(", ".join(d.pods)) if d.pods else "–")
    if d.slices:
        pods.append(safe(f"  [{', '.join(d.slices)}]"), "magenta")

    def shown(used: int, total: int) -> Text:
        if total <= 0:
            return Text("–", style="dim")
        style = "red" if used / total >= 0.9 else ("yellow" if used / total >= 0.6 else "green")
        if not bars:
            return Text(f"{used}/{total}", style=style)
        filled = round(min(max(used / total, 0.0), 1.0) * render.BAR)
        text = Text("█" * filled, style=style)
        text.append("░" * (render.BAR - filled), style="dim")
        text.append(f" {used}/{total}")
        return text

    shown_id = safe(d.id)
    device_id = shown_id if len(shown_id) <= 16 else f"{shown_id[:8]}…{shown_id[-4:]}"
    return {"#": Text(str(d.index)), "DEVICE": Text(device_id),
            "TYPE": Text(safe(d.type.removeprefix("NVIDIA-").removeprefix("NVIDIA "))), "MODE": Text(safe(d.mode)),
            "HEALTH": Text("ok", "green") if d.health else Text("unhealthy", "bold red"),
            "MEMORY (MiB)": shown(d.memory_used, d.memory_total), "CORES": shown(d.cores_used, d.cores_total),
            "SLOTS": shown(d.slots_used, d.slots_total), "PODS": pods}


_CONTROLS = [
    DeviceState("GPU-\x07bell-\rcr", 0, Family.VGPU, "NVIDIA-T4\x08", "hami\x0bcore", True, 15360, 100, 10,
                memory_used=9000, cores_used=70, slots_used=2, pods=["ns/a\rb", "ns/\x0cc"], slices=["1g\x07.5gb-0"]),
    DeviceState("GPU-plain", 1, Family.VGPU, "T4", "mig", True, 15360, 100, 10, pods=["ns/p"], slices=["x\r"]),
]


@pytest.mark.parametrize("color", [False, True])
def test_cells_with_control_codes_draw_as_rich_draws_the_escaped_strings(color: bool) -> None:
    for bars in (True, False):
        for d in [*_CONTROLS, *_device_sets()[0]]:
            ours, reference = render._cells(d, bars=bars), _as_rich_builds_it(d, bars)
            for column, cell in ours.items():
                assert _styled(cell.text(), color) == _styled(reference[column], color), column
        rows = [render._cells(d, bars=bars) for d in _CONTROLS]
        assert _styled(render._aligned(rows), color) == _styled(_rich_table(rows), color)


@pytest.mark.parametrize("width", [200, 80, 60, 40])
def test_control_codes_never_break_the_table_at_any_width(width: int) -> None:
    node = NodeState("n\x07", {}, [Family.VGPU], "hami-core", list(_CONTROLS))
    report = render.NodeReport([node], "snapshot", [], {})
    for color in (False, True):
        console = _console(color)
        console.width = width
        render.render_nodes(report, console)
        assert "2 devices" in console.file.getvalue()  # type: ignore[attr-defined]  # drawn to the end
