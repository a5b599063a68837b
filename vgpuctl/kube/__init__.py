"""The live-cluster adapter: the only package that imports `kubernetes` (an import-linter contract).

It turns a cluster into the same `SnapshotData` a snapshot file gives, so every check runs on one shape.
This `__init__` imports nothing: the `kubernetes` client costs ~0.3 s to import, and commands that never
talk to a cluster (`lint`, `explain`) must not pay for it. Import `vgpuctl.kube.kubeconfig` / `.reader`
where a cluster is needed, and `vgpuctl.kube.errors` (cheap) to catch their failures.
"""
