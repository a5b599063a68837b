"""Scheduler configuration parsing with Volcano's own argument rules (docs/volcano.md#argument-parsing)."""

from __future__ import annotations

import pytest

from vgpuctl.core import spec
from vgpuctl.core.scheduler_config import SchedulerConfError, deviceshare_args, get_bool, get_int, parse_scheduler_conf

CONF = """
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
- plugins:
  - name: predicates
  - name: deviceshare
    arguments:
      deviceshare.VGPUEnable: true
      deviceshare.AscendHAMiVNPUEnable: "yes"
      deviceshare.SchedulePolicy: binpack
      deviceshare.ScheduleWeight: "10"
      deviceshare.KnowGeometriesCMName: my-config
      deviceshare.KnownGeometriesCMNamespace: gpu-system
configurations:
- name: init-params
  arguments: {presetVirtualDevice: "false"}
"""


def test_parse_actions_tiers_configurations() -> None:
    conf = parse_scheduler_conf(CONF)
    assert conf.actions == ("enqueue", "allocate", "backfill")
    assert [(p.name, p.tier) for p in conf.plugins] == [("priority", 0), ("gang", 0), ("predicates", 1),
                                                        ("deviceshare", 1)]
    init = conf.configuration("init-params")
    assert init is not None and init["arguments"] == {"presetVirtualDevice": "false"}


def test_deviceshare_arguments_as_volcano_reads_them() -> None:
    args = deviceshare_args(parse_scheduler_conf(CONF).plugin("deviceshare"))
    assert args.vgpu is True
    assert args.ascend_hami is False  # "yes" is not a Go ParseBool string
    assert args.schedule_policy == "binpack" and args.schedule_weight == 0  # quoted "10" is ignored
    assert args.geometries_cm_name == spec.DEVICE_CONFIGMAP  # the misspelt key is unknown, default stays
    assert args.geometries_cm_namespace == "gpu-system"
    assert args.families == frozenset({spec.Family.VGPU})
    assert {i.key for i in args.issues} == {spec.ARG_ASCEND_HAMI_ENABLE, spec.ARG_SCHEDULE_WEIGHT}
    assert args.unknown_keys == ("deviceshare.KnowGeometriesCMName",)


@pytest.mark.parametrize(("value", "expected"), [(True, True), ("true", True), ("T", True), ("1", True),
                                                 ("False", False), ("0", False), ("yes", None), ("on", None),
                                                 ("TRUE ", None), (1, None), (None, None)])
def test_go_parse_bool(value: object, expected: bool | None) -> None:
    assert get_bool(value)[0] is expected


@pytest.mark.parametrize(("value", "expected"), [(10, 10), (0, 0), ("10", None), (10.0, None), (True, None)])
def test_get_int_only_takes_integers(value: object, expected: int | None) -> None:
    assert get_int(value)[0] == expected


def test_absent_plugin_means_everything_off() -> None:
    args = deviceshare_args(None)
    assert args.families == frozenset() and args.geometries_cm_namespace == "kube-system"


@pytest.mark.parametrize("text", ["tiers: [", "- just\n- a list\n", "tiers: 5\n"])
def test_unloadable_configurations(text: str) -> None:
    with pytest.raises(SchedulerConfError):
        parse_scheduler_conf(text)
