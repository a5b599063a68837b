"""vgpuctl: doctor, linter and admission webhook for GPU/NPU sharing on the Volcano scheduler."""

__version__ = "0.1.0"
