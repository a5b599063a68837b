"""One pass over a snapshot's pods that the checks scanning all of them share (`ClusterSnapshot.pod_index`).

Kubernetes' published limit is 150,000 pods, and several doctor checks each look for a handful of them:
the scheduler's pod (its version, its start time), the device plugin's pods (on which node, ready or not),
the pods in the middle of an allocation. Each used to walk every pod; on issue 17's fleet those walks were
a third of `doctor` (benchmarks/doctor_scale.py). The index walks them once, the first time a check asks,
and keeps what those checks select on: the pods with annotations, and the pods by container image and by
namespace, always in snapshot order. It selects, it never judges: every check still reads the pods it gets
exactly as before, so its findings are the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any


class PodIndex:
    __slots__ = ("_by_image", "_by_init_image", "_by_namespace", "annotated", "pods")

    def __init__(self, pods: Sequence[Mapping[str, Any]]) -> None:
        self.pods = pods
        # (pod, its annotations) for every pod with a non-empty annotations map, in snapshot order
        self.annotated: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
        self._by_image: dict[str, list[int]] = {}  # container image → positions of the pods running it
        self._by_init_image: dict[str, list[int]] = {}  # the same for init containers
        self._by_namespace: dict[str, list[int]] = {}
        annotated, by_namespace = self.annotated, self._by_namespace
        for i, pod in enumerate(pods):
            meta = pod.get("metadata")
            if isinstance(meta, dict):
                annotations = meta.get("annotations")
                if annotations and isinstance(annotations, dict):
                    annotated.append((pod, annotations))
                namespace = meta.get("namespace")
                if isinstance(namespace, str):
                    by_namespace.setdefault(namespace, []).append(i)
            spec = pod.get("spec")
            if isinstance(spec, dict):
                _add_images(self._by_image, spec.get("containers"), i)
                init = spec.get("initContainers")
                if init:
                    _add_images(self._by_init_image, init, i)

    def running(self, image_matches: Callable[[str], bool], *, init: bool = False) -> list[Mapping[str, Any]]:
        """The pods with a container whose `image` string matches (also an init container's, with `init`), in
        snapshot order."""
        positions = [i for image, at in self._by_image.items() if image_matches(image) for i in at]
        if init:
            positions += [i for image, at in self._by_init_image.items() if image_matches(image) for i in at]
        return self._at(positions)

    def in_namespaces(self, namespaces: Iterable[str]) -> list[Mapping[str, Any]]:
        """The pods whose `metadata.namespace` is one of these, in snapshot order."""
        return self._at([i for ns in set(namespaces) for i in self._by_namespace.get(ns, ())])

    def _at(self, positions: list[int]) -> list[Mapping[str, Any]]:
        pods = self.pods
        return [pods[i] for i in sorted(set(positions))]


def _add_images(index: dict[str, list[int]], containers: Any, position: int) -> None:
    if not isinstance(containers, list):
        return
    for c in containers:
        image = c.get("image") if isinstance(c, dict) else None
        if isinstance(image, str):
            at = index.setdefault(image, [])
            if not at or at[-1] != position:  # two containers of one pod with the same image: the pod once
                at.append(position)
