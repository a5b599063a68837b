from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from vgpuctl.core.codecs.handshake import decode_handshake, encode_handshake

UTC = UTC


def test_plugin_report_with_go_time_string() -> None:
    hs = decode_handshake("Reported 2026-05-09 10:00:00.123456789 +0800 CST m=+12.345678901")
    assert hs.state == "reported"
    assert hs.problems == ()
    assert hs.time == datetime(2026, 5, 9, 2, 0, 0, 123456, tzinfo=UTC)


@pytest.mark.parametrize(
    "value",
    [
        "Reported 2026-05-09 10:00:00 +0000 UTC",
        "Reported 2026-05-09 10:00:00.5 -0330 -0330",
        "Reported 2026-05-09 10:00:00.123 +0000 UTC m=+0.001",
    ],
)
def test_go_time_string_variants(value: str) -> None:
    hs = decode_handshake(value)
    assert hs.state == "reported"
    assert hs.time is not None
    assert hs.problems == ()


def test_ascend_report() -> None:
    hs = decode_handshake("Reported_2026.05.09 10:00:00")
    assert (hs.state, hs.time, hs.problems) == ("reported", datetime(2026, 5, 9, 10, tzinfo=UTC), ())


def test_requesting_is_read_as_utc_and_expires_after_60_seconds() -> None:
    hs = decode_handshake("Requesting_2026.05.09 10:00:00")
    assert hs.state == "requesting"
    assert hs.time == datetime(2026, 5, 9, 10, tzinfo=UTC)
    assert not hs.expired(datetime(2026, 5, 9, 10, 1, tzinfo=UTC))  # exactly 60 s: not yet
    assert hs.expired(datetime(2026, 5, 9, 10, 1, 1, tzinfo=UTC))
    assert hs.expired(datetime(2026, 5, 9, 10, 1, 1))  # a naive now is taken as UTC


def test_hami_dash_layout() -> None:
    assert decode_handshake("Requesting_2026-05-09 10:00:00").time == datetime(2026, 5, 9, 10, tzinfo=UTC)


def test_deleted() -> None:
    hs = decode_handshake("Deleted_2026.05.09 10:02:00")
    assert hs.state == "deleted"
    assert hs.time == datetime(2026, 5, 9, 10, 2, tzinfo=UTC)
    assert not hs.expired(datetime(2030, 1, 1, tzinfo=UTC))


def test_requesting_without_underscore_panics_volcano() -> None:
    hs = decode_handshake("Requesting")
    assert hs.state == "requesting"
    assert [p.code for p in hs.problems] == ["VGN006"]
    assert "panics" in hs.problems[0].message


def test_requesting_with_unreadable_time_is_always_expired() -> None:
    hs = decode_handshake("Requesting_yesterday")
    assert hs.time is None
    assert hs.expired(datetime(2000, 1, 1, tzinfo=UTC))
    assert "marked Deleted" in hs.problems[0].message


def test_unknown_value() -> None:
    hs = decode_handshake("ok")
    assert hs.state == "unknown"
    assert [p.code for p in hs.problems] == ["VGN006"]


@pytest.mark.parametrize("value", [None, 1, ["Reported"]])
def test_non_strings(value: object) -> None:
    hs = decode_handshake(value)
    assert hs.state == "unknown"
    assert len(hs.problems) == (0 if value is None else 1)


def test_encode_round_trip() -> None:
    moment = datetime(2026, 5, 9, 10, 0, 5, tzinfo=UTC)
    assert encode_handshake("requesting", moment) == "Requesting_2026.05.09 10:00:05"
    for state in ("requesting", "deleted"):
        assert decode_handshake(encode_handshake(state, moment)).time == moment
    assert decode_handshake(encode_handshake("reported-ascend", moment)).state == "reported"
    assert decode_handshake(encode_handshake("requesting", moment)).expired(moment + timedelta(seconds=61))
