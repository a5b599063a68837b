"""Catalogue entries for configuration rules: the scheduler ConfigMap and the device ConfigMap.

These codes come from `doctor` and `geometry validate` (docs/contracts.md#finding-families). Volcano parses both objects
leniently and falls back silently, so most of these pages explain what the scheduler quietly does instead.
"""

from __future__ import annotations

from vgpuctl.core.catalogue import CodeInfo
from vgpuctl.core.findings import Severity

ERROR = Severity.ERROR
WARNING = Severity.WARNING
INFO = Severity.INFO

SCHEDULER = "scheduler-config"
DEVICE = "device-config"

_DS = "volcano-sh/volcano `pkg/scheduler/plugins/deviceshare/deviceshare.go`"
_CFG = "volcano-sh/volcano `pkg/scheduler/api/devices/config/"

ENTRIES: tuple[CodeInfo, ...] = (
    # --- Scheduler configuration (VGC) -------------------------------------------------------------
    CodeInfo(
        code="VGC001",
        severity=ERROR,
        family=SCHEDULER,
        title="scheduler ConfigMap missing or volcano-scheduler.conf does not parse",
        hint=(
            "Create ConfigMap `volcano-scheduler-configmap` in `volcano-system` with key "
            "`volcano-scheduler.conf` holding valid YAML (`actions`, `tiers[].plugins[]`), as the "
            "Volcano Helm chart ships it."
        ),
        doc="""
            The Volcano scheduler reads its actions, plugin tiers and plugin arguments from the key
            `volcano-scheduler.conf` of ConfigMap `volcano-scheduler-configmap` in `volcano-system`
            (YAML parsed with yaml.v2). Without a readable configuration the device-sharing setup
            (`deviceshare`, `predicates`, their arguments) cannot be confirmed, and every other
            scheduler check (VGC002–VGC013) is skipped.

            Evidence: docs/volcano.md#scheduler-config, docs/volcano.md#argument-parsing, docs/volcano.md#architecture
            item 2; volcano-sh/volcano
            `installer/helm/chart/volcano/config/volcano-scheduler.conf`, `pkg/scheduler/scheduler.go`.
            """,
    ),
    CodeInfo(
        code="VGC002",
        severity=ERROR,
        family=SCHEDULER,
        title="device nodes exist (or a family is wanted) but deviceshare is in no tier",
        hint=(
            "Add `- name: deviceshare` with `arguments: {deviceshare.VGPUEnable: true}` (or the "
            "family's enable key) to a tier of `volcano-scheduler.conf`, next to `predicates`."
        ),
        doc=f"""
            `deviceshare` is not enabled in the configuration Volcano ships. Without it no device
            family is switched on: no node gets a device model, GPU and NPU resources are only
            compared with node allocatable, and pods bind without allocation annotations, which the
            device plugins then cannot serve.

            ```yaml
            tiers:
            - plugins:
              - name: predicates
              - name: deviceshare
                arguments: {{deviceshare.VGPUEnable: true, deviceshare.ScheduleWeight: 10}}
            ```

            Evidence: docs/volcano.md#architecture, docs/volcano.md#deviceshare-arguments,
            docs/volcano.md#scheduler-config; {_DS}.
            """,
    ),
    CodeInfo(
        code="VGC003",
        severity=ERROR,
        family=SCHEDULER,
        title="deviceshare is enabled but the predicates plugin is absent",
        hint=(
            "Add `- name: predicates` to a tier of `volcano-scheduler.conf` (the shipped config has it "
            "in tier 2); `deviceshare` only filters nodes, `predicates` writes the device allocation."
        ),
        doc="""
            Device allocation is done by the `predicates` plugin's event handler, which calls the
            devices' Allocate and Release and so writes and removes the allocation annotations
            (`volcano.sh/vgpu-ids-new`, `volcano.sh/devices-to-allocate`, ...). `deviceshare`
            registers no event handler. A configuration with `deviceshare` but no `predicates` filters
            nodes correctly but never writes those annotations, so the device plugin finds nothing to
            allocate (volcano-vgpu-device-plugin issue #2). True in every version checked.

            Evidence: docs/volcano.md#architecture item 5, docs/volcano.md#known-problems #8,
            docs/checks.md#check-index-scheduler-config C1; volcano-sh/volcano
            `pkg/scheduler/plugins/predicates/predicates.go`.
            """,
    ),
    CodeInfo(
        code="VGC004",
        severity=ERROR,
        family=SCHEDULER,
        title="incompatible device families enabled together (the scheduler exits)",
        hint=(
            "Enable only one of `deviceshare.GPUSharingEnable`, `deviceshare.GPUNumberEnable` and "
            "`deviceshare.VGPUEnable`; the Ascend flags may stay on next to vGPU."
        ),
        doc=f"""
            At session open `deviceshare` calls `klog.Fatal`, and the scheduler process exits (and
            restarts in a loop), when `GPUSharingEnable` and `GPUNumberEnable` are both true (`can not
            define true in both gpu sharing and gpu number`), or when either is combined with
            `VGPUEnable` (`gpu-share and vgpu can't be used together`). Nothing is scheduled while it
            crashes. vGPU, Ascend HAMi and MindCluster may all be on together.

            Evidence: docs/volcano.md#fatal-combinations, docs/checks.md#check-index-scheduler-config C2/C3; {_DS}
            (enablePredicate).
            """,
    ),
    CodeInfo(
        code="VGC005",
        severity=ERROR,
        family=SCHEDULER,
        title="a bool argument is a string Go ParseBool rejects, so it is silently false",
        hint=(
            "Write the flag as an unquoted YAML bool, e.g. `deviceshare.VGPUEnable: true`; a quoted "
            "string works only if it is one of `1 t T TRUE true True 0 f F FALSE false False`."
        ),
        doc="""
            The scheduler config is parsed with yaml.v2 (YAML 1.1): an unquoted `true`, `yes` or `on`
            is a bool and works. A string is passed to Go `strconv.ParseBool`, which accepts only
            `1 t T TRUE true True 0 f F FALSE false False`. Any other string — `"yes"`, `"on"`,
            `"enabled"`, `"true "` — is ignored with a warning in the scheduler log, and the default
            (false) stays: the family or feature is off.

            ```yaml
            deviceshare.VGPUEnable: "yes"   # bad: false
            deviceshare.VGPUEnable: true    # good
            ```

            Evidence: docs/volcano.md#argument-parsing, docs/checks.md#check-index-scheduler-config C4;
            volcano-sh/volcano `pkg/scheduler/framework/arguments.go`
            (GetBool).
            """,
    ),
    CodeInfo(
        code="VGC006",
        severity=WARNING,
        family=SCHEDULER,
        title="ScheduleWeight absent, 0, quoted or a float: device-based node scoring is off",
        hint=(
            'Set `deviceshare.ScheduleWeight: 10` as an unquoted integer (not `"10"` or `10.0`) so '
            "`SchedulePolicy` also ranks nodes."
        ),
        doc=f"""
            `ScheduleWeight` is read with `GetInt`, which accepts only an integer: `"10"` or `10.0` is
            ignored with a warning and the weight stays 0, the default the official examples leave it
            at. With 0 the device scores are multiplied away: `SchedulePolicy` (`binpack`/`spread`)
            then only orders GPUs inside a node and never ranks nodes; for Ascend HAMi the policy is
            not even used when choosing the NPU at allocation (inferred from code), and the
            MindCluster batch score is off too. A quoted or float weight is reported whenever
            `deviceshare` is in a tier, whatever the enable flags say (so it is not hidden behind an
            unreadable `VGPUEnable: "yes"`, VGC005); an absent or 0 weight only once a device family
            is on.

            Evidence: docs/volcano.md#deviceshare-arguments, docs/volcano.md#argument-parsing,
            docs/vgpu.md#vgpu-device-order, docs/ascend.md#ascend-hami-fit, docs/volcano.md#docs-vs-code item 4,
            docs/checks.md#check-index-scheduler-config C5; {_DS} (NodeOrderFn);
            volcano-sh/volcano `pkg/scheduler/framework/arguments.go` (GetInt).
            """,
    ),
    CodeInfo(
        code="VGC007",
        severity=WARNING,
        family=SCHEDULER,
        title="SchedulePolicy is not exactly binpack or spread",
        hint="Set `deviceshare.SchedulePolicy: binpack` or `spread` (lower-case, exact), or remove it.",
        doc="""
            The policy is compared case-sensitively. Any value other than `binpack` (most-used GPU
            first) or `spread` (least-shared GPU first) — e.g. `Binpack`, `pack`, `best-fit` — means
            no policy: vGPU devices are tried in descending index order and the device score is 0.

            Evidence: docs/volcano.md#deviceshare-arguments, docs/vgpu.md#vgpu-device-order,
            docs/checks.md#check-index-scheduler-config C6; volcano-sh/volcano
            `pkg/scheduler/api/devices/nvidia/vgpu/utils.go` (sortedDeviceIndicesByPolicy),
            `pkg/scheduler/api/devices/ascend/hami/` (CalScore).
            """,
    ),
    CodeInfo(
        code="VGC008",
        severity=WARNING,
        family=SCHEDULER,
        title="unknown deviceshare.* argument (Volcano ignores it silently)",
        hint=(
            "Rename the key to one Volcano reads, e.g. `deviceshare.KnownGeometriesCMName` (not "
            "`KnowGeometriesCMName`); `NvidiaHAMiEnable` does not exist, use `deviceshare.VGPUEnable`."
        ),
        doc=f"""
            Volcano reads exactly these keys: `GPUSharingEnable`, `GPUNumberEnable`, `VGPUEnable`,
            `NodeLockEnable`, `SchedulePolicy`, `ScheduleWeight`, `KnownGeometriesCMName`,
            `KnownGeometriesCMNamespace`, `AscendMindClusterVNPUEnable`, `AscendHAMiVNPUEnable` and
            `GPUExclusiveRules`, each prefixed `deviceshare.`. Any other key is ignored without a
            word, so a typo silently keeps the default. Seen in the wild:
            `deviceshare.KnowGeometriesCMName` (an early docs draft, volcano PR #4290) and
            `deviceshare.NvidiaHAMiEnable` (ascend-device-plugin issue #66).

            Evidence: docs/volcano.md#deviceshare-arguments, docs/volcano.md#argument-parsing,
            docs/volcano.md#known-problems #11, docs/checks.md#check-index-scheduler-config C7; {_DS},
            `gpuexclusive.go`.
            """,
    ),
    CodeInfo(
        code="VGC009",
        severity=WARNING,
        family=SCHEDULER,
        title="GPUExclusiveRules is not a list of non-empty maps with string values",
        hint=(
            "Write `deviceshare.GPUExclusiveRules` as a YAML list of label maps with quoted values, "
            'e.g. `- {team: "a", priority: "1"}`.'
        ),
        doc="""
            From Volcano 1.15.0, `deviceshare.GPUExclusiveRules` keeps pods that match the same rule
            (all its labels with equal values) off each other's physical GPUs, on hami-core nodes
            only. It must be a list of maps whose values are strings: an unquoted number or bool
            (`priority: 1`) is dropped, and an empty map is dropped, so the rule silently loosens or
            disappears.

            Evidence: docs/vgpu.md#vgpu-exclusive-rules, docs/checks.md#check-index-scheduler-config C8;
            volcano-sh/volcano
            `pkg/scheduler/plugins/deviceshare/gpuexclusive.go` (parseExclusiveRules).
            """,
    ),
    CodeInfo(
        code="VGC010",
        severity=ERROR,
        family=SCHEDULER,
        title="a key, annotation or config form the detected Volcano version does not have",
        hint=(
            "Upgrade Volcano to the version the feature needs (named in the message) or remove the "
            "setting; pass `--volcano-version` if the detected version is wrong."
        ),
        doc="""
            Volcano ignores keys and annotations it does not know, so a feature used on a version
            without it silently does nothing. Versions that introduced them:

            - `deviceshare.*` arguments: 1.9 (1.8 used `predicate.*Enable` on `predicates`);
            - device ConfigMap, `KnownGeometriesCM*`, `volcano.sh/vgpu-mode`, MIG: 1.12;
            - `AscendHAMiVNPUEnable`, `AscendMindClusterVNPUEnable`: 1.14.0;
            - `vnpus` wrapper form: 1.14.4 and 1.15.1;
            - `volcano.sh/vgpu-podgroup-policy`, `GPUExclusiveRules`: 1.15.0;
            - `huawei.com/vnpu-mode`, `hami-vnpu-core`, `<res>-core`, `vgpu-use-gpuuuid`: 1.16.

            Evidence: docs/volcano.md#compatibility-matrix, docs/checks.md#check-index-scheduler-config C9 (per-tag
            greps of volcano-sh/volcano).
            """,
    ),
    CodeInfo(
        code="VGC011",
        severity=WARNING,
        family=SCHEDULER,
        title="the device ConfigMap or an enable flag changed after the scheduler pod started",
        hint=(
            "Restart the scheduler, e.g. `kubectl -n volcano-system rollout restart deployment "
            "volcano-scheduler`, after editing the device ConfigMap or a `deviceshare.*Enable` flag."
        ),
        doc=f"""
            The scheduler hot-reloads its own config file and re-reads the `deviceshare` flags every
            session, but it loads the device ConfigMap and registers device types only once per
            process. A ConfigMap edit is invisible until a restart, and a family switched on while
            the scheduler runs has its flag set but its device type never registered, so its pods are
            skipped. vgpuctl compares the scheduler pod's start time with the ConfigMap's last change.

            Evidence: docs/volcano.md#architecture item 2, docs/volcano.md#device-config-loading,
            docs/checks.md#check-index-scheduler-config C10; {_CFG}config.go` (sync.Once),
            {_DS} (registerDevices).
            """,
    ),
    CodeInfo(
        code="VGC012",
        severity=ERROR,
        family=SCHEDULER,
        title='MindCluster vNPU is enabled but init-params presetVirtualDevice is not "false"',
        hint=(
            'Add `configurations: [{name: init-params, arguments: {presetVirtualDevice: "false"}}]` to '
            "`volcano-scheduler.conf` and start the 310P device plugin with `-presetVirtualDevice=false`."
        ),
        doc="""
            MindCluster vNPU reads the top-level `configurations:` entry named `init-params`, whose
            arguments are strings. Only the string `"true"` in `presetVirtualDevice` selects static
            pre-split vNPUs; dynamic vNPU (what `AscendMindClusterVNPUEnable` is for) needs it false.
            The code's default is false, but the vNPU guide sets `"false"` explicitly together with the
            device plugin's `-presetVirtualDevice=false`, and vgpuctl asks for the same.

            Evidence: docs/volcano.md#scheduler-config, docs/ascend.md#mindcluster-node,
            docs/checks.md#check-index-scheduler-config C11; volcano-sh/volcano
            `pkg/scheduler/plugins/deviceshare/devices/ascend/310p/vnpu/init_policy.go`,
            `third_party/mindcluster/config/config.go`.
            """,
    ),
    CodeInfo(
        code="VGC013",
        severity=ERROR,
        family=SCHEDULER,
        title="scheduler actions do not include allocate",
        hint=(
            'Set `actions: "enqueue, allocate, backfill"` in `volcano-scheduler.conf` (the shipped default).'
        ),
        doc="""
            Pending pods with resource requests are placed by the `allocate` action: it runs the
            plugins' filters (including `deviceshare`), the generic resource check and the allocation
            event handlers that write the device annotations. Volcano ships
            `actions: "enqueue, allocate, backfill"`. Without `allocate`, device pods stay Pending.

            Evidence: docs/volcano.md#architecture, docs/volcano.md#scheduler-config, docs/vgpu.md#vgpu-pod-request;
            volcano-sh/volcano `pkg/scheduler/actions/allocate/allocate.go`,
            `installer/helm/chart/volcano/config/volcano-scheduler.conf`.
            """,
    ),
    CodeInfo(
        code="VGC014",
        severity=ERROR,
        family=SCHEDULER,
        title="pods with DRA claims while the running Volcano cannot allocate them",
        hint=(
            "Volcano 1.12–1.14: set `predicate.DynamicResourceAllocationEnable: true` on the predicates plugin "
            "and, where the scheduler's DynamicResourceAllocation gate is off, add "
            "`--feature-gates=DynamicResourceAllocation=true` to vc-scheduler; from 1.15 only the gate counts "
            "(on by default on Kubernetes ≥ 1.34); before 1.12 upgrade Volcano or schedule these pods elsewhere."
        ),
        doc="""
            Volcano allocates `spec.resourceClaims` with the upstream `dynamicresources` plugin inside
            its predicates plugin, only when it is on: never before 1.12; on 1.12–1.14 with
            `predicate.DynamicResourceAllocationEnable: true` (an unquoted bool) **and** the scheduler's
            `DynamicResourceAllocation` feature gate; from 1.15 with the gate alone (the argument is no
            longer read: **info** when set). The gate's default: off in the Kubernetes 1.32 and 1.33 that
            1.12 and 1.13 are built with; from 1.14 that of the API server's version (on from 1.34).
            Off, the plugin skips every pod: Volcano binds pods whose claims nobody allocated, and they
            never start. **Error** when pods placed by Volcano carry claims (`doctor`; `lint --snapshot`
            for the pods it checks) and the version, the argument and the gate (vc-scheduler's
            `--feature-gates`) say DRA is off; skipped when the flags or the default cannot be told.

            Evidence: docs/stacks.md#dra-in-volcano; volcano-sh/volcano
            `pkg/scheduler/plugins/predicates/predicates.go` (v1.12.0–v1.14.4 read the argument; v1.15.0
            no longer), `go.mod` (k8s.io/kubernetes v1.32.2 … v1.35.3), `cmd/scheduler/app/server.go`
            (setupComponentGlobals, v1.14.0), `pkg/util/util.go` (v1.15.0); kubernetes/kubernetes
            `pkg/features/kube_features.go` (DynamicResourceAllocation).
            """,
        severities=(ERROR, INFO),
    ),
    # --- Device config / geometry (VGM) ------------------------------------------------------------
    CodeInfo(
        code="VGM001",
        severity=WARNING,
        family=DEVICE,
        title="the device ConfigMap Volcano reads is missing or lacks device-config.yaml",
        hint=(
            "Create ConfigMap `volcano-vgpu-device-config` in `kube-system` (or the one named by "
            "`deviceshare.KnownGeometriesCMName`/`KnownGeometriesCMNamespace`) with key "
            "`device-config.yaml`, then restart the scheduler."
        ),
        doc=f"""
            Volcano reads the ConfigMap named by `deviceshare.KnownGeometriesCMName` /
            `KnownGeometriesCMNamespace` (default `kube-system/volcano-vgpu-device-config`), key
            `device-config.yaml`. If it is missing, Volcano silently uses its built-in default (logged
            only at verbosity 3): vGPU resource names `volcano.sh/vgpu-*`, no
            `resourceMemoryPercentageName`, no `knownMigGeometries` (MIG can never work), and a single
            `vnpus` entry for Ascend310P. The vGPU device plugin, looking for the same name in
            `kube-system` then `volcano-system`, runs with an all-zero config.

            Evidence: docs/volcano.md#device-config-loading, docs/volcano.md#device-config-default,
            docs/checks.md#check-index-device-config M1; docs/device-plugins.md#vgpu-plugin-device-config,
            docs/checks.md#check-index-device-plugins rule 1; {_CFG}config.go`
            (GetDefaultDevicesConfig).
            """,
    ),
    CodeInfo(
        code="VGM002",
        severity=ERROR,
        family=DEVICE,
        title="device-config.yaml has a YAML or schema error (Volcano silently uses defaults)",
        hint=(
            "Fix the YAML at the reported path so every value has the type Volcano expects (e.g. "
            "`memory: 5120`, not `5GB`), then restart the scheduler."
        ),
        doc=f"""
            Volcano parses `device-config.yaml` with yaml.v2: unknown keys are ignored, but any syntax
            or type error (a string where a number is expected, a list where a map is expected) fails
            the whole document. Volcano then uses its built-in default — no MIG geometries, only
            Ascend310P — and says so only at log verbosity 3. Nothing tells the user.

            Evidence: docs/volcano.md#device-config-loading, docs/checks.md#check-index-device-config M2;
            docs/device-plugins.md#sources, docs/volcano.md#device-config-loading; {_CFG}config.go`, `vgpu.go`,
            `vnpu.go`.
            """,
    ),
    CodeInfo(
        code="VGM003",
        severity=ERROR,
        family=DEVICE,
        title="the vnpus form (list or wrapper) is not accepted by a component reading it",
        hint=(
            "On Volcano 1.14.0–1.14.3 or 1.15.0 write `vnpus:` as a plain list (drop `hamiVnpuCore` "
            "and `configs`); if the Ascend plugin needs the wrapper form, give it its own ConfigMap."
        ),
        doc="""
            `vnpus` is either a list of entries or a wrapper `{hamiVnpuCore, configs: [...]}`.

            | reader | list | wrapper | on mismatch |
            |---|---|---|---|
            | Volcano 1.14.0–1.14.3, 1.15.0 | yes | no | whole config falls back to defaults |
            | Volcano 1.14.4+, 1.15.1+ | yes | yes | – |
            | ascend-device-plugin <= 1.2.0 / >= 1.3.0 | yes / no | no / yes | plugin exits |
            | HAMi <= 2.8 / >= 2.9 | yes / no | no / yes | fatal |

            A silent fallback loses MIG and every NPU but Ascend310P. Volcano <= 1.13 has no `vnpus`.

            Evidence: docs/volcano.md#device-config-schema, docs/checks.md#check-index-device-config M2;
            docs/volcano.md#device-config-loading, docs/device-plugins.md#vnpus-forms,
            docs/device-plugins.md#merging-device-configs rule 2;
            volcano-sh/volcano `pkg/scheduler/api/devices/config/vnpu.go`.
            """,
    ),
    CodeInfo(
        code="VGM004",
        severity=ERROR,
        family=DEVICE,
        title="VGPUEnable is on but the device config has no nvidia section or empty resource names",
        hint=(
            "Add an `nvidia:` section with `resourceCountName: volcano.sh/vgpu-number`, "
            "`resourceMemoryName: volcano.sh/vgpu-memory` and `resourceCoreName: volcano.sh/vgpu-cores`."
        ),
        doc=f"""
            Volcano does not merge the ConfigMap with its defaults: a document without `nvidia:`
            leaves every resource name empty, and then no pod is ever recognised as a vGPU pod, so no
            GPU is booked and no allocation annotation is written. The Ascend plugin's shipped
            `hami-scheduler-device` has no `nvidia:` section, so pointing
            `deviceshare.KnownGeometriesCMName` at it while `VGPUEnable` is on disables vGPU.

            Evidence: docs/volcano.md#device-config-loading, docs/ascend.md#ascend-hami (shipped ConfigMap),
            docs/volcano.md#docs-vs-code item 8, docs/checks.md#check-index-device-config M3;
            docs/device-plugins.md#vgpu-plugin-device-config;
            {_CFG}vgpu.go`; volcano-sh/volcano `pkg/scheduler/api/devices/nvidia/vgpu/utils.go`
            (checkVGPUResourcesInPod).
            """,
    ),
    CodeInfo(
        code="VGM005",
        severity=WARNING,
        family=DEVICE,
        title="custom vGPU resource names on a Volcano that hard-codes volcano.sh/vgpu-* for nodes",
        hint=(
            "Keep `nvidia.resourceCountName`, `resourceMemoryName` and `resourceCoreName` at "
            "`volcano.sh/vgpu-number`, `volcano.sh/vgpu-memory` and `volcano.sh/vgpu-cores`."
        ),
        doc="""
            Volcano 1.14.3, 1.14.4, 1.15.1 and later accept a vGPU node only if its allocatable has
            `volcano.sh/vgpu-number`, `volcano.sh/vgpu-cores` and `volcano.sh/vgpu-memory` above 0 —
            these names are hard-coded, not taken from the ConfigMap. The device plugin advertises
            the configured names, so with renamed resources every vGPU node is dropped.

            Evidence: docs/vgpu.md#vgpu-node-registration, docs/volcano.md#compatibility-matrix,
            docs/checks.md#check-index-device-config M3; docs/vgpu.md#vgpu-node-registration; volcano-sh/volcano
            `pkg/scheduler/api/devices/nvidia/vgpu/device_info.go` (NewGPUDevices).
            """,
    ),
    CodeInfo(
        code="VGM006",
        severity=ERROR,
        family=DEVICE,
        title="vnpus entries are empty, duplicated or have impossible memory values",
        hint=(
            "Give each chip one `vnpus` entry with a unique `commonWord`, templates with "
            "0 < memory <= `memoryAllocatable`, and `memoryAllocatable` <= `memoryCapacity` "
            "(e.g. 21527 / 24576 for Ascend310P)."
        ),
        doc=f"""
            With `AscendHAMiVNPUEnable`, Volcano registers one device type per `vnpus` entry, keyed
            by `commonWord`, which also names the node and pod annotations
            (`hami.io/node-register-<commonWord>`). An empty list registers no Ascend type; a
            duplicate `commonWord` makes two entries share one type and one annotation. Template
            rounding assumes 0 < template memory <= `memoryAllocatable` <= `memoryCapacity`:
            otherwise requests are rounded to a template or whole card that does not exist.

            Evidence: docs/volcano.md#device-config-schema, docs/ascend.md#ascend-hami-template-mode,
            docs/checks.md#check-index-device-config M4; docs/device-plugins.md#vnpus-forms,
            docs/checks.md#check-index-device-plugins rule 14; {_DS} (registerDevices);
            volcano-sh/volcano `pkg/scheduler/api/devices/ascend/hami/device_info.go` (trimMemory).
            """,
    ),
    CodeInfo(
        code="VGM007",
        severity=ERROR,
        family=DEVICE,
        title="knownMigGeometries has a bad group name, duplicate group, bad instance or repeated model",
        hint=(
            "Name groups with letters and digits only (e.g. `group2`, not `group-2`), keep them unique "
            "per model entry, give each instance `memory` > 0 and `count` >= 1, and list a model once."
        ),
        doc="""
            A MIG allocation is written as `<GPU-UUID>[<group>-<position>]`, and both Volcano and the
            device plugin decode it by splitting on `[`, `]` and then `-` into exactly two parts. A
            group name containing `-`, `[` or `]` breaks decoding (`invalid format inside brackets`),
            so the usage is never recorded and the GPU can be over-booked; `,`, `:` and `;` separate
            fields, devices and containers of the pod annotation. Duplicate group names in one model
            entry make usage ambiguous, and an instance with memory <= 0 or count < 1 is unusable
            (errors). A model string listed twice is harmless — the first match wins — but a sign
            of a copy slip (warning; the shipped A100-40GB list repeats `A100-SXM4-40GB`).

            Evidence: docs/vgpu.md#vgpu-mig, docs/checks.md#check-index-device-config M5;
            docs/device-plugins.md#mig-geometry, docs/checks.md#check-index-device-plugins rule 6; volcano-sh/volcano
            `pkg/scheduler/api/devices/nvidia/vgpu/mig.go` (encodeMIGID, decodeMIGID);
            Project-HAMi/volcano-vgpu-device-plugin `pkg/util/util.go` (ExtractMigTemplatesFromUUID).
            """,
        severities=(ERROR, WARNING),
    ),
    CodeInfo(
        code="VGM008",
        severity=ERROR,
        family=DEVICE,
        title="gpuMemoryFactor absent or 0, deviceSplitCount 0, or deviceCoreScaling 0",
        hint=(
            "Set `nvidia.gpuMemoryFactor: 1` (higher on large nodes, see VGN005), "
            "`nvidia.deviceSplitCount: 10` and `nvidia.deviceCoreScaling: 1` in `device-config.yaml`."
        ),
        doc="""
            The vGPU device plugin takes these from the same ConfigMap, and an absent key is 0 (no
            merging with defaults). `gpuMemoryFactor: 0` makes the plugin divide by zero (inferred
            from code). `deviceSplitCount: 0` makes allocatable `volcano.sh/vgpu-number` 0 and
            `deviceCoreScaling: 0` makes `volcano.sh/vgpu-cores` 0, and Volcano 1.14.3+ / 1.15.1+
            drops a node with either at 0. Plugin command-line flags override the ConfigMap only when
            set explicitly.

            Evidence: docs/device-plugins.md#vgpu-plugin-device-config, docs/checks.md#check-index-device-plugins rule
            2; docs/vgpu.md#vgpu-node-registration; Project-HAMi/volcano-vgpu-device-plugin
            `pkg/plugin/register.go`, `pkg/plugin/server.go`.
            """,
    ),
    CodeInfo(
        code="VGM009",
        severity=WARNING,
        family=DEVICE,
        title="unknown key in the device config (every reader ignores it)",
        hint=(
            "Use the exact keys: `disableCoreLimit` (not `disablecorelimit`), `defaultMemory` (not "
            "`defaultMem`); `migstrategy` is no device-config key, set a node's `operatingmode` instead."
        ),
        doc="""
            Volcano, the vGPU plugin and HAMi parse the device config without strict mode: an unknown
            key is dropped without a word, so a misspelt setting keeps its zero value. The vGPU
            plugin's `doc/config.md` documents `nvidia.migstrategy`, `nvidia.disablecorelimit` and
            `nvidia.defaultMem`, none of which is a key of the struct. MIG mode is chosen per node
            with `operatingmode: mig` in `volcano-vgpu-node-config`.

            Evidence: docs/volcano.md#device-config-loading; docs/device-plugins.md#sources,
            docs/device-plugins.md#vgpu-plugin-device-config, docs/device-plugins.md#vgpu-plugin-node-config,
            docs/checks.md#check-index-device-plugins rule 4; Project-HAMi/volcano-vgpu-device-plugin
            `pkg/config/config.go`, `doc/config.md`.
            """,
    ),
    CodeInfo(
        code="VGM010",
        severity=INFO,
        family=DEVICE,
        title="device-config key with no effect on the Volcano path",
        hint=(
            "Remove `deviceMemoryScaling`, `defaultMemory`, `defaultCores` and `overwriteEnv`, or keep "
            "them knowing Volcano ignores them; `defaultGPUNum` is used only by vgpuctl's webhook."
        ),
        doc="""
            Parsed but without effect on the Volcano path: `deviceMemoryScaling` (the vGPU plugin never
            applies it: no memory over-subscription), `defaultMemory`, `defaultCores` and
            `defaultGPUNum` (Volcano has no webhook to apply them; a pod without memory gets a whole
            GPU's memory and 0 cores), and `overwriteEnv`. They do work in HAMi, which is where the
            expectation usually comes from. vgpuctl's mutating webhook uses `defaultGPUNum` for VGP002.

            Evidence: docs/volcano.md#device-config-schema, docs/volcano.md#volcano-webhooks,
            docs/checks.md#check-index-device-config M7; docs/device-plugins.md#vgpu-plugin-device-config,
            docs/hami.md#hami-device-config, docs/checks.md#check-index-device-plugins rule 5.
            """,
    ),
    CodeInfo(
        code="VGM011",
        severity=ERROR,
        family=DEVICE,
        title="HAMi-flavoured nvidia content in a Volcano device config",
        hint=(
            "Write `knownMigGeometries` in the Volcano shape (`allowedGeometries: [{group, geometries: "
            "[{name, memory, count}]}]`), drop `migProfileAllowlist`, and use `gpuMemoryFactor`."
        ),
        doc="""
            HAMi's `nvidia:` section looks similar but is a different schema. HAMi <= 2.9 writes
            `allowedGeometries` as a list of lists (no `group`, an extra `core`): Volcano fails to parse
            it and the whole document falls back to defaults. HAMi 2.10's `migProfileAllowlist` is
            unknown to Volcano and ignored, so no MIG geometry exists. HAMi's `memoryFactor`
            multiplies requests, while Volcano's `gpuMemoryFactor` divides registered memory, and
            Volcano ignores `memoryFactor`. Never copy `nvidia:` blocks between the two.

            Evidence: docs/hami.md#hami-device-config, docs/device-plugins.md#merging-device-configs rule 4,
            docs/checks.md#check-index-device-plugins rule 9; docs/volcano.md#device-config-loading,
            docs/volcano.md#device-config-schema.
            """,
    ),
    CodeInfo(
        code="VGM012",
        severity=WARNING,
        family=DEVICE,
        title="Volcano's device config differs from the one a device plugin reads",
        hint=(
            "Keep `nvidia:` identical in the ConfigMap Volcano reads and in `volcano-vgpu-device-config`, "
            "and `vnpus:` identical to the Ascend plugin's ConfigMap; or point Volcano at that one."
        ),
        doc="""
            Volcano reads one ConfigMap. The vGPU plugin always reads `volcano-vgpu-device-config`
            (`kube-system`, then `volcano-system`), and the Ascend plugin reads whatever its DaemonSet
            mounts (default `hami-scheduler-device`). When their sections differ, the scheduler and
            the plugin disagree: a different `gpuMemoryFactor` changes the memory unit, different
            geometries make the plugin re-partition GPUs into other MIG layouts, and a different
            `memoryAllocatable` or template list books NPUs the plugin cannot carve.

            Evidence: docs/device-plugins.md#component-map, docs/device-plugins.md#merging-device-configs rule 3,
            docs/checks.md#check-index-device-plugins rule 10; docs/volcano.md#device-config-loading,
            docs/checks.md#check-index-device-config M6.
            """,
    ),
    CodeInfo(
        code="VGM013",
        severity=WARNING,
        family=DEVICE,
        title="a MIG model string no node's GPU type contains, or a MIG node type no model matches",
        hint=(
            "Copy the model substring from the node's register annotation `type` (e.g. "
            "`A100-SXM4-80GB` from `NVIDIA-NVIDIA A100-SXM4-80GB`) into `knownMigGeometries[].models`."
        ),
        doc="""
            Volcano picks a MIG geometry by checking whether a `models` string is a substring of the
            GPU type in the register annotation (`NVIDIA-` + the NVML name); the first entry that
            matches wins. NVML names use spaces (`NVIDIA A100 80GB PCIe`), so shipped strings like
            `A100-80GB-PCIe` may never match, and H100/H200/A800 are not shipped at all. A model no
            node has is dead weight; a MIG node no model matches runs as hami-core (see VGN008).

            Evidence: docs/vgpu.md#vgpu-node-registration, docs/vgpu.md#vgpu-mig; docs/device-plugins.md#mig-geometry,
            docs/checks.md#check-index-device-plugins rule 7; volcano-sh/volcano
            `pkg/scheduler/api/devices/nvidia/vgpu/utils.go` (extractGeometryFromType).
            """,
    ),
    CodeInfo(
        code="VGM014",
        severity=ERROR,
        family=DEVICE,
        title="geometry merge: both inputs define the same key, model or commonWord differently",
        hint=(
            "Make the two inputs agree on the conflicting entry, or pass `--prefer vgpu` / `--prefer vnpu` to "
            "`vgpuctl geometry merge` to say which side wins."
        ),
        doc="""
            Raised by `vgpuctl geometry merge` (not by Volcano). Volcano reads one device ConfigMap, so a
            cluster running vGPU and Ascend vNPU needs one document holding both the vGPU plugin's `nvidia:`
            section and the Ascend plugin's `vnpus:`. When both inputs carry the same `nvidia` key, the
            same MIG model string or the same `commonWord` with different contents, silently picking one
            would change what the scheduler or a device plugin sees. The conflict is an error and nothing
            is written, unless `--prefer vgpu|vnpu` names the winner; a resolved conflict is still
            reported, as a warning, naming the key that lost.

            Evidence: docs/contracts.md#interfaces (`geometry merge`: conflicts are errors naming the differing keys);
            docs/volcano.md#device-config-loading
            (no merging with defaults), docs/volcano.md#docs-vs-code item 8,
            docs/device-plugins.md#merging-device-configs.
            """,
        severities=(ERROR, WARNING),
    ),
)

