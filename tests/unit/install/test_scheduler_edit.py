"""Install/uninstall of the scheduler config: typed arguments, nothing unrelated touched, exact take-back."""

from __future__ import annotations

import copy
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from vgpuctl.core import spec
from vgpuctl.core.install.modes import InstallError, Mode, check_modes, fatal_combination
from vgpuctl.core.install.scheduler_edit import SchedulerOptions, args_of, load_conf, plan_install, plan_uninstall
from vgpuctl.core.scheduler_config import deviceshare_args, parse_scheduler_conf
from vgpuctl.core.versions import Version

V = Version(1, 15, 1)
DEFAULT = """\
actions: "enqueue, allocate, backfill"
tiers:
- plugins:
  - name: priority
  - name: gang
    enablePreemptable: false
- plugins:
  - name: drf
  - name: predicates
  - name: nodeorder
    arguments:
      nodeaffinity.weight: 2
"""


def options(*modes: Mode, **kwargs: Any) -> SchedulerOptions:
    return SchedulerOptions(tuple(modes), kwargs.pop("version", V), **kwargs)


def plugins_of(text: str) -> list[list[str]]:
    return [[p["name"] for p in tier["plugins"]] for tier in yaml.safe_load(text)["tiers"]]


def test_install_adds_deviceshare_after_predicates_with_real_types() -> None:
    edit = plan_install(DEFAULT, options(Mode.VGPU, Mode.VNPU_HAMI, policy="binpack"))
    assert edit.changed and edit.registration_changed
    assert plugins_of(edit.text) == [["priority", "gang"], ["drf", "predicates", "deviceshare", "nodeorder"]]
    arguments = yaml.safe_load(edit.text)["tiers"][1]["plugins"][2]["arguments"]
    assert arguments == {spec.ARG_VGPU_ENABLE: True, spec.ARG_ASCEND_HAMI_ENABLE: True,
                         spec.ARG_SCHEDULE_POLICY: "binpack", spec.ARG_SCHEDULE_WEIGHT: 10,
                         spec.ARG_KNOWN_GEOMETRIES_CM_NAME: spec.DEVICE_CONFIGMAP,
                         spec.ARG_KNOWN_GEOMETRIES_CM_NAMESPACE: spec.DEVICE_CONFIGMAP_NAMESPACE}
    assert type(arguments[spec.ARG_VGPU_ENABLE]) is bool and type(arguments[spec.ARG_SCHEDULE_WEIGHT]) is int
    parsed = deviceshare_args(parse_scheduler_conf(edit.text).plugin("deviceshare"))
    assert parsed.vgpu and parsed.ascend_hami and parsed.schedule_weight == 10 and not parsed.issues


def test_install_adds_predicates_when_absent_and_a_tier_when_there_is_none() -> None:
    edit = plan_install("actions: allocate\n", options(Mode.GPUSHARE))
    assert plugins_of(edit.text) == [["predicates", "deviceshare"]]
    assert plan_uninstall(edit.text, edit.record).text and yaml.safe_load(
        plan_uninstall(edit.text, edit.record).text) == {"actions": "allocate"}


def test_geometry_arguments_only_for_families_that_read_the_device_configmap() -> None:
    args = yaml.safe_load(plan_install(DEFAULT, options(Mode.GPUNUMBER)).text)["tiers"][1]["plugins"][2]["arguments"]
    assert spec.ARG_KNOWN_GEOMETRIES_CM_NAME not in args
    old = plan_install(DEFAULT, options(Mode.GPUSHARE, version=Version(1, 11, 0)))
    assert spec.ARG_KNOWN_GEOMETRIES_CM_NAME not in old.text


def test_an_ignored_bool_is_fixed_and_uninstall_puts_it_back() -> None:
    text = DEFAULT.replace("  - name: nodeorder\n", "  - name: deviceshare\n    arguments:\n"
                           "      deviceshare.VGPUEnable: \"yes\"\n      deviceshare.ScheduleWeight: \"5\"\n"
                           "  - name: nodeorder\n")
    edit = plan_install(text, options(Mode.VGPU, weight=5))
    args = args_of(load_conf(edit.text))
    assert args.vgpu and args.schedule_weight == 5 and not args.issues
    back = plan_uninstall(edit.text, edit.record)
    assert yaml.safe_load(back.text) == yaml.safe_load(text)


def test_an_existing_valid_setting_is_left_as_it_is() -> None:
    text = DEFAULT.replace("  - name: nodeorder\n", "  - name: deviceshare\n    arguments:\n"
                           "      deviceshare.VGPUEnable: \"true\"\n      deviceshare.ScheduleWeight: 3\n"
                           "      deviceshare.KnownGeometriesCMName: mine\n  - name: nodeorder\n")
    edit = plan_install(text, options(Mode.VGPU))
    args = yaml.safe_load(edit.text)["tiers"][1]["plugins"][2]["arguments"]
    assert args[spec.ARG_VGPU_ENABLE] == "true"  # Go's ParseBool reads it: not rewritten
    assert args[spec.ARG_SCHEDULE_WEIGHT] == 3
    assert args[spec.ARG_KNOWN_GEOMETRIES_CM_NAME] == "mine"
    assert args[spec.ARG_KNOWN_GEOMETRIES_CM_NAMESPACE] == "kube-system"


def test_install_is_idempotent_and_unchanged_returns_the_original_text() -> None:
    edit = plan_install(DEFAULT, options(Mode.VGPU))
    again = plan_install(edit.text, options(Mode.VGPU), edit.record)
    assert not again.changed and again.text == edit.text and again.record == edit.record


def test_uninstall_keeps_what_an_admin_changed_after_install() -> None:
    edit = plan_install(DEFAULT, options(Mode.VGPU))
    conf = yaml.safe_load(edit.text)
    conf["tiers"][1]["plugins"][2]["arguments"][spec.ARG_SCHEDULE_WEIGHT] = 7
    conf["tiers"][1]["plugins"][2]["arguments"]["deviceshare.NodeLockEnable"] = True
    back = plan_uninstall(yaml.safe_dump(conf), edit.record)
    remaining = yaml.safe_load(back.text)["tiers"][1]["plugins"][2]
    assert remaining == {"name": "deviceshare", "arguments": {spec.ARG_SCHEDULE_WEIGHT: 7,
                                                              "deviceshare.NodeLockEnable": True}}
    assert any("ScheduleWeight" in n and "changed after vgpuctl set it" in n for n in back.notes)
    assert any("kept the deviceshare plugin" in n for n in back.notes)


def test_mindcluster_sets_init_params_as_a_string_and_uninstall_removes_it() -> None:
    edit = plan_install(DEFAULT, options(Mode.VNPU_MINDCLUSTER))
    assert yaml.safe_load(edit.text)["configurations"] == [{"name": "init-params",
                                                            "arguments": {"presetVirtualDevice": "false"}}]
    assert yaml.safe_load(plan_uninstall(edit.text, edit.record).text) == yaml.safe_load(DEFAULT)


def test_uninstall_without_a_record_changes_nothing() -> None:
    edit = plan_uninstall(DEFAULT, None)
    assert not edit.changed and edit.text == DEFAULT and "nothing is taken back" in edit.notes[0]


@pytest.mark.parametrize(("modes", "already", "fragment"), [
    ((Mode.GPUSHARE, Mode.GPUNUMBER), (), "both gpu sharing and gpu number"),
    ((Mode.VGPU, Mode.GPUNUMBER), (), "can't be used together"),
    ((Mode.VGPU,), (spec.Family.GPUSHARE,), "already has gpushare on"),
    ((Mode.GPUSHARE,), (spec.Family.VGPU,), "already has vgpu on"),
])
def test_fatal_combinations_are_refused(modes: tuple[Mode, ...], already: tuple[spec.Family, ...],
                                        fragment: str) -> None:
    with pytest.raises(InstallError, match=fragment):
        check_modes(modes, already, V)


def test_allowed_combinations_and_version_gates() -> None:
    check_modes((Mode.VGPU, Mode.VNPU_HAMI, Mode.VNPU_MINDCLUSTER), (), V)
    assert fatal_combination({spec.Family.VGPU, spec.Family.ASCEND_HAMI}) is None
    with pytest.raises(InstallError, match=r"needs Volcano >= v1\.14\.0"):
        check_modes((Mode.VNPU_HAMI,), (), Version(1, 13, 0))
    with pytest.raises(InstallError, match="no deviceshare plugin"):
        check_modes((Mode.GPUSHARE,), (), Version(1, 8, 2))


def test_a_broken_config_is_refused_not_rewritten() -> None:
    with pytest.raises(InstallError, match="not valid YAML"):
        plan_install("tiers: [\n", options(Mode.VGPU))
    with pytest.raises(InstallError, match="tiers is not a list"):
        plan_install("tiers: 3\n", options(Mode.VGPU))


# --- properties -----------------------------------------------------------------------------------

NAMES = ["priority", "gang", "conformance", "drf", "predicates", "proportion", "nodeorder", "binpack",
         "deviceshare", "overcommit", "tdm", "numaaware"]
scalars = st.one_of(st.booleans(), st.integers(-5, 50), st.sampled_from(["yes", "true", "on", "binpack", "spread",
                                                                         "x", "10", "1.5"]),
                    st.floats(0, 10, allow_nan=False), st.none())
arg_keys = st.sampled_from([*spec.DEVICESHARE_ARGS, "deviceshare.KnowGeometriesCMName", "nodeaffinity.weight",
                            "predicate.GPUSharingEnable", "other.key"])


@st.composite
def plugin_entries(draw: st.DrawFn, name: str) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": name}
    if draw(st.booleans()):
        entry["enablePreemptable"] = draw(st.booleans())
    shape = draw(st.sampled_from(["none", "null", "map"]))
    if shape == "null":
        entry["arguments"] = None
    elif shape == "map":
        entry["arguments"] = draw(st.dictionaries(arg_keys, scalars, max_size=5))
    return entry


@st.composite
def scheduler_configs(draw: st.DrawFn) -> dict[str, Any]:
    conf: dict[str, Any] = {}
    if draw(st.booleans()):
        conf["actions"] = ", ".join(draw(st.lists(st.sampled_from(["enqueue", "allocate", "backfill", "preempt"]),
                                                  unique=True, max_size=4)))
    names = draw(st.lists(st.sampled_from(NAMES), unique=True, max_size=8))
    tier_count = draw(st.integers(0, 3))
    tiers_shape = draw(st.sampled_from(["list", "absent", "null"]))
    if tiers_shape == "list" or (names and tier_count):
        tiers: list[dict[str, Any]] = [{"plugins": []} for _ in range(max(tier_count, 1 if names else 0))]
        for name in names:
            tiers[draw(st.integers(0, len(tiers) - 1))]["plugins"].append(draw(plugin_entries(name)))
        conf["tiers"] = tiers
    elif tiers_shape == "null":
        conf["tiers"] = None
    if draw(st.booleans()):
        conf["configurations"] = [
            {"name": n, "arguments": draw(st.dictionaries(st.sampled_from(["presetVirtualDevice", "k", "x"]),
                                                          st.sampled_from(["true", "false", "1"]), max_size=2))}
            for n in draw(st.lists(st.sampled_from(["init-params", "enqueue", "allocate"]), unique=True, max_size=2))]
    if draw(st.booleans()):
        conf["extra"] = {"kept": draw(scalars)}
    return conf


mode_sets = st.lists(st.sampled_from(list(Mode)), min_size=1, max_size=3, unique=True)


def _installable(conf: dict[str, Any], modes: list[Mode]) -> SchedulerOptions:
    families = args_of(copy.deepcopy(conf)).families
    assume(fatal_combination({m.family for m in modes} | set(families)) is None)
    return options(*modes)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(scheduler_configs(), mode_sets)
def test_install_then_uninstall_returns_the_original_content(conf: dict[str, Any], modes: list[Mode]) -> None:
    text = yaml.safe_dump(conf, sort_keys=False)
    edit = plan_install(text, _installable(conf, modes))
    after = deviceshare_args(parse_scheduler_conf(edit.text).plugin("deviceshare"))
    assert {m.family for m in modes} <= after.families
    assert plan_install(edit.text, options(*modes), edit.record).changed is False
    back = plan_uninstall(edit.text, edit.record)
    assert yaml.safe_load(back.text) == yaml.safe_load(text)


def _without_device_sharing(conf: dict[str, Any]) -> dict[str, Any]:
    """The config with deviceshare's enable/weight/geometry keys, an added predicates/deviceshare and
    init-params' presetVirtualDevice blanked — what install may touch."""
    out = copy.deepcopy(conf)
    out.pop("tiers", None)
    out.pop("configurations", None)
    return out


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(scheduler_configs(), mode_sets)
def test_install_leaves_unrelated_content_untouched(conf: dict[str, Any], modes: list[Mode]) -> None:
    text = yaml.safe_dump(conf, sort_keys=False)
    result = yaml.safe_load(plan_install(text, _installable(conf, modes)).text)
    original = yaml.safe_load(text)
    assert _without_device_sharing(result) == _without_device_sharing(original)
    for index, tier in enumerate((original or {}).get("tiers") or []):
        kept = [p for p in result["tiers"][index]["plugins"] if p["name"] not in ("deviceshare", "predicates")]
        assert kept == [p for p in tier["plugins"] if p["name"] not in ("deviceshare", "predicates")]
        for before in tier["plugins"]:
            if before["name"] in ("deviceshare", "predicates"):
                now = next(p for t in result["tiers"] for p in t["plugins"] if p["name"] == before["name"])
                for key, value in (before.get("arguments") or {}).items():
                    if key not in spec.DEVICESHARE_ARGS:
                        assert now["arguments"][key] == value
                assert {k: v for k, v in now.items() if k != "arguments"} == \
                       {k: v for k, v in before.items() if k != "arguments"}
    for entry in (original or {}).get("configurations") or []:
        if entry["name"] != "init-params":
            assert entry in result["configurations"]
