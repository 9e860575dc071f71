"""Model provider: Nous Portal. Nous Research's inference API (Hermes models)."""

from hermes_agent.api import ProviderProfile

PROFILE = ProviderProfile(
    name='nous',
    label='Nous Portal',
    api_mode='chat_completions',
    base_url='https://inference-api.nousresearch.com/v1',
    key_env=('NOUS_API_KEY',),
    base_url_env='NOUS_BASE_URL',
    default_model='Hermes-4-405B',
    auxiliary_model='Hermes-4-70B',
    aliases=('nous-portal',),
    models=('Hermes-4-405B', 'Hermes-4-70B'),
    key_url='https://portal.nousresearch.com',
    default_max_tokens=8192,
)


def register(ctx):
    ctx.register_model_provider(PROFILE)
