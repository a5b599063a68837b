"""JSON documents never carry a control character raw (DEL and C1 included), and read back the same values."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from vgpuctl.render import to_json

RAW = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f]")  # any control but the newline
HOSTILE = {"mode": "MIG\x9b2J\x1b[41m", "del": "a\x7fb", "nel": "x\x85y", "fine": "·×é√ GPU-0"}


@pytest.mark.parametrize("ascii_only", [False, True])
def test_every_encoder_escapes_del_and_c1(ascii_only: bool) -> None:
    # orjson's path, and the standard encoder's for what orjson refuses (an integer beyond 64 bits)
    for data in (HOSTILE, {**HOSTILE, "big": 2**70}):
        text = to_json(data, ascii_only=ascii_only)
        assert not RAW.search(text) and json.loads(text) == data
    assert "\\u009b2J" in to_json(HOSTILE, ascii_only=ascii_only)
    assert "·×é√" in to_json(HOSTILE, ascii_only=False)  # what is not a control stays as written


@given(st.recursive(st.text() | st.integers() | st.booleans() | st.none(),
                    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                    max_leaves=12))
def test_any_document_reads_back_and_holds_no_raw_control(data: object) -> None:
    text = to_json(data, ascii_only=False)
    assert json.loads(text) == data and not RAW.search(text)
