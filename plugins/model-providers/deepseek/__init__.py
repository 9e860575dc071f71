"""Model provider: DeepSeek. DeepSeek's OpenAI-compatible API."""

from hermes_agent.api import ProviderProfile

PROFILE = ProviderProfile(
    name='deepseek',
    label='DeepSeek',
    api_mode='chat_completions',
    base_url='https://api.deepseek.com/v1',
    key_env=('DEEPSEEK_API_KEY',),
    base_url_env='DEEPSEEK_BASE_URL',
    default_model='deepseek-chat',
    auxiliary_model='deepseek-chat',
    models=('deepseek-chat', 'deepseek-reasoner'),
    key_url='https://platform.deepseek.com/api_keys',
    default_max_tokens=8192,
)


def register(ctx):
    ctx.register_model_provider(PROFILE)
