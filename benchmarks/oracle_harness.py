"""The runner behind `oracle_differential.py --family gpushare|ascend|exclusive`: one structured case through the
extended oracle (`volcano-devices -family F`, Volcano's own device code) and through `vgpuctl why -f`, compared
node by node; seeded random cases; greedy shrinking of each distinct disagreement.

A family module gives `gen_case(rng, idx)`, `render(case) -> (snapshot, pod)` and `candidates(case)` (smaller
variants, most aggressive first). The comparison is the same for every family:

- a node both sides fit: the devices chosen (sorted ids) must be one of the oracle's `deviceOptions` (Go's map
  order makes gpushare's gpu-number pick and HAMi's device sort vary between runs; the oracle lists each choice);
- a node neither fits: the reason classes must be compatible (`oracle_class` / `vgpuctl_class` below);
- not compared: a node the oracle calls `nondeterministic` (its verdict varies with Go's map order) or
  `deviceshare-off`, and a node vgpuctl rules out in the allocate action's resource check (not replayed);
- a pod `vgpuctl` rejects outright (verdict `rejected`) is counted, not compared: the filter never sees it.
"""

from __future__ import annotations

import concurrent.futures as cf
import copy
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from types import ModuleType
from typing import Any

VOLCANO_VERSION = "v1.16.0-alpha.1"  # the device code at ed72c7c8 matches the tag but for ascend/hami

# vgpuctl reasons that are, for Volcano, the family's one generic "does not fit" error
DEVICE_MISS = {"slots-exhausted", "insufficient-memory", "insufficient-cores", "exclusive-in-use", "type-excluded",
               "no-mig-slice", "podgroup-spread", "exclusive-rule", "hami-core-unsupported", "template-conflict"}
ORACLE_MISS = {"gpushare-memory", "gpushare-number", "ascend-insufficient", "not-enough-fitted"}


def vgpuctl_class(reason: str) -> str:
    return "device-miss" if reason in DEVICE_MISS else reason


def oracle_class(cls: str) -> str:
    return "device-miss" if cls in ORACLE_MISS else cls


def compatible(oc: str, vc: str) -> bool:
    if oc == vc:
        return True
    # deviceshare skips a node without the device object; the allocate action's resource check then decides
    if oc == "not-device-node" and vc in ("insufficient-resource", "not-device-node"):
        return True
    # Go's "not enough gpu fitted" also covers GPUs excluded by the UUID filter; HAMi's one "no enough ascend
    # device available" covers devices all taken by the pod's earlier containers
    return oc == "device-miss" and vc in ("uuid-excluded", "too-many-devices")


def run_case(mod: ModuleType, case: dict[str, Any], oracle: str, vgpuctl: str,
             keep: str | None = None) -> dict[str, Any]:
    snap, pod = mod.render(case)
    d = keep or tempfile.mkdtemp(prefix="vdiff-")
    try:
        sp, pp = os.path.join(d, "snapshot.json"), os.path.join(d, "pod.json")
        with open(sp, "w") as f:
            json.dump(snap, f, indent=1)
        with open(pp, "w") as f:
            json.dump(pod, f, indent=1)
        # 40 replays per node: enough to see the picks Go's map order makes among a handful of tied devices
        env = {**os.environ, "ORACLE_RUNS": os.environ.get("ORACLE_RUNS", "40")}
        o = subprocess.run([oracle, "-family", case["family"], sp, pp], capture_output=True, text=True,
                           timeout=60, check=False, env=env)
        if o.returncode != 0:
            return {"status": "oracle-error", "detail": o.stderr[-2000:]}
        orc = json.loads(o.stdout)
        v = subprocess.run([vgpuctl, "why", "-f", pp, "--snapshot", sp, "-o", "json", "--volcano-version",
                            VOLCANO_VERSION], capture_output=True, text=True, timeout=120, check=False)
        try:
            rep = json.loads(v.stdout)
        except ValueError:
            return {"status": "vgpuctl-error", "detail": f"rc={v.returncode} {v.stderr[-2000:]}"}
        if keep:
            for name, obj in (("oracle.json", orc), ("vgpuctl.json", rep), ("case.json", case)):
                with open(os.path.join(d, name), "w") as f:
                    json.dump(obj, f, indent=1)
        return compare(orc, rep)
    finally:
        if not keep:
            shutil.rmtree(d, ignore_errors=True)


def compare(orc: dict[str, Any], rep: dict[str, Any]) -> dict[str, Any]:
    onodes = orc["nodes"]
    if rep.get("verdict") == "rejected":
        return {"status": "rejected", "codes": sorted({f.get("code") for f in rep.get("findings", [])
                                                       if f.get("severity") == "error"}),
                "oracle_fits": sorted(n for n, r in onodes.items() if r["fits"] and r["class"] == "fits")}
    vfit = {f["node"]: sorted(d["id"] for d in f.get("devices", [])) for f in rep.get("fits", [])}
    vreason = {n: g["reason"] for g in rep.get("unfit", []) for n in g["nodes"]}
    diffs: list[dict[str, Any]] = []
    skipped = 0
    if rep.get("verdict") == "no-device-request":
        bad = [n for n, r in onodes.items() if r["class"] not in ("no-device-request", "not-device-node",
                                                                   "deviceshare-off")]
        if bad:
            diffs.append({"node": bad[0], "kind": "device-request", "oracle": onodes[bad[0]]["class"],
                          "vgpuctl": "no-device-request"})
        return {"status": "diff" if diffs else "agree", "diffs": diffs, "kind": "no-device-request", "skipped": 0}
    for n, r in sorted(onodes.items()):
        if r["class"] in ("nondeterministic", "deviceshare-off"):
            skipped += 1  # Go's verdict varies with map order / deviceshare does not look: not the oracle's to judge
            continue
        o_fit = r["fits"] and r["class"] != "not-device-node"
        v_fit = n in vfit
        oc = "fits" if o_fit else oracle_class(r["class"])
        vc = "fits" if v_fit else vgpuctl_class(vreason.get(n, "absent"))
        if vc == "insufficient-resource":
            skipped += 1  # the allocate action's resource check (a resource the node does not advertise): not
            continue      # replayed by the oracle, which runs the deviceshare predicate only
        if o_fit != v_fit:
            # "no-device-request": the node has none of the device types the pod asks for, so deviceshare does
            # not look at it — what vgpuctl calls not-device-node (the resource check then decides)
            # (likewise a node lacking one of several asked types: `absent`, where only the resource check decides)
            absent = r["class"] in ("not-device-node", "no-device-request") or bool(r.get("absent"))
            if not (absent and compatible("not-device-node", vc)):
                diffs.append({"node": n, "kind": "fit", "oracle": oc, "vgpuctl": vc, "oracle_error": r.get("error"),
                              "vgpuctl_reason": vreason.get(n)})
        elif not o_fit and not compatible(oc, vc) and not (r.get("absent") and vc == "not-device-node"):
            # (both refuse; vgpuctl names the asked type the node lacks before the one Volcano's filter refuses)
            diffs.append({"node": n, "kind": "reason", "oracle": oc, "vgpuctl": vc, "oracle_error": r.get("error"),
                          "vgpuctl_reason": vreason.get(n)})
        elif o_fit and r["class"] == "fits" and not (r.get("error") or "").startswith("allocate:"):
            # (an Allocate that fails after the filter passed — HAMi's Allocate sorts by the policy only ScoreNode
            # stores, i.e. none without ScheduleWeight — chose no devices to compare)
            options = [sorted(o) for o in (r.get("deviceOptions") or [r.get("devices") or []])]
            # several options: the pick follows Go's map order (gpu-number, HAMi's ties), and a dozen runs need not
            # show them all: any pick of the same size among the devices Go picked from agrees
            union = {x for o in options for x in o}
            by_map_order = len(options) > 1 and len(vfit[n]) == len(options[0]) and set(vfit[n]) <= union
            if vfit[n] not in options and not by_map_order:
                diffs.append({"node": n, "kind": "devices", "oracle": options[:4], "vgpuctl": vfit[n]})
    return {"status": "diff" if diffs else "agree", "diffs": diffs, "skipped": skipped}


def signature(res: dict[str, Any]) -> tuple[str, ...]:
    d = res["diffs"][0]
    return ("devices",) if d["kind"] == "devices" else (d["kind"], str(d["oracle"]), str(d["vgpuctl"]))


def shrink(mod: ModuleType, case: dict[str, Any], sig: tuple[str, ...], oracle: str, vgpuctl: str,
           budget: int = 300) -> dict[str, Any]:
    tries, improved = 0, True
    while improved and tries < budget:
        improved = False
        for c in mod.candidates(case):
            tries += 1
            r = run_case(mod, c, oracle, vgpuctl)
            if r["status"] == "diff" and signature(r) == sig:
                case, improved = c, True
                break
            if tries >= budget:
                break
    return case


def run_seed(mod: ModuleType, seed: int, n: int, jobs: int, oracle: str, vgpuctl: str, out: str,
             max_shrink: int = 6, echo: Callable[[str], None] = print) -> int:
    """`n` random cases of seed `seed`: prints the figures (cases, node verdicts agreeing, disagreements)."""
    import random

    cases = [mod.gen_case(random.Random(seed * 1_000_003 + i), i) for i in range(n)]
    with cf.ThreadPoolExecutor(jobs) as ex:
        results = list(ex.map(lambda c: run_case(mod, c, oracle, vgpuctl), cases))
    counts: dict[str, int] = {}
    by_sig: dict[tuple[str, ...], list[int]] = {}
    rejected: dict[str, int] = {}
    rejected_fit: dict[str, int] = {}  # of those, cases where Volcano's filter fits some node
    node_total = node_agree = skipped = 0
    for c, r in zip(cases, results, strict=True):
        counts[r["status"]] = counts.get(r["status"], 0) + 1
        if r["status"] == "diff":
            by_sig.setdefault(signature(r), []).append(c["idx"])
        for code in r.get("codes", []) if r["status"] == "rejected" else []:
            rejected[code] = rejected.get(code, 0) + 1
            if r["oracle_fits"]:
                rejected_fit[code] = rejected_fit.get(code, 0) + 1
        if r["status"] in ("agree", "diff") and r.get("kind") != "no-device-request":
            compared = len(c["nodes"]) - r.get("skipped", 0)
            node_total += compared
            node_agree += compared - len({d["node"] for d in r["diffs"]})
            skipped += r.get("skipped", 0)
    family = (cases[0].get("label") or cases[0]["family"]) if cases else "?"
    echo(f"[{family}] seed {seed}: cases {n}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())))
    echo(f"[{family}] seed {seed}: node verdicts compared {node_total}, agreeing {node_agree}, disagreeing "
         f"{node_total - node_agree} ({skipped} not compared: Go's map order, deviceshare off, or the resource check); "
         f"distinct disagreements {len(by_sig)}")
    if rejected:
        codes = ", ".join(f"{k} x{v}" for k, v in sorted(rejected.items()))
        echo(f"[{family}] rejected by vgpuctl's rule core: {codes}")
        fits = ", ".join(f"{k} x{v}" for k, v in sorted(rejected_fit.items())) or "none"
        echo(f"[{family}]   of which Volcano's filter fits some node: {fits}")
    for st in ("oracle-error", "vgpuctl-error"):
        first = next((r for r in results if r["status"] == st), None)
        if first is not None:
            echo(f"[{family}] {st}: {first['detail'][:400]}")
    for k, (sig, idxs) in enumerate(sorted(by_sig.items(), key=lambda kv: -len(kv[1]))):
        case = cases[idxs[0]]
        echo(f"DISAGREEMENT {k + 1}: {sig} in {len(idxs)} cases (cases {idxs[:10]})")
        if k < max_shrink:
            case = shrink(mod, case, sig, oracle, vgpuctl)
        d = os.path.join(out, f"{family}-seed{seed}-disagreement-{k + 1}")
        os.makedirs(d, exist_ok=True)
        r = run_case(mod, case, oracle, vgpuctl, keep=d)
        echo(f"  minimal: {len(case['nodes'])} node(s), {len(case['pods'])} bound pod(s); "
             f"{json.dumps(r.get('diffs', r))[:500]} -> {d}")
    return 1 if by_sig or counts.get("oracle-error") or counts.get("vgpuctl-error") else 0


def drop_each(items: list[Any]) -> Iterator[list[Any]]:
    for i in range(len(items)):
        yield items[:i] + items[i + 1:]


# ---------------------------------------------------------------- rendering helpers shared by the families
def fewer_parts(case: dict[str, Any], *, containers: bool = True) -> Iterator[dict[str, Any]]:
    """The shrinking steps every family's case shares: a node dropped (with its pods), a bound pod dropped, and
    (with `containers`) a container of the pending pod dropped; each a deep copy."""
    if len(case["nodes"]) > 1:
        for i, n in enumerate(case["nodes"]):
            c = copy.deepcopy(case)
            del c["nodes"][i]
            c["pods"] = [p for p in c["pods"] if p["node"] != n["name"]]
            yield c
    for pods in drop_each(case["pods"]):
        yield {**copy.deepcopy(case), "pods": copy.deepcopy(pods)}
    pend = case["pending"]
    if containers and len(pend["containers"]) > 1:
        for ctrs in drop_each(pend["containers"]):
            c = copy.deepcopy(case)
            c["pending"]["containers"] = ctrs
            yield c


def uid(*parts: object) -> str:
    import uuid

    return str(uuid.uuid5(uuid.NAMESPACE_DNS, "/".join(map(str, parts))))


def meta(name: str, ns: str | None = None, ann: dict[str, str] | None = None,
         labels: dict[str, str] | None = None) -> dict[str, Any]:
    m: dict[str, Any] = {"name": name, "uid": uid("obj", ns, name), "resourceVersion": "1",
                         "creationTimestamp": "2026-01-01T00:00:00Z"}
    if ns:
        m["namespace"] = ns
    if ann:
        m["annotations"] = ann
    if labels:
        m["labels"] = labels
    return m


def scheduler_items(args: dict[str, Any]) -> list[dict[str, Any]]:
    """The scheduler ConfigMap (predicates + deviceshare with `args`) and the vc-scheduler Deployment."""
    import yaml

    conf = {"actions": "enqueue, allocate, backfill",
            "tiers": [{"plugins": [{"name": "priority"}, {"name": "gang"}]},
                      {"plugins": [{"name": "predicates"}, {"name": "deviceshare", "arguments": args}]}]}
    return [
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("volcano-scheduler-configmap", "volcano-system"),
         "data": {"volcano-scheduler.conf": yaml.safe_dump(conf, sort_keys=False)}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("volcano-scheduler", "volcano-system"),
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "volcano-scheduler"}}, "template": {
             "metadata": {"labels": {"app": "volcano-scheduler"}}, "spec": {"containers": [
                 {"name": "volcano-scheduler", "image": f"docker.io/volcanosh/vc-scheduler:{VOLCANO_VERSION}"}]}}},
         "status": {"replicas": 1, "readyReplicas": 1}},
    ]


def node_item(name: str, capacity: dict[str, str], allocatable: dict[str, str], ann: dict[str, str]) -> dict[str, Any]:
    base = {"cpu": "64", "memory": "512Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": meta(name, ann=ann or None, labels={"kubernetes.io/hostname": name}), "spec": {},
            "status": {"capacity": base | capacity, "allocatable": base | allocatable,
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def container(name: str, limits: dict[str, Any]) -> dict[str, Any]:
    q = {k: str(v) for k, v in limits.items()}
    return {"name": name, "image": "busybox", "resources": {"limits": dict(q), "requests": dict(q)}}


def pod_item(name: str, ns: str, ann: dict[str, str], containers: list[dict[str, Any]], *, node: str | None = None,
             phase: str = "Pending", deleting: bool = False, inits: list[dict[str, Any]] | None = None,
             labels: dict[str, str] | None = None) -> dict[str, Any]:
    m = meta(name, ns, ann or None, labels)
    if deleting:
        m["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    spec: dict[str, Any] = {"schedulerName": "volcano",
                            "containers": [container(f"c{i}", c) for i, c in enumerate(containers)]}
    if inits:
        spec["initContainers"] = [container(f"init{i}", c) for i, c in enumerate(inits)]
    if node:
        spec["nodeName"] = node
    return {"apiVersion": "v1", "kind": "Pod", "metadata": m, "spec": spec, "status": {"phase": phase}}


def snapshot(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "List", "metadata": {"annotations": {"vgpuctl.io/server-version": "v1.30.4"}},
            "items": items}
