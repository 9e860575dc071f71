"""Model phase hooks: around each user turn and each provider API request.

One user turn fires ``pre_llm_call`` once, then ``pre_api_request`` and either
``post_api_request`` or ``api_request_error`` for every API call the tool loop makes,
and finally ``transform_llm_output`` and ``post_llm_call`` once the turn produced a
final answer. The API hooks are observers: to change a request, use ``llm_request``
middleware instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from .markers import hookspec

if TYPE_CHECKING:
    from .payloads import ApiError, JSONDict, Message, PreLlmCallResult


@hookspec
def pre_llm_call(
    session_id: str | None,
    task_id: str | None,
    turn_id: str | None,
    user_message: str,
    conversation_history: list[Message],
    is_first_turn: bool,
    model: str,
    platform: str,
    sender_id: str | None,
) -> PreLlmCallResult | None:
    """Called once per user turn, before the turn's first model API call.

    This is how memory, retrieval and guardrail plugins add context to a turn. The text
    is attached to the current user message when the request is built: it is never
    stored in the session and never placed in the system prompt. Later requests of the
    session send that message as it was sent (while such kept text stays under 16,000
    characters), so each request extends the previous one and the prompt cache holds.

    :param session_id: Id of the conversation session, if any.
    :param task_id: Id of the task (agent run) this turn belongs to, if any.
    :param turn_id: Id of the user turn that is starting.
    :param user_message: Text of the user's message for this turn.
    :param conversation_history: Messages before this turn, oldest first. Do not mutate.
    :param is_first_turn: ``True`` when this is the session's first turn.
    :param model: Model id the turn will use.
    :param platform: Where the message came from, for example ``"cli"``.
    :param sender_id: Platform id of the person who sent the message, if known.
    :returns: Extra context as a non-empty ``str`` or as ``{"context": str}``; ``None``
        or an empty string adds nothing.

    Dispatch: context. Every implementation runs; all non-empty results are joined with
    blank lines, in call order, and appended to the current user message at API-call
    time only.
    firstresult: no. historic: no.
    Implemented by: standalone, backend and exclusive (memory/context engine) plugins.
    Fired: by the agent loop, once per user turn, after any preflight compression and
    before the first API call.
    """


@hookspec
def post_llm_call(
    session_id: str | None,
    task_id: str | None,
    turn_id: str | None,
    user_message: str,
    assistant_response: str,
    conversation_history: list[Message],
    model: str,
    platform: str,
) -> None:
    """Called once per user turn, after the tool loop produced a final answer.

    It is not called when the turn was interrupted or ended without a final response.

    :param session_id: Id of the conversation session, if any.
    :param task_id: Id of the task (agent run) this turn belongs to, if any.
    :param turn_id: Id of the user turn that finished.
    :param user_message: Text of the user's message for this turn.
    :param assistant_response: The final answer, after ``transform_llm_output``.
    :param conversation_history: All messages of the session including this turn.
    :param model: Model id the turn used.
    :param platform: Where the message came from, for example ``"cli"``.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone, backend and exclusive (memory/context engine) plugins.
    Fired: by the agent loop, once per completed turn, after ``transform_llm_output``.
    """


@hookspec(firstresult=True)
def transform_llm_output(
    response_text: str,
    session_id: str | None,
    model: str,
    platform: str,
) -> str | None:
    """Called once per completed turn to let a plugin rewrite the final answer.

    :param response_text: The final answer the model produced for this turn.
    :param session_id: Id of the conversation session, if any.
    :param model: Model id the turn used.
    :param platform: Where the reply is going, for example ``"cli"``.
    :returns: A non-empty ``str`` that replaces the final response, or ``None`` to leave
        it alone.

    Dispatch: first non-empty string. Implementations are called in order until one
    returns a non-empty ``str``, which replaces the response; ``None``, empty strings and
    values of other types are skipped.
    firstresult: yes. historic: no.
    Implemented by: standalone and backend plugins.
    Fired: by the agent loop, once per turn that ends with a final response and was not
    interrupted, before ``post_llm_call``.
    """


@hookspec
def pre_api_request(
    task_id: str | None,
    turn_id: str | None,
    api_request_id: str,
    session_id: str | None,
    user_message: str,
    conversation_history: list[Message],
    platform: str,
    model: str,
    provider: str,
    base_url: str | None,
    api_mode: str,
    api_call_count: int,
    request_messages: list[Message],
    message_count: int,
    tool_count: int,
    approx_input_tokens: int,
    request_char_count: int,
    max_tokens: int | None,
    started_at: float,
    middleware_trace: list[JSONDict],
    request: JSONDict,
) -> None:
    """Called before each API request to the model provider.

    :param task_id: Id of the task (agent run), if any.
    :param turn_id: Id of the user turn in progress.
    :param api_request_id: Unique id of this request; the matching ``post_api_request``
        or ``api_request_error`` carries the same value.
    :param session_id: Id of the conversation session, if any.
    :param user_message: Text of the user's message for this turn.
    :param conversation_history: Messages before this turn, oldest first.
    :param platform: Where the turn came from, for example ``"cli"``.
    :param model: Model id requested.
    :param provider: Name of the model provider plugin handling the request.
    :param base_url: Endpoint base URL with any credentials in it masked (``user:***@``,
        ``?api_key=***``), or ``None`` for the provider's default.
    :param api_mode: Wire protocol of the request, for example ``"chat_completions"``.
    :param api_call_count: 1-based number of this API call within the turn.
    :param request_messages: The messages actually sent, including injected context.
    :param message_count: ``len(request_messages)``.
    :param tool_count: Number of tool schemas offered to the model.
    :param approx_input_tokens: Rough token estimate of the request.
    :param request_char_count: Character size of the serialized request.
    :param max_tokens: Output token limit requested, or ``None``.
    :param started_at: Unix time (seconds) when the request was started.
    :param middleware_trace: One entry per ``llm_request`` middleware change, in order.
    :param request: The provider arguments after middleware, with secrets removed.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone and backend plugins (telemetry, cost tracking).
    Fired: by the model provider layer, before every API call of the tool loop.
    """


@hookspec
def post_api_request(
    task_id: str | None,
    turn_id: str | None,
    api_request_id: str,
    session_id: str | None,
    platform: str,
    model: str,
    provider: str,
    base_url: str | None,
    api_mode: str,
    api_call_count: int,
    api_duration: float,
    started_at: float,
    ended_at: float,
    finish_reason: str | None,
    message_count: int,
    response_model: str | None,
    response: JSONDict,
    usage: JSONDict | None,
    assistant_message: Message,
    assistant_content_chars: int,
    assistant_tool_call_count: int,
) -> None:
    """Called after each successful API response from the model provider.

    :param task_id: Id of the task (agent run), if any.
    :param turn_id: Id of the user turn in progress.
    :param api_request_id: Id shared with the matching ``pre_api_request``.
    :param session_id: Id of the conversation session, if any.
    :param platform: Where the turn came from, for example ``"cli"``.
    :param model: Model id requested.
    :param provider: Name of the model provider plugin that handled the request.
    :param base_url: Endpoint base URL with any credentials in it masked (``user:***@``,
        ``?api_key=***``), or ``None`` for the provider's default.
    :param api_mode: Wire protocol used for the request.
    :param api_call_count: 1-based number of this API call within the turn.
    :param api_duration: Seconds between sending the request and the full response.
    :param started_at: Unix time (seconds) when the request was started.
    :param ended_at: Unix time (seconds) when the response was complete.
    :param finish_reason: Provider's stop reason, for example ``"stop"`` or
        ``"tool_calls"``.
    :param message_count: Number of messages that were sent.
    :param response_model: Model id reported by the provider, if any.
    :param response: The response payload, with secrets removed.
    :param usage: Token usage reported by the provider, or ``None``.
    :param assistant_message: The assistant message built from the response.
    :param assistant_content_chars: Length of the assistant message's text content.
    :param assistant_tool_call_count: Number of tool calls the response asked for.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone and backend plugins (telemetry, cost tracking).
    Fired: by the model provider layer, after every successful API call.
    """


@hookspec
def api_request_error(
    task_id: str | None,
    turn_id: str | None,
    api_request_id: str,
    session_id: str | None,
    platform: str,
    model: str,
    provider: str,
    base_url: str | None,
    api_mode: str,
    api_call_count: int,
    api_duration: float,
    started_at: float,
    ended_at: float,
    status_code: int | None,
    retry_count: int,
    max_retries: int,
    retryable: bool,
    reason: str,
    error: ApiError,
    request: JSONDict,
) -> None:
    """Called when an API request to the model provider fails.

    It fires for each failed attempt, so a request that is retried three times may
    report up to three errors under the same ``api_request_id``.

    :param task_id: Id of the task (agent run), if any.
    :param turn_id: Id of the user turn in progress.
    :param api_request_id: Id shared with the matching ``pre_api_request``.
    :param session_id: Id of the conversation session, if any.
    :param platform: Where the turn came from, for example ``"cli"``.
    :param model: Model id requested.
    :param provider: Name of the model provider plugin that handled the request.
    :param base_url: Endpoint base URL with any credentials in it masked (``user:***@``,
        ``?api_key=***``), or ``None`` for the provider's default.
    :param api_mode: Wire protocol used for the request.
    :param api_call_count: 1-based number of this API call within the turn.
    :param api_duration: Seconds between sending the request and the failure.
    :param started_at: Unix time (seconds) when the request was started.
    :param ended_at: Unix time (seconds) when the failure was seen.
    :param status_code: HTTP status code, or ``None`` for network-level failures.
    :param retry_count: How many retries had already been made for this request.
    :param max_retries: The retry limit in force.
    :param retryable: ``True`` if the request will be retried.
    :param reason: Short classification, for example ``"rate_limit"`` or ``"timeout"``.
    :param error: ``{"type": str, "message": str}`` describing the exception.
    :param request: The provider arguments that were sent, with secrets removed.
    :returns: Ignored.

    Dispatch: broadcast. Every implementation runs; return values are discarded.
    firstresult: no. historic: no.
    Implemented by: standalone and backend plugins (telemetry, alerting).
    Fired: by the model provider layer, after every failed API call attempt.
    """
