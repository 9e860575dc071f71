"""Tool phase hooks: around every tool call the model makes.

Order of events for one tool call: ``pre_tool_call`` (may block it or send it for
approval), the tool runs, ``post_tool_call`` (observer), ``transform_tool_result`` (may
replace the text the model will see). The terminal tool additionally offers
``transform_terminal_output`` before its own output limit is applied.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .markers import hookspec

if TYPE_CHECKING:
    from .payloads import JSONDict, ToolCallDirective, ToolStatus


@hookspec
def pre_tool_call(
    tool_name: str,
    args: JSONDict,
    task_id: str | None,
    session_id: str | None,
    tool_call_id: str | None,
    turn_id: str | None,
    api_request_id: str | None,
    middleware_trace: list[JSONDict],
) -> ToolCallDirective | None:
    """Called once before every tool call, after request middleware has run.

    Policy plugins use it to veto a call or to route it to a human for approval;
    everything else may simply observe it.

    :param tool_name: Registered name of the tool about to run.
    :param args: Arguments the model supplied, after middleware rewrites. Do not mutate.
    :param task_id: Id of the task (agent run) the call belongs to, if any.
    :param session_id: Id of the conversation session, if any.
    :param tool_call_id: Provider-assigned id of this tool call.
    :param turn_id: Id of the user turn in progress.
    :param api_request_id: Id of the model API request whose response asked for the call.
    :param middleware_trace: One entry per ``tool_request`` middleware change, in order.
    :returns: ``None`` for no opinion; a ``BlockDirective``
        ``{"action": "block", "message": str}`` to stop the call, its message becoming the
        tool's error result; or an ``ApproveDirective``
        ``{"action": "approve", "message"?: str, "rule_key"?: str}`` to hand the call to
        the approval gate, where a denial or timeout blocks it.

    Dispatch: veto. Every implementation runs and the first valid directive in call order
    wins; a block without a non-empty message, and any other value, is ignored.
    firstresult: no. historic: no.
    Implemented by: standalone and backend plugins (guards, policies, auditing).
    Fired: by the tool executor, once per tool call, before the handler is invoked.
    """


@hookspec
def post_tool_call(
    tool_name: str,
    args: JSONDict,
    result: str,
    task_id: str | None,
    session_id: str | None,
    tool_call_id: str | None,
    turn_id: str | None,
    api_request_id: str | None,
    duration_ms: float,
    status: ToolStatus,
    error_type: str | None,
    error_message: str | None,
    middleware_trace: list[JSONDict],
) -> None:
    """Called after every tool call finishes, including calls that were blocked.

    :param tool_name: Registered name of the tool that ran.
    :param args: Arguments the tool was called with. Do not mutate.
    :param result: The tool's result text (a JSON string by convention).
    :param task_id: Id of the task (agent run) the call belongs to, if any.
    :param session_id: Id of the conversation session, if any.
    :param tool_call_id: Provider-assigned id of this tool call.
    :param turn_id: Id of the user turn in progress.
    :param api_request_id: Id of the model API request whose response asked for the call.
    :param duration_ms: Wall time of the handler in milliseconds (0 when blocked).
    :param status: ``"ok"``, ``"error"`` or ``"blocked"``.
    :param error_type: Short error class such as ``"plugin_block"``, or ``None`` on success.
    :param error_message: Human-readable error text, or ``None`` on success.
    :param middleware_trace: One entry per ``tool_request`` middleware change, in order.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone, backend and exclusive (memory/context engine) plugins.
    Fired: by the tool executor, once per tool call, after the handler returns or the
    call is blocked.
    """


@hookspec(firstresult=True)
def transform_tool_result(
    tool_name: str,
    args: JSONDict,
    result: str,
    task_id: str | None,
    session_id: str | None,
    tool_call_id: str | None,
    turn_id: str | None,
    api_request_id: str | None,
    duration_ms: float,
    status: ToolStatus,
    error_type: str | None,
    error_message: str | None,
) -> str | None:
    """Called after ``post_tool_call`` to let a plugin rewrite a tool's result.

    Use it to redact secrets, shorten noisy output or annotate errors before the
    result enters the conversation.

    :param tool_name: Registered name of the tool that ran.
    :param args: Arguments the tool was called with. Do not mutate.
    :param result: The result text the model would otherwise see.
    :param task_id: Id of the task (agent run) the call belongs to, if any.
    :param session_id: Id of the conversation session, if any.
    :param tool_call_id: Provider-assigned id of this tool call.
    :param turn_id: Id of the user turn in progress.
    :param api_request_id: Id of the model API request whose response asked for the call.
    :param duration_ms: Wall time of the handler in milliseconds (0 when blocked).
    :param status: ``"ok"``, ``"error"`` or ``"blocked"``.
    :param error_type: Short error class, or ``None`` on success.
    :param error_message: Human-readable error text, or ``None`` on success.
    :returns: A ``str`` that replaces the result (the empty string counts), or ``None``
        to leave it alone.

    Dispatch: first string. Implementations are called in order until one returns a
    ``str``, which replaces the result; ``None`` and values of other types are skipped.
    firstresult: yes. historic: no.
    Implemented by: standalone and backend plugins.
    Fired: by the tool executor, once per tool call, right after ``post_tool_call``.
    """


@hookspec(firstresult=True)
def transform_terminal_output(
    command: str,
    output: str,
    returncode: int | None,
    task_id: str | None,
    env_type: str,
) -> str | None:
    """Called when the terminal tool has finished a foreground command.

    It runs before the output is truncated, so a plugin sees everything the command
    printed; the size limit still applies to whatever text it returns.

    :param command: The shell command line that was run.
    :param output: Combined stdout and stderr of the command, untruncated.
    :param returncode: Exit status of the command, or ``None`` if it did not finish.
    :param task_id: Id of the task (agent run) the call belongs to, if any.
    :param env_type: Kind of execution environment, for example ``"local"`` or
        ``"docker"``.
    :returns: A ``str`` that replaces the output (the empty string counts), or ``None``
        to leave it alone.

    Dispatch: first string. Implementations are called in order until one returns a
    ``str``, which replaces the output; ``None`` and values of other types are skipped.
    firstresult: yes. historic: no.
    Implemented by: standalone and backend plugins.
    Fired: by the terminal tool, once per foreground command, before output truncation.
    """

