"""Gateway, approval, verification and kanban hooks.

These hooks belong to parts of the runtime outside the core agent loop: the chat
gateway that receives messages from platforms, the approval gate for dangerous
commands, the end-of-turn verification step and the kanban task board. Several of them
are specified already so plugins can be written against them, but this version does
not fire them yet (the gateway fires ``pre_gateway_dispatch``); see
``hermes_agent.hookspecs.NOT_FIRED``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .markers import hookspec

if TYPE_CHECKING:
    from .payloads import ApprovalChoice, ApprovalSurface, GatewayDirective, VerifyDirective


@hookspec(firstresult=True)
def pre_gateway_dispatch(event: Any, gateway: Any, session_store: Any) -> GatewayDirective | None:
    """Called for every incoming gateway message, before authorisation and pairing.

    Use it to filter spam, answer nothing to some senders, or normalise text before the
    gateway looks at it.

    :param event: The incoming message event; ``event.text`` holds the message text.
    :param gateway: The gateway runner that received the message.
    :param session_store: The store that maps chats to sessions.
    :returns: ``{"action": "skip", "reason"?: str}`` to drop the message without a reply,
        ``{"action": "rewrite", "text": str}`` to replace its text, ``{"action":
        "allow"}`` to accept it unchanged, or ``None`` for no opinion.

    Dispatch: gateway directive. Implementations are called in order until one returns
    a skip, rewrite or allow directive, which wins; any other value is skipped.
    firstresult: yes. historic: no.
    Implemented by: standalone and platform plugins.
    Fired: by the gateway runner, for every message a platform receives, before access
    control.
    """


@hookspec
def pre_approval_request(
    command: str,
    description: str,
    pattern_key: str | None,
    pattern_keys: list[str],
    session_key: str | None,
    surface: ApprovalSurface,
    turn_id: str | None,
    tool_call_id: str | None,
) -> None:
    """Called when a dangerous command needs an approval decision.

    It is an observer, for example to notify someone on another channel; it cannot
    approve or deny. To stop a tool call, use ``pre_tool_call``.

    :param command: The command that needs approval.
    :param description: Human-readable explanation of why it is considered dangerous.
    :param pattern_key: Key of the first danger rule that matched, if any.
    :param pattern_keys: Keys of every danger rule that matched.
    :param session_key: Key of the session asking, used to remember "allow for this
        session" answers.
    :param surface: Who decides: ``"cli"``, ``"gateway"`` or ``"smart"`` (an auxiliary
        model).
    :param turn_id: Id of the user turn in progress.
    :param tool_call_id: Id of the tool call that ran into the gate.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone and platform plugins.
    Fired: by the approval gate, just before it asks for a decision.
    """


@hookspec
def post_approval_response(
    command: str,
    description: str,
    pattern_key: str | None,
    pattern_keys: list[str],
    session_key: str | None,
    surface: ApprovalSurface,
    turn_id: str | None,
    tool_call_id: str | None,
    choice: ApprovalChoice,
    decided_by: str | None,
) -> None:
    """Called after the approval gate has reached a decision.

    :param command: The command that needed approval.
    :param description: Human-readable explanation of why it is considered dangerous.
    :param pattern_key: Key of the first danger rule that matched, if any.
    :param pattern_keys: Keys of every danger rule that matched.
    :param session_key: Key of the session that asked.
    :param surface: Who decided: ``"cli"``, ``"gateway"`` or ``"smart"``.
    :param turn_id: Id of the user turn in progress.
    :param tool_call_id: Id of the tool call that ran into the gate.
    :param choice: ``"once"``, ``"session"``, ``"always"``, ``"deny"``, ``"timeout"``,
        ``"smart_approve"`` or ``"smart_deny"``.
    :param decided_by: ``"aux_llm"`` when an auxiliary model decided, else ``None``.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone and platform plugins.
    Fired: by the approval gate, right after the decision, before the command runs or
    is refused.
    """


@hookspec
def pre_verify(
    session_id: str | None,
    platform: str,
    model: str,
    coding: bool,
    attempt: int,
    final_response: str,
    changed_paths: list[str],
) -> VerifyDirective | None:
    """Called when files were edited during a turn and the agent is about to finish.

    A plugin can run checks (tests, linters) and send the agent back to work with a
    follow-up message. The number of follow-ups per turn is capped by configuration.

    :param session_id: Id of the conversation session, if any.
    :param platform: Where the session lives, for example ``"cli"``.
    :param model: Model id of the turn.
    :param coding: ``True`` if the turn was classified as a coding task.
    :param attempt: 1-based number of this verification round within the turn.
    :param final_response: The answer the agent is about to give.
    :param changed_paths: Paths of the files edited during the turn.
    :returns: ``{"action": "continue", "message": str}`` or the equivalent
        ``{"decision": "block", "reason": str}`` to keep the agent going, or ``None`` to
        let it finish.

    Dispatch: verify directive. Every implementation runs; the first directive with a
    non-empty message or reason decides, and that text becomes the follow-up.
    firstresult: no. historic: no.
    Implemented by: standalone and backend plugins.
    Not fired by this version: there are no verification nudges yet.
    """


@hookspec
def kanban_task_claimed(
    task_id: str,
    profile_name: str,
    board: str,
    assignee: str,
    run_id: str,
) -> None:
    """Called after a worker has claimed a task on the kanban board.

    :param task_id: Id of the task.
    :param profile_name: Profile the board belongs to.
    :param board: Name of the board.
    :param assignee: Worker that claimed the task.
    :param run_id: Id of the run that will work on the task.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone and platform plugins.
    Not fired by this version: there is no kanban board yet.
    """


@hookspec
def kanban_task_completed(
    task_id: str,
    profile_name: str,
    board: str,
    assignee: str,
    run_id: str,
    summary: str,
) -> None:
    """Called after a kanban task has been marked done.

    :param task_id: Id of the task.
    :param profile_name: Profile the board belongs to.
    :param board: Name of the board.
    :param assignee: Worker that finished the task.
    :param run_id: Id of the run that did the work.
    :param summary: The worker's summary of the result.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone and platform plugins.
    Not fired by this version: there is no kanban board yet.
    """


@hookspec
def kanban_task_blocked(
    task_id: str,
    profile_name: str,
    board: str,
    assignee: str,
    run_id: str,
    reason: str,
) -> None:
    """Called after a kanban task has been marked blocked.

    :param task_id: Id of the task.
    :param profile_name: Profile the board belongs to.
    :param board: Name of the board.
    :param assignee: Worker that gave up on the task.
    :param run_id: Id of the run that was working on it.
    :param reason: Why the task cannot go on.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone and platform plugins.
    Not fired by this version: there is no kanban board yet.
    """
