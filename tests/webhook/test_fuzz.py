"""Hypothesis-driven fuzz of the admission endpoints (Flask test client, for speed; the real server gets a
burst in test_server.py): whatever arrives, the answer is 200, 400, 413 or 415 — never a 5xx — and a 200
is a well-formed AdmissionReview answer whose patch applies to the object it was computed for."""

from __future__ import annotations

import base64
import copy
import json
from pathlib import Path
from typing import Any

import jsonpatch
import pytest
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.webhook.conftest import DEVICE_CONFIG, GOLDEN, load_json
from vgpuctl.webhook.app import create_app
from vgpuctl.webhook.review import InvalidReviewError, _parse_checked, _parse_well_formed
from vgpuctl.webhook.settings import Settings

LIMIT = 64 * 1024
ALLOWED_STATUSES = {200, 400, 413, 415}
SEEDS = [load_json(p) for p in sorted(GOLDEN.glob("*.in.json"))]
POD_SEED = load_json(GOLDEN / "validate-vgpu-allowed.in.json")

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner, max_size=4),
    max_leaves=20,
)
odd_values = json_values | st.sampled_from(["3Gi", "-1", "1e3", "0x10", "", " ", "mig", "MIG", "hami-core", "∞"])


@pytest.fixture(scope="module")
def fuzz_client() -> FlaskClient:
    app = create_app(Settings(device_config_path=str(DEVICE_CONFIG), max_body_bytes=LIMIT,
                              config_check_interval=3600))
    return app.test_client()


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


@st.composite
def mutated_reviews(draw: st.DrawFn) -> Any:
    """A golden request with a few members replaced by odd values, deleted, or given odd new members."""
    doc = copy.deepcopy(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 4))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent: Any = doc
        for token in path[:-1]:
            parent = parent[token]
        action = draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = draw(odd_values)
        elif action == "delete":
            del parent[path[-1]]
        elif isinstance(parent[path[-1]], dict):
            parent[path[-1]][draw(st.text(max_size=30))] = draw(odd_values)
    return doc


def _check(client: FlaskClient, endpoint: str, body: bytes, content_type: str = "application/json") -> int:
    response = client.post(f"/{endpoint}", data=body, content_type=content_type)
    assert response.status_code in ALLOWED_STATUSES, (response.status_code, response.data[:500])
    assert response.mimetype == "application/json"
    answer = json.loads(response.data)
    if response.status_code != 200:
        assert answer["code"] == response.status_code and answer["error"]
        return response.status_code
    sent = json.loads(body)
    result = answer["response"]
    assert result["uid"] == sent["request"]["uid"]
    assert isinstance(result["allowed"], bool)
    assert all(isinstance(w, str) and len(w) <= 256 for w in result.get("warnings", []))
    if endpoint == "mutate":
        assert result["allowed"] is True
        if "patch" in result:
            ops = json.loads(base64.b64decode(result["patch"]))
            jsonpatch.apply_patch(sent["request"]["object"], ops)  # must apply cleanly
    elif not result["allowed"]:
        assert result["status"]["code"] in (400, 403) and result["status"]["message"]
    return 200


FUZZ = settings(max_examples=150, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@FUZZ
@given(body=mutated_reviews(), endpoint=st.sampled_from(["mutate", "validate"]))
def test_mutated_reviews(fuzz_client: FlaskClient, body: Any, endpoint: str) -> None:
    _check(fuzz_client, endpoint, json.dumps(body).encode())


@FUZZ
@given(body=mutated_reviews() | json_values)
def test_fast_parse_agrees_with_the_checked_parse(body: Any) -> None:
    """The per-review fast path answers only bodies the checked parse accepts, and with the same request."""
    fast = _parse_well_formed(body)
    try:
        checked = _parse_checked(body)
    except InvalidReviewError:
        assert fast is None
        return
    assert fast is None or fast == checked


def test_fast_parse_takes_the_api_servers_shape() -> None:
    for seed in SEEDS:
        assert _parse_well_formed(seed) == _parse_checked(seed)


@FUZZ
@given(body=json_values, endpoint=st.sampled_from(["mutate", "validate"]))
def test_arbitrary_json(fuzz_client: FlaskClient, body: Any, endpoint: str) -> None:
    assert _check(fuzz_client, endpoint, json.dumps(body).encode()) == 400


@FUZZ
@given(body=st.binary(max_size=2048), content_type=st.sampled_from(
    ["application/json", "application/json; charset=utf-8", "text/plain", "", "application/x-www-form-urlencoded",
     "multipart/form-data; boundary=x", "APPLICATION/JSON"]))
def test_binary_and_content_types(fuzz_client: FlaskClient, body: bytes, content_type: str) -> None:
    """Random bytes are never an AdmissionReview: 400 when declared as JSON (any case, any parameters), else
    415; either way a JSON error naming the status."""
    response = fuzz_client.post("/validate", data=body, content_type=content_type)
    declared_json = content_type.split(";")[0].strip().lower() == "application/json"
    assert response.status_code == (400 if declared_json else 415), (content_type, body[:100])
    answer = response.get_json()
    assert answer["code"] == response.status_code and answer["error"]


@FUZZ
@given(depth=st.integers(1, 20_000), opener=st.sampled_from(["[", '{"a":']),
       where=st.sampled_from(["top", "object", "annotations"]))
def test_deep_nesting(fuzz_client: FlaskClient, depth: int, opener: str, where: str) -> None:
    closer = "]" if opener == "[" else "}"
    nested = opener * depth + "1" + closer * depth
    if where == "top":
        body = nested
    else:
        seed = copy.deepcopy(POD_SEED)
        if where == "object":
            seed["request"]["object"]["spec"]["containers"][0]["resources"] = "__X__"
        else:
            seed["request"]["object"]["metadata"]["annotations"] = {"volcano.sh/vgpu-mode": "__X__"}
        body = json.dumps(seed).replace('"__X__"', nested)
    status = _check(fuzz_client, "validate", body.encode())
    if len(body.encode()) > LIMIT:
        assert status == 413
    elif where == "top":  # nested arrays or objects alone are never an AdmissionReview
        assert status == 400
    else:  # judged, or refused as too deep for the JSON parser; never a 5xx
        assert status in (200, 400)


@FUZZ
@given(size=st.integers(0, 2 * LIMIT), field=st.sampled_from(["uid", "name", "annotation", "limit"]))
def test_huge_strings(fuzz_client: FlaskClient, size: int, field: str) -> None:
    seed = copy.deepcopy(POD_SEED)
    big = "x" * size
    obj = seed["request"]["object"]
    if field == "uid":
        seed["request"]["uid"] = big or "u"
    elif field == "name":
        obj["metadata"]["name"] = big
    elif field == "annotation":
        obj["metadata"]["annotations"] = {"nvidia.com/use-gputype": big}
    else:
        obj["spec"]["containers"][0]["resources"]["limits"]["volcano.sh/vgpu-memory"] = big
    body = json.dumps(seed).encode()
    status = _check(fuzz_client, "mutate", body)
    assert (status == 413) == (len(body) > LIMIT)


def test_still_healthy_after_fuzzing(fuzz_client: FlaskClient) -> None:
    assert fuzz_client.get("/healthz").status_code == 200
    assert fuzz_client.get("/readyz").status_code == 200
    assert b'result="error"} 0.0' in fuzz_client.get("/metrics").data  # no internal errors on any input


@pytest.mark.parametrize("where", ["memory", "cores", "mode"])
def test_values_as_deep_as_the_parser_builds_are_judged_not_an_internal_error(where: str) -> None:
    """Issue 23: a value nested 1,000 deep (orjson builds up to 1,024) made a rule quoting it die of
    RecursionError, and the webhook denied with [INTERNAL]. Under `webhook serve` the worker raises its
    recursion limit (`server.worker_app`): the value is judged like any other, and its message quotes the
    start of it, not 2,000 characters of brackets."""
    import subprocess
    import sys

    script = f"""
import json, sys
from tests.webhook.conftest import DEVICE_CONFIG, admission_review, vgpu_pod
from vgpuctl.webhook.app import create_app
from vgpuctl.webhook.server import worker_app
from vgpuctl.webhook.settings import Settings
client = worker_app(lambda: create_app(Settings(device_config_path=str(DEVICE_CONFIG)))).test_client()
limits = {{"volcano.sh/vgpu-number": "1", "volcano.sh/vgpu-memory": "1024", "volcano.sh/vgpu-cores": "10"}}
limits.update({{"memory": {{"volcano.sh/vgpu-memory": "__X__"}}, "cores": {{"volcano.sh/vgpu-cores": "__X__"}}}}
              .get({where!r}, {{}}))
pod = vgpu_pod(limits)
if {where!r} == "mode":
    pod["metadata"]["annotations"] = {{"volcano.sh/vgpu-mode": "__X__"}}
deep = "[" * 1000 + "1" + "]" * 1000
body = json.dumps(admission_review(pod)).replace('"__X__"', deep)
out = []
for endpoint in ("validate", "mutate"):
    answer = client.post("/" + endpoint, data=body, content_type="application/json").json["response"]
    out.append(answer)
print(json.dumps(out))
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                         cwd=Path(__file__).resolve().parents[2])
    assert run.returncode == 0, run.stderr
    validate, mutate = json.loads(run.stdout.splitlines()[-1])
    assert "INTERNAL" not in json.dumps(validate) and "internal error" not in json.dumps(mutate)
    assert validate["allowed"] is False and validate["status"]["message"].startswith("[VGP")
    assert len(validate["status"]["message"]) < 2000
