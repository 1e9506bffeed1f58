from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from sg_search.bench.embodied_world import EmbodiedParams, StackConfig
from sg_search.config import (
    ConfigError,
    default_params_file,
    from_params,
    load_node_params,
    nested_sections,
    read_yaml,
)
from sg_search.habitat.config import HabitatBridgeConfig
from sg_search.perception.config import PerceptionConfig
from sg_search.perception.room_segmentation import RoomSegmentationParams
from sg_search.planning.config import FrontierPlannerConfig
from sg_search.reasoning import available_reasoners, create_reasoner
from sg_search.reasoning.registry import reasoner_params_type, section_key
from sg_search.ros.recorder import RecorderConfig
from sg_search.scene_graph.config import SceneGraphServerConfig
from sg_search.search.config import ExecutorNodeConfig, ReasonerNodeConfig
from sg_search.sim.mujoco.config import SimBridgeConfig
from sg_search.skills.config import HsrDriverConfig
from sg_search.view.config import LiveViewConfig

NODE_CONFIGS = {
    "scene_graph_server": SceneGraphServerConfig,
    "reasoner": ReasonerNodeConfig,
    "affordance_executor": ExecutorNodeConfig,
    "frontier_planner": FrontierPlannerConfig,
    "sim_bridge": SimBridgeConfig,
    "perception": PerceptionConfig,
    "hsr_driver": HsrDriverConfig,
    "embodied": EmbodiedParams,
    "recorder": RecorderConfig,
    "live_view": LiveViewConfig,
}


@pytest.mark.parametrize("node_name", sorted(NODE_CONFIGS))
def test_shipped_yaml_and_config_classes_agree(node_name: str) -> None:
    """One source for each value: the YAML names every field and holds the class's defaults."""
    cls = NODE_CONFIGS[node_name]
    params = {k: v for k, v in load_node_params(default_params_file(), node_name).items() if "." not in k}
    assert set(params) == {f.name for f in dataclasses.fields(cls)}
    config = from_params(cls, params)  # types match
    differ = {f.name: (getattr(config, f.name), getattr(cls(), f.name)) for f in dataclasses.fields(cls)
              if getattr(config, f.name) != getattr(cls(), f.name)}  # fmt: skip
    assert not differ, f"{node_name}: YAML value vs dataclass default differ: {differ}"


def test_habitat_bridge_yaml_agrees() -> None:
    params = load_node_params(default_params_file(), "habitat_bridge")
    assert set(params) == {f.name for f in dataclasses.fields(HabitatBridgeConfig)}
    assert from_params(HabitatBridgeConfig, params) == HabitatBridgeConfig()
    with pytest.raises(ValueError, match="hfov_deg"):
        from_params(HabitatBridgeConfig, {**params, "hfov_deg": 0.0})


def test_a_room_tolerance_that_is_not_positive_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="room_arrive_m must be > 0"):
        ExecutorNodeConfig(room_arrive_m=0.0)


def test_node_section_overrides_wildcard(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(
        "/**:\n  ros__parameters:\n    seed: 1\n    max_steps: 9\n"
        "reasoner:\n  ros__parameters:\n    seed: 7\n    nested: {a: 1}\n"
    )
    params = load_node_params(path, "reasoner")
    assert params == {"seed": 7, "max_steps": 9, "nested.a": 1}
    config = from_params(ReasonerNodeConfig, params)
    assert (config.seed, config.max_steps) == (7, 9)


def test_wrong_types_and_files_are_named(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="'max_steps' must be int"):
        from_params(ReasonerNodeConfig, {"max_steps": "many"})
    with pytest.raises(ConfigError, match="not found"):
        load_node_params(tmp_path / "missing.yaml", "reasoner")
    bad = tmp_path / "bad.yaml"
    bad.write_text("reasoner: {seed: 1}\n")
    with pytest.raises(ConfigError, match="ros__parameters"):
        load_node_params(bad, "reasoner")


def test_the_hsr_overlay_names_only_known_parameters_with_their_types() -> None:
    overlay = default_params_file().with_name("hsr.yaml")
    for node_name, cls in NODE_CONFIGS.items():
        params = load_node_params(overlay, node_name)
        assert set(params) <= {f.name for f in dataclasses.fields(cls)}, node_name
        from_params(cls, {**load_node_params(default_params_file(), node_name), **params})
    assert load_node_params(overlay, "frontier_planner")["base_frame"] == "base_footprint"


def test_each_reasoner_section_holds_its_dataclass_defaults() -> None:
    """The reasoners' own sections (``reasoner: scout: ...``) name only fields of the dataclass
    their factory reads, with its defaults; every built-in reasoner with settings has one,
    except the SCOUT variants, which use scout's values with one changed in code."""
    sections = nested_sections(load_node_params(default_params_file(), "reasoner"))
    variants = {"scout-noroom", "scout-greedy", "exhaustive"}
    seen = set()
    for name in available_reasoners():
        kind = reasoner_params_type(name)
        if kind is None or name in variants:
            continue
        section = sections[section_key(name)]
        seen.add(section_key(name))
        assert set(section) == {f.name for f in dataclasses.fields(kind)}, name
        assert from_params(kind, section) == kind(), name
    assert seen == set(sections), f"sections of no reasoner: {set(sections) - seen}"


def test_a_wrong_type_in_a_reasoner_section_is_named() -> None:
    with pytest.raises(ConfigError, match="sgnav: 'max_subgraphs' must be int"):
        create_reasoner("sgnav", {"max_subgraphs": "forty"})


def test_room_segmentation_is_read_from_the_graph_servers_rooms_section(tmp_path: Path) -> None:
    """``scene_graph_server: rooms:`` holds every field of RoomSegmentationParams with its
    default; the in-process world reads a changed value from there, and a bad one is named."""
    shipped = nested_sections(load_node_params(default_params_file(), "scene_graph_server"))["rooms"]
    assert set(shipped) == {f.name for f in dataclasses.fields(RoomSegmentationParams)}
    assert from_params(RoomSegmentationParams, shipped) == RoomSegmentationParams()
    assert StackConfig.load().rooms == RoomSegmentationParams()

    path = tmp_path / "p.yaml"
    section = "scene_graph_server:\n  ros__parameters:\n    rooms: "
    path.write_text(section + "{core_margin: 0.12, corridor_max_objects: 4}\n")
    rooms = StackConfig.load(path).rooms
    assert (rooms.core_margin, rooms.corridor_max_objects) == (0.12, 4)
    assert rooms.door_width == RoomSegmentationParams().door_width
    path.write_text(section + "{score_floor: 0.0}\n")
    with pytest.raises(ValueError, match="score_floor must be a positive"):
        StackConfig.load(path)
    path.write_text(section + "{door_width: wide}\n")
    with pytest.raises(ConfigError, match="rooms: 'door_width' must be float"):
        StackConfig.load(path)


# YAML 1.1's extra line breaks (NEL, LS, PS) read differently by the two parsers: left out
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Zl", "Zp"), exclude_characters="\x85"))
_SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _TEXT
_DOCUMENTS = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4),
)


@given(_DOCUMENTS)
def test_read_yaml_gives_what_safe_load_gives(document: object) -> None:
    text = yaml.safe_dump(document, allow_unicode=True)
    assert read_yaml(text) == yaml.safe_load(text) == document


def test_read_yaml_is_safe_and_names_bad_yaml() -> None:
    with pytest.raises(yaml.YAMLError, match="python/object"):
        read_yaml("!!python/object/apply:os.system ['true']")
    with pytest.raises(yaml.YAMLError):
        read_yaml("a: [1, 2")
