"""Model provider: Ollama. A local Ollama server (OpenAI-compatible endpoint on port 11434)."""

from hermes_agent.api import ProviderProfile

PROFILE = ProviderProfile(
    name='ollama',
    label='Ollama',
    api_mode='chat_completions',
    base_url='http://127.0.0.1:11434/v1',
    key_env=('OLLAMA_API_KEY',),
    base_url_env='OLLAMA_BASE_URL',
    key_required=False,
    local=True,
    auto_detect=False,
    key_url='https://ollama.com/download',
    default_max_tokens=4096,
)


def register(ctx):
    ctx.register_model_provider(PROFILE)
