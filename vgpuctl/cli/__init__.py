"""The `vgpuctl` command line: one module per command; `app` only wires them together."""
