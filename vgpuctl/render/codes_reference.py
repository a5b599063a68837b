"""Generate `docs/codes.md`, the browsable reference of every finding code, from the catalogue.

Run `python -m vgpuctl.render.codes_reference > docs/codes.md`; a test fails when the file is stale, so
the page on disk and `vgpuctl explain` never disagree.
"""

from __future__ import annotations

from vgpuctl.core.catalogue import CATALOGUE, FAMILIES
from vgpuctl.core.catalogue.evidence import link_docs

_FAMILY_TITLES = {
    "pods-vgpu": "Pods — NVIDIA vGPU (VGP)",
    "pods-gpushare": "Pods — gpushare / gpu-number (VGS)",
    "pods-ascend-hami": "Pods — Ascend HAMi vNPU (VGH)",
    "pods-mindcluster": "Pods — Ascend MindCluster 310P (VGA)",
    "workloads": "Workload wrappers (VGW)",
    "input": "Input vgpuctl cannot read (VGL)",
    "scheduler-config": "Scheduler configuration (VGC)",
    "device-config": "Device config / geometry (VGM)",
    "nodes": "Nodes (VGN)",
    "cluster": "Cluster, components, existing pods (VGK, VGX)",
}


def render() -> str:
    lines = ["# Finding codes", "",
             "Generated from the catalogue by `python -m vgpuctl.render.codes_reference`; "
             "`vgpuctl explain CODE` prints the same page offline.", ""]
    for family in FAMILIES:
        infos = [i for i in CATALOGUE.values() if i.family == family]
        if not infos:
            continue
        lines += [f"## {_FAMILY_TITLES.get(family, family)}", ""]
        for info in infos:
            severities = " / ".join(s.value for s in info.severities)
            lines += [f"### {info.code} — {info.title}", "", f"*Severity:* {severities}", "", link_docs(info.doc), "",
                      f"**Fix:** {info.hint}", ""]
    return "\n".join(lines).rstrip() + "\n"


if __name__ == "__main__":
    print(render(), end="")
