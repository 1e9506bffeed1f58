"""OpenAI-compatible chat client with a persistent response cache (see :mod:`.client`)."""

from sg_search.llm.client import ChatClient, LlmConfig, LlmError, LlmOffline

__all__ = ["ChatClient", "LlmConfig", "LlmError", "LlmOffline"]
