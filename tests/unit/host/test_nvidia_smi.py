"""nvidia-smi parsers on recorded outputs: the --query-gpu CSV and the `mig -lgip` profile table."""

from __future__ import annotations

import pytest

from tests.unit.host.helpers import fixture
from vgpuctl.core.host.nvidia_smi import (
    LEGACY_QUERY_FIELDS,
    MigMode,
    driver_major,
    parse_gpu_query,
    parse_mig_profiles,
)


def test_a100_with_mig_enabled_on_one_gpu() -> None:
    query = parse_gpu_query(fixture("nvidia-smi/query-a100-sxm4-80gb-mixed-mig.csv"))
    assert query.problems == ()
    assert [(g.index, g.mig_mode) for g in query.gpus] == [
        (0, MigMode.ENABLED), (1, MigMode.DISABLED), (2, MigMode.DISABLED), (3, MigMode.DISABLED)]
    first = query.gpus[0]
    assert first.uuid == "GPU-7fdaf0a5-179b-f636-d15d-daf243e3ff16"
    assert first.name == "NVIDIA A100-SXM4-80GB"
    assert first.registered_type == "NVIDIA-NVIDIA A100-SXM4-80GB"
    assert first.driver_version == "535.216.01" and first.memory_mib == 81920


def test_gpu_without_mig_reports_not_available() -> None:
    query = parse_gpu_query(fixture("nvidia-smi/query-tesla-t4.csv"))
    assert [g.mig_mode for g in query.gpus] == [MigMode.NOT_SUPPORTED] * 2
    assert {g.name for g in query.gpus} == {"Tesla T4"} and query.gpus[1].memory_mib == 15360


@pytest.mark.parametrize("name", ["query-h100-nvl-mig.csv", "query-a800-80gb-pcie.csv"])
def test_other_models_parse_cleanly(name: str) -> None:
    query = parse_gpu_query(fixture(f"nvidia-smi/{name}"))
    assert query.gpus and query.problems == ()
    assert all(g.driver_version and driver_major(g.driver_version) for g in query.gpus)


def test_bracketed_values_are_unknown_not_errors() -> None:
    text = "0, GPU-aaaa, NVIDIA A100-PCIE-40GB, [Insufficient Permissions], [Unknown Error], [N/A]\n"
    gpu = parse_gpu_query(text).gpus[0]
    assert gpu.driver_version is None and gpu.mig_mode is MigMode.UNKNOWN and gpu.memory_mib is None


def test_legacy_field_set_for_drivers_before_r450() -> None:
    query = parse_gpu_query(fixture("nvidia-smi/query-legacy-v100-440.csv"), LEGACY_QUERY_FIELDS)
    (gpu,) = query.gpus
    assert gpu.mig_mode is MigMode.NOT_SUPPORTED and driver_major(gpu.driver_version) == 440


def test_header_row_and_units_are_tolerated() -> None:
    text = ("index, uuid, name, driver_version, mig.mode.current, memory.total [MiB]\n"
            "0, GPU-bbbb, Tesla T4, 470.57.02, [N/A], 15360 MiB\n")
    query = parse_gpu_query(text)
    assert query.problems == () and query.gpus[0].memory_mib == 15360


@pytest.mark.parametrize("text", [
    "", "\n\n",
])
def test_empty_output_is_no_gpu(text: str) -> None:
    assert parse_gpu_query(text).gpus == () and parse_gpu_query(text).problems == ()


def test_garbage_lines_are_reported_and_the_rest_kept() -> None:
    text = (fixture("nvidia-smi/driver-not-loaded.txt")
            + "x, GPU-cccc, Tesla T4, 470.57.02, [N/A], 15360\n"
            + fixture("nvidia-smi/query-tesla-t4.csv"))
    query = parse_gpu_query(text)
    assert len(query.gpus) == 2
    assert len(query.problems) == 2
    assert "expected 6" in query.problems[0] and "not an integer" in query.problems[1]


@pytest.mark.parametrize(("version", "major"), [
    ("535.104.05", 535), ("440.64.00", 440), ("418.67", 418), (None, None), ("", None), ("abc", None),
])
def test_driver_major(version: str | None, major: int | None) -> None:
    assert driver_major(version) == major


def test_lgip_a100_40gb_two_gpus() -> None:
    listed = parse_mig_profiles(fixture("nvidia-smi/lgip-a100-pcie-40gb-2gpus.txt"))
    assert listed.problems == () and not listed.no_mig_devices
    assert len(listed.profiles) == 14
    gpu0 = [p for p in listed.profiles if p.gpu == 0]
    assert [p.name for p in gpu0] == ["1g.5gb", "1g.5gb+me", "1g.10gb", "2g.10gb", "3g.20gb", "4g.20gb", "7g.40gb"]
    first = gpu0[0]
    assert (first.profile_id, first.free, first.total, first.memory_gib) == (19, 0, 7, 4.75)


def test_lgip_h100_nvl_three_digit_sm_column() -> None:
    listed = parse_mig_profiles(fixture("nvidia-smi/lgip-h100-nvl.txt"))
    assert listed.problems == ()
    last = listed.profiles[-1]
    assert (last.name, last.profile_id, last.free, last.total, last.memory_gib) == ("7g.94gb", 0, 1, 1, 92.62)


def test_lgip_wider_table_of_newer_drivers() -> None:
    listed = parse_mig_profiles(fixture("nvidia-smi/lgip-a100-sxm4-80gb-wide.txt"))
    assert listed.problems == ()
    assert {p.name for p in listed.profiles} >= {"1g.10gb", "2g.20gb", "3g.40gb", "4g.40gb", "7g.80gb"}


def test_lgip_without_mig_devices() -> None:
    listed = parse_mig_profiles(fixture("nvidia-smi/lgip-no-mig-enabled.txt"))
    assert listed.no_mig_devices and listed.profiles == () and listed.problems == ()


def test_lgip_garbage_and_empty() -> None:
    assert parse_mig_profiles("").profiles == () and parse_mig_profiles("").problems == ()
    garbage = parse_mig_profiles(fixture("nvidia-smi/driver-not-loaded.txt"))
    assert garbage.profiles == () and "not a GPU instance profile table" in garbage.problems[0]
    broken_row = parse_mig_profiles("| GPU instance profiles: |\n|   0  MIG 1g.5gb  nineteen  7/7  4.75 No |\n")
    assert broken_row.profiles == () and "unrecognised profile row" in broken_row.problems[0]
