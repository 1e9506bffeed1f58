"""Reasoners by name: ``create_reasoner("random", {"seed": 3})``."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from sg_search.reasoning.base import Reasoner

ReasonerFactory = Callable[[Mapping[str, Any]], Reasoner]
_FACTORIES: dict[str, ReasonerFactory] = {}


def register_reasoner(name: str) -> Callable[[ReasonerFactory], ReasonerFactory]:
    """Decorator: make ``factory(params) -> Reasoner`` available under ``name``."""

    def wrap(factory: ReasonerFactory) -> ReasonerFactory:
        if name in _FACTORIES:
            raise ValueError(f"reasoner {name!r} is registered twice")
        _FACTORIES[name] = factory
        return factory

    return wrap


def available_reasoners() -> list[str]:
    """Registered reasoner names, sorted."""
    _load_builtin()
    return sorted(_FACTORIES)


def create_reasoner(name: str, params: Mapping[str, Any] | None = None) -> Reasoner:
    """A new reasoner; ``KeyError`` listing the known names if ``name`` is not registered."""
    _load_builtin()
    try:
        factory = _FACTORIES[name]
    except KeyError:
        raise KeyError(f"unknown reasoner {name!r}; available: {', '.join(sorted(_FACTORIES))}") from None
    return factory(params or {})


def _load_builtin() -> None:
    # Importing the modules registers them; kept lazy so heavy reasoners load on demand.
    from sg_search.reasoning import baselines, random_baseline, utility  # noqa: F401
    from sg_search.reasoning.llm import baselines as llm_baselines  # noqa: F401
    from sg_search.reasoning.llm import msgnav, navgpt, sgnav, sgrwr  # noqa: F401
