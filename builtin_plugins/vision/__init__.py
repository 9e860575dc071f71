"""Builtin plugin: the ``vision_analyze`` tool (toolset ``vision``), which answers a
question about an image (a local path, a stored image's path, an http(s) URL or a data URL)
through the auxiliary ``vision`` model, as in the original. The images users send
(``hermes chat``, Telegram, Discord, the api-server) are stored and sent by the agent with
``hermes_agent.kits.images``, which this plugin owns. docs/vision.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_agent import hookimpl
from hermes_agent.api import parallel_safe, with_context
from hermes_agent.api.tools import untrusted_output

if TYPE_CHECKING:
    from hermes_agent import PluginContext


def register(ctx: "PluginContext") -> None:
    from .tool import VISION_ANALYZE, VisionTool

    tool = VisionTool(ctx.kernel)
    handler = parallel_safe(untrusted_output(image_source)(with_context(tool.analyze)))
    ctx.register_tool(name="vision_analyze", toolset="vision", schema=VISION_ANALYZE,
                      handler=handler, description=VISION_ANALYZE["description"], emoji="👁")


def image_source(args: dict[str, Any]) -> str | None:
    """An image from the web is untrusted (text in it is anyone's); a local file is not."""
    from urllib.parse import urlsplit

    url = str(args.get("image_url") or "")
    if url.startswith(("http://", "https://")):
        return f"web:{urlsplit(url).hostname or '?'}"
    return None


@hookimpl
def register_toolsets(register: Any) -> None:
    register("vision", tools=("vision_analyze",), kind="leaf",
             description="Look at images: answer questions about an image path or URL")
