"""Builtin plugin: recall across sessions.

* ``session_search`` (toolset ``session_search``): the agent searches its earlier
  conversations through the session-store slot and gets query-focused summaries from the
  auxiliary ``session_search`` model (:mod:`.tool`, :mod:`.recall`, :mod:`.summarise`).
* Titles: after a new session's first exchange, the auxiliary ``title_generation`` model
  names it in the background (:mod:`.titles`, through the ``post_llm_call`` hook).

Both reach other plugins only through the ``session_store`` slot and the ``models`` service.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_agent import hookimpl
from hermes_agent.api import with_context

if TYPE_CHECKING:
    from hermes_agent import PluginContext


def register(ctx: "PluginContext") -> None:
    from .schema import SESSION_SEARCH
    from .titles import Titler
    from .tool import SessionSearch

    ctx.register_tool(name="session_search", toolset="session_search", schema=SESSION_SEARCH,
                      handler=with_context(SessionSearch(ctx.kernel)),
                      description=SESSION_SEARCH["description"], emoji="🔍")
    titler = Titler(ctx.kernel)
    ctx.register_hook("post_llm_call", titler.after_turn)
    ctx.register_hook("on_shutdown", titler.drain)


@hookimpl
def register_toolsets(register: Any) -> None:
    register("session_search", tools=("session_search",), kind="leaf",
             description="Search earlier conversations and summarise what was found")
