"""`benchmarks/scale.py` judges a command by its median round, not by its luckiest one (issue 26 part 2)."""

from __future__ import annotations

from benchmarks.scale import verdict


def test_one_lucky_round_does_not_meet_the_goal() -> None:
    assert verdict([1.5, 1.9, 2.0], 1.7) == "MISS"  # the best round alone would pass


def test_the_median_round_meeting_the_goal_passes() -> None:
    assert verdict([1.9, 1.6, 1.65], 1.7) == "ok"
    assert verdict([1.7, 1.7, 1.8], 1.7) == "ok"  # at the goal is within it
