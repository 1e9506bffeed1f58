"""LLM and VLM reasoners behind the common interface (METHODS.md sections 1-4, SCOUT's
baselines): SG-Nav, MSGNav, SG-RwR, a NavGPT-style agent, MoMa-LLM- and GODHS-style baselines.
All share :class:`~sg_search.reasoning.llm.base.LlmReasoner`: one budgeted, cached client
and a fallback to a learned-utility reasoner when the model is unreachable or unusable."""
