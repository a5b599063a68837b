"""The pure core of vgpuctl.

Nothing in this package performs I/O, reads the clock or imports a Kubernetes client, a UI or a web
framework: given plain data it returns plain data. That is what lets `lint`, `doctor` and the admission
webhook call the very same functions and never disagree (enforced by import-linter in CI).
"""
