"""Builtin plugin: ``image_generate`` (toolset ``image_gen``, the original's ``prompt`` and
``aspect_ratio``). Providers are plugins in the ``image_gen`` slot
(``ctx.register_image_gen_provider``), chosen by ``image_gen.provider``: ``openai`` (the
images API through the openai SDK) or ``fal`` (fal.ai). Images are saved to
``$HERMES_HOME/cache/images``; the result's ``media_tag`` has the gateway send them to the
chat as photos. docs/image-generation.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_agent import hookimpl
from hermes_agent.api import with_context

if TYPE_CHECKING:
    from hermes_agent import PluginContext


def register(ctx: "PluginContext") -> None:
    from .tool import IMAGE_SCHEMA, image_generate, select

    kernel = ctx.kernel

    def ready() -> bool:  # offered while the selected provider has its key, as the original
        try:
            select(kernel)
        except Exception:
            return False
        return True

    ctx.register_tool(name="image_generate", toolset="image_gen", schema=IMAGE_SCHEMA,
                      handler=with_context(lambda args, call: image_generate(kernel, args, call)),
                      check_fn=ready, description=IMAGE_SCHEMA["description"], emoji="🎨")


@hookimpl
def register_toolsets(register: Any) -> None:
    register("image_gen", tools=("image_generate",), kind="leaf",
             description="Generate images from a prompt (the provider image_gen.provider selects)")
