"""Catalogue entries for node, cluster-component and existing-pod rules.

These codes come from `doctor` and `nodes` (docs/contracts.md#finding-families): what the device plugins wrote on nodes,
which
components and versions run, and what state existing pods are in. They are kept apart from the pod and
configuration codes so each data module stays short enough to review in one sitting.
"""

from __future__ import annotations

from vgpuctl.core.catalogue import CodeInfo
from vgpuctl.core.findings import Severity

ERROR = Severity.ERROR
WARNING = Severity.WARNING
INFO = Severity.INFO

NODES = "nodes"
CLUSTER = "cluster"

_VGPU_DIR = "volcano-sh/volcano `pkg/scheduler/api/devices/nvidia/vgpu/"
_VGPU_DP = "Project-HAMi/volcano-vgpu-device-plugin"

ENTRIES: tuple[CodeInfo, ...] = (
    # --- Nodes (VGN) -------------------------------------------------------------------------------
    CodeInfo(
        code="VGN001",
        severity=ERROR,
        family=NODES,
        title="node runs the vGPU device plugin but has no volcano.sh/node-vgpu-register",
        hint=(
            "Read the log of the `volcano-device-plugin` pod on this node: NVML must load (`nvidia` as "
            "the default container runtime) and the plugin must be allowed to patch the node."
        ),
        doc=f"""
            The vGPU device plugin writes `volcano.sh/node-vgpu-register` every 30 seconds. Without
            it Volcano builds no vGPU device model for the node, and every vGPU pod is unfit there
            behind the generic `hami-vgpuDeviceSharing error`. Usual causes: the plugin cannot load
            NVML (the node's default runtime is not `nvidia`) and exits, it lacks RBAC to patch
            nodes, or HAMi's own NVIDIA plugin runs instead (see VGN012).

            Evidence: docs/vgpu.md#vgpu-node-registration; docs/device-plugins.md#vgpu-plugin-objects,
            docs/device-plugins.md#vgpu-plugin-node-annotations, docs/device-plugins.md#vgpu-plugin-prerequisites;
            {_VGPU_DIR}device_info.go` (NewGPUDevices);
            {_VGPU_DP} `pkg/plugin/register.go`.
            """,
    ),
    CodeInfo(
        code="VGN002",
        severity=ERROR,
        family=NODES,
        title="register annotation has 5-field entries: Volcano >= 1.12 drops the whole node",
        hint=(
            "Upgrade the vGPU device plugin to v1.10.0 or later (it writes the 6th field, the mode); "
            "plugin v1.9.x works only with Volcano <= 1.11."
        ),
        doc=f"""
            Each GPU entry is `<uuid>,<count>,<devmem>,<type>,<health>,<mode>:`. Device plugin v1.9.x
            wrote 5 fields (no mode). Since 1.12 Volcano rejects the **whole node** if any entry has
            fewer than 6 fields (log `wrong Node GPU info`), so the node has no vGPU at all
            (volcano issue #4416: `node not initialized with device hamivgpu`).

            ```text
            GPU-aaaa,10,40960,NVIDIA-NVIDIA A100-PCIE-40GB,true:             # bad: 5 fields
            GPU-aaaa,10,40960,NVIDIA-NVIDIA A100-PCIE-40GB,true,hami-core:   # good
            ```

            Evidence: docs/vgpu.md#vgpu-node-registration, docs/volcano.md#compatibility-matrix,
            docs/volcano.md#known-problems #1, docs/checks.md#check-index-nodes N1;
            docs/device-plugins.md#vgpu-plugin-node-annotations, docs/device-plugins.md#vgpu-plugin-compatibility;
            {_VGPU_DIR}utils.go`
            (decodeNodeDevices).
            """,
    ),
    CodeInfo(
        code="VGN003",
        severity=ERROR,
        family=NODES,
        title="register annotation entry is malformed",
        hint=(
            "Undo manual edits (`kubectl annotate node <node> volcano.sh/node-vgpu-register-`) and "
            "restart the device plugin pod on the node so it rewrites the annotation."
        ),
        doc=f"""
            Every entry must have a non-empty UUID, an integer split count and an integer memory
            (MiB ÷ gpuMemoryFactor), both above 0, and a type containing `NVIDIA`. Volcano needs the
            annotation to decode into at least one device to give the node a vGPU model, and it
            never picks a GPU whose type lacks `NVIDIA`. Separators: `,` between fields, `:` after
            each GPU (a trailing `:` included).

            Evidence: docs/vgpu.md#vgpu-node-registration, docs/vgpu.md#vgpu-filter, docs/checks.md#check-index-nodes
            N1; docs/device-plugins.md#vgpu-plugin-node-annotations; {_VGPU_DIR}utils.go` (decodeNodeDevices).
            """,
    ),
    CodeInfo(
        code="VGN004",
        severity=ERROR,
        family=NODES,
        title="allocatable vgpu-number, vgpu-cores or vgpu-memory is missing or 0",
        hint=(
            "Make the device plugin advertise all three: `deviceSplitCount` >= 1, `deviceCoreScaling` > 0 "
            "and a large enough `gpuMemoryFactor` (VGN005), then restart the plugin pod on the node."
        ),
        doc=f"""
            Volcano 1.14.3, 1.14.4, 1.15.1 and later accept a vGPU node only if its allocatable has
            `volcano.sh/vgpu-number`, `volcano.sh/vgpu-cores` and `volcano.sh/vgpu-memory` all above
            0 (these names are hard-coded); otherwise the node has no vGPU model. Older versions use
            the handshake instead (VGN006), but from 1.13 the generic resource check still compares
            a pod's vGPU resources with allocatable, so a 0 there blocks the pods anyway.

            Evidence: docs/vgpu.md#vgpu-node-registration, docs/vgpu.md#vgpu-pod-request,
            docs/volcano.md#compatibility-matrix, docs/checks.md#check-index-nodes N2;
            docs/vgpu.md#vgpu-node-registration; {_VGPU_DIR}device_info.go` (NewGPUDevices).
            """,
    ),
    CodeInfo(
        code="VGN005",
        severity=ERROR,
        family=NODES,
        title="allocatable vgpu-memory is 0 while the node registers more than 60000 memory units",
        hint=(
            "Set `nvidia.gpuMemoryFactor` to at least ceil(total MiB on the node ÷ 60000), e.g. 11 for "
            "8 × 80 GiB, restart plugin and scheduler, and divide pods' `vgpu-memory` by the factor."
        ),
        doc=f"""
            The plugin advertises one kubelet device per memory unit (MiB ÷ gpuMemoryFactor). Above
            about 60000 units the device list no longer fits in kubelet's 4 MiB gRPC message, kubelet
            drops it, and allocatable `volcano.sh/vgpu-memory` stays 0 (or stale); the plugin logs
            `set gpuMemoryFactor to at least N`. 8 × 80 GiB = 655360 MiB needs a factor of 11. Volcano
            1.14.3+ / 1.15.1+ then drop the node (VGN004).

            Evidence: docs/vgpu.md#vgpu-node-registration, docs/volcano.md#known-problems #5,
            docs/checks.md#check-index-nodes N3; docs/device-plugins.md#vgpu-plugin-resources,
            docs/device-plugins.md#known-problems #1, docs/checks.md#check-index-device-plugins rule 3; {_VGPU_DP}
            `pkg/plugin/server.go` (checkDeviceEntries).
            """,
    ),
    CodeInfo(
        code="VGN006",
        severity=ERROR,
        family=NODES,
        title="vGPU handshake annotation missing, Deleted, or Requesting for more than 60 seconds",
        hint=(
            "On Volcano <= 1.14.2 or 1.15.0 run a device plugin that writes the handshake (v1.10.0–"
            "v1.12.0), or upgrade Volcano to 1.14.3+ / 1.15.1+, which no longer needs it."
        ),
        doc=f"""
            Volcano up to 1.14.2 and 1.15.0 needs `volcano.sh/node-vgpu-handshake`. The plugin writes
            `Reported <time>` every 30 s; the scheduler writes `Requesting_<2006.01.02 15:04:05>` when
            it uses the node. A `Requesting_` older than 60 s is rewritten to `Deleted_<time>`, and a
            `Deleted_` node is ignored until the plugin reports again. Plugin builds after v1.12.0 no
            longer write the handshake, so with these Volcano versions every node is ignored. The
            stamp is written in local time but parsed as UTC, so west of UTC fresh stamps can already
            look expired (inferred from code).

            Evidence: docs/vgpu.md#vgpu-node-registration, docs/volcano.md#compatibility-matrix;
            docs/device-plugins.md#vgpu-plugin-node-annotations, docs/device-plugins.md#vgpu-plugin-compatibility,
            docs/vgpu.md#vgpu-node-registration, docs/checks.md#check-index-device-plugins rule 20;
            {_VGPU_DIR}device_info.go`
            (NewGPUDevices).
            """,
    ),
    CodeInfo(
        code="VGN007",
        severity=WARNING,
        family=NODES,
        title="GPU registered with health=false (Volcano still schedules onto it)",
        hint=(
            "Repair or replace the GPU, or hide it from the plugin with `filterdevices.uuid` in "
            "`volcano-vgpu-node-config` and restart the plugin pod."
        ),
        doc=f"""
            The fifth field of a register entry is the GPU's health. Volcano parses it but never
            checks it when filtering or allocating, so an unhealthy GPU is still a candidate and new
            pods can land on it.

            Evidence: docs/vgpu.md#vgpu-node-registration, docs/checks.md#check-index-nodes N4;
            docs/device-plugins.md#vgpu-plugin-node-config, docs/device-plugins.md#vgpu-plugin-node-annotations;
            {_VGPU_DIR}utils.go`.
            """,
    ),
    CodeInfo(
        code="VGN008",
        severity=ERROR,
        family=NODES,
        title="MIG device whose type matches no knownMigGeometries model (treated as hami-core)",
        hint=(
            "Add the GPU's model substring (from the register annotation `type`, e.g. `A100-SXM4-80GB`) "
            "with its geometries to `nvidia.knownMigGeometries`, then restart the scheduler."
        ),
        doc=f"""
            For a device registered with mode `mig`, Volcano looks for a `knownMigGeometries` entry
            whose `models` string is a substring of the device type. If none matches (or the device
            ConfigMap did not load, so there are no geometries), it logs `extract mig geometry error
            and fall back to hamicore mode` and schedules the GPU as hami-core while the plugin runs
            MIG: `vgpu-mode: mig` pods never fit there and other pods get no MIG slice
            (volcano-vgpu-device-plugin issue #102).

            Evidence: docs/vgpu.md#vgpu-node-registration, docs/vgpu.md#vgpu-mig, docs/volcano.md#known-problems #3,
            docs/checks.md#check-index-nodes N5; docs/device-plugins.md#mig-geometry,
            docs/device-plugins.md#known-problems #3; {_VGPU_DIR}utils.go`
            (extractGeometryFromType).
            """,
    ),
    CodeInfo(
        code="VGN009",
        severity=WARNING,
        family=NODES,
        title="devices on one node report different modes (the last device's mode wins)",
        hint=(
            "Give the node one mode: set `operatingmode` to `hami-core` or `mig` for this node in "
            "`volcano-vgpu-node-config` and restart the plugin pod."
        ),
        doc=f"""
            Volcano takes a node's mode, and its single sharing handler, from the **last** device in
            the register annotation; mixed modes are not supported. A mode other than exactly `mig`
            (e.g. `mps` or empty) counts as `hami-core`. Pods with `volcano.sh/vgpu-mode` are matched
            against the node mode, so the other devices are handled wrongly.

            Evidence: docs/vgpu.md#vgpu-node-registration, docs/checks.md#check-index-nodes N6;
            docs/device-plugins.md#vgpu-plugin-node-config; {_VGPU_DIR}utils.go` (decodeNodeDevices,
            getSharingMode).
            """,
    ),
    CodeInfo(
        code="VGN010",
        severity=WARNING,
        family=NODES,
        title="MIG node whose largest instance is smaller than the registered GPU memory",
        hint=(
            "Always set `volcano.sh/vgpu-memory` on pods for this node (at most the largest instance), "
            "or raise the whole-GPU instance's `memory` in the geometry to the registered memory."
        ),
        doc=f"""
            A vGPU pod without `vgpu-memory` asks for 100 % of the registered GPU memory. On a MIG
            node it fits only if some instance is at least that large. On an A100-80GB, NVML reports
            about 81920 MiB while the largest shipped instance `7g.80gb` is 80896 MiB, so such pods
            never fit there.

            Evidence: docs/vgpu.md#vgpu-mig, docs/checks.md#check-index-nodes N7; docs/device-plugins.md#mig-geometry;
            {_VGPU_DIR}mig.go`.
            """,
    ),
    CodeInfo(
        code="VGN011",
        severity=WARNING,
        family=NODES,
        title="node lock younger than 5 minutes with no pod in bind-phase allocating",
        hint=(
            "If no bind is in progress, remove the lock, e.g. `kubectl annotate node <node> hamivgpu-` "
            "(or `gpu-`, `hami.io/mutex.lock-`); Volcano breaks locks older than 5 minutes itself."
        ),
        doc="""
            With `deviceshare.NodeLockEnable`, allocation takes a per-node lock stored as a node
            annotation holding an RFC3339 time: `hamivgpu` (vGPU), `gpu` (gpushare memory mode) or
            `hami.io/mutex.lock` (Ascend HAMi). While a lock is younger than 5 minutes every device
            allocation on the node fails (`node X has been locked within 5 minutes`). The vGPU plugin
            releases its lock after Allocate; a crash in between leaves it behind.

            From Volcano 1.16 the Ascend HAMi lock is left for the ascend-device-plugin to release.
            Plugin v1.3.0 never deletes a lock that does not name the pod, and Volcano's holds only a
            time, so each node takes about one allocation per 5 minutes (VGK005); v1.1.0–v1.2.0 keep
            it after a failed allocation. The finding names that cause when such a plugin runs;
            v1.4.0 releases the lock.

            Evidence: docs/vgpu.md#node-locks, docs/checks.md#check-index-nodes N8;
            docs/device-plugins.md#vgpu-plugin-node-annotations, docs/checks.md#check-index-device-plugins rule 21;
            volcano-sh/volcano
            `pkg/scheduler/plugins/util/nodelock/nodelock.go`, commit 3347c2025
            (`pkg/scheduler/api/devices/ascend/hami/device_info.go`); Project-HAMi/ascend-device-plugin
            v1.3.0 and v1.4.0 `go.mod` (HAMi `pkg/util/nodelock/nodelock.go` at 61c6cbe7d480 and
            5f0adaa7a5ba).
            """,
    ),
    CodeInfo(
        code="VGN012",
        severity=ERROR,
        family=NODES,
        title="HAMi's hami.io/node-nvidia-register is present (wrong or second device plugin)",
        hint=(
            "On a Volcano vGPU cluster remove HAMi's NVIDIA device plugin from this node and run "
            "`volcano-vgpu-device-plugin`; never run both on the same GPUs."
        ),
        doc="""
            `hami.io/node-nvidia-register` is written by HAMi's own NVIDIA device plugin and read only
            by the HAMi scheduler; Volcano needs `volcano.sh/node-vgpu-register`. Alone it means the
            wrong plugin is installed and Volcano sees no vGPU on the node (warning; volcano issue
            #4511). Next to Volcano's annotation it means two plugins hand out the same GPUs
            independently, so their pods over-book the cards (error).

            Evidence: docs/volcano.md#known-problems #2, docs/checks.md#check-index-nodes N12;
            docs/device-plugins.md#component-map, docs/hami.md#hami-node-annotations,
            docs/device-plugins.md#known-problems #4, docs/checks.md#check-index-device-plugins rule 19.
            """,
        severities=(ERROR, WARNING),
    ),
    CodeInfo(
        code="VGN013",
        severity=WARNING,
        family=NODES,
        title="node allocatable disagrees with the register annotation",
        hint=(
            "Restart the device plugin pod on the node; if it persists, check `deviceSplitCount`, "
            "`deviceCoreScaling` and `gpuMemoryFactor` in the config the plugin reads."
        ),
        doc=f"""
            The plugin advertises `volcano.sh/vgpu-number` = Σ split count, `volcano.sh/vgpu-memory` =
            Σ registered memory and `volcano.sh/vgpu-cores` = GPUs × 100 × `deviceCoreScaling`.
            Volcano's device filter reads the annotation while the generic resource check reads
            allocatable, so a disagreement lets pods pass one and fail the other. Typical causes: a
            stale kubelet state (VGN005) or plugin flags overriding the ConfigMap (plugin issue #87).

            Evidence: docs/vgpu.md#vgpu-node-registration, docs/vgpu.md#vgpu-pod-request;
            docs/device-plugins.md#vgpu-plugin-resources, docs/device-plugins.md#known-problems #2,
            docs/checks.md#check-index-device-plugins rule 18; {_VGPU_DP} `pkg/plugin/server.go`
            (apiDevices).
            """,
    ),
    CodeInfo(
        code="VGN014",
        severity=ERROR,
        family=NODES,
        title="gpushare node lacks gpu-memory/gpu-number capacity, or gpu-unhealthy-ids is malformed",
        hint=(
            "Run the gpushare device plugin on the node so `status.capacity` has `volcano.sh/gpu-memory` "
            "and `volcano.sh/gpu-number` > 0; write `volcano.sh/gpu-unhealthy-ids` as indexes, e.g. `0,3`."
        ),
        doc="""
            gpushare uses the node's `status.capacity` (not allocatable): `volcano.sh/gpu-memory`
            (total) and `volcano.sh/gpu-number` must both exist and the number must be above 0, or
            the node has no gpushare model. `volcano.sh/gpu-unhealthy-ids` lists card indexes to
            drop, comma-separated; an entry that is not a valid index is logged and skipped, so the
            card it meant to drop stays schedulable.

            Evidence: docs/vgpu.md#gpushare, docs/checks.md#check-index-nodes N9; volcano-sh/volcano
            `pkg/scheduler/api/devices/nvidia/gpushare/device_info.go`, `share.go`.
            """,
    ),
    CodeInfo(
        code="VGN015",
        severity=ERROR,
        family=NODES,
        title="Ascend HAMi node: register annotation missing or invalid, or bad hami-vnpu-core value",
        hint=(
            "Check the `hami-ascend-device-plugin` pod on the node (it writes "
            "`hami.io/node-register-<commonWord>` every 30 s); "
            '`hami-vnpu-core` must be `"true"` or `"false"`.'
        ),
        doc="""
            For each chip type whose count resource is allocatable above 0, Volcano needs
            `hami.io/node-register-<commonWord>`: a non-empty JSON list of devices (`id`, `count`,
            `devmem`, `devcore`, `type`, ...). Missing or invalid, the type is absent on the node
            with only a warning log (error). `hami-vnpu-core` counts as true only for the exact
            string `"true"`; any other value quietly disables hami-core slicing there (warning).

            Evidence: docs/ascend.md#ascend-hami-keys, docs/ascend.md#ascend-hami-node, docs/checks.md#check-index-nodes
            N10; docs/device-plugins.md#ascend-plugin-annotations; volcano-sh/volcano
            `pkg/scheduler/api/devices/ascend/hami/device_info.go` (NewAscendDevices, getNodeDevices).
            """,
        severities=(ERROR, WARNING),
    ),
    CodeInfo(
        code="VGN016",
        severity=ERROR,
        family=NODES,
        title="MindCluster 310P node lacks required labels, or its npu-core capacity is uneven",
        hint=(
            "Label the node `accelerator` (e.g. `huawei-Ascend310P`), `servertype` (e.g. `Ascend310P-8`) "
            "and `node.kubernetes.io/npu.chip.name` (e.g. `310P3`); keep `huawei.com/npu-core` whole chips."
        ),
        doc="""
            MindCluster vNPU reads the chip kind from `accelerator`, the cores per chip from
            `servertype` (second field; 8 or 10 on 310P) and the chip name from
            `node.kubernetes.io/npu.chip.name`. Capacity `huawei.com/npu-core` (total AI cores) must
            be above 0 and a multiple of the cores per chip. A node that fails these is not usable
            for vNPU.

            Evidence: docs/ascend.md#mindcluster-node, docs/checks.md#check-index-nodes N11; volcano-sh/volcano
            `pkg/scheduler/plugins/deviceshare/devices/ascend/310p/vnpu/init_policy.go`
            (setChipPropertiesFromNPUNode).
            """,
    ),
    CodeInfo(
        code="VGN017",
        severity=ERROR,
        family=NODES,
        title="NVIDIA driver version is 440 or older (or could not be determined)",
        hint=(
            "Upgrade the node's NVIDIA driver to a release newer than 440; if the version is unknown, run "
            "`nvidia-smi` on the node or `vgpuctl doctor --node` there."
        ),
        doc=f"""
            The vGPU device plugin requires an NVIDIA driver newer than 440. vgpuctl reads the version
            from node labels such as `nvidia.com/cuda.driver.major` or
            `nvidia.com/cuda.driver-version.full` (set by GPU feature discovery), or from
            `nvidia-smi` in `doctor --node`. 440 or older is an error; when no source tells the
            version the finding is `info` and says how to find out.

            Evidence: docs/device-plugins.md#vgpu-plugin-prerequisites; {_VGPU_DP} `README.md`.
            """,
        severities=(ERROR, INFO),
    ),
    CodeInfo(
        code="VGN018",
        severity=ERROR,
        family=NODES,
        title="Ascend HAMi node without label ascend=on (the device plugin never lands)",
        hint="Label the node: `kubectl label node <node> ascend=on`.",
        doc="""
            The `hami-ascend-device-plugin` DaemonSet has the nodeSelector `ascend: "on"`. On a node
            without that label the plugin never runs, so the node registers no NPUs
            (`hami.io/node-register-<commonWord>`) and advertises no Ascend resources.

            Evidence: docs/device-plugins.md#ascend-plugin-objects, docs/device-plugins.md#ascend-plugin-annotations
            (prerequisites), docs/checks.md#check-index-device-plugins rule 23; Project-HAMi/ascend-device-plugin
            `ascend-device-plugin.yaml`.
            """,
    ),
    CodeInfo(
        code="VGN019",
        severity=ERROR,
        family=NODES,
        title="node-local check failed: default runtime, MIG mode, or nvidia-smi / npu-smi",
        hint=(
            "Make `nvidia` the default runtime of containerd, Docker or CRI-O (or use CDI), enable MIG "
            "(`nvidia-smi -i <gpu> -mig 1`) on nodes registered as `mig`, and install the driver tools."
        ),
        doc=f"""
            Found by `vgpuctl doctor --node` on the node itself. The vGPU plugin DaemonSet sets no
            `runtimeClassName`, so NVML is reachable only when `nvidia` is the default container
            runtime; otherwise the plugin exits (`did you set the docker default runtime to
            nvidia?`) and restarts in a loop. MIG mode also needs `nvidia-mig-parted` to work at
            plugin start (fatal otherwise) and MIG enabled on the GPUs. The Ascend plugin needs
            `npu-smi` (e.g. `/usr/local/sbin/npu-smi`).

            The subject names the part of the node a finding is about: `node/<name>:nvidia-smi` or
            `:npu-smi` (the tool is missing, fails or prints what is not understood), `:driver` (no GPU or
            NPU driver at all; VGN017 there too), `:runtime` (the default runtime), `:mig` (MIG mode and
            profiles against `knownMigGeometries`), `:npu` (Ascend chip health). A check whose facts could
            not be observed (no GPU listed, no engine config found or readable) is skipped with the reason.

            Evidence: docs/device-plugins.md#vgpu-plugin-objects, docs/device-plugins.md#mig-geometry,
            docs/device-plugins.md#vgpu-plugin-prerequisites, docs/device-plugins.md#ascend-plugin-annotations,
            docs/device-plugins.md#known-problems #8, docs/checks.md#check-index-device-plugins rule 22; {_VGPU_DP}
            `cmd/vgpu/main.go`.
            """,
        severities=(ERROR, WARNING, INFO),
    ),
    CodeInfo(
        code="VGN020",
        severity=ERROR,
        family=NODES,
        title="NVIDIA's device plugin offers GPUs the vGPU plugin also registers",
        hint=(
            "Keep NVIDIA's device plugin off vGPU nodes: label the node `nvidia.com/gpu.deploy.device-plugin=false` "
            "(gpu-operator keeps an administrator's value) or give the plugin's DaemonSet a node selector that "
            "excludes them; to split one node, hide the plugin's GPUs from the vGPU plugin with `filterdevices` in "
            "`volcano-vgpu-node-config` and keep `nvidia.com/gpu.count` labels so the split can be checked."
        ),
        doc=f"""
            NVIDIA's device plugin (plain, time-slicing or MPS; gpu-operator's too) advertises the
            node's GPUs as `nvidia.com/gpu` (or `nvidia.com/gpu.shared`) while the vGPU plugin registers
            them in `volcano.sh/node-vgpu-register`. Volcano never counts a pod holding `nvidia.com/gpu`
            against a vGPU device, so it places vGPU pods on GPUs the device plugin has handed out
            (volcano issues #4712, volcano-vgpu-device-plugin #76: "volcano doesn't check the usage of
            GPU on node"). The plugin publishes no UUIDs, so the overlap is counted: U GPUs in the
            register plus ceil(allocatable ÷ `nvidia.com/gpu.replicas`) GPUs of the plugin above GPU
            feature discovery's `nvidia.com/gpu.count` proves GPUs offered twice: **error**. Without
            the count, or when both fit side by side (a `filterdevices` split is possible but cannot be
            proven): **warning**. The message names the sharing strategy and gpu-operator
            (`nvidia.com/gpu.deploy.device-plugin=true`). Not reported where `nvidia.com/gpu` is HAMi's
            (VGN012) or a vGPU resource name of the device config.

            Evidence: docs/stacks.md#nvidia-device-plugin, docs/stacks.md#what-is-safe;
            {_VGPU_DIR}device_info.go` (NewGPUDevices); NVIDIA/k8s-device-plugin
            `internal/lm/resource.go` (v0.20.0); NVIDIA/gpu-operator `controllers/state_manager.go`
            (v26.7.0).
            """,
        severities=(ERROR, WARNING),
    ),
    CodeInfo(
        code="VGN021",
        severity=ERROR,
        family=NODES,
        title="a DRA ResourceSlice offers GPUs a device plugin also offers",
        hint=(
            "Run one GPU stack per node: keep the DRA driver's kubelet plugin off device-plugin nodes (node "
            "selector or affinity on its DaemonSet), or the device plugins off DRA nodes "
            "(`nvidia.com/gpu.deploy.device-plugin=false`, `filterdevices`); with gpu-operator, GPUCluster xor "
            "ClusterPolicy."
        ),
        doc="""
            A DRA driver publishes the node's GPUs in ResourceSlices (`spec.nodeName`): NVIDIA's
            `gpu.nvidia.com` a device per GPU with attribute `uuid`, and per MIG device its GPU in
            `parentUUID`; HAMi's `hami-core-gpu.project-hami.io` a device per GPU with `uuid`. When a
            device plugin registers the same GPU — Volcano's `volcano.sh/node-vgpu-register` or HAMi's
            `hami.io/node-nvidia-register` — the Kubernetes scheduler's DRA allocator and the device
            plugin's scheduler each hand it out and neither sees the other's pods; the message names
            the UUIDs. Next to NVIDIA's device plugin (allocatable `nvidia.com/gpu`, no UUIDs) the GPUs
            cannot be named, but NVIDIA's DRA chart itself refuses to install beside the device plugin
            on one node ("cannot be deployed alongside the standard GPU device plugin on the same node")
            until KEP-5004 is GA. Both are errors.

            Needs the ResourceSlices: skipped with the reason when the snapshot did not collect them
            (`vgpuctl snapshot save` does; with kubectl, add `resourceslices`) and in the cluster-aware
            webhook, which watches no ResourceSlices (no admission rule reads them).

            Evidence: docs/stacks.md#dra, docs/stacks.md#what-is-not; kubernetes-sigs/dra-driver-nvidia-gpu
            `cmd/gpu-kubelet-plugin/deviceinfo.go`, `cmd/gpu-kubelet-plugin/mig.go`,
            `deployments/helm/dra-driver-nvidia-gpu/templates/validation.yaml` (v0.4.1);
            Project-HAMi/k8s-dra-driver `cmd/hami-kubelet-plugin/hami_core.go` (v0.1.0).
            """,
    ),
    CodeInfo(
        code="VGN022",
        severity=ERROR,
        family=NODES,
        title="gpushare capacity and the vGPU registration on one node",
        hint=(
            "Pick one family per node: remove the gpushare plugin (volcano-sh/devices) from vGPU nodes and "
            "its `volcano.sh/gpu-memory`/`gpu-number` capacity with it, or the vGPU plugin and its "
            "`volcano.sh/node-vgpu-register` annotation from gpushare nodes; move pods to `volcano.sh/vgpu-*`."
        ),
        doc=f"""
            The gpushare / gpu-number device plugin (volcano-sh/devices) advertises
            `volcano.sh/gpu-memory` and `volcano.sh/gpu-number` (Volcano reads them from capacity, by GPU
            index), the vGPU plugin registers the same GPUs by UUID. Both projects ship their DaemonSet as
            `kube-system/volcano-device-plugin`, so one replaces the other — and the registration the
            replaced one left behind stays on the node — or both run under other names. Volcano cannot
            turn gpushare or gpu-number on together with vGPU (the scheduler exits: VGC004), so the
            family Volcano does not run is handed out here by its plugin without Volcano counting it, or
            Volcano counts a registration nobody serves any more.

            Evidence: docs/stacks.md#gpushare-and-vgpu, docs/volcano.md#fatal-combinations;
            volcano-sh/volcano `pkg/scheduler/api/devices/nvidia/gpushare/device_info.go`,
            `pkg/scheduler/plugins/deviceshare/deviceshare.go`; {_VGPU_DP} `volcano-vgpu-device-plugin.yml`.
            """,
    ),
    # --- Cluster and components (VGK) --------------------------------------------------------------
    CodeInfo(
        code="VGK001",
        severity=ERROR,
        family=CLUSTER,
        title="Kubernetes API unreachable, unauthorized or forbidden",
        hint=(
            "Check the kubeconfig context and credentials (`kubectl auth can-i list nodes`), or run the "
            "doctor offline: `vgpuctl doctor --snapshot FILE`."
        ),
        doc="""
            The doctor reads nodes, pods, ConfigMaps, DaemonSets and Deployments. When a read fails
            (connection refused, 401, 403), each check that needs it is reported as skipped with this
            code and the reason; the run never crashes. If the cluster cannot be reached at all the
            command exits with status 3. A snapshot from `kubectl get
            nodes,pods,configmaps,daemonsets,deployments -A -o yaml` lets the doctor run without access.

            Evidence: docs/contracts.md#interfaces (exit codes, snapshots); docs/device-plugins.md#vgpu-plugin-objects
            (the objects the plugins themselves read).
            """,
    ),
    CodeInfo(
        code="VGK002",
        severity=ERROR,
        family=CLUSTER,
        title="Kubernetes is older than 1.16",
        hint="Upgrade the cluster to Kubernetes 1.16 or later.",
        doc="""
            The vGPU device plugin states Kubernetes 1.16 as its minimum. vgpuctl takes the version
            from the API server (or a snapshot's `vgpuctl.io/server-version` annotation, else the
            nodes' kubelet versions).

            Evidence: docs/device-plugins.md#vgpu-plugin-prerequisites; Project-HAMi/volcano-vgpu-device-plugin
            `README.md`.
            """,
    ),
    CodeInfo(
        code="VGK003",
        severity=ERROR,
        family=CLUSTER,
        title="Volcano is not installed, or is older than the feature in use needs",
        hint=(
            "Install or upgrade Volcano: vGPU needs >= 1.9, vgpu-mode/MIG/device config >= 1.12, vNPU "
            ">= 1.14, `huawei.com/vnpu-mode: hami-core` >= 1.16."
        ),
        doc="""
            vgpuctl detects the Volcano version from the `vc-scheduler` image tag (or
            `--volcano-version`). The docs say vGPU needs Volcano >= 1.9, and `deviceshare.VGPUEnable`
            does exist from 1.9, but `volcano.sh/vgpu-mode`, dynamic MIG and the device ConfigMap
            need 1.12, Ascend HAMi and MindCluster vNPU need 1.14.0, and `huawei.com/vnpu-mode:
            hami-core` needs 1.16. On older versions these features silently do nothing.

            Evidence: docs/volcano.md#compatibility-matrix, docs/volcano.md#docs-vs-code item 1;
            docs/device-plugins.md#ascend-plugin-annotations (prerequisites).
            """,
    ),
    CodeInfo(
        code="VGK004",
        severity=ERROR,
        family=CLUSTER,
        title="device plugin DaemonSet missing, or not ready on the nodes that need it",
        hint=(
            "Install the family's device plugin (`volcano-device-plugin` for vGPU, "
            "`hami-ascend-device-plugin` for Ascend HAMi) and fix its pods on the listed nodes."
        ),
        doc="""
            Without a running device plugin a node writes no register annotation, advertises no
            device resources and cannot hand devices to containers. The vGPU plugin DaemonSet
            (`kube-system/volcano-device-plugin`) has no nodeSelector, so it also runs, and crashes,
            on CPU nodes: that is noise, give it a nodeSelector. The Ascend plugin DaemonSet
            (`kube-system/hami-ascend-device-plugin`) only lands on nodes labelled `ascend=on`.

            Evidence: docs/device-plugins.md#vgpu-plugin-objects, docs/device-plugins.md#vgpu-plugin-prerequisites,
            docs/device-plugins.md#ascend-plugin-objects, docs/checks.md#check-index-device-plugins rule 22.
            """,
    ),
    CodeInfo(
        code="VGK005",
        severity=ERROR,
        family=CLUSTER,
        title="device plugin version incompatible with the Volcano version",
        hint=(
            "Pair the vGPU plugin v1.10.0–v1.12.0 with Volcano 1.12–1.15.0, and plugin builds after "
            "v1.12.0 with Volcano 1.13.4+ / 1.14.3+ / 1.15.1+; plugin v1.9.x works only with Volcano <= 1.11; "
            "use ascend-device-plugin v1.4.0 or newer with Volcano 1.16."
        ),
        doc="""
            | vGPU plugin | works with Volcano | why |
            |---|---|---|
            | v1.9.x | <= 1.11 | writes 5-field entries; 1.12+ drops the node (VGN002) |
            | v1.10.0–v1.12.0 | 1.12 – 1.15.0, also 1.13.4+ / 1.14.3+ / 1.15.1+ | writes the handshake |
            | after v1.12.0 | 1.13.4+, 1.14.3+, 1.15.1+ | no handshake; older Volcano ignores every node |

            Volcano with the handshake is 1.12.x, 1.13.0–1.13.3 (1.13.4, not tagged yet, drops it:
            docs/releases.md), 1.14.0–1.14.2 and 1.15.0. Versions come from the image tags; the `vnpus`
            form each Ascend component accepts is VGM003. Volcano >= 1.16 takes the Ascend HAMi node
            lock `hami.io/mutex.lock` holding only a time and leaves its release to the plugin:
            ascend-device-plugin v1.3.0 deletes only a lock naming the pod, so with
            `deviceshare.NodeLockEnable` each node takes one allocation per 5 minutes; use v1.4.0+.
            The gpushare/gpu-number plugin (volcano-sh/devices) up to v1.0.x has no gpu-number
            strategy: every pod sees every GPU; use `latest`. No rule is known for MindCluster's plugin.

            Evidence: docs/device-plugins.md#vgpu-plugin-compatibility, docs/volcano.md#compatibility-matrix;
            volcano-sh/volcano release-1.13 commit 6a514a208 and commit
            3347c2025; Project-HAMi/ascend-device-plugin v1.3.0 / v1.4.0 `go.mod` and HAMi
            `pkg/util/nodelock/nodelock.go` at the commits they pin.
            """,
    ),
    CodeInfo(
        code="VGK006",
        severity=ERROR,
        family=CLUSTER,
        title="vgpuctl webhook: no ready endpoints, caBundle mismatch, or certificate expiring",
        hint=(
            "Fix the webhook Deployment so its Service has ready endpoints, re-issue the serving "
            "certificate and update `caBundle` together, and rotate the certificate before 30 days remain."
        ),
        doc="""
            vgpuctl checks its own webhook configuration. With no ready endpoints, or a `caBundle`
            that does not match the serving certificate, the API server cannot call the webhook:
            with `failurePolicy: Fail` every matching pod creation fails (error); with `Ignore` pods
            are admitted unchecked, which hides the outage (HAMi issue #234; warning). A serving
            certificate that expires within 30 days is a warning.

            Evidence: docs/hami.md#hami-webhook-configuration, docs/device-plugins.md#known-problems #10,
            docs/checks.md#check-index-device-plugins rule 35.
            """,
        severities=(ERROR, WARNING),
    ),
    CodeInfo(
        code="VGK007",
        severity=ERROR,
        family=CLUSTER,
        title="MindCluster components missing (NodeD, ClusterD, 310P device plugin)",
        hint=(
            "Install MindCluster NodeD and ClusterD and the Ascend device plugin started with "
            "`-presetVirtualDevice=false` before enabling `deviceshare.AscendMindClusterVNPUEnable`."
        ),
        doc="""
            Volcano's MindCluster vNPU takes device information from ClusterD ConfigMaps
            (`cluster-info-device-*` in `mindx-dl`, used by default) or from
            `kube-system/mindx-dl-deviceinfo-<node>`, and node status from NodeD (a `PreSeparate`
            node is refused). The 310P device plugin must run with `-presetVirtualDevice=false` for
            dynamic vNPU. Without these components no 310P node offers vNPUs.

            Evidence: docs/ascend.md#mindcluster-node, docs/volcano.md#scheduler-config; volcano-sh/volcano
            `pkg/scheduler/plugins/deviceshare/devices/ascend/310p/vnpu/init_policy.go`.
            """,
    ),
    CodeInfo(
        code="VGK008",
        severity=ERROR,
        family=CLUSTER,
        title="the ascend RuntimeClass is missing while an ascend-device-plugin that requires it runs",
        hint=(
            "Create it: `vgpuctl install --mode vnpu-hami` does, or apply the plugin's "
            "`ascend-runtimeclass.yaml` (RuntimeClass `ascend`, handler `ascend`)."
        ),
        doc="""
            ascend-device-plugin since v1.3.0 ships `ascend-runtimeclass.yaml` (a RuntimeClass named
            `ascend`, handler `ascend`) and its README deploys it; from v1.4.0 its Volcano guide
            requires `runtimeClassName: ascend` on every Ascend pod. The plugin only sets
            `ASCEND_VISIBLE_DEVICES`; the Ascend runtime behind the handler mounts the NPU. When the
            RuntimeClass does not exist, the API server rejects every pod that names it, and pods that
            do not name it run without the NPU mounted.

            The doctor needs the RuntimeClasses: `vgpuctl snapshot save` and live reads list them; a
            snapshot made with `kubectl get` must name `runtimeclasses`, otherwise the check is
            skipped.

            Evidence: Project-HAMi/ascend-device-plugin `ascend-runtimeclass.yaml` (commit 880b827,
            first in v1.3.0), README (v1.3.0), `docs/volcano.md` and `internal/server/allocate.go`
            (v1.4.0).
            """,
    ),
    # --- Existing pods (VGX) -----------------------------------------------------------------------
    CodeInfo(
        code="VGX001",
        severity=WARNING,
        family=CLUSTER,
        title="pod in bind-phase allocating for more than 5 minutes, or bind-phase failed",
        hint=(
            "Read the device plugin log on the pod's node and `kubectl describe` the pod; delete the pod "
            "so its controller recreates it and Volcano allocates afresh."
        ),
        doc="""
            Volcano sets `volcano.sh/bind-phase: allocating` when it allocates; the device plugin sets
            `success` or `failed` when kubelet asks it for the devices. A pod still `allocating` after
            minutes was never served (the plugin is down, or could not match the pod); `failed` means
            the plugin refused it (e.g. `device number not matched`). Stale allocation annotations
            can also mislead later allocations, since the plugin picks the pending pod by node,
            device count and oldest `volcano.sh/vgpu-time`.

            Evidence: docs/vgpu.md#vgpu-allocation, docs/checks.md#check-index-vgpu-pods V15;
            docs/device-plugins.md#vgpu-plugin-pod-annotations, docs/device-plugins.md#known-problems #13,
            docs/checks.md#check-index-device-plugins rule 24.
            """,
    ),
    CodeInfo(
        code="VGX002",
        severity=WARNING,
        family=CLUSTER,
        title="pod's allocation annotations name another node or a GPU that is not on its node",
        hint=(
            "Delete and recreate the pod so Volcano writes fresh allocation annotations; never copy "
            "`volcano.sh/vgpu-*` annotations between pods or set them by hand."
        ),
        doc="""
            Volcano rebuilds each GPU's usage from the `volcano.sh/vgpu-ids-new` annotations of
            existing pods, and the device plugin finds pods by `volcano.sh/vgpu-node`. A pod whose
            `vgpu-node` differs from `spec.nodeName`, or whose `vgpu-ids-new` names a UUID its node
            does not register, corrupts that bookkeeping: phantom usage on one GPU, over-booking on
            another, or the wrong container cache directory (volcano issue #5532).

            A malformed `vgpu-ids-new` device entry (fewer than 4 fields, a memory or cores value
            that is not a number, a negative one) is read according to the Volcano version: before
            1.16 a short entry panics the scheduler, a bad number reads 0 and a negative one wraps
            to a huge usage; from 1.16 the entry is logged and skipped, so the pod's usage of that
            GPU is not counted and the GPU can be over-subscribed.

            Evidence: docs/vgpu.md#vgpu-allocation; docs/device-plugins.md#vgpu-plugin-pod-annotations,
            docs/device-plugins.md#known-problems #13, docs/checks.md#check-index-device-plugins rule 24;
            Project-HAMi/volcano-vgpu-device-plugin
            `pkg/util/util.go` (GetPendingPod); volcano-sh/volcano commit 8b6d2c482 (first in
            v1.16.0-alpha.0), `pkg/scheduler/api/devices/nvidia/vgpu/utils.go` (decodeContainerDevices).
            """,
    ),
    CodeInfo(
        code="VGX003",
        severity=ERROR,
        family=CLUSTER,
        title="an existing pod breaks a pod rule (reported under the pod rule's code)",
        hint=(
            "Fix the owning workload's pod template as the pod rule's hint says and recreate the pod; "
            "`vgpuctl explain <CODE>` shows the rule for the code in the finding."
        ),
        doc="""
            This code is never emitted itself. The doctor reviews every existing pod that is not
            Succeeded or Failed with the pod rules (VGP, VGS, VGH, VGA, VGW). Each violation is
            reported under the pod rule's own code, e.g. `VGA002`, at that rule's severity, with the
            pod as subject; when many pods share one violation they are grouped into one finding.
            This catches pods admitted before the webhook was installed or while it was down.

            Evidence: docs/contracts.md#finding-families; docs/checks.md#check-index-vgpu-pods V15.
            """,
        severities=(ERROR, WARNING),
    ),
    CodeInfo(
        code="VGX004",
        severity=WARNING,
        family=CLUSTER,
        title="no node has room for the pod right now (cluster-aware webhook)",
        hint=(
            "The pod is admitted and stays Pending until devices free up; run `vgpuctl why POD` to see, per "
            "node, what is missing, or lower the request."
        ),
        doc="""
            Only `vgpuctl webhook serve --cluster-aware` reports this, as an admission warning on
            `/validate` (never a denial). The webhook keeps the nodes and their bound pods current
            through a watch and replays Volcano's device filter (the `vgpuctl why` simulator) until a
            node fits; when none does, the warning names the closest node and its first failing
            check. A pod that could fit no node even in an empty cluster is denied instead, under the
            pod rule's own code (VGP003, VGP005, VGP009, VGS003, VGA008).

            The check ignores node locks, cordons, taints and node selectors, and takes every device
            family as enabled, so it can only miss a warning, never invent one. While the watch has
            not synced, or the check runs out of its per-request budget, nothing is said.

            Evidence: docs/vgpu.md#vgpu-filter (filter order), docs/vgpu.md#vgpu-device-order, docs/vgpu.md#gpushare,
            docs/ascend.md#ascend-hami, docs/ascend.md#mindcluster-pod.
            """,
    ),
)
