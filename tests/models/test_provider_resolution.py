"""Provider resolution order, local-server detection, the no-provider message, pricing."""

from __future__ import annotations

import socket

import pytest

from hermes_agent.api import NoProviderError, ProviderError, Usage
from hermes_agent.builtin_plugins.models.resolve import resolve_provider
from hermes_agent.builtin_plugins.models.pricing import estimate_cost
from hermes_agent.builtin_plugins.models.pricing import PRICING_VERSION


def closed_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens once the socket is closed


NO_LOCAL = {"OLLAMA_BASE_URL": closed_url(), "LM_STUDIO_BASE_URL": closed_url()}


def test_no_provider_message(kernel_for) -> None:
    kernel = kernel_for({}, env=NO_LOCAL)
    with pytest.raises(NoProviderError) as err:
        resolve_provider(kernel)
    message = str(err.value)
    assert message.startswith("No model provider is configured.")
    assert "hermes setup" in message and "hermes model --provider" in message
    assert "11434" in message and "1234" in message and "openrouter" in message


def test_local_server_is_used_when_nothing_is_configured(kernel_for, server) -> None:
    server.models[:] = ["llama3.2:3b", "qwen3:8b"]
    kernel = kernel_for({}, env={**NO_LOCAL, "OLLAMA_BASE_URL": server.openai_base_url})
    runtime = resolve_provider(kernel)
    assert (runtime.name, runtime.model, runtime.source) == ("ollama", "llama3.2:3b", "local")
    assert runtime.base_url == server.openai_base_url


def test_resolution_order(kernel_for) -> None:
    env = {**NO_LOCAL, "OPENROUTER_API_KEY": "or-key", "ANTHROPIC_API_KEY": "ant-key",
           "DEEPSEEK_API_KEY": "ds-key"}
    # environment only: the first provider (in auto order) whose key is set
    runtime = resolve_provider(kernel_for({}, env=env))
    assert (runtime.name, runtime.model, runtime.api_key, runtime.source) == (
        "openrouter", "anthropic/claude-sonnet-4.5", "or-key", "env")
    # HERMES_INFERENCE_PROVIDER beats key detection
    runtime = resolve_provider(kernel_for({}, env={**env, "HERMES_INFERENCE_PROVIDER": "deepseek"}))
    assert (runtime.name, runtime.model) == ("deepseek", "deepseek-chat")
    # config.yaml beats the environment
    kernel = kernel_for({"model": {"provider": "anthropic", "default": "claude-haiku-4-5",
                                   "api_key": "cfg-key"}},
                        env={**env, "HERMES_INFERENCE_PROVIDER": "deepseek"})
    runtime = resolve_provider(kernel)
    assert (runtime.name, runtime.model, runtime.api_key, runtime.api_mode, runtime.source) == (
        "anthropic", "claude-haiku-4-5", "cfg-key", "anthropic_messages", "config")
    # an explicit choice beats config; config's model and key belong to its own provider
    runtime = resolve_provider(kernel, provider="deepseek")
    assert (runtime.name, runtime.model, runtime.api_key, runtime.source) == (
        "deepseek", "deepseek-chat", "ds-key", "explicit")
    runtime = resolve_provider(kernel, model="claude-opus-4-7")
    assert (runtime.name, runtime.model) == ("anthropic", "claude-opus-4-7")
    # aliases and the original's `model: <id>` shape
    runtime = resolve_provider(kernel_for({"model": "x-model"}, env=env), provider="claude")
    assert runtime.name == "anthropic"


def test_missing_key_and_unknown_provider_state_the_fix(kernel_for) -> None:
    kernel = kernel_for({"model": {"provider": "gemini"}}, env=NO_LOCAL)
    with pytest.raises(ProviderError) as err:
        resolve_provider(kernel)
    assert "GEMINI_API_KEY or GOOGLE_API_KEY" in str(err.value) and "hermes setup" in str(err.value)
    with pytest.raises(ProviderError) as err:
        resolve_provider(kernel, provider="nope")
    assert "'nope' is not installed" in str(err.value) and "openrouter" in str(err.value)
    with pytest.raises(ProviderError, match="needs a base_url"):
        resolve_provider(kernel, provider="custom", model="m")


def test_pricing_estimates_and_unknowns() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=1_000_000,
                  cache_write_tokens=0)
    cost = estimate_cost(None, "anthropic/claude-haiku-4.5", usage)
    assert cost.status == "estimated" and cost.pricing_version == PRICING_VERSION
    assert cost.amount_usd == pytest.approx(1.0 + 0.5 + 0.1)
    dated = estimate_cost(None, "gpt-4.1-2025-04-14", Usage(output_tokens=1_000_000))
    assert dated.amount_usd == pytest.approx(8.0)
    unknown = estimate_cost(None, "some-new-model", usage)
    assert unknown.amount_usd is None and unknown.status == "unknown"
    # a bucket without a price makes the whole estimate unknown, never zero
    no_write = estimate_cost(None, "gpt-4o", Usage(input_tokens=10, cache_write_tokens=5))
    assert no_write.amount_usd is None and no_write.status == "unknown"
