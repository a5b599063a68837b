"""Random vGPU clusters with `deviceshare.GPUExclusiveRules` for the extended oracle
(`oracle_differential.py --family exclusive`): Volcano's vGPU filter wrapped by
`pkg/scheduler/plugins/deviceshare/gpuexclusive.go` (a GPU held by a pod matching a rule the pending pod also
matches is capped at its used slots; hami-core nodes only).
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

from benchmarks.oracle_harness import drop_each, fewer_parts, node_item, pod_item, scheduler_items, snapshot, uid

FAMILY = "exclusive"
LABELS = [("team", "a"), ("team", "b"), ("app", "train"), ("tier", "gold")]


def _labels(rng: random.Random) -> dict[str, str]:
    return dict(rng.sample(LABELS, rng.choice([0, 1, 1, 2])))


def gen_case(rng: random.Random, idx: int) -> dict[str, Any]:
    rules = [dict(rng.sample(LABELS, rng.choice([1, 1, 2]))) for _ in range(rng.choice([1, 1, 2]))]
    if rng.random() < 0.05:
        rules.append({"team": 3})  # a non-string value: dropped, as parseExclusiveRules drops it
    args: dict[str, Any] = {"deviceshare.VGPUEnable": True, "deviceshare.GPUExclusiveRules": rules,
                            "deviceshare.SchedulePolicy": rng.choice(["binpack", "spread", ""])}
    nodes, pods = [], []
    for ni in range(rng.randint(1, 4)):
        name = f"n{ni}"
        mode = "hami-core" if rng.random() > 0.1 else "mig"
        gpus = [{"uuid": "GPU-" + uid(idx, name, gi), "count": rng.choice([2, 4, 10]), "mem": 40960, "mode": mode}
                for gi in range(rng.randint(1, 4))]
        nodes.append({"name": name, "gpus": gpus})
        for k in range(rng.choice([0, 1, 2, 3, 4])):
            picked = rng.sample(gpus, min(len(gpus), rng.choice([1, 1, 2])))
            pods.append({"name": f"use-{name}-{k}", "ns": rng.choice(["ml", "team-a"]), "node": name,
                         "labels": _labels(rng), "devices": [(g["uuid"], rng.choice([1000, 4000, 10000]), 0)
                                                             for g in picked],
                         "phase": rng.choice(["Running"] * 8 + ["Pending", "Succeeded", "Failed"]),
                         "deleting": rng.random() < 0.08})
    want = {"volcano.sh/vgpu-number": rng.choice([1, 1, 1, 2, 3]),
            "volcano.sh/vgpu-memory": rng.choice([1000, 4000, 20000])}
    labels = _labels(rng) or dict(rng.sample(LABELS, 1))
    pending = {"name": f"want-{idx}", "ns": "ml", "labels": labels, "containers": [want]}
    return {"family": FAMILY, "idx": idx, "args": args, "nodes": nodes, "pods": pods, "pending": pending}


def render(case: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    items = scheduler_items(case["args"])
    for n in case["nodes"]:
        reg = "".join(f"{g['uuid']},{g['count']},{g['mem']},NVIDIA-NVIDIA A100-SXM4-40GB,true,{g['mode']}:"
                      for g in n["gpus"])
        alloc = {"volcano.sh/vgpu-number": "1000", "volcano.sh/vgpu-memory": "10000000",
                 "volcano.sh/vgpu-cores": "100000"}
        items.append(node_item(n["name"], alloc, alloc, {"volcano.sh/node-vgpu-register": reg}))
    for p in case["pods"]:
        enc = "".join(f"{d},NVIDIA,{m},{c}:" for d, m, c in p["devices"])
        ann = {"volcano.sh/vgpu-ids-new": enc, "volcano.sh/vgpu-node": p["node"], "volcano.sh/bind-phase": "success"}
        limits = {"volcano.sh/vgpu-number": len(p["devices"]),
                  "volcano.sh/vgpu-memory": max(m for _, m, _ in p["devices"])}
        items.append(pod_item(p["name"], p["ns"], ann, [limits], node=p["node"], phase=p["phase"],
                              deleting=p["deleting"], labels=p["labels"] or None))
    pp = case["pending"]
    return snapshot(items), pod_item(pp["name"], pp["ns"], {}, pp["containers"], labels=pp["labels"])


def candidates(case: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from fewer_parts(case, containers=False)
    for ni, n in enumerate(case["nodes"]):
        if len(n["gpus"]) > 1:
            for gpus in drop_each(n["gpus"]):
                c = copy.deepcopy(case)
                c["nodes"][ni]["gpus"] = gpus
                kept = {g["uuid"] for g in gpus} | {g["uuid"] for m in c["nodes"] if m is not c["nodes"][ni]
                                                    for g in m["gpus"]}
                c["pods"] = [p for p in c["pods"] if all(d in kept for d, _, _ in p["devices"])]
                yield c
    for pi, p in enumerate(case["pods"]):
        if len(p["devices"]) > 1:
            c = copy.deepcopy(case)
            c["pods"][pi]["devices"] = p["devices"][:1]
            yield c
