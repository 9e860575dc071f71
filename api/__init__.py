"""``hermes_agent.api``: the contracts that plugins share.

What two plugins both need to agree on lives here, never in one of them: the model request
and response types, the tool-call context, the slot providers' base classes and protocols,
the hook payload types and the errors. Nothing here does I/O: shared implementation (SQL,
HTTP, the ASGI server, masking secrets, files) is in ``hermes_agent.kits`` (docs/kits.md).
Names load lazily (PEP 562), so importing this package costs nothing until a name is used.
docs/architecture.md says what may import what.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> module that defines it: one of this package, or (".."-prefixed) a hookspecs module
# the api re-exports. One block per module.
_EXPORTS: dict[str, str] = {
    # models.py: requests, responses, usage, streaming, provider profiles, the client protocol
    "ProviderProfile": "models", "ToolCall": "models", "Usage": "models",
    "Cost": "models", "ChatRequest": "models", "ChatResponse": "models",
    "StreamEvent": "models", "EventCallback": "models", "CancelToken": "models",
    "ModelClient": "models", "CallContext": "models",
    "RetryNotice": "models",
    # model_errors.py
    "ProviderError": "model_errors", "RequestInterrupted": "model_errors",
    "PartialStreamError": "model_errors", "NoProviderError": "model_errors",
    # tools.py: the tool-call context, results and handler marks (the tool contract itself,
    # tool_error's result and the marks, is hookspecs/tool_contract.py's)
    **dict.fromkeys(("ToolCallContext", "ApprovalRequest", "APPROVAL_CHOICES",
                     "ApprovalCallback", "ClarifyCallback", "with_context", "tool_result",
                     "tool_error", "parallel_safe"), "tools"),
    # providers.py: slot provider base classes
    "MemoryProvider": "providers", "ContextEngine": "providers",
    # web.py: the web backends' contract (the web_search slot)
    **dict.fromkeys(("WebResult", "WebPage", "WebError", "WebBackend"), "web"),
    # sessions.py: the session-store slot
    "SessionStore": "sessions", "SessionRow": "sessions", "MessageRow": "sessions",
    "SearchResult": "sessions", "SessionStoreError": "sessions",
    "TitleConflictError": "sessions", "InvalidArgumentError": "sessions",
    "SearchTimeoutError": "sessions", "session_store": "sessions",
    # prompt.py: system-prompt layers
    "LAYERS": "prompt", "LAYER_SEPARATOR": "prompt", "LayerRequest": "prompt",
    "PromptLayers": "prompt", "prompt_layers": "prompt",
    "PROMPT_LAYERS": "prompt",
    # services.py: the services plugins share, each a typed key and its Protocol
    **dict.fromkeys(("AGENT", "AgentFactory", "AgentSession", "AgentTurn", "MODELS", "Models",
                     "APPROVAL_GATE", "ApprovalGate", "ApprovalVerdict", "INJECTION_SCAN",
                     "InjectionScanner", "PLUGIN_HEALTH", "PluginHealth", "InactivePlugin",
                     "CRON", "CronScheduler", "GATEWAY", "GatewayService", "MCP", "McpServers"),
                    "services"),
    # store_capabilities.py: what a session store may offer besides SessionStore
    **dict.fromkeys(("SessionImporter", "LastActiveSessions", "SharedQueueStore",
                     "GatewayQueue"), "store_capabilities"),
    # doctor.py: what `hermes doctor` reports (the doctor_checks hook's findings)
    "Finding": "doctor",
    # hook payload types (hookspecs)
    **dict.fromkeys((
        "AllowDirective", "ApiError", "ApprovalChoice", "ApprovalSurface", "ApproveDirective",
        "BlockDirective", "ContextResult", "GatewayDirective", "JSONDict", "Message",
        "MemoryAction", "MemoryTarget", "PreLlmCallResult", "ProviderSlot", "RewriteDirective",
        "SessionBoundaryReason", "ShutdownReason", "SkipDirective", "ToolCallDirective",
        "ToolStatus", "ToolsetKind", "VerifyBlockDirective", "VerifyContinueDirective",
        "VerifyDirective"
    ), "..hookspecs.payloads"),
    # platforms.py: the platform SDK (adapters, inbound messages, reply streams)
    **dict.fromkeys(("PlatformAdapter", "InboundMessage", "SendResult", "ChatInfo",
                     "PlatformConfig", "ReplyStream"), "platforms"),
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'hermes_agent.api' has no attribute {name!r}")
    where = f"hermes_agent.{module[2:]}" if module.startswith("..") else f"{__name__}.{module}"
    value = getattr(importlib.import_module(where), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
