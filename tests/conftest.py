"""Test-suite settings: CI runs hypothesis derandomized so a green main stays green; locally it explores.
Also the one threaded HTTP server the fake API servers share."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, settings
from pytest_httpserver import HTTPServer

settings.register_profile("ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", deadline=None)
settings.load_profile("ci" if os.environ.get("CI") else os.environ.get("HYPOTHESIS_PROFILE", "dev"))


@pytest.fixture(scope="session")
def make_httpserver() -> Iterator[HTTPServer]:
    """pytest-httpserver's server, threaded: the fake API servers of tests/kube and tests/install serve a
    request that stalls (timeout tests) without holding up the ones after it."""
    server = HTTPServer(host="127.0.0.1", port=0, threaded=True)
    server.start()
    yield server
    server.clear()
    server.stop()
