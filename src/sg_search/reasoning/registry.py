"""Reasoners by name: ``create_reasoner("random", {"seed": 3})``.

Reasoners are plugins: every installed distribution's entry points in the group
``sg_search.reasoners`` (``name = module:factory``, ``factory(params) -> Reasoner``) are
available by name, this package's own among them (setup.py), so a lab adds a reasoner by
installing a package. A factory is imported only when its reasoner is made.
:func:`register_reasoner` adds one in-process (a notebook, a test).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any

from sg_search.reasoning.base import Reasoner

ENTRY_POINT_GROUP = "sg_search.reasoners"

ReasonerFactory = Callable[[Mapping[str, Any]], Reasoner]
_FACTORIES: dict[str, ReasonerFactory] = {}


def register_reasoner(name: str) -> Callable[[ReasonerFactory], ReasonerFactory]:
    """Decorator: make ``factory(params) -> Reasoner`` available under ``name`` in this process."""

    def wrap(factory: ReasonerFactory) -> ReasonerFactory:
        if name in _FACTORIES or name in _plugins():
            raise ValueError(f"reasoner {name!r} is registered twice")
        _FACTORIES[name] = factory
        return factory

    return wrap


def _plugins() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available_reasoners() -> list[str]:
    """Every name :func:`create_reasoner` accepts, sorted."""
    return sorted({*_FACTORIES, *_plugins()})


def create_reasoner(name: str, params: Mapping[str, Any] | None = None) -> Reasoner:
    """A new reasoner; ``KeyError`` listing the known names if ``name`` is not registered;
    ``TypeError`` naming the plugin if its factory does not make a :class:`Reasoner`."""
    factory = _FACTORIES.get(name)
    if factory is None:
        plugin = _plugins().get(name)
        if plugin is None:
            raise KeyError(f"unknown reasoner {name!r}; available: {', '.join(available_reasoners())}")
        factory = plugin.load()
    reasoner = factory(params or {})
    if not isinstance(reasoner, Reasoner):
        raise TypeError(f"reasoner {name!r} ({factory!r}) made a {type(reasoner).__name__}, not a Reasoner")
    return reasoner
