"""Declare a core config dataclass as ROS parameters and read it back."""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

from rclpy.node import Node
from rclpy.parameter import Parameter

from sg_search.config import from_params

T = TypeVar("T")


def declare_config(node: Node, cls: type[T]) -> T:
    """Declare one parameter per field of ``cls`` (defaults from the dataclass), return the values.

    Wrong types in a params file raise :class:`sg_search.config.ConfigError` naming the
    node and the parameter.
    """
    defaults = cls()
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):  # type: ignore[arg-type]
        default = getattr(defaults, field.name)
        if isinstance(default, tuple) and not default:
            param = node.declare_parameter(field.name, Parameter.Type.STRING_ARRAY)
        else:
            param = node.declare_parameter(
                field.name, list(default) if isinstance(default, tuple) else default
            )
        if param.value is not None:
            values[field.name] = param.value
    return from_params(cls, values, source=f"node '{node.get_name()}'")
