"""OpenAI-compatible chat client (budget, retries, cache, repair) and versioned prompts."""

from sg_search.llm.client import (
    ChatClient,
    LlmBudgetExceeded,
    LlmConfig,
    LlmCounters,
    LlmError,
    LlmOffline,
    image_part,
    parse_json_object,
    user_message,
)
from sg_search.llm.prompts import PromptError, available_prompts, load_prompt, render

__all__ = [
    "ChatClient",
    "LlmBudgetExceeded",
    "LlmConfig",
    "LlmCounters",
    "LlmError",
    "LlmOffline",
    "PromptError",
    "available_prompts",
    "image_part",
    "load_prompt",
    "parse_json_object",
    "render",
    "user_message",
]
