"""Catalogue entries for pod-level rules: vGPU, gpushare, Ascend HAMi, MindCluster 310P and workloads.

These are the codes the webhook denies or warns with and `lint` reports (docs/contracts.md#finding-families). They live
apart
from the node and configuration codes so each data module stays short enough to review in one sitting.
"""

from __future__ import annotations

from vgpuctl.core.catalogue import CodeInfo
from vgpuctl.core.findings import Severity

ERROR = Severity.ERROR
WARNING = Severity.WARNING
INFO = Severity.INFO

VGPU = "pods-vgpu"
GPUSHARE = "pods-gpushare"
ASCEND_HAMI = "pods-ascend-hami"
MINDCLUSTER = "pods-mindcluster"
WORKLOADS = "workloads"

_VGPU_DIR = "volcano-sh/volcano `pkg/scheduler/api/devices/nvidia/vgpu/"
_HAMI_DIR = "volcano-sh/volcano `pkg/scheduler/api/devices/ascend/hami/"
_310P_DIR = "volcano-sh/volcano `pkg/scheduler/api/devices/ascend/mindcluster/ascend310p/vnpu/"

ENTRIES: tuple[CodeInfo, ...] = (
    # --- vGPU (VGP) --------------------------------------------------------------------------------
    CodeInfo(
        code="VGP001",
        severity=ERROR,
        family=VGPU,
        title="vgpu-mode annotation is not exactly hami-core or mig",
        hint=(
            "Set `volcano.sh/vgpu-mode: hami-core` or `volcano.sh/vgpu-mode: mig` (lower-case, exact), "
            "or remove the annotation so the pod accepts any node mode."
        ),
        doc=f"""
            Checks the pod annotation `volcano.sh/vgpu-mode`. Volcano compares it byte for byte with
            the node's mode, which is always `hami-core` or `mig` (a device mode of exactly `mig` is
            MIG, anything else counts as `hami-core`). Any other value — `mps`, `MIG`, `HAMi-core`,
            `hami` — matches no node, so the pod stays Pending everywhere behind the generic
            `hami-vgpuDeviceSharing error`; the real reason (`pod required sharing mode ... is not the
            same as the node mode ...`) is only in the scheduler log. Volcano registers sharing
            handlers for `hami-core` and `mig` only: MPS is not implemented.

            ```yaml
            volcano.sh/vgpu-mode: MIG   # bad: never matches
            volcano.sh/vgpu-mode: mig   # good
            ```

            Evidence: docs/vgpu.md#vgpu-filter, docs/vgpu.md#vgpu-node-registration; {_VGPU_DIR}utils.go`,
            `sharing_factory.go`.
            """,
    ),
    CodeInfo(
        code="VGP002",
        severity=ERROR,
        family=VGPU,
        title="vGPU memory, cores or percentage set without vgpu-number in limits",
        hint=(
            "Add `volcano.sh/vgpu-number: 1` (GPUs for this container) to the same container's "
            "`resources.limits`; the mutating webhook adds `<defaultGPUNum or 1>` for you."
        ),
        doc=f"""
            Volcano sees a container as a vGPU request only if its `limits` carry `vgpu-number` or
            `vgpu-memory`. A container with only `vgpu-cores` or `vgpu-memory-percentage` is invisible
            to the scheduler: no GPU is booked and nothing is limited. A memory-only container gets one
            GPU booked, but the device plugin only serves the count resource, so the container gets
            no GPU environment and its allocation entry is left to the next container, which then
            gets the wrong one (`device number not matched`, `UnexpectedAdmissionError`).
            Volcano has no webhook that applies `defaultGPUNum`. vgpuctl's mutating webhook adds
            `vgpu-number: <defaultGPUNum or 1>` and reports this code at `info`; without it the pod is
            denied with `error`.

            Evidence: docs/vgpu.md#vgpu-pod-request, docs/vgpu.md#vgpu-allocation, docs/volcano.md#volcano-webhooks;
            docs/checks.md#check-index-device-plugins rule 27; volcano-sh/volcano
            `pkg/scheduler/api/devices/util.go` (ExtractResourceRequest), {_VGPU_DIR}utils.go`
            (checkVGPUResourcesInPod); Project-HAMi/volcano-vgpu-device-plugin `pkg/util/util.go`
            (GetNextDeviceRequest), `pkg/plugin/server.go` (Allocate).
            """,
        severities=(ERROR, INFO),
    ),
    CodeInfo(
        code="VGP003",
        severity=ERROR,
        family=VGPU,
        title="vgpu-number is not an integer >= 1, or exceeds the GPU count of every vGPU node",
        hint=(
            "Set `volcano.sh/vgpu-number` to the number of physical GPUs the container needs, from 1 up "
            "to the largest GPU count of a vGPU node, e.g. `volcano.sh/vgpu-number: 2`."
        ),
        doc=f"""
            `vgpu-number` counts physical GPUs per container, and every one of them receives the same
            memory and cores request. A non-integer quantity is read as 0, and 0 "fits" on the first
            acceptable GPU without recording a device while the session ledger still counts it: never
            use it. With cluster facts, the value is compared with the number of GPUs in each node's
            `volcano.sh/node-vgpu-register`: if it is larger than every node's count, Volcano answers
            `no enough gpu cards on node <node>` everywhere. The split count does not help: one
            container is never given the same GPU twice. That finding's hint names the most GPUs a vGPU node
            registers.

            Evidence: docs/vgpu.md#vgpu-filter (step 3a and the `vgpu-number: 0` edge case),
            docs/volcano.md#known-problems #4; docs/checks.md#check-index-device-plugins rule 29;
            {_VGPU_DIR}utils.go` (checkNodeGPUSharingPredicateAndScore).
            """,
    ),
    CodeInfo(
        code="VGP004",
        severity=ERROR,
        family=VGPU,
        title="vgpu-cores is not an integer from 0 to 100",
        hint=(
            "Set `volcano.sh/vgpu-cores` to a percentage of one GPU between 0 and 100, e.g. "
            "`volcano.sh/vgpu-cores: 30`; use 100 only when the container must have the GPU to itself."
        ),
        doc=f"""
            `vgpu-cores` is a percentage of one GPU's compute, booked on each GPU of the request.
            Volcano skips a GPU when its used cores plus the request exceed 100, so a value above 100
            fits nowhere. 100 means an exclusive GPU: it only lands on a GPU nobody uses, and a later
            request with 0 cores cannot share a GPU whose cores are fully booked. Extended resources
            must be whole numbers, so `0.5` is rejected by the API server.

            ```yaml
            volcano.sh/vgpu-cores: 150  # bad: never fits
            volcano.sh/vgpu-cores: 50   # good
            ```

            Evidence: docs/vgpu.md#vgpu-filter (step 3b), docs/checks.md#check-index-vgpu-pods V4;
            docs/vgpu.md#vgpu-pod-request; {_VGPU_DIR}utils.go`.
            """,
    ),
    CodeInfo(
        code="VGP005",
        severity=ERROR,
        family=VGPU,
        title="vgpu-memory is not a plain positive integer of MiB, or is larger than every GPU",
        hint=(
            "Write the MiB per GPU as a plain integer, e.g. `volcano.sh/vgpu-memory: 3072` for 3 GiB "
            "(divide by gpuMemoryFactor if it is > 1)."
        ),
        doc="""
            `vgpu-memory` is the memory per GPU in the unit of the node's register annotation: MiB
            divided by the device config's `gpuMemoryFactor`. Kubernetes resolves quantity suffixes
            before Volcano reads the value, so `3Gi` becomes 3221225472 units, more than any GPU has,
            and the pod never fits; `3k` silently becomes 3000. The device plugin sets the container's
            `CUDA_DEVICE_MEMORY_LIMIT` to value × gpuMemoryFactor MiB. With cluster facts, a value
            larger than the registered memory of every eligible GPU (after the gputype and UUID
            filters) never fits either — unless a memory percentage Volcano reads overrides it
            (`checkNodeGPUSharingPredicateAndScore` then books that share of each GPU and never reads
            the memory). That finding's hint names the largest eligible GPU's memory, and how much the GPUs
            the pod's gputype / UUID annotations leave out have, when one of them is larger.

            ```yaml
            volcano.sh/vgpu-memory: 3Gi    # bad: 3221225472 units
            volcano.sh/vgpu-memory: 3072   # good: 3 GiB with gpuMemoryFactor 1
            ```

            Evidence: docs/vgpu.md#vgpu-pod-request (units), docs/vgpu.md#vgpu-filter;
            docs/device-plugins.md#vgpu-memory-units; volcano-sh/volcano
            `pkg/scheduler/api/devices/util.go`; Project-HAMi/volcano-vgpu-device-plugin
            `pkg/plugin/server.go` (Allocate).
            """,
    ),
    CodeInfo(
        code="VGP006",
        severity=ERROR,
        family=VGPU,
        title="vgpu-memory-percentage is not honoured, is outside 1..100, or is set with vgpu-memory",
        hint=(
            "Replace `volcano.sh/vgpu-memory-percentage` with `volcano.sh/vgpu-memory` (MiB per GPU); "
            "if you keep it, set `nvidia.resourceMemoryPercentageName` in the device config, use 1..100 "
            "and do not also set `vgpu-memory`."
        ),
        doc="""
            Volcano reads the percentage only when the device config sets
            `nvidia.resourceMemoryPercentageName`; its built-in default does not. Since Volcano 1.13
            the generic resource check also compares the pod's `vgpu-memory-percentage` with node
            allocatable, and the device plugin never advertises that resource, so such a pod fails
            with `Insufficient volcano.sh/vgpu-memory-percentage` unless nodes advertise it (inferred
            from code). A percentage of 0 books 0 MiB and one above 100 never fits (error). When both
            memory and percentage are set, Volcano uses the percentage and ignores `vgpu-memory`
            (HAMi does the opposite), reported as a warning. A percentage the device config does not
            enable is never read: beside a memory (which Volcano books as written) or at 100 % (the
            whole GPU it books anyway) that is a warning, otherwise an error (the pod gets whole GPUs).

            Evidence: docs/vgpu.md#vgpu-pod-request, docs/volcano.md#device-config-default, docs/volcano.md#docs-vs-code
            item 7, docs/volcano.md#known-problems #6; docs/vgpu.md#vgpu-pod-request,
            docs/checks.md#check-index-device-plugins rule 28; volcano-sh/volcano
            `pkg/scheduler/api/devices/util.go` (ExtractResourceRequest),
            `pkg/scheduler/actions/allocate/allocate.go`; Project-HAMi/volcano-vgpu-device-plugin
            `pkg/rm/rm.go`.
            """,
        severities=(ERROR, WARNING),
    ),
    CodeInfo(
        code="VGP007",
        severity=ERROR,
        family=VGPU,
        title="vGPU resources requested by an init container or an ephemeral container",
        hint=(
            "Move the `volcano.sh/vgpu-*` limits from `initContainers` (or ephemeral containers) to a "
            "container in `spec.containers`; on the Volcano path only regular containers get a vGPU."
        ),
        doc="""
            Volcano reads vGPU requests from `spec.containers` only: init and ephemeral containers
            get no GPU booked and appear in no allocation annotation. The device plugin, however,
            answers each kubelet Allocate call with the next entry of
            `volcano.sh/devices-to-allocate`, so an init container with `vgpu-number` consumes the
            first regular container's entry. That container then gets the wrong GPU or fails with
            `device number not matched` (`UnexpectedAdmissionError`).

            Evidence: docs/vgpu.md#vgpu-pod-request, docs/vgpu.md#vgpu-allocation;
            docs/device-plugins.md#vgpu-plugin-pod-annotations, docs/checks.md#check-index-device-plugins rule 30;
            volcano-sh/volcano
            `pkg/scheduler/api/devices/util.go` (ExtractResourceRequest);
            Project-HAMi/volcano-vgpu-device-plugin `pkg/util/util.go` (GetNextDeviceRequest).
            """,
    ),
    CodeInfo(
        code="VGP008",
        severity=ERROR,
        family=VGPU,
        title="pod mixes gpushare resources (gpu-memory/gpu-number) with vGPU resources",
        hint=(
            "Use one family per pod: either `volcano.sh/vgpu-number`/`vgpu-memory`/`vgpu-cores` or "
            "`volcano.sh/gpu-memory`/`gpu-number`; vGPU is the maintained one."
        ),
        doc="""
            The gpushare family (`volcano.sh/gpu-memory`, `volcano.sh/gpu-number`) and the vGPU family
            cannot be enabled together: with `GPUSharingEnable` or `GPUNumberEnable` next to
            `VGPUEnable` the scheduler exits (`gpu-share and vgpu can't be used together`). In a
            working cluster one of the two families is therefore always off, and the part of the pod
            that asks for it is never served by `deviceshare`: the pod cannot be placed as intended
            (volcano issue #3624).

            Evidence: docs/volcano.md#fatal-combinations, docs/volcano.md#known-problems #7,
            docs/checks.md#check-index-vgpu-pods V8; volcano-sh/volcano
            `pkg/scheduler/plugins/deviceshare/deviceshare.go` (enablePredicate).
            """,
    ),
    CodeInfo(
        code="VGP009",
        severity=ERROR,
        family=VGPU,
        title="MIG request without vgpu-memory, larger than every MIG instance, or with vgpu-cores",
        hint=(
            "With `volcano.sh/vgpu-mode: mig`, set `volcano.sh/vgpu-memory` to at most the largest MIG "
            "instance (MiB ÷ gpuMemoryFactor), e.g. `20480` for a `3g.20gb` slice, and drop `vgpu-cores`."
        ),
        doc=f"""
            Volcano picks a MIG instance by memory: the request × gpuMemoryFactor (when the factor is
            above 1) is matched against the model's groups in ConfigMap order, taking the smallest
            instance at least that large; the first group with one wins. Without `vgpu-memory` the
            request is 100 % of the registered GPU memory, which fits only a GPU with an instance that
            large: an A100-40GB (40960 MiB, `7g.40gb` = 40960) or an A30 (`4g.24gb`) takes it, an
            A100-80GB (81920 MiB registered, largest shipped instance `7g.80gb` = 80896) never does.
            With the cluster's GPUs known, that is an error when no MIG GPU the pod may use takes the
            whole card; without them, a warning. A request larger than every instance of every known
            model never fits either (error). `vgpu-cores` is booked but MIG does not enforce it
            (warning).

            ```yaml
            limits: {{volcano.sh/vgpu-number: 1, volcano.sh/vgpu-memory: 3000}}  # A100-40GB -> 1g.5gb
            ```

            Evidence: docs/vgpu.md#vgpu-mig; docs/device-plugins.md#mig-geometry;
            {_VGPU_DIR}mig.go` (findMatch, pickFromGroup).
            """,
        severities=(ERROR, WARNING),
    ),
    CodeInfo(
        code="VGP010",
        severity=ERROR,
        family=VGPU,
        title="use-gputype / nouse-gputype has empty tokens, both are set, or no GPU type matches",
        hint=(
            "Write a comma-separated list of non-empty GPU model substrings, e.g. "
            '`nvidia.com/use-gputype: "A100,H100"`, set only one of use/nouse, and check the names '
            "against the `type` field of the nodes' register annotation."
        ),
        doc=f"""
            Each comma-separated token is matched case-insensitively as a substring of the GPU type
            in the register annotation (`NVIDIA-<NVML name>`, e.g. `NVIDIA-NVIDIA A100-PCIE-40GB`).
            An empty token (`"A100,"`, `",,"`) is a substring of every type, so in `use-gputype` it
            admits every GPU and in `nouse-gputype` it excludes every GPU (error). When
            `use-gputype` is present Volcano ignores `nouse-gputype` entirely (warning). With cluster
            facts, an allow list that matches no node's GPU type leaves the pod Pending (warning).

            Evidence: docs/vgpu.md#vgpu-keys, docs/vgpu.md#vgpu-filter (step 3b);
            docs/device-plugins.md#vgpu-plugin-pod-annotations, docs/checks.md#check-index-device-plugins rule 33;
            {_VGPU_DIR}utils.go`
            (checkGPUtype).
            """,
        severities=(ERROR, WARNING),
    ),
    CodeInfo(
        code="VGP011",
        severity=WARNING,
        family=VGPU,
        title="vgpu-use-gpuuuid / vgpu-nouse-gpuuuid is malformed, unknown, or unsupported here",
        hint=(
            "List exact GPU UUIDs separated by commas, e.g. "
            '`volcano.sh/vgpu-use-gpuuuid: "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448"`, copied from '
            "the node's `volcano.sh/node-vgpu-register`; these annotations need Volcano >= 1.16."
        ),
        doc=f"""
            `volcano.sh/vgpu-use-gpuuuid` and `volcano.sh/vgpu-nouse-gpuuuid` exist only from Volcano
            1.16 (HEAD / v1.16-alpha); older schedulers ignore them silently. Values are
            comma-separated UUIDs compared exactly after trimming blanks, and the deny list wins.
            Empty entries are dropped, so an empty value (`""`) or a trailing comma is no constraint
            and is not reported. An
            allowed UUID that no node registers, or a deny list that covers every allowed UUID,
            leaves the pod Pending with `no GPU matches UUID constraints ...`.

            ```yaml
            volcano.sh/vgpu-use-gpuuuid: "gpu-0fc3"   # bad: not a full UUID
            volcano.sh/vgpu-use-gpuuuid: "GPU-0fc3eda5-e98b-a25b-5b0d-cf5c855d1448"   # good
            ```

            Evidence: docs/vgpu.md#vgpu-keys, docs/vgpu.md#vgpu-filter (steps 3b, 3d),
            docs/volcano.md#compatibility-matrix; {_VGPU_DIR}utils.go` (gpuUUIDFilter,
            parseGPUUUIDList).
            """,
    ),
    CodeInfo(
        code="VGP012",
        severity=WARNING,
        family=VGPU,
        title="vgpu-podgroup-policy is not spread, or spread is set on a pod without a PodGroup",
        hint=(
            "Use `volcano.sh/vgpu-podgroup-policy: spread` only on pods of a PodGroup (Volcano Job pods "
            "get `scheduling.k8s.io/group-name` automatically); remove it otherwise."
        ),
        doc=f"""
            From Volcano 1.15.0, `volcano.sh/vgpu-podgroup-policy: spread` stops two pods of the same
            PodGroup (namespace and group name) from sharing a physical GPU. Only the value `spread`
            has an effect; any other value is ignored silently. The group is read from
            `scheduling.k8s.io/group-name`, then `scheduling.volcano.sh/group-name`; a pod with
            neither is not spread from anything.

            Evidence: docs/vgpu.md#vgpu-keys, docs/vgpu.md#vgpu-podgroup-spread, docs/checks.md#check-index-vgpu-pods
            V12; {_VGPU_DIR}utils.go` (getPodGroupKey).
            """,
    ),
    CodeInfo(
        code="VGP013",
        severity=WARNING,
        family=VGPU,
        title="a vGPU allocation block is paired with the wrong container",
        hint=(
            "List the containers that request vGPU first in `spec.containers` (sidecars after them), and "
            "request vGPU in no init container."
        ),
        doc="""
            Volcano writes one `;`-separated block per app container that has `vgpu-number` or
            `vgpu-memory` in its limits, skipping the others. Kubelet sends one container per
            Allocate call and the device plugin hands out the blocks in order, so several vGPU
            containers get their own GPUs. But the plugin pairs the i-th block with
            `spec.containers[i]` for the per-container cache directory
            (`<hook>/vgpu/containers/<pod-uid>_<container>`: HAMi-core's usage, which the plugin's
            vgpu-monitor labels with that container name) and for the `CUDA_DISABLE_CONTROL`
            opt-out. A container without vGPU listed before one with vGPU, or vGPU in an init
            container (allocated first, VGP007), pairs a block with the wrong container: usage is
            attributed to it and its env decides the opt-out. Several vGPU containers listed first
            are fine (`[trainer (vGPU), logger]`); `[istio-proxy, trainer (vGPU)]` is warned.

            Evidence: docs/vgpu.md#vgpu-allocation; volcano-sh/volcano `pkg/scheduler/api/devices/util.go`
            (ExtractResourceRequest); Project-HAMi/volcano-vgpu-device-plugin v1.12.0
            `pkg/plugin/server.go` (Allocate), `pkg/util/util.go` (GetNextDeviceRequest),
            `pkg/monitor/nvidia/cudevshr.go`.
            """,
    ),
    CodeInfo(
        code="VGP014",
        severity=ERROR,
        family=VGPU,
        title="device resource in requests without a matching limit, or request differs from limit",
        hint=(
            "Put device resources in `resources.limits` (a limit alone sets the request), e.g. "
            "`limits: {volcano.sh/vgpu-number: 1}`; if you also set `requests`, make them equal."
        ),
        doc="""
            vGPU, gpushare and NPU resources are Kubernetes extended resources: the value must be an
            integer, a request needs a limit (`Limit must be set for non overcommitable resources`)
            and request must equal limit. The API server checks this after mutating webhooks run.
            Volcano also detects device requests from `limits` (vGPU count and memory, gpushare,
            Ascend count, MindCluster `npu-core`), so a request-only value is not a device request.
            vgpuctl's mutating webhook copies the request into `limits` when the limit is missing
            and reports this code at `info`; a request that differs from its limit is an `error`.

            Evidence: Kubernetes extended-resource validation; docs/vgpu.md#vgpu-pod-request, docs/vgpu.md#gpushare,
            docs/ascend.md#ascend-hami-pod-request, docs/ascend.md#mindcluster-pod.
            """,
        severities=(ERROR, INFO),
    ),
    CodeInfo(
        code="VGP015",
        severity=ERROR,
        family=VGPU,
        title="device-sharing pod is not scheduled by a Volcano scheduler",
        hint=(
            "Set `spec.schedulerName: volcano` (or your Volcano scheduler's name) on every pod that "
            "requests `volcano.sh/*` or Volcano-managed NPU resources."
        ),
        doc="""
            Only the Volcano scheduler chooses devices and writes the allocation annotations
            (`volcano.sh/vgpu-ids-new`, `volcano.sh/devices-to-allocate`, `volcano.sh/vgpu-node`, ...).
            A pod bound by another scheduler has none of them: the device plugin's Allocate finds no
            matching pending pod (`cannot get valid pod`) and kubelet fails the pod with
            `UnexpectedAdmissionError`. vgpuctl's mutating webhook sets the configured Volcano name
            (default `volcano`) when `schedulerName` is empty or `default-scheduler` and reports this
            code at `info`; any other scheduler name (e.g. `hami-scheduler`) is an `error`.

            Evidence: docs/checks.md#check-index-device-plugins rule 26, docs/hami.md#hami-webhook-logic (HAMi's webhook
            skips other schedulers' pods);
            Project-HAMi/volcano-vgpu-device-plugin `pkg/plugin/server.go` (Allocate),
            `pkg/util/util.go` (GetPendingPod).
            """,
        severities=(ERROR, INFO),
    ),
    CodeInfo(
        code="VGP016",
        severity=ERROR,
        family=VGPU,
        title="privileged container requests vGPU or vNPU resources",
        hint=(
            "Remove `securityContext.privileged: true` from containers that request `volcano.sh/vgpu-*` "
            "or `huawei.com/*` resources; grant only the capabilities the workload needs."
        ),
        doc="""
            A privileged container sees every device of the host, so the memory and compute limits
            of its shared slice are void: it can use and disturb GPUs or NPUs booked for other pods.
            HAMi v2.10's own webhook denies such pods (`container <name> is privileged`); up to v2.9
            it skipped them, and they then failed with `Insufficient nvidia.com/gpumem`. Volcano has
            no such check. vgpuctl reports this as an `error` by default; the setting can lower it to
            a `warning`.

            Evidence: docs/hami.md#hami-webhook-logic (step 4), docs/device-plugins.md#known-problems #9,
            docs/checks.md#check-index-device-plugins rule 32; Project-HAMi/HAMi
            `pkg/scheduler/webhook.go`.
            """,
        severities=(ERROR, WARNING),
    ),
    CodeInfo(
        code="VGP017",
        severity=INFO,
        family=VGPU,
        title="what the vGPU request resolves to (exclusive GPU, MIG slice)",
        hint=(
            "Nothing to fix; if the result is not what you meant, change `volcano.sh/vgpu-memory` or "
            "`volcano.sh/vgpu-cores`."
        ),
        doc=f"""
            Informational. `vgpu-cores: 100` means an exclusive GPU: it only lands on a GPU nobody
            uses and keeps every other pod off it. For MIG, vgpuctl names the instance Volcano will
            pick (the smallest instance at least memory × gpuMemoryFactor, in the first group that has
            one) and notes that the instance's memory, not the request, is booked: 3000 MiB on an
            A100-40GB resolves to `1g.5gb` and books 5120 MiB.

            Evidence: docs/vgpu.md#vgpu-filter, docs/vgpu.md#vgpu-mig; {_VGPU_DIR}mig.go`, `hamicore.go`.
            """,
    ),
    CodeInfo(
        code="VGP018",
        severity=WARNING,
        family=VGPU,
        title="an annotation HAMi reads and Volcano ignores",
        hint=(
            "Use the annotation Volcano reads instead (`volcano.sh/vgpu-use-gpuuuid` for "
            "`nvidia.com/use-gpuuuid`, `volcano.sh/vgpu-nouse-gpuuuid` for `nvidia.com/nouse-gpuuuid`, "
            "`volcano.sh/vgpu-mode` for `nvidia.com/vgpu-mode`), or remove it."
        ),
        doc=f"""
            HAMi's own scheduler reads pod annotations that Volcano's deviceshare does not: a vGPU or
            Ascend pod carrying one is scheduled as if it were absent, so the GPU it pins or
            excludes, or the mode or policy it asks for, is silently not honoured. Reported, with
            what Volcano reads for the same wish:

            | HAMi annotation | Volcano reads |
            |---|---|
            | `nvidia.com/use-gpuuuid` | `volcano.sh/vgpu-use-gpuuuid` (from 1.16) |
            | `nvidia.com/nouse-gpuuuid` | `volcano.sh/vgpu-nouse-gpuuuid` (from 1.16) |
            | `nvidia.com/vgpu-mode` | `volcano.sh/vgpu-mode` (`hami-core` or `mig`) |
            | `hami.io/gpu-scheduler-policy`, `hami.io/node-scheduler-policy` | `deviceshare.SchedulePolicy` |
            | `nvidia.com/numa-bind` | nothing |
            | `hami.io/use-<commonWord>-uuid`, `hami.io/no-use-<commonWord>-uuid` | nothing |

            The scheduling policy is cluster-wide only. `nvidia.com/use-gputype` and
            `nvidia.com/nouse-gputype` *are* read by Volcano (VGP010) and are not reported here.

            Evidence: {_VGPU_DIR}type.go`, `utils.go` (checkGPUtype, newGPUUUIDFilter);
            {_HAMI_DIR}device_info.go` (InitDevices), at volcano-sh/volcano ed72c7c81.
            """,
    ),
    CodeInfo(
        code="VGP019",
        severity=ERROR,
        family=VGPU,
        title="a container asks for GPUs of another stack together with volcano.sh/vgpu-*",
        hint=(
            "Ask for GPUs through one stack per container: keep `volcano.sh/vgpu-*` and remove `nvidia.com/gpu` "
            "(and `nvidia.com/gpumem`, `nvidia.com/gpucores`, `nvidia.com/mig-*`, …), or run the container "
            "without vGPU on nodes of the other stack."
        ),
        doc=f"""
            A container whose resources name both Volcano's vGPU resources and another stack's GPU
            resources — NVIDIA's device plugin `nvidia.com/gpu`, `nvidia.com/gpu.shared`,
            `nvidia.com/mig-<profile>`; HAMi's `nvidia.com/gpumem`, `nvidia.com/gpucores` — is given GPUs by
            two allocators that know nothing of each other. Volcano's vGPU filter reads only the vGPU
            resources (and places the pod by `volcano.sh/node-vgpu-register`); the other plugin's resource
            is a plain scalar to Volcano, checked against the node's idle allocatable with no tie to a
            GPU. The container ends up with the vGPU plugin's GPU and the other plugin's GPU — two
            devices, or the same one booked twice. Not reported for a resource the device config names
            as a vGPU resource (a config may call the count `nvidia.com/gpu`).

            ```yaml
            limits:
              volcano.sh/vgpu-number: 1
              nvidia.com/gpu: 1        # bad: a second GPU from another device plugin
            ```

            Evidence: docs/stacks.md#pods-mixing-stacks, docs/stacks.md#what-volcano-counts;
            {_VGPU_DIR}utils.go` (checkVGPUResourcesInPod); volcano-sh/volcano
            `pkg/scheduler/actions/allocate/allocate.go`; volcano issues #3624, #4712.
            """,
    ),
    CodeInfo(
        code="VGP020",
        severity=ERROR,
        family=VGPU,
        title="a device-sharing pod also claims a GPU through DRA",
        hint=(
            "Ask for the GPU one way: remove the DRA claim (the `spec.resourceClaims` entry and the container's "
            "`resources.claims`) and keep `volcano.sh/vgpu-*`, or drop the device-sharing resources and let "
            "the claim carry the GPU."
        ),
        doc="""
            A pod asking Volcano's device sharing for GPUs (`volcano.sh/vgpu-*`, `gpu-memory`,
            `gpu-number`) with a `spec.resourceClaims` entry whose ResourceClaim or ResourceClaimTemplate
            asks a GPU DeviceClass (`gpu.nvidia.com`, `mig.nvidia.com`, `hami-core-gpu.project-hami.io`,
            or a class whose CEL selector names such a driver). The DRA filter (in predicates) and the
            device filter (deviceshare) run independently: the pod gets a DRA device through CDI and a
            deviceshare GPU in `volcano.sh/vgpu-ids-new`, two GPUs or one booked twice.

            A pod names claims and templates, never classes, so a claim's class is resolved only when
            its object is known: the claim or template in the same `lint` input, the snapshot (`lint
            --snapshot`, `doctor`), or the cluster-aware webhook's watch of DeviceClasses,
            ResourceClaims and ResourceClaimTemplates; and its DeviceClass when collected (else the
            names GPU drivers' charts install). An unknown claim is not reported, nor a claim of another
            device (a NIC): skipped, never guessed.

            Evidence: docs/stacks.md#pods-mixing-stacks; volcano-sh/volcano
            `pkg/scheduler/plugins/predicates/predicates.go` (v1.12.0 on),
            `pkg/scheduler/plugins/deviceshare/deviceshare.go`; kubernetes-sigs/dra-driver-nvidia-gpu
            `deployments/helm/dra-driver-nvidia-gpu/templates/deviceclass-gpu.yaml`;
            Project-HAMi/k8s-dra-driver `chart/hami-dra-driver/templates/deviceclass-hami-gpu.yaml`.
            """,
    ),
    CodeInfo(
        code="VGS001",
        severity=ERROR,
        family=GPUSHARE,
        title="gpu-memory / gpu-number is not a positive integer",
        hint=(
            "Set `volcano.sh/gpu-memory` to the MiB the whole pod needs (e.g. `4096`) or "
            "`volcano.sh/gpu-number` to a whole number of cards (e.g. `1`), in `resources.limits`."
        ),
        doc="""
            gpushare reads `volcano.sh/gpu-memory` (MiB, whole pod on one card) and
            `volcano.sh/gpu-number` (whole idle cards) from `limits` only. A pod is a device pod only
            when the enabled value is above 0, so 0 makes the request disappear. A suffix is resolved
            by Kubernetes first: `4Gi` becomes 4294967296, which no card has.

            ```yaml
            volcano.sh/gpu-memory: 4Gi    # bad
            volcano.sh/gpu-memory: 4096   # good
            ```

            Evidence: docs/vgpu.md#gpushare, docs/checks.md#check-index-gpushare-pods; volcano-sh/volcano
            `pkg/scheduler/api/devices/nvidia/gpushare/device_info.go`.
            """,
    ),
    CodeInfo(
        code="VGS002",
        severity=ERROR,
        family=GPUSHARE,
        title="pod uses both gpu-memory and gpu-number",
        hint=(
            "Request either `volcano.sh/gpu-memory` (a share of one card) or `volcano.sh/gpu-number` "
            "(whole cards), not both; for new workloads prefer vGPU (`volcano.sh/vgpu-*`)."
        ),
        doc="""
            `deviceshare.GPUSharingEnable` and `deviceshare.GPUNumberEnable` cannot both be on: the
            scheduler exits with `can not define true in both gpu sharing and gpu number`. So in a
            running cluster one of the two resources is never handled as a device request, and the
            pod cannot get what it asks for.

            Evidence: docs/volcano.md#fatal-combinations, docs/checks.md#check-index-gpushare-pods G1;
            volcano-sh/volcano
            `pkg/scheduler/plugins/deviceshare/deviceshare.go` (enablePredicate),
            `pkg/scheduler/api/devices/nvidia/gpushare/device_info.go` (HasDeviceRequest).
            """,
    ),
    CodeInfo(
        code="VGS003",
        severity=ERROR,
        family=GPUSHARE,
        title="gpushare request is larger than any node's card memory or healthy card count",
        hint=(
            "Lower `volcano.sh/gpu-memory` to at most one card's memory (node capacity `gpu-memory` ÷ "
            "`gpu-number`), or `volcano.sh/gpu-number` to at most the healthy cards of the largest node."
        ),
        doc="""
            The pod's memory is the larger of the sum over containers and the largest init container,
            and the whole of it must fit on one card; a card's memory is the node's capacity
            `volcano.sh/gpu-memory` ÷ `volcano.sh/gpu-number` (integer division). `gpu-number` needs
            that many cards with no pods at all, after dropping `volcano.sh/gpu-unhealthy-ids`.
            Otherwise every node answers `GpuShare no enough gpu memory on node N` or
            `GpuNumber no enough gpu number on node N`. The finding's hint names the largest card's memory,
            or the most healthy cards of a node.

            Evidence: docs/vgpu.md#gpushare, docs/checks.md#check-index-gpushare-pods G2/G3; volcano-sh/volcano
            `pkg/scheduler/api/devices/nvidia/gpushare/device_info.go`, `share.go`.
            """,
    ),
    CodeInfo(
        code="VGS004",
        severity=ERROR,
        family=GPUSHARE,
        title="user-set gpu-index or predicate-time annotation",
        hint=(
            "Remove `volcano.sh/gpu-index` and `volcano.sh/predicate-time` from the pod; the scheduler "
            "writes them. Never combine them with `spec.nodeName`."
        ),
        doc="""
            The scheduler writes `volcano.sh/gpu-index` (card indexes, e.g. `0,2`) and
            `volcano.sh/predicate-time` (Unix nanoseconds) when it allocates, overwriting any value a
            user set (warning). A pod with `spec.nodeName` bypasses the scheduler, yet Volcano still
            counts it on the cards its `gpu-index` names, so it can over-book a card; Volcano even
            clamps a card's idle memory at 0 for this case (error).

            Evidence: docs/vgpu.md#gpushare, docs/checks.md#check-index-gpushare-pods G4; volcano-sh/volcano
            `pkg/scheduler/api/devices/nvidia/gpushare/share.go`, `device_info.go`.
            """,
        severities=(ERROR, WARNING),
    ),
    # --- Ascend HAMi mode (VGH) --------------------------------------------------------------------
    CodeInfo(
        code="VGH001",
        severity=ERROR,
        family=ASCEND_HAMI,
        title="vnpu-mode is not exactly hami-core, or hami-core is not available here",
        hint=(
            "Set `huawei.com/vnpu-mode: hami-core` exactly (or remove it for template mode), and use it "
            'only on Volcano >= 1.16 with nodes annotated `hami-vnpu-core: "true"`.'
        ),
        doc=f"""
            Without `huawei.com/vnpu-mode: hami-core`, an Ascend HAMi request runs in template mode;
            any other value (`HAMi-core`, `soft`, ...) silently means template mode too. hami-core
            (soft slicing) exists only from Volcano 1.16 (HEAD); older versions ignore the annotation.
            A hami-core pod only fits NPUs on nodes annotated `hami-vnpu-core: "true"` (or with
            `vnpus.hamiVnpuCore: true` when the node annotation is absent), so with no such node it
            stays Pending.

            Evidence: docs/ascend.md#ascend-hami-keys, docs/ascend.md#ascend-hami-core-mode,
            docs/volcano.md#compatibility-matrix, docs/checks.md#check-index-ascend-hami-pods H1;
            docs/device-plugins.md#ascend-plugin-annotations; {_HAMI_DIR}constants.go`,
            `device_info.go`.
            """,
    ),
    CodeInfo(
        code="VGH002",
        severity=ERROR,
        family=ASCEND_HAMI,
        title="Ascend memory or -core requested without the count resource",
        hint=(
            "Add the count resource to the same container's limits, e.g. `huawei.com/Ascend910B3: 1` "
            "next to `huawei.com/Ascend910B3-memory`."
        ),
        doc=f"""
            Volcano sees an Ascend request when a container's `limits` have `<resourceName>` or
            `<resourceMemoryName>`; with memory but no count it books one NPU. A container with only
            `<resourceName>-core` is invisible: nothing is booked. The kubelet only knows the count
            resource (the device plugin registers nothing else), so only the count reaches the
            device plugin. vgpuctl's mutating webhook adds a count of 1 when memory is set and
            reports this code at `info`; a core-only request stays an `error`.

            Evidence: docs/ascend.md#ascend-hami-pod-request, docs/checks.md#check-index-ascend-hami-pods H2;
            docs/device-plugins.md#ascend-plugin-annotations; {_HAMI_DIR}device_info.go`.
            """,
        severities=(ERROR, INFO),
    ),
    CodeInfo(
        code="VGH003",
        severity=ERROR,
        family=ASCEND_HAMI,
        title="template mode: NPU memory request is larger than the chip's memoryCapacity",
        hint=(
            "Lower the memory resource to at most the chip's `memoryCapacity` (e.g. 24576 MiB for "
            "Ascend310P), or omit it to get a whole card."
        ),
        doc=f"""
            In template mode Volcano rounds memory up to the first template at least that large; a
            request above every template but within `memoryCapacity` books a whole card
            (`memoryAllocatable`); anything larger is trimmed to 0, which fits anywhere and is mapped
            to the *smallest* template (inferred from code). So an oversized request silently gets
            the smallest vNPU instead of failing. HAMi's own webhook rejects the same value
            (`<resourceMemoryName> <n> is invalid`). The finding's hint names the chip's `memoryCapacity`.

            ```yaml
            huawei.com/Ascend310P-memory: 24577   # bad: gets vir01 (3072 MiB)
            huawei.com/Ascend310P-memory: 24576   # good: a whole card (21527 MiB booked)
            ```

            Evidence: docs/ascend.md#ascend-hami-template-mode (Test_trimMemory),
            docs/checks.md#check-index-ascend-hami-pods H3; docs/device-plugins.md#ascend-plugin-annotations;
            {_HAMI_DIR}device_info.go`
            (trimMemory).
            """,
    ),
    CodeInfo(
        code="VGH004",
        severity=ERROR,
        family=ASCEND_HAMI,
        title="template mode: more than one NPU requested with partial-card memory",
        hint=(
            "With a count above 1, omit the memory resource (whole cards) or set it above the largest "
            "template; or request one NPU per container."
        ),
        doc=f"""
            In template mode a request for more than one NPU must book whole cards: the memory after
            rounding must equal `memoryAllocatable`, i.e. no memory given, or more than the largest
            template and at most `memoryCapacity`. Otherwise Volcano fails on every node with
            `vNPU does not support partial memory allocation when requesting multiple devices`;
            HAMi's webhook rejects it as `vNPU not supported for multiple devices`.

            Evidence: docs/ascend.md#ascend-hami-template-mode, docs/checks.md#check-index-ascend-hami-pods H4;
            docs/device-plugins.md#ascend-plugin-annotations; {_HAMI_DIR}device_info.go` (verifyReq).
            """,
    ),
    CodeInfo(
        code="VGH005",
        severity=ERROR,
        family=ASCEND_HAMI,
        title="hami-core mode: -core outside 0..100 or memory larger than the device",
        hint=(
            "Set `<resourceName>-core` to a percentage from 0 to 100 (100 = a whole NPU) and the memory "
            "resource to at most the NPU's `devmem` in `hami.io/node-register-<commonWord>`."
        ),
        doc=f"""
            In hami-core mode memory is not rounded to a template and each NPU's core budget is 100
            (a percentage). An NPU fits only if its free memory covers the request and its free cores
            cover `<resourceName>-core`; 100 cores needs an unused NPU. A core value above 100 or
            memory above every NPU's registered `devmem` never fits (`no ascend device available`).

            Evidence: docs/ascend.md#ascend-hami-core-mode, docs/ascend.md#ascend-hami-fit,
            docs/checks.md#check-index-ascend-hami-pods H5; docs/device-plugins.md#ascend-plugin-annotations;
            {_HAMI_DIR}device_info.go` (fit).
            """,
    ),
    CodeInfo(
        code="VGH006",
        severity=ERROR,
        family=ASCEND_HAMI,
        title="template mode: <resourceName>-core is set (only supported in hami-core mode)",
        hint=(
            "Remove `<resourceName>-core` (e.g. `huawei.com/Ascend910B3-core`), or add "
            "`huawei.com/vnpu-mode: hami-core` on Volcano >= 1.16 to use soft slicing."
        ),
        doc=f"""
            A template fixes its AI cores, so a core request only makes sense in hami-core mode.
            HAMi's webhook rejects it (`... is only supported in hami-core (soft split) mode`).
            Volcano 1.16 (HEAD) instead checks it against the NPU's registered `devcore` and books
            cores only when they are requested, never the template's own cores, so core accounting
            on a node mixes booked and unbooked pods. Volcano <= 1.15.1 ignores the core resource.

            Evidence: docs/ascend.md#ascend-hami-keys, docs/ascend.md#ascend-hami-template-mode,
            docs/volcano.md#docs-vs-code item 5, docs/checks.md#check-index-ascend-hami-pods H6;
            docs/device-plugins.md#ascend-plugin-annotations; {_HAMI_DIR}device_info.go`;
            Project-HAMi/HAMi `pkg/device/ascend/device.go` (MutateAdmission).
            """,
    ),
    CodeInfo(
        code="VGH007",
        severity=ERROR,
        family=ASCEND_HAMI,
        title="NPU count is not an integer >= 1, or NPU memory is not a plain positive integer",
        hint=(
            "Write the count as a whole number, e.g. `huawei.com/Ascend910B3: 1`, and memory as plain "
            "MiB, e.g. `huawei.com/Ascend910B3-memory: 16384` (not `16Gi`)."
        ),
        doc=f"""
            The count resource is a whole number of NPUs and the memory resource is in MiB. Kubernetes
            resolves suffixes first: `16Gi` becomes 17179869184, above every `memoryCapacity`, so in
            template mode it is trimmed to 0 and silently gets the smallest template (see VGH003), and
            in hami-core mode it never fits. A count of 0 is not a request at all.

            ```yaml
            huawei.com/Ascend910B3-memory: 16Gi    # bad
            huawei.com/Ascend910B3-memory: 16384   # good: vir05_1c_16g
            ```

            Evidence: docs/ascend.md#ascend-hami-pod-request, docs/ascend.md#ascend-hami-template-mode,
            docs/checks.md#check-index-ascend-hami-pods H7; docs/device-plugins.md#ascend-plugin-annotations;
            {_HAMI_DIR}device_info.go`.
            """,
    ),
    CodeInfo(
        code="VGH008",
        severity=ERROR,
        family=ASCEND_HAMI,
        title="Ascend resource that no vnpus entry of the device config declares",
        hint=(
            "Use a resource name from a `vnpus` entry of the device ConfigMap Volcano reads (e.g. "
            "`huawei.com/Ascend910B3`), or add that chip's entry there and restart the scheduler."
        ),
        doc="""
            At startup Volcano registers one Ascend HAMi device type per `commonWord` of the `vnpus`
            section it loaded. A `huawei.com/Ascend*` resource no entry declares is not a device
            request for `deviceshare`: no NPU is chosen and no allocation annotation is written. The
            built-in default knows only `Ascend310P`, and a ConfigMap without `vnpus` registers no
            Ascend type at all.

            Evidence: docs/volcano.md#device-config-loading, docs/volcano.md#device-config-default,
            docs/volcano.md#docs-vs-code item 8, docs/checks.md#check-index-ascend-hami-pods H8; volcano-sh/volcano
            `pkg/scheduler/plugins/deviceshare/deviceshare.go` (registerDevices).
            """,
    ),
    CodeInfo(
        code="VGH009",
        severity=INFO,
        family=ASCEND_HAMI,
        title="which vNPU template the memory request rounds up to",
        hint=(
            "Nothing to fix; to avoid waste request exactly a template's memory, e.g. `3072` for "
            "`vir01` on Ascend310P."
        ),
        doc=f"""
            Informational. In template mode the memory request is rounded up to the first template at
            least that large; above every template but within `memoryCapacity` a whole card is
            booked. For Ascend310P (vir01 3072, vir02 6144, vir04 12288, allocatable 21527, capacity
            24576 MiB):

            | request (MiB) | result |
            |---|---|
            | up to 3072 | vir01 (3072) |
            | 3073 – 6144 | vir02 (6144) |
            | 6145 – 12288 | vir04 (12288) |
            | 12289 – 24576 | whole card (21527) |

            Evidence: docs/ascend.md#ascend-hami-template-mode (Test_trimMemory);
            docs/device-plugins.md#ascend-chips-and-templates; {_HAMI_DIR}device_info.go` (trimMemory).
            """,
    ),
    CodeInfo(
        code="VGH010",
        severity=WARNING,
        family=ASCEND_HAMI,
        title="Ascend HAMi pod without runtimeClassName: ascend, which the device plugin requires",
        hint=(
            "Set `spec.runtimeClassName: ascend` on the pod (or the pod template / Volcano Job task "
            "template), and make sure the `ascend` RuntimeClass exists (see VGK008)."
        ),
        doc="""
            ascend-device-plugin ships an `ascend` RuntimeClass (`ascend-runtimeclass.yaml`, since
            v1.3.0), and its Volcano guide (`docs/volcano.md`, v1.4.0) requires
            `runtimeClassName: ascend` on every pod that asks for an Ascend vNPU: the Ascend container
            runtime is what mounts the NPU device and driver into the container. A pod without it is
            scheduled, but its container does not see the NPU it was given. Without facts about the
            plugin in use (lint without `--snapshot`), the finding is informational.

            Evidence: Project-HAMi/ascend-device-plugin `ascend-runtimeclass.yaml`, `docs/volcano.md`
            (tag v1.4.0).
            """,
        severities=(WARNING, INFO),
    ),
    # --- Ascend MindCluster 310P (VGA) -------------------------------------------------------------
    CodeInfo(
        code="VGA001",
        severity=ERROR,
        family=MINDCLUSTER,
        title="npu-core requested without the pod label ring-controller.atlas: ascend-310P",
        hint=(
            "Add the label `ring-controller.atlas: ascend-310P` (exact case) to the pod, or to "
            "`spec.tasks[].template.metadata.labels` of a Volcano Job."
        ),
        doc=f"""
            Volcano treats a pod as a MindCluster vNPU request only if it carries the label
            `ring-controller.atlas` with exactly `ascend-310P` **and** a container has
            `huawei.com/npu-core` in `limits`. Without the label `deviceshare` ignores the pod: no
            chip or template is chosen and no `huawei.com/npu-core` annotation is written. Labels on a
            Volcano Job's own metadata are not copied to its pods.

            Evidence: docs/ascend.md#mindcluster-pod, docs/checks.md#check-index-mindcluster-pods A1;
            {_310P_DIR}utils.go` (checkVNPUResourcesInPod).
            """,
    ),
    CodeInfo(
        code="VGA002",
        severity=ERROR,
        family=MINDCLUSTER,
        title="npu-core is not 1, 2, 4 or a multiple of the chip's core count",
        hint=(
            "Request `huawei.com/npu-core` 1, 2 or 4 for a vNPU slice, or a multiple of the cores per "
            "chip (8 on Atlas 310P, see node label `servertype`) for whole chips."
        ),
        doc=f"""
            MindCluster maps the core count to a template: 1 → `vir01`, 2 → `vir02_1c`/`vir02`,
            4 → one of the `vir04` templates, and a multiple of the chip's core count (from the node
            label `servertype`, e.g. `Ascend310P-8`) → whole chips. Any other value (0, 3, 5, 6,
            7, ...) has no template: the resource becomes a zero value, every check passes, and the
            pod binds with no chip assigned (no `huawei.com/npu-core` annotation; inferred from code).

            Evidence: docs/ascend.md#mindcluster-pod, docs/checks.md#check-index-mindcluster-pods A2; {_310P_DIR}`
            (getResTemplateFromTaskSetting).
            """,
    ),
    CodeInfo(
        code="VGA003",
        severity=ERROR,
        family=MINDCLUSTER,
        title="vnpu-dvpp label is not yes, no or null",
        hint=(
            'Set the pod label `vnpu-dvpp` to `yes`, `no` or `"null"` (exact, lower-case), or remove it '
            "(absent means null)."
        ),
        doc=f"""
            The pod label `vnpu-dvpp` asks for (or against) the DVPP media units of a 4-core slice.
            Missing means `null`. Any value other than `yes`, `no` or `null` (e.g. `Yes`, `true`) is
            an error (`err dvpp value:...`) on every node for vNPU (non-whole-chip) requests, so the
            pod never schedules.

            Evidence: docs/ascend.md#mindcluster-pod, docs/checks.md#check-index-mindcluster-pods A3; {_310P_DIR}`
            (GetVTaskDVPP).
            """,
    ),
    CodeInfo(
        code="VGA004",
        severity=ERROR,
        family=MINDCLUSTER,
        title="vnpu-level label is not low or high",
        hint=(
            "Set the pod label `vnpu-level: low` (the default) or `vnpu-level: high` (full aiCPU, may be "
            "downgraded when the node lacks room); the mutating webhook adds `low` when absent."
        ),
        doc=f"""
            `vnpu-level` picks between templates for 2- and 4-core requests: `low` → `vir02_1c` /
            `vir04_3c`, `high` → `vir02` / `vir04` (downgraded to the low template when the node
            lacks room). Volcano treats a missing label and any other value (`High`, `medium`) as
            `low`, so a mistyped `high` silently gives the smaller template. vgpuctl's mutating webhook
            adds `vnpu-level: low` when the label is absent and reports this code at `info`; an
            unknown value is an `error`.

            Evidence: docs/ascend.md#mindcluster-pod, docs/checks.md#check-index-mindcluster-pods A4,
            docs/checks.md#mutating-defaults; {_310P_DIR}` (GetVTaskLevel).
            """,
        severities=(ERROR, INFO),
    ),
    CodeInfo(
        code="VGA005",
        severity=ERROR,
        family=MINDCLUSTER,
        title="vnpu-dvpp is yes or no on a 1- or 2-core request (only null is valid there)",
        hint=(
            'Set `vnpu-dvpp: "null"` (or remove the label) for `huawei.com/npu-core` 1 or 2; use `yes` '
            "or `no` only with 4 cores (`vir04_4c_dvpp` / `vir04_3c_ndvpp`)."
        ),
        doc=f"""
            Per the vNPU user guide's template table, the 1- and 2-core templates (`vir01`,
            `vir02_1c`, `vir02`) have no DVPP choice: their DVPP is `null`, and only 4-core requests
            have `yes` (`vir04_4c_dvpp`) and `no` (`vir04_3c_ndvpp`) templates. Volcano ignores the
            label for 1 and 2 cores, so the DVPP wish is not honoured. vgpuctl's mutating webhook adds
            `vnpu-dvpp: "null"` when the label is absent and reports this code at `info`; `yes` or
            `no` on a 1- or 2-core request is an `error`.

            Evidence: docs/ascend.md#mindcluster-pod (template table), docs/checks.md#check-index-mindcluster-pods A5,
            docs/checks.md#mutating-defaults; {_310P_DIR}`
            (getResTemplateFromTaskSetting).
            """,
        severities=(ERROR, INFO),
    ),
    CodeInfo(
        code="VGA006",
        severity=WARNING,
        family=MINDCLUSTER,
        title="vnpu-dvpp or vnpu-level set on a whole-chip npu-core request (ignored)",
        hint=(
            "Remove `vnpu-dvpp` and `vnpu-level` from pods that request whole chips (a multiple of the "
            "cores per chip); they only affect 2- and 4-core slices."
        ),
        doc=f"""
            A `huawei.com/npu-core` request that is a multiple of the chip's core count gets whole
            chips, with aiCPU = cores × node aiCPU ÷ node aiCore. Volcano ignores `vnpu-dvpp` and
            `vnpu-level` for such requests (it does not even validate `vnpu-dvpp`), so setting them
            suggests a slice was meant.

            Evidence: docs/ascend.md#mindcluster-pod, docs/checks.md#check-index-mindcluster-pods A5; {_310P_DIR}`
            (getResTemplateFromTaskSetting).
            """,
    ),
    CodeInfo(
        code="VGA007",
        severity=INFO,
        family=MINDCLUSTER,
        title="which vNPU template the npu-core request resolves to",
        hint=(
            "Nothing to fix; change `huawei.com/npu-core`, `vnpu-level` or `vnpu-dvpp` if the template "
            "is not the one you want."
        ),
        doc=f"""
            Informational: the template Volcano picks on a 310P chip with 8 cores.

            | npu-core | vnpu-dvpp | vnpu-level | template |
            |---|---|---|---|
            | 1 | any | any | vir01 |
            | 2 | any | low / high | vir02_1c / vir02 (high may downgrade to vir02_1c) |
            | 4 | yes | any | vir04_4c_dvpp |
            | 4 | no | any | vir04_3c_ndvpp |
            | 4 | null | low / high | vir04_3c / vir04 (high may downgrade to vir04_3c) |
            | k × cores per chip | ignored | ignored | k whole chips |

            A downgrade is remembered per pod name.

            Evidence: docs/ascend.md#mindcluster-pod; {_310P_DIR}` (getResTemplateFromTaskSetting).
            """,
    ),
    CodeInfo(
        code="VGA008",
        severity=ERROR,
        family=MINDCLUSTER,
        title="npu-core is larger than the largest node's npu-core capacity",
        hint=(
            "Lower `huawei.com/npu-core` to at most the largest `status.capacity` of `huawei.com/npu-core` "
            "on a 310P node, or split the work across several pods."
        ),
        doc="""
            Volcano refuses a node whose total AI cores (capacity `huawei.com/npu-core`) are fewer
            than the request. MindCluster filter failures are returned as `Error`, not
            `Unschedulable`. With no node large enough the pod stays Pending on every node. The finding's
            hint names the largest capacity.

            Evidence: docs/ascend.md#mindcluster-node, docs/checks.md#check-index-mindcluster-pods A6;
            volcano-sh/volcano
            `pkg/scheduler/plugins/deviceshare/devices/ascend/310p/vnpu/` (checkNodeNum).
            """,
    ),
    # --- Workload wrappers (VGW) -------------------------------------------------------------------
    CodeInfo(
        code="VGW001",
        severity=WARNING,
        family=WORKLOADS,
        title="device annotations or labels on a Volcano Job's metadata, not on its task templates",
        hint=(
            "Move annotations such as `volcano.sh/vgpu-mode` and labels such as `ring-controller.atlas` "
            "to `spec.tasks[].template.metadata` of the Job."
        ),
        doc="""
            The Volcano job controller builds each pod from its task's template and does not copy the
            Job's own annotations or labels to the pods, so device settings on the Job's metadata
            never reach the scheduler. The vNPU user guide's MindCluster example also puts
            `ring-controller.atlas` on the Job's metadata; only the template's copy counts.

            ```yaml
            spec:
              tasks:
              - template:
                  metadata:
                    labels: {ring-controller.atlas: ascend-310P}   # here, not on the Job
            ```

            Evidence: docs/ascend.md#mindcluster-pod, docs/volcano.md#docs-vs-code item 6,
            docs/checks.md#check-index-vgpu-pods V13, docs/checks.md#check-index-mindcluster-pods A7; volcano-sh/volcano
            `pkg/controllers/job/job_controller_util.go`.
            """,
    ),
    CodeInfo(
        code="VGW002",
        severity=ERROR,
        family=WORKLOADS,
        title="a workload's pod template breaks a pod rule (reported under the pod rule's code)",
        hint=(
            "Fix the task or pod template as the pod rule's own hint says; `vgpuctl explain <CODE>` "
            "shows it for the code in the finding."
        ),
        doc="""
            This code is never emitted itself. `lint` and the webhook check the pod templates of
            Volcano Jobs (every `spec.tasks[].template`), Deployments, StatefulSets, DaemonSets,
            ReplicaSets, Jobs and CronJobs with the pod rules (VGP, VGS, VGH, VGA). Each violation is
            reported under the pod rule's own code, e.g. `VGP005`, at that rule's severity, with the
            template's path as subject, so a bad template is caught before any pod exists. Volcano's
            own Job webhook checks nothing about devices.

            Evidence: docs/contracts.md#finding-families; docs/volcano.md#volcano-webhooks,
            docs/checks.md#check-index-vgpu-pods V13.
            """,
        severities=(ERROR, WARNING),
    ),
    # --- Input (VGL): vgpuctl's own code for what it cannot read ---------------------------------------
    CodeInfo(
        code="VGL001",
        severity=ERROR,
        family="input",
        title="manifest cannot be read as a Kubernetes object",
        hint=(
            "Fix the YAML/JSON syntax or the object's structure (e.g. `spec.containers` must be a list of "
            "container objects) so that `kubectl apply --dry-run=server` accepts it."
        ),
        doc="""
            Not a Volcano rule: vgpuctl reports here what it could not check. A file that is not valid
            YAML or JSON, a Pod whose `containers` is not a list of objects, a pod template with no
            containers, or a Volcano Job without tasks cannot be reviewed, and the API server would
            reject it anyway. `lint` reports it (with the line and column for syntax errors) and goes on
            with the other files, so one broken file never hides the findings of the rest.

            ```yaml
            spec:
              containers:
                name: main        # bad: a mapping, not a list
              containers:
              - name: main        # good
            ```

            Evidence: docs/contracts.md#interfaces (lint reads files, directories and stdin); Kubernetes API validation
            of
            `PodSpec.containers` (required, a list).
            """,
    ),
)

# --- Hints per sub-case ----------------------------------------------------------------------------
#: The hint of a code's sub-case where the finding knows the figure that fits it (the largest GPU, the most GPUs
#: of a node, …): `case_hint(code, case, **figures)` fills it from the facts the finding's message names, so lint,
#: the webhook, the doctor and `why` show the same hint. Every other finding of the code gets the code's hint.
CASE_HINTS: dict[tuple[str, str], str] = {
    ("VGP003", "more-than-any-node"): (
        "Lower `{resource}` to at most {most}, the most GPUs a vGPU node registers (one container never gets the "
        "same GPU twice), or split the work across pods."
    ),
    ("VGP005", "larger-than-every-gpu"): (
        "Lower `{resource}` to at most {largest}, the memory of the largest GPU the pod may use ({unit}){wider}."
    ),
    ("VGS003", "gpu-memory"): (
        "Lower the pod's `volcano.sh/gpu-memory` (the sum over its app containers, or its largest init container) "
        "to at most {largest}, the memory of the largest card of any gpushare node: the whole pod takes one card."
    ),
    ("VGS003", "gpu-number"): (
        "Lower the pod's `volcano.sh/gpu-number` to at most {largest}, the most healthy cards of any gpushare "
        "node: the whole pod lands on one node."
    ),
    ("VGA008", "more-than-any-node"): (
        "Lower `huawei.com/npu-core` to at most {capacity}, the largest npu-core capacity of a 310P node (a "
        "valid value: 1, 2, 4 or a multiple of {per_chip}), or split the work across pods."
    ),
    ("VGH003", "over-memory-capacity"): (
        "Lower `{resource}` to at most {capacity} MiB, the {chip} memoryCapacity (that books a whole card), or "
        "omit it to get a whole card."
    ),
}


def case_hint(code: str, case: str, **figures: object) -> str:
    """The hint of `code`'s sub-case `case` (`CASE_HINTS`) with its figures filled in."""
    return CASE_HINTS[(code, case)].format(**figures)
