"""Model provider: OpenAI (Responses API). OpenAI models through the Responses API (reasoning items carried between turns)."""

from hermes_agent.api import ProviderProfile

PROFILE = ProviderProfile(
    name='openai-codex',
    label='OpenAI (Responses API)',
    api_mode='codex_responses',
    base_url='https://api.openai.com/v1',
    key_env=('OPENAI_API_KEY',),
    base_url_env='OPENAI_BASE_URL',
    default_model='gpt-5',
    auxiliary_model='gpt-5-mini',
    aliases=('openai-responses', 'codex'),
    auto_detect=False,
    models=('gpt-5', 'gpt-5-mini', 'gpt-5-codex', 'o3', 'o4-mini'),
    key_url='https://platform.openai.com/api-keys',
    default_max_tokens=32768,
    supports_vision=True,
)


def register(ctx):
    ctx.register_model_provider(PROFILE)
