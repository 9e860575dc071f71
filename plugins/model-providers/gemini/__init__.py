"""Model provider: Google Gemini. Gemini models through Google's OpenAI-compatible endpoint."""

from hermes_agent.api import ProviderProfile

PROFILE = ProviderProfile(
    name='gemini',
    label='Google Gemini',
    api_mode='chat_completions',
    base_url='https://generativelanguage.googleapis.com/v1beta/openai',
    key_env=('GEMINI_API_KEY', 'GOOGLE_API_KEY'),
    base_url_env='GEMINI_BASE_URL',
    default_model='gemini-2.5-pro',
    auxiliary_model='gemini-2.5-flash',
    aliases=('google',),
    models=('gemini-2.5-pro', 'gemini-2.5-flash', 'gemini-2.5-flash-lite'),
    key_url='https://aistudio.google.com/apikey',
    default_max_tokens=16384,
    supports_vision=True,
)


def register(ctx):
    ctx.register_model_provider(PROFILE)
