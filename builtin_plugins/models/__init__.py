"""Builtin plugin: the model-provider machinery shared by every provider plugin.

The provider profiles themselves are bundled plugins (``plugins/model-providers/<name>``)
that call ``ctx.register_model_provider(profile)``. This package holds the interface and
normalised types (:mod:`.types`), the three API-mode transports (:mod:`.chat_completions`,
:mod:`.anthropic_messages`, :mod:`.codex_responses`), resolution (:mod:`.resolve`), the
reliability layer (:mod:`.client`), pricing, auxiliary calls and the ``hermes model`` /
``hermes setup`` commands (declared in its plugin.yaml). Importing it loads
no SDK.
"""


def register(ctx):
    """Nothing to register at load time: the machinery is used through ``hermes_agent``
    (``ModelClient``, ``resolve_provider``, ``call_llm``) and the CLI commands are lazy."""
