"""Reasoners by name: ``create_reasoner("random", {"seed": 3})``.

Reasoners are plugins: every installed distribution's entry points in the group
``sg_search.reasoners`` (``name = module:factory``, ``factory(params) -> Reasoner``) are
available by name, this package's own among them (setup.py), so a lab adds a reasoner by
installing a package. A factory is imported only when its reasoner is made.

Each reasoner reads its own settings from its section of the reasoner's parameters
(``reasoner: ros__parameters: <name>: {...}`` in config/sg_search.yaml, as Nav2's plugins
do; "-" in a name becomes "_"), merged over the shared ones (seed, fallback, ``llm_*``). A
factory marked with :func:`takes_params` names the dataclass of its section, so that a host
(the reasoner node) can declare those parameters and a typo is refused with its name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any, TypeVar

from sg_search.reasoning.base import Reasoner

ENTRY_POINT_GROUP = "sg_search.reasoners"

ReasonerFactory = Callable[[Mapping[str, Any]], Reasoner]
F = TypeVar("F")


def takes_params(params_type: type) -> Callable[[F], F]:
    """Decorator of a factory: its section of parameters is the dataclass ``params_type``."""

    def mark(factory: F) -> F:
        factory.params_type = params_type  # type: ignore[attr-defined]
        return factory

    return mark


def section_key(name: str) -> str:
    """The parameter section of reasoner ``name`` (ROS parameter names have no "-")."""
    return name.replace("-", "_")


def reasoner_params_type(name: str) -> type | None:
    """The dataclass of ``name``'s section, or None if it takes none; KeyError if unknown."""
    return getattr(_factory(name), "params_type", None)


def _plugins() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available_reasoners() -> list[str]:
    """Every name :func:`create_reasoner` accepts, sorted."""
    return sorted(_plugins())


def create_reasoner(name: str, params: Mapping[str, Any] | None = None) -> Reasoner:
    """A new reasoner; ``KeyError`` listing the known names if ``name`` is not registered;
    ``TypeError`` naming the plugin if its factory does not make a :class:`Reasoner`."""
    factory = _factory(name)
    reasoner = factory(params or {})
    if not isinstance(reasoner, Reasoner):
        raise TypeError(f"reasoner {name!r} ({factory!r}) made a {type(reasoner).__name__}, not a Reasoner")
    return reasoner


def _factory(name: str) -> ReasonerFactory:
    plugin = _plugins().get(name)
    if plugin is None:
        raise KeyError(f"unknown reasoner {name!r}; available: {', '.join(available_reasoners())}")
    loaded: ReasonerFactory = plugin.load()
    return loaded
