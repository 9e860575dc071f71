"""Model provider: LM Studio. A local LM Studio server (OpenAI-compatible endpoint on port 1234)."""

from hermes_agent.api import ProviderProfile

PROFILE = ProviderProfile(
    name='lmstudio',
    label='LM Studio',
    api_mode='chat_completions',
    base_url='http://127.0.0.1:1234/v1',
    key_env=('LM_API_KEY',),
    base_url_env='LM_STUDIO_BASE_URL',
    key_required=False,
    local=True,
    auto_detect=False,
    aliases=('lm-studio',),
    key_url='https://lmstudio.ai',
    default_max_tokens=4096,
)


def register(ctx):
    ctx.register_model_provider(PROFILE)
