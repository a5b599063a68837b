"""Node-local facts for `doctor --node`: pure parsers of `nvidia-smi`, `npu-smi` and container-engine configs.

The I/O (running the commands, reading the files) is the adapter `vgpuctl.node_probe`; this package only
turns text into values, so every parser is tested on recorded real outputs. `observed.py` holds what the
probe saw (`HostFacts`); `nvidia_smi.py`, `npu_smi.py` and `runtime.py` parse each source. Import names
from the module that defines them.
"""
