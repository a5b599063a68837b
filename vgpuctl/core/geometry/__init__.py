"""The device config as a document: validate, show, export, explain and merge it (docs/contracts.md#interfaces, issue
3).

`vgpuctl.core.deviceconfig` is the model and Volcano's decisions; this package is what an admin does
with the document: check it (`validate`), print its normalised form (`export`), ask which slice a
request gets (`explain`), and merge the vGPU and vNPU ConfigMaps into the one Volcano reads (`merge`).
Pure: the CLI reads files and hands texts and payloads in.
"""
