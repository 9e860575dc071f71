"""Typed shapes of hook return values and of the pieces that hook payloads carry.

These are plain :class:`typing.TypedDict` classes and ``Literal`` aliases, so a plugin
can annotate its implementations without pulling in any runtime dependency::

    from hermes_agent.hookspecs.payloads import BlockDirective

    @hookimpl
    def pre_tool_call(tool_name: str) -> BlockDirective | None:
        if tool_name == "terminal":
            return {"action": "block", "message": "terminal is disabled here"}
        return None

A TypedDict is an ordinary ``dict`` at runtime; nothing here validates values. The
kernel checks the shape of what a hook returns and ignores anything that does not fit.
"""

from typing import Any, Literal, NotRequired, TypedDict, Union

__all__ = [
    "AllowDirective",
    "ApiError",
    "ApprovalChoice",
    "ApprovalSurface",
    "ApproveDirective",
    "BlockDirective",
    "ContextResult",
    "GatewayDirective",
    "JSONDict",
    "Message",
    "MemoryAction",
    "MemoryTarget",
    "PreLlmCallResult",
    "ProviderSlot",
    "RewriteDirective",
    "SessionBoundaryReason",
    "ShutdownReason",
    "SkipDirective",
    "ToolCallDirective",
    "ToolStatus",
    "ToolsetKind",
    "VerifyBlockDirective",
    "VerifyContinueDirective",
    "VerifyDirective",
]

# --------------------------------------------------------------------------------------
# Generic payload pieces
# --------------------------------------------------------------------------------------

#: A JSON-like mapping (tool arguments, request and response payloads, usage, ...).
JSONDict = dict[str, Any]

#: One chat message in the provider-neutral form ``{"role": ..., "content": ...}``.
Message = dict[str, Any]

#: Outcome of a tool call as reported to ``post_tool_call`` / ``transform_tool_result``.
ToolStatus = Literal["ok", "error", "blocked"]

#: What the memory tool did (``on_memory_write``).
MemoryAction = Literal["add", "replace", "remove"]

#: Which memory file the write touched: the agent's notes or the user profile.
MemoryTarget = Literal["memory", "user"]

#: Why a session ended or was replaced (``on_session_finalize`` / ``on_session_reset``).
#: Other strings may appear; treat unknown values as a generic boundary.
SessionBoundaryReason = Literal["session_boundary", "new_session", "shutdown", "session_expired"]

#: Why the kernel stops a plugin (``on_shutdown``): the kernel closes, or only this plugin goes.
ShutdownReason = Literal["exit", "unload"]

#: Where an approval prompt is shown: a terminal, a chat gateway, or an auxiliary model.
ApprovalSurface = Literal["cli", "gateway", "smart"]

#: The decision recorded by ``post_approval_response``.
ApprovalChoice = Literal[
    "once", "session", "always", "deny", "timeout", "smart_approve", "smart_deny"
]

#: Provider slots that ``register_providers`` can fill.
ProviderSlot = Literal[
    "memory", "context_engine", "model_provider", "web_search", "platform", "session_store"
]

#: Kinds of toolsets that ``register_toolsets`` can declare.
ToolsetKind = Literal["composite", "leaf", "platform"]


class ApiError(TypedDict):
    """The ``error`` argument of ``api_request_error``."""

    type: str
    message: str


# --------------------------------------------------------------------------------------
# pre_tool_call
# --------------------------------------------------------------------------------------


class BlockDirective(TypedDict):
    """Veto a tool call; ``message`` becomes the tool's error result (must be non-empty)."""

    action: Literal["block"]
    message: str


class ApproveDirective(TypedDict):
    """Send the tool call to the human approval gate before it runs.

    ``message`` is shown to the person asked; ``rule_key`` names the rule so that an
    "always allow" answer can be remembered.
    """

    action: Literal["approve"]
    message: NotRequired[str]
    rule_key: NotRequired[str]


#: What a ``pre_tool_call`` implementation may return (``None`` means "no opinion").
ToolCallDirective = Union[BlockDirective, ApproveDirective]

# --------------------------------------------------------------------------------------
# pre_llm_call
# --------------------------------------------------------------------------------------


class ContextResult(TypedDict):
    """Extra context for the current turn, equivalent to returning the bare string."""

    context: str


#: What a ``pre_llm_call`` implementation may return (``None`` or ``""`` adds nothing).
PreLlmCallResult = Union[str, ContextResult]

# --------------------------------------------------------------------------------------
# pre_gateway_dispatch
# --------------------------------------------------------------------------------------


class SkipDirective(TypedDict):
    """Drop the incoming message without replying; ``reason`` is logged."""

    action: Literal["skip"]
    reason: NotRequired[str]


class RewriteDirective(TypedDict):
    """Replace the incoming message's text, then continue normal handling."""

    action: Literal["rewrite"]
    text: str


class AllowDirective(TypedDict):
    """Accept the message as it is and stop asking further plugins."""

    action: Literal["allow"]


#: What a ``pre_gateway_dispatch`` implementation may return.
GatewayDirective = Union[SkipDirective, RewriteDirective, AllowDirective]

# --------------------------------------------------------------------------------------
# pre_verify
# --------------------------------------------------------------------------------------


class VerifyContinueDirective(TypedDict):
    """Keep the agent working; ``message`` is sent to it as the follow-up."""

    action: Literal["continue"]
    message: str


class VerifyBlockDirective(TypedDict):
    """Claude-Code-style spelling of :class:`VerifyContinueDirective`."""

    decision: Literal["block"]
    reason: str


#: What a ``pre_verify`` implementation may return.
VerifyDirective = Union[VerifyContinueDirective, VerifyBlockDirective]
