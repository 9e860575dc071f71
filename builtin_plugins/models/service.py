"""The ``models`` service: how other plugins (the agent, and later memory, compression and
web extraction) call models without importing this plugin::

    models = kernel.service(MODELS)  # from hermes_agent.api import MODELS
    client = models.client(provider="openai", model="gpt-4.1")   # retries, fallback, hooks
    answer = models.call_llm("title_generation", messages).content
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_agent import Kernel


class ModelService:
    def __init__(self, kernel: Kernel):
        self.kernel = kernel

    def client(self, *, provider: str | None = None, model: str | None = None,
               base_url: str | None = None, api_key: str | None = None, retry: Any = None) -> Any:
        """A :class:`~.client.ModelClient` for the provider resolved from these arguments,
        then config.yaml, then the environment (``NoProviderError`` says how to set one up)."""
        from .client import ModelClient

        return ModelClient.from_config(self.kernel, provider=provider, model=model,
                                       base_url=base_url, api_key=api_key, retry=retry)

    def call_llm(self, task: str, messages: list[dict[str, Any]], **options: Any) -> Any:
        """One call for an auxiliary task (``auxiliary.<task>`` in config.yaml picks its
        provider and model); returns the :class:`~hermes_agent.api.ChatResponse`."""
        from .auxiliary import call_llm

        return call_llm(task, messages, kernel=self.kernel, **options)

    def context_length(self, model: str) -> int:
        """The model's context window in tokens (config override, else what the active
        provider's profile, then any profile, lists for it, else known families)."""
        from .context_window import context_window
        from .resolve import installed_profiles

        profiles = installed_profiles(self.kernel)
        active = self.kernel.config.get("model.provider") or ""
        ordered = sorted(profiles.values(), key=lambda p: p.name != active)
        return context_window(model, self.kernel.config, ordered)

    def resolve(self, **options: Any) -> Any:
        """The resolved provider (name, model, base_url, profile) without a call."""
        from .resolve import resolve_provider

        return resolve_provider(self.kernel, **options)
