"""``/background PROMPT`` (``/bg``): a turn that runs on its own while the chat goes on.

It runs in a new stored session of its own (a sibling agent on the same kernel, with this
chat's model, tools, personality and reasoning effort); its answer is printed when it is done.
``/agents`` lists it with the subagents, ``/stop`` stops it, and it stops when the chat ends.
Nobody is asked questions for it: commands that need an approval are denied, as with ``-q``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from hermes_agent.api import CancelToken
from hermes_agent.kits.text import ellipsize

if TYPE_CHECKING:
    from ..subagents import Child
    from .state import ChatState

Say = Callable[[str], None]  # prints a finished task's answer (from its thread)


def start(state: ChatState, args: str) -> str:
    from ..delegate import subagents_of
    from ..loop import Agent
    from ..subagents import Child

    prompt = args.strip()
    if not prompt:
        return "Usage: /background PROMPT (runs on its own; its answer is printed when done)"
    parent = state.agent
    options = replace(parent.options, approval_callback=None, clarify_callback=None,
                      receive_injected=False, parent_session_id=None)
    agent = Agent(state.kernel, options, client=parent.client.fork(),
                  store=parent.sessions.store)
    child = Child(prompt, agent, background=True, token=CancelToken())
    subagents = subagents_of(parent)
    number = subagents.add(child, lambda: _run(child, state.say))
    return (f"Background task #{number} started in session {agent.session_id}: "
            f"{ellipsize(prompt, 60)}")


def _run(child: Child, say: Say | None) -> None:
    agent = child.agent
    try:
        result = agent.run_conversation(child.goal, interrupt=child.token)
    except BaseException as exc:  # reported, never raised on a thread nobody joins
        child.status = "failed"
        if say is not None:
            say(f"Background task ({agent.session_id}) failed: {type(exc).__name__}: {exc}")
        return
    finally:
        agent.finalize("background_done")
    child.status = ("interrupted" if result.interrupted else
                    "completed" if result.completed else "failed")
    child.api_calls = result.api_calls
    if say is None:
        return
    if result.completed:
        say(f"Background task ({agent.session_id}) finished:\n{result.final_response}")
    else:
        say(f"Background task ({agent.session_id}) {child.status}"
            + (f": {result.error}" if result.error else "."))
