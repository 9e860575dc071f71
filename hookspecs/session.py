"""Session phase hooks: sessions starting, ending and being replaced, subagents, memory.

A *session* is one conversation with its own id. ``on_session_start`` fires when a new
session is set up; ``on_session_end`` fires at the end of every agent run inside it
(one per user turn); ``on_session_finalize`` marks the real end of a session and
``on_session_reset`` the moment ``/new`` or ``/reset`` replaced it. All of them are
observers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .markers import hookspec

if TYPE_CHECKING:
    from .payloads import JSONDict, MemoryAction, MemoryTarget


@hookspec
def on_session_start(session_id: str, model: str, platform: str) -> None:
    """Called once when a brand-new session builds its system prompt.

    Continuing or resuming an existing session does not fire it.

    :param session_id: Id of the new session.
    :param model: Model id the session starts with.
    :param platform: Where the session lives, for example ``"cli"``.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone, backend, exclusive (memory/context engine) and platform
    plugins.
    Fired: by the agent loop, on the first turn of a new session, before the first
    API call.
    """


@hookspec
def on_session_end(
    session_id: str,
    task_id: str | None,
    turn_id: str | None,
    completed: bool,
    interrupted: bool,
    model: str,
    platform: str,
    reason: str | None,
) -> None:
    """Called at the end of every agent run, that is after every user turn.

    Despite the name this is per turn, not per session; use ``on_session_finalize`` to
    act once when a session is really over. It also fires when a run is cut short, for
    example by Ctrl-C or by the program exiting.

    :param session_id: Id of the session the run belonged to.
    :param task_id: Id of the task (agent run), if any.
    :param turn_id: Id of the turn that just ended.
    :param completed: ``True`` if the run produced a final response.
    :param interrupted: ``True`` if the run was stopped before finishing.
    :param model: Model id the run used.
    :param platform: Where the session lives, for example ``"cli"``.
    :param reason: Why the run ended when that is known (for example ``"interrupted"``),
        else ``None``.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone, backend, exclusive (memory/context engine) and platform
    plugins.
    Fired: by the agent loop, when each run returns or is interrupted.
    """


@hookspec
def on_session_finalize(
    session_id: str,
    platform: str,
    reason: str | None,
    old_session_id: str | None,
    new_session_id: str | None,
) -> None:
    """Called once when a session is really over.

    That happens when the CLI exits, when ``/new`` replaces the session, when a gateway
    shuts down or when an idle gateway session expires. Flush buffers and write
    summaries here.

    :param session_id: Id of the session that is ending.
    :param platform: Where the session lived, for example ``"cli"``.
    :param reason: ``"session_boundary"``, ``"new_session"``, ``"shutdown"`` or
        ``"session_expired"``; ``None`` when the caller does not say.
    :param old_session_id: Id of the session being replaced when a new one follows,
        else ``None``.
    :param new_session_id: Id of the session that replaces it, else ``None``.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone, backend, exclusive (memory/context engine) and platform
    plugins.
    Fired: by the front end (CLI or gateway) at every real session boundary.
    """


@hookspec
def on_session_reset(
    session_id: str,
    platform: str,
    reason: str | None,
    old_session_id: str | None,
    new_session_id: str | None,
) -> None:
    """Called after ``/new`` or ``/reset`` has created the replacement session.

    ``on_session_finalize`` has already fired for the old session at this point.

    :param session_id: Id of the session that is now active (the new one).
    :param platform: Where the session lives, for example ``"cli"``.
    :param reason: Why the session was replaced, usually ``"new_session"``; ``None``
        when the caller does not say.
    :param old_session_id: Id of the session that was replaced, when known.
    :param new_session_id: Id of the replacement session, when known.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone, backend, exclusive (memory/context engine) and platform
    plugins.
    Fired: by the front end (CLI or gateway), right after a reset command succeeded.
    """


@hookspec
def subagent_start(
    parent_session_id: str | None,
    parent_turn_id: str | None,
    parent_subagent_id: str | None,
    child_session_id: str,
    child_subagent_id: str,
    child_role: str | None,
    child_goal: str,
) -> None:
    """Called when the agent delegates work and a child agent is created.

    :param parent_session_id: Session id of the delegating agent.
    :param parent_turn_id: Turn id of the delegating agent.
    :param parent_subagent_id: Subagent id of the parent when it is itself a child,
        else ``None``.
    :param child_session_id: Session id given to the child.
    :param child_subagent_id: Subagent id given to the child.
    :param child_role: Role or persona requested for the child, if any.
    :param child_goal: The task the child was given.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone and backend plugins.
    Fired: by the delegation tool, once per child, before the child starts running.
    """


@hookspec
def subagent_stop(
    parent_session_id: str | None,
    parent_turn_id: str | None,
    child_session_id: str,
    child_role: str | None,
    child_summary: str,
    child_status: str,
    duration_ms: float,
) -> None:
    """Called for each child agent after it has finished.

    :param parent_session_id: Session id of the delegating agent.
    :param parent_turn_id: Turn id of the delegating agent.
    :param child_session_id: Session id of the child that finished.
    :param child_role: Role or persona the child had, if any.
    :param child_summary: The child's final report to its parent.
    :param child_status: Outcome, for example ``"completed"``, ``"failed"`` or
        ``"interrupted"``.
    :param duration_ms: Wall time of the child's run in milliseconds.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone, backend and exclusive (memory/context engine) plugins.
    Fired: by the delegation tool, once per child, after its result is collected.
    """


@hookspec
def on_memory_write(
    action: MemoryAction,
    target: MemoryTarget,
    content: str,
    metadata: JSONDict | None,
    session_id: str | None,
    platform: str,
) -> None:
    """Called after the built-in memory tool has changed the agent's memory.

    External memory plugins use it to mirror what the agent chose to remember.

    :param action: ``"add"``, ``"replace"`` or ``"remove"``.
    :param target: ``"memory"`` (the agent's own notes) or ``"user"`` (the user
        profile).
    :param content: The entry that was added, the replacement text, or the removed
        entry.
    :param metadata: Extra details from the tool call (for example the text that was
        replaced), or ``None``.
    :param session_id: Id of the session in which the write happened, if any.
    :param platform: Where the session lives, for example ``"cli"``.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: exclusive (memory) plugins, and standalone plugins that audit memory.
    Fired: by the builtin memory tool, after each write that changed MEMORY.md or USER.md.
    """
