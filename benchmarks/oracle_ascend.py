"""Random Ascend HAMi vNPU clusters for the extended oracle (`oracle_differential.py --family ascend`).

Volcano's model (`pkg/scheduler/api/devices/ascend/hami/device_info.go`): per `vnpus` entry of the device config,
a node with non-zero allocatable `<resourceName>` and a `hami.io/node-register-<commonWord>` JSON list has those
devices; bound pods book what their `hami.io/<commonWord>-devices-allocated` says. Nodes advertise a large
allocatable of the count and memory resources so the allocate action's resource check never decides.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from typing import Any

from benchmarks.oracle_harness import drop_each, fewer_parts, meta, node_item, pod_item, scheduler_items, snapshot

FAMILY = "ascend"
TYPES = {
    "Ascend910B3": {"chipName": "910B3", "memoryAllocatable": 65536, "memoryCapacity": 65536, "aiCore": 20,
                    "aiCPU": 7, "templates": [("vir05_1c_16g", 16384, 5), ("vir10_3c_32g", 32768, 10)]},
    "Ascend310P": {"chipName": "310P3", "memoryAllocatable": 21527, "memoryCapacity": 24576, "aiCore": 8,
                   "aiCPU": 7, "templates": [("vir01", 3072, 1), ("vir02", 6144, 2), ("vir04", 12288, 4)]},
}


def device_config(types: list[str], hami_core: bool, wrapper: bool) -> str:
    lines = ["vnpus:"]
    ind = "  "
    if wrapper:
        lines += [f"  hamiVnpuCore: {str(hami_core).lower()}", "  configs:"]
        ind = "    "
    for cw in types:
        t = TYPES[cw]
        lines += [f"{ind}- commonWord: {cw}", f"{ind}  chipName: {t['chipName']}",
                  f"{ind}  resourceName: huawei.com/{cw}", f"{ind}  resourceMemoryName: huawei.com/{cw}-memory",
                  f"{ind}  memoryAllocatable: {t['memoryAllocatable']}",
                  f"{ind}  memoryCapacity: {t['memoryCapacity']}",
                  f"{ind}  aiCore: {t['aiCore']}", f"{ind}  aiCPU: {t['aiCPU']}", f"{ind}  templates:"]
        for name, mem, core in t["templates"]:
            lines += [f"{ind}    - name: {name}", f"{ind}      memory: {mem}", f"{ind}      aiCore: {core}",
                      f"{ind}      aiCPU: 1"]
    return "\n".join(lines) + "\n"


def _alloc_mem(rng: random.Random, cw: str, hami_core: bool) -> int:
    t = TYPES[cw]
    if hami_core:
        return rng.randint(0, t["memoryAllocatable"])
    return rng.choice([m for _, m, _ in t["templates"]] + [t["memoryAllocatable"]])


def gen_case(rng: random.Random, idx: int) -> dict[str, Any]:
    types = rng.choice([["Ascend910B3"], ["Ascend910B3"], ["Ascend310P"], ["Ascend910B3", "Ascend310P"]])
    args: dict[str, Any] = {"deviceshare.AscendHAMiVNPUEnable": True,
                            "deviceshare.SchedulePolicy": rng.choice(["binpack", "spread", ""]),
                            "deviceshare.ScheduleWeight": rng.choice([0, 10, 10])}
    cfg = {"types": types, "hami_core": rng.random() < 0.3, "wrapper": rng.random() < 0.7}
    nodes, pods = [], []
    for ni in range(rng.randint(1, 4)):
        name = f"n{ni}"
        node: dict[str, Any] = {"name": name, "core_ann": rng.choice([None] * 6 + ["true", "false"]), "types": {}}
        for cw in types:
            if rng.random() < 0.1:
                continue
            t = TYPES[cw]
            devs = [{"id": f"{cw}-{name}-{i}", "index": i, "count": rng.choice([1, 2, 4, 7, 7]),
                     "devmem": t["memoryAllocatable"], "devcore": t["aiCore"], "health": rng.random() > 0.1}
                    for i in range(rng.randint(1, 8))]
            node["types"][cw] = {"devices": devs, "alloc": rng.random() > 0.05}
        nodes.append(node)
        for k in range(rng.choice([0, 1, 1, 2, 3, 4])):
            if not node["types"]:
                break
            cw = rng.choice(list(node["types"]))
            devs = node["types"][cw]["devices"]
            hc = rng.random() < 0.3
            ctrs = []
            for _ in range(rng.choice([1, 1, 1, 2])):
                picked = rng.sample(devs, min(len(devs), rng.choice([1, 1, 1, 2])))
                ctrs.append([(d["id"], _alloc_mem(rng, cw, hc), rng.choice([0, 0, 5, 10, 20]) if hc else 0)
                             for d in picked])
            pods.append({"name": f"use-{name}-{k}", "ns": "ml", "node": name, "cw": cw, "containers": ctrs,
                         "phase": rng.choice(["Running"] * 8 + ["Pending", "Succeeded", "Failed"]),
                         "deleting": rng.random() < 0.05})
    ctrs = []
    for _ in range(rng.choice([1] * 6 + [2, 3])):
        cw = rng.choice(types)
        t = TYPES[cw]
        c: dict[str, Any] = {}
        r = rng.random()
        if r < 0.9:
            c[f"huawei.com/{cw}"] = rng.choice([1, 1, 1, 1, 2, 2, 3, 4, 9])
        if r > 0.3 or "huawei.com/" + cw not in c:
            c[f"huawei.com/{cw}-memory"] = rng.choice([m for _, m, _ in t["templates"]] + [
                rng.randint(1, t["memoryCapacity"] + 2000), t["memoryAllocatable"], 1000])
        if rng.random() < 0.2:
            c[f"huawei.com/{cw}-core"] = rng.choice([0, 5, 10, 20, 100])
        ctrs.append(c)
    ann = {"huawei.com/vnpu-mode": "hami-core"} if rng.random() < 0.25 else {}
    pending = {"name": f"want-{idx}", "ns": "ml", "containers": ctrs, "annotations": ann}
    return {"family": FAMILY, "idx": idx, "args": args, "config": cfg, "nodes": nodes, "pods": pods,
            "pending": pending}


def render(case: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    items = scheduler_items(case["args"])
    cfg = case["config"]
    cm = meta("volcano-vgpu-device-config", "kube-system")
    items.append({"apiVersion": "v1", "kind": "ConfigMap", "metadata": cm,
                  "data": {"device-config.yaml": device_config(cfg["types"], cfg["hami_core"], cfg["wrapper"])}})
    for n in case["nodes"]:
        alloc: dict[str, str] = {}
        ann: dict[str, str] = {}
        if n["core_ann"] is not None:
            ann["hami-vnpu-core"] = n["core_ann"]
        for cw, t in n["types"].items():
            ann[f"hami.io/node-register-{cw}"] = json.dumps(
                [{**d, "type": cw, "numa": 0} for d in t["devices"]], separators=(",", ":"))
            alloc[f"huawei.com/{cw}"] = "1000" if t["alloc"] else "0"
            alloc[f"huawei.com/{cw}-memory"] = "100000000"
            alloc[f"huawei.com/{cw}-core"] = "100000"
        items.append(node_item(n["name"], dict(alloc), alloc, ann))
    for p in case["pods"]:
        enc = ";".join("".join(f"{d},{p['cw']},{m},{c}:" for d, m, c in ctr) for ctr in p["containers"])
        ann = {f"hami.io/{p['cw']}-devices-allocated": enc, "hami.io/bind-phase": "success"}
        limits = [{f"huawei.com/{p['cw']}": len(ctr)} for ctr in p["containers"]]
        items.append(pod_item(p["name"], p["ns"], ann, limits, node=p["node"], phase=p["phase"],
                              deleting=p["deleting"]))
    pp = case["pending"]
    return snapshot(items), pod_item(pp["name"], pp["ns"], pp["annotations"], pp["containers"])


def candidates(case: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from fewer_parts(case)
    pend = case["pending"]
    for ci, ctr in enumerate(pend["containers"]):
        for k in list(ctr):
            c = copy.deepcopy(case)
            del c["pending"]["containers"][ci][k]
            if c["pending"]["containers"][ci]:
                yield c
    for ni, n in enumerate(case["nodes"]):
        for cw, t in n["types"].items():
            if len(t["devices"]) > 1:
                for devs in drop_each(t["devices"]):
                    c = copy.deepcopy(case)
                    c["nodes"][ni]["types"][cw]["devices"] = devs
                    gone = {d["id"] for d in t["devices"]} - {d["id"] for d in devs}
                    c["pods"] = [p for p in c["pods"]
                                 if not any(d in gone for ctr in p["containers"] for d, _, _ in ctr)]
                    yield c
    for pi, p in enumerate(case["pods"]):
        if p["deleting"]:
            c = copy.deepcopy(case)
            c["pods"][pi]["deleting"] = False
            yield c
