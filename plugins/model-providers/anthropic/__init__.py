"""Model provider: Anthropic. Claude models through the native Anthropic Messages API (prompt caching, extended thinking)."""

from hermes_agent.api import ProviderProfile

PROFILE = ProviderProfile(
    name='anthropic',
    label='Anthropic',
    api_mode='anthropic_messages',
    base_url='https://api.anthropic.com',
    key_env=('ANTHROPIC_API_KEY', 'ANTHROPIC_TOKEN'),
    base_url_env='ANTHROPIC_BASE_URL',
    default_model='claude-sonnet-4-6',
    auxiliary_model='claude-haiku-4-5',
    aliases=('claude',),
    models=('claude-opus-4-7', 'claude-sonnet-4-6', 'claude-haiku-4-5'),
    key_url='https://console.anthropic.com/settings/keys',
    default_max_tokens=16384,
    supports_vision=True,
)


def register(ctx):
    ctx.register_model_provider(PROFILE)
