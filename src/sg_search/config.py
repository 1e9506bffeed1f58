"""ROS 2 parameter YAML files, read without ROS.

The same files feed nodes (``--ros-args --params-file config/sg_search.yaml``)
and the core library (benchmarks, the CLI). A file maps node names to
``ros__parameters``; ``/**`` applies to every node and a node's own section wins.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

import yaml

T = TypeVar("T")
# libyaml's parser where PyYAML was built with it (its wheels are), else PyYAML's own: about
# seven times faster (the knowledge answers: 0.03 s instead of 0.2 s) and the same documents,
# except for text holding YAML 1.1's extra line breaks (NEL, LS, PS), which none of ours does
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, through libyaml where available; raises ``yaml.YAMLError``."""
    return yaml.load(text, Loader=_SAFE_LOADER)


class ConfigError(ValueError):
    """A parameter file or value is wrong; the message names the file, node and key."""


def package_share() -> Path:
    """Directory that holds ``config/`` and ``launch/`` for this installation.

    An installed package (pip into a venv, colcon into ``install/sg_search``) lives in
    ``<prefix>/lib/pythonX.Y/site-packages/sg_search`` with its data in
    ``<prefix>/share/sg_search``; a source checkout has them at the repository root.
    """
    here = Path(__file__).resolve().parent
    prefix_share = here.parents[3] / "share" / "sg_search" if len(here.parents) > 3 else here
    candidates = (prefix_share, here.parents[1])
    for candidate in candidates:
        if (candidate / "config" / "sg_search.yaml").is_file():
            return candidate
    raise ConfigError(f"cannot find sg_search's config/: looked in {', '.join(map(str, candidates))}")


def default_params_file() -> Path:
    """The stack's default parameter file (``config/sg_search.yaml``)."""
    return package_share() / "config" / "sg_search.yaml"


def load_node_params(path: Path | str, node_name: str) -> dict[str, Any]:
    """Parameters of ``node_name`` in a ROS 2 params file, ``/**`` merged underneath.

    Nested mappings are flattened to dotted names, as ROS 2 does.
    """
    path = Path(path)
    try:
        document = read_yaml(path.read_text())
    except FileNotFoundError as exc:
        raise ConfigError(f"parameter file not found: {path}") from exc
    except yaml.YAMLError as exc:
        raise ConfigError(f"parameter file {path} is not valid YAML: {exc}") from exc
    if not isinstance(document, dict):
        raise ConfigError(f"parameter file {path} must map node names to ros__parameters")
    merged: dict[str, Any] = {}
    for section in ("/**", node_name, f"/{node_name}"):
        body = document.get(section)
        if body is None:
            continue
        if not isinstance(body, dict) or "ros__parameters" not in body:
            raise ConfigError(f"{path}: section '{section}' has no 'ros__parameters' mapping")
        merged.update(_flatten(body["ros__parameters"] or {}))
    return merged


def _flatten(mapping: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    flat: dict[str, Any] = {}
    for key, value in mapping.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping):
            flat.update(_flatten(value, name + "."))
        else:
            flat[name] = value
    return flat


def nested_sections(params: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    """The nested sections of flattened parameters, one level deep
    (``"scout.margin": 0.1`` -> ``{"scout": {"margin": 0.1}}``)."""
    sections: dict[str, dict[str, Any]] = {}
    for key, value in params.items():
        name, dot, field = key.partition(".")
        if dot:
            sections.setdefault(name, {})[field] = value
    return sections


def from_params(cls: type[T], params: Mapping[str, Any], *, source: str = "parameters") -> T:
    """Build the dataclass ``cls`` from flat parameters, checking names and types.

    Unknown names are ignored (a params file serves several components); a value whose
    type does not match the field's default raises :class:`ConfigError` naming it.
    """
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"{cls!r} is not a dataclass")
    defaults = cls()
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        if field.name not in params:
            continue
        default = getattr(defaults, field.name)
        value = params[field.name]
        values[field.name] = _coerce(value, default, f"{source}: '{field.name}'")
        _check_range(field.name, values[field.name], f"{source}: '{field.name}'")
    return cls(**values)


UNSIGNED_SUFFIXES = ("_s", "_m", "_mb", "_hz")  # durations, distances, sizes, rates: never negative


def _check_range(name: str, value: Any, where: str) -> None:
    """ConfigError for a duration, distance, size or rate (by its name's unit suffix) that is
    negative or not finite: a negative period or timeout is a typo, never a setting."""
    if not name.endswith(UNSIGNED_SUFFIXES) or isinstance(value, bool):
        return
    numbers = value if isinstance(value, tuple | list) else (value,)
    for number in numbers:
        if isinstance(number, int | float) and not (math.isfinite(number) and number >= 0):
            raise ConfigError(f"{where} must be a finite number >= 0, got {value!r}")


def _coerce(value: Any, default: Any, where: str) -> Any:
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
    elif isinstance(default, float):
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif isinstance(default, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif isinstance(default, str):
        if isinstance(value, str):
            return value
    elif isinstance(default, tuple | list):
        if isinstance(value, list | tuple):
            return type(default)(value)
    else:
        return value
    raise ConfigError(f"{where} must be {type(default).__name__}, got {value!r}")


def require_positive(config: object, names: Sequence[str], owner: str) -> None:
    """ValueError naming ``owner`` and the field unless each of ``names`` is a finite number > 0."""
    for name in names:
        value = getattr(config, name)
        if not (math.isfinite(value) and value > 0):
            raise ValueError(f"{owner} parameter {name} must be a positive finite number, got {value}")
