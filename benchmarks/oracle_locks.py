"""Node locks for the extended oracle (`oracle_differential.py --family locks`): the gpushare, Ascend HAMi and
GPUExclusiveRules generators in turn (case i takes family i mod 3, each with its own seeds unchanged), with
`deviceshare.NodeLockEnable` and lock annotations on the nodes. Volcano's `Allocate` calls
`pkg/scheduler/plugins/util/nodelock` `LockNode` (the real file in the extended oracle, against its fake client):
a lock younger than 5 minutes, or one `time.Parse(time.RFC3339, …)` cannot read, refuses the node. Lock names:
`gpu` (gpushare memory mode), `hami.io/mutex.lock` (Ascend HAMi), `hamivgpu` (vGPU).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from types import ModuleType
from typing import Any

from benchmarks import oracle_ascend, oracle_exclusive, oracle_gpushare

BASES: dict[str, ModuleType] = {"gpushare": oracle_gpushare, "ascend": oracle_ascend, "exclusive": oracle_exclusive}
LOCK = {"gpushare": "gpu", "ascend": "hami.io/mutex.lock", "exclusive": "hamivgpu"}
KINDS = ("young", "stale", "garbage", "hami")


def gen_case(rng: random.Random, idx: int) -> dict[str, Any]:
    family = list(BASES)[idx % 3]
    case = BASES[family].gen_case(rng, idx)
    case["label"] = "locks"
    case["args"]["deviceshare.NodeLockEnable"] = rng.choice([True, True, True, "true", False])
    for n in case["nodes"]:
        if rng.random() < 0.6:
            name = LOCK[family] if rng.random() < 0.85 else rng.choice([v for k, v in LOCK.items() if k != family])
            n["lock"] = [name, rng.choice(KINDS)]
    return case


def _value(kind: str) -> str:
    now = datetime.now(UTC).replace(microsecond=0)
    young, stale = now - timedelta(seconds=60), now - timedelta(minutes=20)
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    return {"young": young.strftime(fmt), "stale": stale.strftime(fmt), "garbage": "yesterday",
            "hami": f"{young.strftime(fmt)},ml,other"}[kind]


def render(case: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    snap, pod = BASES[case["family"]].render(case)
    locks = {n["name"]: n["lock"] for n in case["nodes"] if n.get("lock")}
    for item in snap["items"]:
        lock = locks.get(item["metadata"]["name"]) if item["kind"] == "Node" else None
        if lock is not None:
            item["metadata"].setdefault("annotations", {})[lock[0]] = _value(lock[1])
    return snap, pod


def candidates(case: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from BASES[case["family"]].candidates(case)
    for ni, n in enumerate(case["nodes"]):
        if n.get("lock"):
            c = copy.deepcopy(case)
            c["nodes"][ni]["lock"] = None
            yield c
