"""Names the distilled knowledge never saw, scored as a broader name it knows.

The knowledge models embed a name with SBERT, so any name gets a score; but a name far from
every name of the distilled data ("parer", "tablefork", "carryall") is scored by whatever its
embedding happens to lie near ("parer": 0.03 in a kitchen, "paring knife": 0.95). A name
outside the data's vocabulary is therefore scored as its nearest broader name inside it, taken
from a taxonomy (bddl's WordNet hypernyms: parer -> knife, tablefork -> fork, carryall -> bag;
:func:`sg_search.sim.hypernyms.bddl_name_aliases` builds the table). A name the data knows is
never replaced, nor a vessel with its contents ("bottle of vodka": the phrase scores better
than either part, docs/BENCHMARKS.md knowledge, session 68).

File: ``name_aliases.json`` = ``{"provenance": {...}, "aliases": {name: broader name, ...}}``,
names in knowledge text (:func:`~sg_search.reasoning.knowledge.names.knowledge_text`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from sg_search.reasoning.knowledge.datasets import KnowledgeDataError, default_data_dir

ALIASES_FILE = "name_aliases.json"


class NameAliases:
    """name -> the name it is scored as (module docstring); other names map to themselves."""

    def __init__(self, aliases: Mapping[str, str]) -> None:
        self.aliases = dict(aliases)

    def __call__(self, text: str) -> str:
        """``text`` (knowledge text) or the broader name it is scored as."""
        return self.aliases.get(text, text)

    def save(self, path: Path, provenance: Mapping[str, Any]) -> None:
        """Write the file of the module docstring, sorted (byte-reproducible)."""
        body = {"provenance": dict(provenance), "aliases": dict(sorted(self.aliases.items()))}
        path.write_text(json.dumps(body, indent=1, sort_keys=True) + "\n")

    @classmethod
    def load(cls, path: Path) -> NameAliases:
        """Read a ``name_aliases.json``; a clear error names the file when it is not one."""
        try:
            body = json.loads(path.read_text())
            return cls({str(k): str(v) for k, v in body["aliases"].items()})
        except (OSError, json.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            raise KnowledgeDataError(f"{path}: not a name aliases file ({exc!r})") from exc

    @classmethod
    def load_default(cls) -> NameAliases:
        """The table shipped with the package."""
        return cls.load(default_data_dir() / ALIASES_FILE)
