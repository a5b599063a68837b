"""Random gpushare / gpu-number clusters for the extended oracle (`oracle_differential.py --family gpushare`).

Volcano's model (`pkg/scheduler/api/devices/nvidia/gpushare/`): capacity `volcano.sh/gpu-memory` split evenly over
capacity `volcano.sh/gpu-number` cards, minus the cards in `volcano.sh/gpu-unhealthy-ids`; a bound pod is on the
cards its `volcano.sh/gpu-index` names when it asks for gpu-memory or gpu-number. Nodes advertise a large
allocatable of both resources so the allocate action's resource check (not the device filter) never decides.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

from benchmarks.oracle_harness import drop_each, fewer_parts, node_item, pod_item, scheduler_items, snapshot

FAMILY = "gpushare"
MEM, NUM = "volcano.sh/gpu-memory", "volcano.sh/gpu-number"
CARD_MIB = [15360, 16384, 24576, 40960, 81920]


def _res(rng: random.Random, number_on: bool, per: int) -> dict[str, int]:
    r = rng.random()
    if number_on:
        c = {NUM: rng.choice([1, 1, 1, 2, 2, 3, 4])}
        if r < 0.15:
            c[MEM] = rng.randint(1, per)
        return c
    c = {MEM: rng.choice([512, 1024, 2048, 4096, 8000, per // 2, per, rng.randint(1, per + 2000)])}
    if r < 0.1:
        c[NUM] = rng.choice([1, 2])
    return c


def gen_case(rng: random.Random, idx: int) -> dict[str, Any]:
    number_on = rng.random() < 0.4
    key = "deviceshare.GPUNumberEnable" if number_on else "deviceshare.GPUSharingEnable"
    args: dict[str, Any] = {key: rng.choice([True] * 9 + ["true"]),
                            "deviceshare.SchedulePolicy": rng.choice(["binpack", "spread", ""]),
                            "deviceshare.ScheduleWeight": rng.choice([0, 10])}
    if rng.random() < 0.03:
        args[key] = False
    nodes, pods = [], []
    for ni in range(rng.randint(1, 5)):
        name = f"n{ni}"
        cards, per = rng.randint(1, 8), rng.choice(CARD_MIB)
        node: dict[str, Any] = {"name": name, "cards": cards, "per": per, "extra": rng.choice([0] * 8 + [1, 777]),
                                "device": rng.random() > 0.05, "unhealthy": None}
        if rng.random() < 0.15:
            bad = rng.sample(range(cards + 1), min(cards + 1, rng.randint(1, 2)))
            toks = [str(b) for b in bad] + (["x"] if rng.random() < 0.2 else [])
            node["unhealthy"] = ",".join(toks)
        nodes.append(node)
        for k in range(rng.choice([0, 1, 1, 2, 3, 4, 5])):
            ctrs = [_res(rng, rng.random() < 0.3, per) for _ in range(rng.choice([1, 1, 1, 2]))]
            if rng.random() < 0.08:
                ctrs = [{}]  # an index without any gpushare resource: not on any card for Volcano
            want = sum(c.get(NUM, 0) for c in ctrs) or 1
            idx_list = rng.sample(range(cards), min(cards, want)) if rng.random() > 0.05 else [cards + 1]
            inits = [_res(rng, False, per)] if rng.random() < 0.08 else []
            pods.append({"name": f"use-{name}-{k}", "ns": rng.choice(["ml", "team-a"]), "node": name,
                         "phase": rng.choice(["Running"] * 8 + ["Pending", "Succeeded", "Failed", "Unknown"]),
                         "deleting": rng.random() < 0.05, "containers": ctrs, "inits": inits,
                         "index": ",".join(map(str, idx_list)) if rng.random() > 0.03 else None})
    per_max = max(n["per"] for n in nodes)
    ctrs = [_res(rng, number_on if rng.random() > 0.1 else not number_on, per_max)
            for _ in range(rng.choice([1] * 7 + [2, 3]))]
    inits = [_res(rng, number_on, per_max)] if rng.random() < 0.1 else []
    pending = {"name": f"want-{idx}", "ns": rng.choice(["ml", "team-a"]), "containers": ctrs, "inits": inits}
    return {"family": FAMILY, "idx": idx, "args": args, "nodes": nodes, "pods": pods, "pending": pending}


def render(case: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    items = scheduler_items(case["args"])
    for n in case["nodes"]:
        cap, alloc, ann = {}, {}, {}
        if n["device"]:
            cap = {MEM: str(n["per"] * n["cards"] + n["extra"]), NUM: str(n["cards"])}
            alloc = {MEM: "10000000", NUM: "1000"}  # the resource check never decides
        if n["unhealthy"] is not None:
            ann["volcano.sh/gpu-unhealthy-ids"] = n["unhealthy"]
        items.append(node_item(n["name"], cap, alloc, ann))
    for p in case["pods"]:
        ann = {"volcano.sh/gpu-index": p["index"]} if p["index"] is not None else {}
        items.append(pod_item(p["name"], p["ns"], ann, p["containers"], node=p["node"], phase=p["phase"],
                              deleting=p["deleting"], inits=p["inits"]))
    pp = case["pending"]
    return snapshot(items), pod_item(pp["name"], pp["ns"], {}, pp["containers"], inits=pp["inits"])


def candidates(case: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from fewer_parts(case)
    pend = case["pending"]
    if pend["inits"]:
        c = copy.deepcopy(case)
        c["pending"]["inits"] = []
        yield c
    for pi, p in enumerate(case["pods"]):
        for field, empty in (("inits", []), ("deleting", False)):
            if p[field]:
                c = copy.deepcopy(case)
                c["pods"][pi][field] = empty
                yield c
        if len(p["containers"]) > 1:
            for ctrs in drop_each(p["containers"]):
                c = copy.deepcopy(case)
                c["pods"][pi]["containers"] = ctrs
                yield c
    for ni, n in enumerate(case["nodes"]):
        if n["unhealthy"] is not None:
            c = copy.deepcopy(case)
            c["nodes"][ni]["unhealthy"] = None
            yield c
