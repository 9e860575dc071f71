"""Model provider: OpenRouter. Hundreds of models behind one OpenAI-compatible API."""

from hermes_agent.api import ProviderProfile

PROFILE = ProviderProfile(
    name='openrouter',
    label='OpenRouter',
    api_mode='chat_completions',
    base_url='https://openrouter.ai/api/v1',
    key_env=('OPENROUTER_API_KEY',),
    base_url_env='OPENROUTER_BASE_URL',
    default_model='anthropic/claude-sonnet-4.5',
    auxiliary_model='google/gemini-2.5-flash',
    models=('anthropic/claude-sonnet-4.5', 'openai/gpt-5', 'google/gemini-2.5-pro', 'deepseek/deepseek-chat', 'nousresearch/hermes-4-405b'),
    key_url='https://openrouter.ai/keys',
    default_max_tokens=16384,
    supports_vision=True,
)


def register(ctx):
    ctx.register_model_provider(PROFILE)
