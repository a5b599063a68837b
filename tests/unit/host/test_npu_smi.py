"""npu-smi info parser on recorded outputs (Atlas 300I Pro 310P3, Atlas 800 A2 910B2, A3, 310B SoC)."""

from __future__ import annotations

from tests.unit.host.helpers import fixture
from vgpuctl.core.host.npu_smi import parse_npu_info


def test_310p3_cards_with_chip_device_column() -> None:
    info = parse_npu_info(fixture("npu-smi/info-310p3-2cards.txt"))
    assert info.problems == () and info.version is None
    assert [(c.npu_id, c.chip_id, c.device_id, c.name, c.health, c.bus_id) for c in info.chips] == [
        (0, 0, 0, "310P3", "OK", "0000:82:00.0"), (1, 0, 1, "310P3", "OK", "0000:89:00.0")]
    assert all(c.healthy for c in info.chips)


def test_910b2_eight_npus_and_process_table_is_not_read_as_chips() -> None:
    info = parse_npu_info(fixture("npu-smi/info-910b2-8npu.txt"))
    assert info.problems == () and info.version == "23.0.7"
    assert [c.npu_id for c in info.chips] == list(range(8))
    assert {c.name for c in info.chips} == {"910B2"} and all(c.device_id is None for c in info.chips)


def test_a3_two_chips_per_npu_with_phy_id() -> None:
    info = parse_npu_info(fixture("npu-smi/info-a3-ascend910-2npu.txt"))
    assert info.problems == () and info.version == "25.2.1"
    assert [(c.npu_id, c.chip_id, c.device_id) for c in info.chips] == [(0, 0, 0), (0, 1, 1), (1, 0, 2), (1, 1, 3)]


def test_soc_without_bus_id() -> None:
    (chip,) = parse_npu_info(fixture("npu-smi/info-310b4-soc.txt")).chips
    assert chip.name == "310B4" and chip.bus_id is None and chip.device_id == 0


def test_unhealthy_chip() -> None:
    text = fixture("npu-smi/info-310p3-2cards.txt").replace(
        "| 1       310P3     | OK              |", "| 1       310P3     | Alarm           |")
    chips = parse_npu_info(text).chips
    assert [c.health for c in chips] == ["OK", "Alarm"] and not chips[1].healthy


def test_empty_and_garbage() -> None:
    assert parse_npu_info("") .chips == () and parse_npu_info("").problems == ()
    garbage = parse_npu_info("dcmi module initialize failed. ret is -8005\n")
    assert garbage.chips == () and "not an npu-smi info table" in garbage.problems[0]


def test_npu_line_without_its_chip_line_is_reported() -> None:
    lines = fixture("npu-smi/info-310p3-2cards.txt").splitlines()
    truncated = "\n".join(lines[:5])  # header + the first NPU line, chip line cut off
    info = parse_npu_info(truncated)
    assert info.chips == () and "has no chip line" in info.problems[0]
