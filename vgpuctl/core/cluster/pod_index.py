"""One pass over a snapshot's pods that the checks scanning all of them share (`ClusterSnapshot.pod_index`).

Kubernetes' published limit is 150,000 pods, and several doctor checks each look for a handful of them:
the scheduler's pod (its version, its start time), the device plugin's pods (on which node, ready or not),
the pods in the middle of an allocation, the pods that ask for devices, the pods with DRA claims. Each used
to walk every pod; on issue 17's fleet those walks were a third of `doctor` (benchmarks/doctor_scale.py). The
index walks them once, the first time a check asks, and keeps what those checks select on: the pods with an
annotation in a device namespace (`glance.DEVICE_ANNOTATION_PREFIXES`: every annotation the checks read), the
pods by container image, by namespace and by the resource names beyond cpu/memory their containers list, the
pods with a device annotation or label and those with `spec.resourceClaims`, always in snapshot order. It
selects, it never judges: every check still reads the pods it gets exactly as before, so its findings are the
same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from vgpuctl.core import spec
from vgpuctl.core.cluster.glance import CORE_RESOURCES, beyond_core, device_annotated

_DEVICE_ANNOTATIONS = frozenset(spec.DEVICE_POD_ANNOTATIONS)
_DEVICE_LABELS = frozenset(spec.DEVICE_POD_LABELS)
_OTHER_CONTAINER_KINDS = ("initContainers", "ephemeralContainers")
_CONTAINER_KINDS = ("containers", *_OTHER_CONTAINER_KINDS)


class PodIndex:
    __slots__ = ("_asks_indexed", "_by_image", "_by_init_image", "_by_namespace", "_by_resource", "_claiming",
                 "_device_marked", "annotated", "pods")

    def __init__(self, pods: Sequence[Mapping[str, Any]], *, device_asks: bool = True) -> None:
        """The index of `pods`; `build_snapshot` hands it the list it is filling and `add`s each pod as it
        meets it, so a command that needs the index walks the pods once (benchmarks/doctor_scale.py).

        Without `device_asks` what `asking_for_devices` and `claiming` select on (the resource names, the device
        labels, the claims) is left out of that pass and indexed in a pass of its own the first time either is
        asked: `nodes` never asks, and the resource maps of 150,000 pods were a third of the index
        (benchmarks/nodes_scale.py)."""
        self.pods = pods
        # (pod, its annotations) for every pod with an annotation in a device namespace, in snapshot order
        self.annotated: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
        self._by_image: dict[str, list[int]] = {}  # container image → positions of the pods running it
        self._by_init_image: dict[str, list[int]] = {}  # the same for init containers
        self._by_namespace: dict[str, list[int]] = {}
        # resource name (not cpu, memory, ephemeral-storage, pods) in any container's limits or requests →
        # positions of the pods naming it
        self._by_resource: dict[str, list[int]] = {}
        self._device_marked: list[int] = []  # positions of the pods with a device annotation or label
        self._claiming: list[int] = []  # positions of the pods with DRA `spec.resourceClaims`
        self._asks_indexed = device_asks  # whether `add` fills the three above (else: on first use)
        for i, pod in enumerate(pods):
            self.add(i, pod, pod.get("metadata"), pod.get("spec"))

    def add(self, position: int, pod: Mapping[str, Any], meta: Any, pod_spec: Any) -> bool:
        """Index `pod` (its `metadata` and `spec` as the caller read them), at `position` in `pods`; whether it has
        an annotation in a device namespace (`glance.device_annotated`: the build asks no more of a pod without).

        Most pods ask no device and carry no device annotation: of those only the namespace and the container
        images are indexed, each resource map costs a glance (`glance.beyond_core`) and the annotations one
        look at their names (`glance.device_annotated`): `add` was the largest item in a profile of `nodes` on
        a fleet of real-looking pods (benchmarks/nodes_scale.py)."""
        annotated = False
        if isinstance(meta, dict):
            annotations = meta.get("annotations")
            if annotations and isinstance(annotations, dict) and device_annotated(annotations):
                annotated = True
                self.annotated.append((pod, annotations))
            namespace = meta.get("namespace")
            if isinstance(namespace, str):
                at = self._by_namespace.get(namespace)
                if at is None:
                    self._by_namespace[namespace] = [position]
                else:
                    at.append(position)
        asks = self._asks_indexed
        if isinstance(pod_spec, dict):
            containers = pod_spec.get("containers")
            if containers and isinstance(containers, list):  # inlined (benchmarks/nodes_scale.py, doctor_scale.py)
                images = self._by_image
                for c in containers:
                    if not isinstance(c, dict):
                        continue
                    image = c.get("image")
                    if isinstance(image, str):
                        at = images.get(image)
                        if at is None:
                            images[image] = [position]
                        elif at[-1] != position:  # two containers of one pod with the same image: the pod once
                            at.append(position)
                    if asks and (resources := c.get("resources")) and isinstance(resources, dict):
                        limits, requests = resources.get("limits"), resources.get("requests")
                        if beyond_core(limits) or beyond_core(requests):  # cpu and memory only: nothing to index
                            self._add_resources(limits, requests, position)
            inits = pod_spec.get("initContainers")  # rare: looked up, seldom walked
            if inits and isinstance(inits, list):
                self._add_images(self._by_init_image, inits, position)
        if asks:
            self._add_asks(position, meta, pod_spec, annotated, _OTHER_CONTAINER_KINDS)
        return annotated

    @staticmethod
    def _add_images(images: dict[str, list[int]], containers: list[Any], position: int) -> None:
        for c in containers:
            image = c.get("image") if isinstance(c, dict) else None
            if isinstance(image, str):
                at = images.get(image)
                if at is None:
                    images[image] = [position]
                elif at[-1] != position:
                    at.append(position)

    def _add_asks(self, position: int, meta: Any, pod_spec: Any, annotated: bool,
                  kinds: tuple[str, ...] = _CONTAINER_KINDS) -> None:
        """What `asking_for_devices` and `claiming` select on, of the pod at `position` (the resources of its
        containers of these `kinds`); `annotated`: whether it has an annotation in a device namespace."""
        if isinstance(meta, dict):
            labels = meta.get("labels")
            if ((annotated and not _DEVICE_ANNOTATIONS.isdisjoint(meta["annotations"]))
                    or (labels and isinstance(labels, dict) and not _DEVICE_LABELS.isdisjoint(labels))):
                self._device_marked.append(position)
        if not isinstance(pod_spec, dict):
            return
        if pod_spec.get("resourceClaims"):
            self._claiming.append(position)
        for kind in kinds:
            containers = pod_spec.get(kind)
            if containers and isinstance(containers, list):
                for c in containers:
                    resources = c.get("resources") if isinstance(c, dict) else None
                    if resources and isinstance(resources, dict):
                        limits, requests = resources.get("limits"), resources.get("requests")
                        if beyond_core(limits) or beyond_core(requests):  # cpu and memory only: nothing to index
                            self._add_resources(limits, requests, position)

    def _asks(self) -> None:
        """Index what `asking_for_devices` and `claiming` select on, if `add` left it out."""
        if self._asks_indexed:
            return
        self._asks_indexed = True
        marked = {id(pod) for pod, _ in self.annotated}  # what `add` found device-annotated already
        for i, pod in enumerate(self.pods):
            self._add_asks(i, pod.get("metadata"), pod.get("spec"), id(pod) in marked)

    def _add_resources(self, limits: Any, requests: Any, position: int) -> None:
        by_resource = self._by_resource
        for names in (limits, requests):
            if names and isinstance(names, dict):
                for name in names:
                    if isinstance(name, str) and name not in CORE_RESOURCES:
                        by_resource.setdefault(name, []).append(position)

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

    def asking_for_devices(self, is_device: Callable[[str], bool]) -> list[Mapping[str, Any]]:
        """The pods with a container whose limits or requests name a resource `is_device` accepts (no device
        resource is named like a `glance.CORE_RESOURCES` one), or with a
        device annotation or label (`spec.DEVICE_POD_ANNOTATIONS`, `spec.DEVICE_POD_LABELS`), in snapshot
        order."""
        self._asks()
        positions = [i for name, at in self._by_resource.items() if is_device(name) for i in at]
        return self._at(positions + self._device_marked)

    def claiming(self) -> list[Mapping[str, Any]]:
        """The pods with DRA `spec.resourceClaims`, in snapshot order."""
        self._asks()
        return self._at(self._claiming)

    def _at(self, positions: list[int]) -> list[Mapping[str, Any]]:
        pods = self.pods
        return [pods[i] for i in sorted(set(positions))]

