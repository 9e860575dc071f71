"""Model provider: Custom endpoint. Any OpenAI-compatible endpoint (vLLM, llama.cpp server, a proxy, ...) at model.base_url."""

from hermes_agent.api import ProviderProfile

PROFILE = ProviderProfile(
    name='custom',
    label='Custom endpoint',
    api_mode='chat_completions',
    base_url='',
    key_env=('CUSTOM_API_KEY',),
    base_url_env='CUSTOM_BASE_URL',
    key_required=False,
    auto_detect=False,
    aliases=('vllm', 'llamacpp', 'llama.cpp', 'openai-compatible'),
    default_max_tokens=4096,
)


def register(ctx):
    ctx.register_model_provider(PROFILE)
