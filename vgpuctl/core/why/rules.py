"""The rule core's verdict on a request, before anything is simulated.

`why` replays Volcano's filters only for a request the rule core accepts: `vgpu-number: -1`, `1e38`, a
memory with a unit suffix or full-width digits are judged by `podrules.review` — the same function, on the
same `ClusterFacts`, that `lint` and the webhook use — and answered with its findings. Simulating them
would print numbers Volcano's int32/uint conversions make up (`3Gi` becomes 18446744072635809792 MiB).

A what-if (`-f`) is blocked by every error, as the webhook would deny it and `lint` fails it. A pod that
already exists got past admission: there only the errors that keep Volcano from ever placing the request
block the simulation. The few error codes that leave placement as it is (isolation or bookkeeping is
broken, Volcano still places the pod) are listed in `PLACEMENT_NEUTRAL`; their findings are still shown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from vgpuctl.core.facts import ClusterFacts
from vgpuctl.core.findings import Finding, Severity, by_severity
from vgpuctl.core.podrules import review

# Errors after which Volcano still places the pod as it would without them:
# VGP016 privileged container (every device visible: isolation void, placement unchanged),
# VGP007 vGPU in an init/ephemeral container (Volcano reads app containers only, docs/vgpu.md#vgpu-pod-request),
# VGS004 user-set gpu-index/predicate-time (over-books a card; the filter still runs).
PLACEMENT_NEUTRAL = frozenset({"VGP007", "VGP016", "VGS004"})


@dataclass(frozen=True, slots=True)
class RuleVerdict:
    findings: tuple[Finding, ...]  # errors, then warnings (info left out), each in the rule core's order
    blocking: tuple[Finding, ...]  # the errors that mean the request is never placed as written

    @property
    def rejected(self) -> bool:
        return bool(self.blocking)


def judge(obj: Mapping[str, Any], facts: ClusterFacts, *, existing: bool) -> RuleVerdict:
    """`podrules.review` of `obj` (a Pod or a workload), as `lint` (what-if) or the doctor (existing) sees it."""
    verdict = review(obj, facts, existing=existing)
    findings = tuple(by_severity(f for f in verdict.findings if f.severity is not Severity.INFO))
    errors = tuple(f for f in findings if f.severity is Severity.ERROR
                   and (not existing or f.code not in PLACEMENT_NEUTRAL))
    return RuleVerdict(findings, errors)
