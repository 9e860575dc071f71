"""Model provider: OpenAI. The OpenAI API (Chat Completions)."""

from hermes_agent.api import ProviderProfile

PROFILE = ProviderProfile(
    name='openai',
    label='OpenAI',
    api_mode='chat_completions',
    base_url='https://api.openai.com/v1',
    key_env=('OPENAI_API_KEY',),
    base_url_env='OPENAI_BASE_URL',
    default_model='gpt-4.1',
    auxiliary_model='gpt-4.1-mini',
    models=('gpt-5', 'gpt-5-mini', 'gpt-4.1', 'gpt-4.1-mini', 'gpt-4o', 'o4-mini'),
    key_url='https://platform.openai.com/api-keys',
    max_tokens_param='max_completion_tokens',
    default_max_tokens=16384,
    supports_vision=True,
)


def register(ctx):
    ctx.register_model_provider(PROFILE)
