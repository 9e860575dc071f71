"""Builtin plugin: the model-provider machinery shared by every provider plugin.

The provider profiles themselves come from model-provider plugins that call
``ctx.register_model_provider(profile)``; the bundled ones are the rows of one data file
(``plugins/model-providers/catalogue/profiles.yaml``, read by ``kits.model_catalogue``). This package holds the interface and
normalised types (``hermes_agent.api``), the three API-mode transports (:mod:`.chat_completions`,
:mod:`.anthropic_messages`, :mod:`.codex_responses`), resolution (:mod:`.resolve`), the
reliability layer (:mod:`.client`), pricing, auxiliary calls and the ``hermes model`` /
``hermes setup`` commands (declared in its plugin.yaml). Importing it loads
no SDK.
"""


def register(ctx):
    """Offers the ``models`` service (:mod:`.service`); the machinery loads on first use and
    the CLI commands are lazy."""
    from hermes_agent.api import MODELS

    from .service import ModelService

    ctx.register_service(MODELS, ModelService)
    ctx.register_hook("doctor_checks", _doctor_checks,
                      description="hermes doctor: the model providers and their keys")


def _doctor_checks(kernel, config, offline, **_):
    from .doctor import provider_findings

    return provider_findings(kernel, offline)
