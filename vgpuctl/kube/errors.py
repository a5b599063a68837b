"""Failures of the live adapter that callers handle; importing this module does not import `kubernetes`."""

from __future__ import annotations


class ClusterUnreachable(Exception):  # noqa: N818 - the name says what happened; callers catch it by name
    """The cluster cannot be used at all (no config, connection failure, 401): exit 3 with this one line."""
