"""Prompt templates: versioned text files in ``sg_search/llm/prompts/``, one per prompt.

A template file starts with ``#`` header lines (the first is ``# <name> v<version>``; the
others say what the prompt is for and what its placeholders hold) followed by the text, with
``$placeholder`` fields (:class:`string.Template`; ``$$`` is a literal dollar). Rendering
checks that every placeholder gets a value and no value goes unused, so a renamed field fails
loudly instead of sending a prompt with a hole in it. Changing a template's text changes the
cache keys of its requests, so cached answers never outlive the prompt that produced them;
bump the version whenever the meaning changes.
"""

from __future__ import annotations

import functools
import re
import string
from dataclasses import dataclass
from pathlib import Path

PROMPT_DIR = Path(__file__).parent / "prompts"
_HEADER = re.compile(r"^# (?P<name>[a-z0-9_]+) v(?P<version>\d+)\s*$")


class PromptError(ValueError):
    """A template is missing, malformed, or was rendered with wrong fields."""


@dataclass(frozen=True)
class PromptTemplate:
    """One prompt: its name, version, purpose (header comments) and body."""

    name: str
    version: int
    purpose: str
    body: str

    @property
    def fields(self) -> set[str]:
        """The placeholder names in the body."""
        names = set()
        for match in string.Template.pattern.finditer(self.body):
            name = match.group("named") or match.group("braced")
            if name:
                names.add(name)
        return names

    def render(self, **values: object) -> str:
        """The body with every placeholder filled."""
        missing, unused = self.fields - set(values), set(values) - self.fields
        if missing or unused:
            raise PromptError(
                f"prompt {self.name} v{self.version}: missing {sorted(missing)}, unused {sorted(unused)}"
            )
        return string.Template(self.body).substitute({k: str(v) for k, v in values.items()})


@functools.cache
def load_prompt(name: str) -> PromptTemplate:
    """The template ``<name>.txt``; :class:`PromptError` naming the known ones if absent."""
    path = PROMPT_DIR / f"{name}.txt"
    if not path.is_file():
        raise PromptError(f"no prompt template {name!r}; known: {', '.join(available_prompts())}")
    lines = path.read_text().splitlines()
    header = _HEADER.match(lines[0]) if lines else None
    if header is None or header["name"] != name:
        raise PromptError(f"{path}: the first line must be '# {name} v<version>'")
    comments = [line[1:].strip() for line in lines[1:] if line.startswith("#")]
    body_start = 1 + len(comments)
    body = "\n".join(lines[body_start:]).strip("\n")
    return PromptTemplate(name, int(header["version"]), " ".join(comments), body)


def render(name: str, **values: object) -> str:
    """Render template ``name`` (see :meth:`PromptTemplate.render`)."""
    return load_prompt(name).render(**values)


def available_prompts() -> list[str]:
    """The template names, sorted."""
    return sorted(p.stem for p in PROMPT_DIR.glob("*.txt"))
