"""Constrained decoding for the local model server (``sg-search llm serve``), with xgrammar.

A request may ask for its answer's form as the OpenAI-compatible servers do:

- ``response_format: {"type": "json_schema", "json_schema": {"schema": {...}}}`` (OpenAI
  structured outputs, vLLM, SGLang): the answer parses and satisfies the schema (enums,
  required keys, ``maxLength``, ``maxItems``, integer ranges).
- ``response_format: {"type": "json_object"}``: any JSON object; with a ``schema`` key beside
  the type (llama.cpp server's form), that schema.
- ``response_format: {"type": "text"}`` or none: unconstrained.
- ``regex`` (SGLang's request field): the whole answer matches the regular expression.
- ``ebnf`` (SGLang's request field): the whole answer is a sentence of the EBNF grammar
  (root rule ``root``; xgrammar's dialect, close to llama.cpp's GBNF).

Anything else is refused with :class:`UnsupportedConstraint` (the server answers 400 naming
it). At each generation step the grammar's token bitmask masks the logits (xgrammar's CPU
kernel); once the grammar is complete only the end of the answer is allowed. An answer cut
off by ``max_tokens`` before the grammar completes is returned as it is, with
``finish_reason`` "length", so the client's repair and fallback see it.

Measured here (docs/BENCHMARKS.md): masking costs well under a millisecond per token beside
45-75 ms of model time; compiling a schema takes ~0.5 s once (xgrammar caches compiled
grammars per tokenizer).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

SUPPORTED = ("json_schema", "json_object", "text", "regex", "ebnf")
"""What the server can constrain to (advertised by ``GET /v1/models``)."""


class UnsupportedConstraint(ValueError):
    """The request asks for a form of answer the server cannot enforce, or its grammar,
    schema or regex does not compile; the message names which."""


@dataclass(frozen=True)
class Constraint:
    """One request's constraint: ``kind`` is "json_schema", "json_object", "regex" or "ebnf";
    ``source`` the schema (JSON text), regex or grammar ("" for any JSON object)."""

    kind: str
    source: str


def constraint_of(body: Mapping[str, Any]) -> Constraint | None:
    """The constraint a chat-completions request body asks for; None when unconstrained."""
    asked = [k for k in ("regex", "ebnf") if body.get(k) is not None]
    response_format = body.get("response_format")
    if response_format is not None and not isinstance(response_format, Mapping):
        raise UnsupportedConstraint("response_format must be an object with a 'type'")
    kind = str(response_format.get("type", "")) if response_format is not None else "text"
    if kind != "text":
        asked.append("response_format")
    if len(asked) > 1:
        raise UnsupportedConstraint(f"ask for one constraint at a time, not {' and '.join(asked)}")
    for field in ("regex", "ebnf"):
        if body.get(field) is not None:
            if not isinstance(body[field], str) or not body[field]:
                raise UnsupportedConstraint(f"'{field}' must be a non-empty string")
            return Constraint(field, body[field])
    if kind == "text":
        return None
    assert response_format is not None
    if kind == "json_schema":
        spec = response_format.get("json_schema")
        schema = spec.get("schema") if isinstance(spec, Mapping) else None
        if not isinstance(schema, Mapping):
            raise UnsupportedConstraint("response_format json_schema needs json_schema.schema (an object)")
        return Constraint("json_schema", json.dumps(schema))  # key order = generation order
    if kind == "json_object":
        schema = response_format.get("schema")
        if schema is not None and not isinstance(schema, Mapping):
            raise UnsupportedConstraint("response_format json_object's schema must be an object")
        return Constraint("json_schema", json.dumps(schema)) if schema else Constraint("json_object", "")
    raise UnsupportedConstraint(
        f"response_format type {kind!r} is not supported; this server constrains to: {', '.join(SUPPORTED)}"
    )


class GrammarCompiler:
    """Compiles constraints for one model's tokenizer (xgrammar caches what it compiled)."""

    def __init__(self, tokenizer: Any, vocab_size: int, stop_token_ids: list[int], threads: int = 2) -> None:
        """``vocab_size``: the model's logits width (may exceed the tokenizer's by padding);
        ``stop_token_ids``: the tokens that end an answer (allowed once the grammar is complete)."""
        import xgrammar

        self._xgr = xgrammar
        self.info = xgrammar.TokenizerInfo.from_huggingface(
            tokenizer, vocab_size=vocab_size, stop_token_ids=stop_token_ids
        )
        self._compiler = xgrammar.GrammarCompiler(self.info, max_threads=threads)

    def compile(self, constraint: Constraint) -> Any:
        """The compiled grammar; :class:`UnsupportedConstraint` naming the error if it fails."""
        try:
            if constraint.kind == "json_object":
                return self._compiler.compile_builtin_json_grammar()
            if constraint.kind == "json_schema":
                # Compact JSON: no free whitespace, so a small model cannot spend its tokens on it.
                return self._compiler.compile_json_schema(
                    constraint.source, any_whitespace=False, separators=(",", ":")
                )
            if constraint.kind == "regex":
                return self._compiler.compile_regex(constraint.source)
            return self._compiler.compile_grammar(constraint.source)
        except (RuntimeError, ValueError, TypeError) as exc:
            raise UnsupportedConstraint(f"the {constraint.kind} does not compile: {str(exc)[:300]}") from exc

    def logits_processor(self, compiled: Any) -> MaskingProcessor:
        """A fresh processor for one generation."""
        return MaskingProcessor(self._xgr, compiled, self.info.vocab_size)


class MaskingProcessor:
    """A transformers logits processor: accepts the token chosen last step, then masks every
    token the grammar does not allow next. One per generation (it holds the matcher's state)."""

    def __init__(self, xgr: Any, compiled: Any, vocab_size: int) -> None:
        self._xgr = xgr
        self.matcher = xgr.GrammarMatcher(compiled)
        self._bitmask = xgr.allocate_token_bitmask(1, vocab_size)
        self._first = True  # the first call sees only the prompt: no token to accept yet

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self._first:
            self._first = False
        elif not self.matcher.accept_token(int(input_ids[0, -1])):
            raise RuntimeError("the grammar matcher refused a token it allowed")  # an xgrammar bug
        self.matcher.fill_next_token_bitmask(self._bitmask)
        self._xgr.apply_token_bitmask_inplace(scores, self._bitmask.to(scores.device))
        return scores
