"""`why` reads pod and node quantities as Go's `Quantity.Value()` does (`vgpuctl.core.quantity`)."""

from __future__ import annotations

import pytest

from vgpuctl.core.quantity import parse_quantity
from vgpuctl.core.why.request import quantity_value


@pytest.mark.parametrize(("raw", "value"), [
    ("3", 3), (3, 3), ("1500m", 2), ("1n", 1), ("1Ki", 1024), ("0", 0),
    ("-1.5", -2),  # away from zero, as Go: not the ceiling (-1)
    ("junk", 0), (None, 0), ([], 0),
])
def test_quantity_value_is_gos_value(raw: object, value: int) -> None:
    assert quantity_value(raw) == value
    if isinstance(raw, str) and value:
        assert quantity_value(raw) == parse_quantity(raw).value_rounded_up()
