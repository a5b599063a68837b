"""`vgpuctl install` / `uninstall` planned as data: scheduler config edits, the device ConfigMap, the
device-plugin objects, and the ordered plan the writer (`vgpuctl.kube.writer`) applies. Pure.

`plan.py` orders the steps (`plan`, `Plan`, `ClusterState`); `modes.py` reads `--mode` and `--nodes`;
`scheduler_edit.py` turns deviceshare on/off in `volcano-scheduler.conf` and records it; `devconf.py` and
`shipped_device_config.py` add the device ConfigMap's missing sections; `plugins.py` and `webhook.py` the
objects; `removal.py` the uninstall. Import names from the module that defines them.
"""
