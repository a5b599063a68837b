"""`evidence(doc)`: the docs pages and upstream files a catalogue page cites, as references to open."""

from __future__ import annotations

from vgpuctl.core.catalogue import CATALOGUE
from vgpuctl.core.catalogue.evidence import Evidence, evidence, link_docs


def test_docs_and_upstream_in_order_once_each() -> None:
    doc = ("Evidence: docs/vgpu.md#vgpu-filter, docs/vgpu.md#vgpu-filter; volcano-sh/volcano "
           "`pkg/scheduler/api/devices/nvidia/vgpu/utils.go`; Project-HAMi/ascend-device-plugin `docs/`, "
           "and the plugin's own `docs/volcano.md` (not ours).")
    assert evidence(doc) == (
        Evidence("docs", "vgpu.md#vgpu-filter"),
        Evidence("upstream", "https://github.com/volcano-sh/volcano/blob/HEAD/pkg/scheduler/api/devices/nvidia/vgpu/utils.go"),
        Evidence("upstream", "https://github.com/Project-HAMi/ascend-device-plugin/tree/HEAD/docs"),
    )


def test_nothing_cited_nothing_listed() -> None:
    assert evidence("A page with no evidence.") == ()


def test_every_code_cites_something_to_open() -> None:
    bare = [code for code, info in CATALOGUE.items() if not evidence(info.doc) and info.family != "input"]
    assert bare == []


def test_link_docs_makes_relative_markdown_links() -> None:
    assert link_docs("see docs/ascend.md#mindcluster.") == "see [ascend.md#mindcluster](ascend.md#mindcluster)."
