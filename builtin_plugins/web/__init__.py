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
from hermes_agent.api.tools import untrusted_output

if TYPE_CHECKING:
    from hermes_agent import PluginContext


def register(ctx: "PluginContext") -> None:
    from .schema import WEB_EXTRACT, WEB_SEARCH
    from .tools import WebTools

    tools = WebTools(ctx.kernel)
    # results are written by anyone on the web: untrusted, named by their host
    search = untrusted_output("web:search")(with_context(tools.search))
    extract = untrusted_output(pages_source)(with_context(tools.extract))
    ctx.register_tool(name="web_search", toolset="web", schema=WEB_SEARCH,
                      handler=search, description=WEB_SEARCH["description"], emoji="🔎")
    ctx.register_tool(name="web_extract", toolset="web", schema=WEB_EXTRACT,
                      handler=extract, description=WEB_EXTRACT["description"], emoji="📄")


def pages_source(args: dict[str, Any]) -> str:
    """``web:<host>`` of the pages a ``web_extract`` call reads (hosts joined by commas)."""
    from urllib.parse import urlsplit

    urls = args.get("urls") or []
    urls = [urls] if isinstance(urls, str) else urls
    hosts = dict.fromkeys(urlsplit(str(u)).hostname or "?" for u in urls)
    return "web:" + (",".join(hosts) or "?")


@hookimpl
def register_toolsets(register: Any) -> None:
    register("web", tools=("web_search", "web_extract"), kind="leaf",
             description="Search the web and read pages (the backend web.backend selects)")
