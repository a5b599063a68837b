"""Codecs for every node and pod annotation of Volcano device sharing (docs/volcano.md#vocabulary,
docs/vgpu.md#nvidia-vgpu … docs/ascend.md#mindcluster, docs/device-plugins.md#vgpu-plugin,
docs/device-plugins.md#ascend-plugin … docs/hami.md#hami-webhook-configuration).

Pure functions: stdlib and `vgpuctl.core` only, no clock (lock staleness takes `now`). Every decoder
accepts any object — `None` (annotation absent), non-strings, garbage — and never raises: it returns what
it could read plus a tuple of `CodecProblem`s (`vgpuctl.core.codecs._common`), each carrying the finding code
(docs/contracts.md#finding-families and friends) and a one-line message saying what is wrong and what Volcano
does about it. Encoders reproduce the upstream format byte for byte (JSON as Go's `json.Marshal` writes it),
so encode → decode round-trips.

The package re-exports nothing: each codec is imported from its own module, e.g.
`from vgpuctl.core.codecs.vgpu_register import decode_vgpu_register`.
"""
