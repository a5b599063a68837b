from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from vgpuctl.core.codecs.locks import LOCK_NAMES, decode_node_lock, encode_node_lock, find_node_locks

UTC = UTC
NOW = datetime(2026, 5, 9, 10, 10, tzinfo=UTC)


def test_lock_names() -> None:
    assert LOCK_NAMES == ("hamivgpu", "gpu", "hami.io/mutex.lock")


@pytest.mark.parametrize(
    ("value", "stale"),
    [
        ("2026-05-09T10:04:59Z", True),
        ("2026-05-09T10:05:00Z", False),  # exactly 5 minutes: Volcano needs strictly more
        ("2026-05-09T10:09:00Z", False),
        ("2026-05-09T18:04:00+08:00", True),  # 10:04 UTC
        ("2026-05-09T10:09:00.123456789Z", False),  # Go accepts fractional seconds
        ("2026-05-09T10:20:00Z", False),  # from the future (clock skew): held
    ],
)
def test_staleness(value: str, stale: bool) -> None:
    lock = decode_node_lock("hamivgpu", value, now=NOW)
    assert lock.time is not None
    assert lock.stale is stale
    assert lock.blocking is not stale
    assert lock.problems == ()


def test_unparseable_lock_blocks_forever() -> None:
    lock = decode_node_lock("gpu", "yesterday", now=NOW)
    assert (lock.time, lock.stale, lock.blocking) == (None, False, True)
    assert [p.code for p in lock.problems] == ["VGN011"]
    assert "until the annotation is deleted" in lock.problems[0].message


def test_hami_form_is_read_but_volcano_cannot_break_it() -> None:
    lock = decode_node_lock("hami.io/mutex.lock", "2026-05-09T09:00:00Z,default,trainer-0", now=NOW)
    assert lock.time == datetime(2026, 5, 9, 9, tzinfo=UTC)
    assert lock.holder == "default/trainer-0"
    assert not lock.stale
    assert "HAMi" in lock.problems[0].message


@pytest.mark.parametrize("value", ["2026-05-09 10:00:00", "2026-05-09T25:00:00Z", "2026-02-30T10:00:00Z", "", 7, None])
def test_invalid_values(value: object) -> None:
    lock = decode_node_lock("hamivgpu", value, now=NOW)
    assert lock.time is None
    assert not lock.stale
    assert len(lock.problems) == 1


def test_find_node_locks_in_order_with_extra_names() -> None:
    annotations = {
        "hami.io/mutex.lock": "2026-05-09T10:09:00Z",
        "Ascend910B3": "2026-05-09T10:00:00Z",
        "hamivgpu": "2026-05-09T10:09:30Z",
        "other": "x",
    }
    locks = find_node_locks(annotations, now=NOW, extra_names=["Ascend910B3"])
    assert [(lk.name, lk.stale) for lk in locks] == [
        ("hamivgpu", False),
        ("hami.io/mutex.lock", False),
        ("Ascend910B3", True),
    ]
    assert find_node_locks(None, now=NOW) == ()
    assert find_node_locks(["hamivgpu"], now=NOW) == ()


def test_naive_now_is_utc() -> None:
    assert decode_node_lock("gpu", "2026-05-09T10:00:00Z", now=datetime(2026, 5, 9, 10, 6)).stale


def test_encode_round_trip() -> None:
    moment = datetime(2026, 5, 9, 10, 0, 0, 999, tzinfo=UTC)
    assert encode_node_lock(moment) == "2026-05-09T10:00:00Z"
    tz8 = timezone(timedelta(hours=8))
    assert encode_node_lock(moment.astimezone(tz8)) == "2026-05-09T18:00:00+08:00"
    assert decode_node_lock("gpu", encode_node_lock(moment), now=NOW).time == moment.replace(microsecond=0)
