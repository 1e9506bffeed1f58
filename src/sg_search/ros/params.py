"""Declare a core config dataclass as ROS parameters and read it back."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from rclpy.node import Node
from rclpy.parameter import Parameter

from sg_search.config import from_params

T = TypeVar("T")


def declare_config(node: Node, cls: type[T], prefix: str = "") -> T:
    """Declare one parameter per field of ``cls`` (defaults from the dataclass), named
    ``<prefix>.<field>`` with a prefix (a plugin's section), and return the values; a parameter
    already declared is read, not declared again.

    Wrong types in a params file raise :class:`sg_search.config.ConfigError` naming the
    node and the parameter.
    """
    defaults = cls()
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        name = f"{prefix}.{field.name}" if prefix else field.name
        default = getattr(defaults, field.name)
        if node.has_parameter(name):
            param = node.get_parameter(name)
        elif isinstance(default, tuple) and not default:
            param = node.declare_parameter(name, Parameter.Type.STRING_ARRAY)
        else:
            param = node.declare_parameter(name, list(default) if isinstance(default, tuple) else default)
        if param.value is not None:
            values[field.name] = param.value
    where = f"node '{node.get_name()}'" + (f", section '{prefix}'" if prefix else "")
    return from_params(cls, values, source=where)
