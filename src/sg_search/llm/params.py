"""LLM parameters from command-line options."""

from __future__ import annotations

from typing import Any

import yaml

from sg_search.config import read_yaml


def params_from(base_url: str, model: str, cache: str, extra: list[str] | tuple[str, ...]) -> dict[str, Any]:
    """Parameters from endpoint options and ``KEY=VALUE`` strings, values read as YAML
    (ValueError naming a bad one)."""
    params: dict[str, Any] = {}
    for key, value in (("llm_base_url", base_url), ("llm_model", model), ("llm_cache_dir", cache)):
        if value:
            params[key] = value
    for item in extra:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--llm-param {item!r} is not KEY=VALUE")
        params[key.strip()] = _scalar(value.strip())
    return params


def _scalar(text: str) -> Any:
    """A value read as YAML, as ``ros2 param set`` does ("0.8" -> 0.8, "true" -> True); text
    that is not YAML stays text."""
    try:
        return read_yaml(text) if text else text
    except yaml.YAMLError:
        return text
