"""Builtin plugin: the ``web_search`` and ``web_extract`` tools (toolset ``web``).

Backends are plugins in the ``web_search`` slot (``ctx.register_web_search_provider``; those
written for the original are adapted by ``as_web_backend``). config.yaml selects one:
``web.backend``, or ``web.search_backend`` / ``web.extract_backend`` per capability. The
selected backend answers or the tool says why not (the missing key, the unknown name, the
plugin that did not load); another backend answers only when listed in ``web.fallback``
(:mod:`.selection`, :mod:`.runner`). Results are cached per session (:mod:`.cache`); page
text is checked (``check_url``), shortened, scanned and marked untrusted (:mod:`.content`).
``hermes web search|extract`` runs a backend directly (:mod:`.cli`). docs/web.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_agent import hookimpl
from hermes_agent.api import with_context

if TYPE_CHECKING:
    from hermes_agent import PluginContext


def register(ctx: "PluginContext") -> None:
    from .schema import WEB_EXTRACT, WEB_SEARCH
    from .tools import WebTools

    tools = WebTools(ctx.kernel)
    ctx.register_tool(name="web_search", toolset="web", schema=WEB_SEARCH,
                      handler=with_context(tools.search), description=WEB_SEARCH["description"],
                      emoji="🔎")
    ctx.register_tool(name="web_extract", toolset="web", schema=WEB_EXTRACT,
                      handler=with_context(tools.extract), description=WEB_EXTRACT["description"],
                      emoji="📄")


@hookimpl
def register_toolsets(register: Any) -> None:
    register("web", tools=("web_search", "web_extract"), kind="leaf",
             description="Search the web and read pages (the backend web.backend selects)")
