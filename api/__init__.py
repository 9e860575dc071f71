"""``hermes_agent.api``: the contracts that plugins share.

What two plugins both need lives here, never in one of them: the model request and response
types, the tool-call context, the slot providers' base classes and protocols, the hook
payload types, and the few helpers every plugin author wants (tool results, masking secrets,
private files). Names load lazily (PEP 562), so importing this package costs nothing until a
name is used. docs/architecture.md says what may import what.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> module that defines it: one of this package, or (".."-prefixed) a kernel module the
# api re-exports. One block per module.
_EXPORTS: dict[str, str] = {
    # models.py: requests, responses, usage, streaming, provider profiles, the client protocol
    "ProviderProfile": "models", "API_MODES": "models", "ToolCall": "models", "Usage": "models",
    "Cost": "models", "ChatRequest": "models", "ChatResponse": "models",
    "StreamEvent": "models", "EventCallback": "models", "CancelToken": "models",
    "ModelProvider": "models", "ModelClient": "models", "CallContext": "models",
    "RetryNotice": "models",
    # model_errors.py
    "ProviderError": "model_errors", "RequestInterrupted": "model_errors",
    "PartialStreamError": "model_errors", "NoProviderError": "model_errors",
    # tools.py and interrupt.py: the tool-call context, results and the interrupt flag
    **dict.fromkeys(("ToolCallContext", "ApprovalRequest", "APPROVAL_CHOICES",
                     "ApprovalCallback", "ClarifyCallback", "with_context", "tool_result",
                     "tool_error", "tool_status", "parallel_safe", "is_parallel_safe"),
                    "tools"),
    "set_interrupted": "interrupt", "is_interrupted": "interrupt",
    # providers.py: slot provider base classes
    "MemoryProvider": "providers", "ContextEngine": "providers",
    "WebSearchProvider": "providers",
    # tokens.py: the rough token count of messages the host and context engines share
    "estimate_tokens": "tokens", "estimate_message_tokens": "tokens", "estimate_text_tokens": "tokens",
    # web.py: the web backends' contract (the web_search slot)
    **dict.fromkeys(("WebResult", "WebPage", "WebError", "WebBackend", "as_web_backend"), "web"),
    # web_http.py: the JSON-over-HTTP client web backends share (retries, masked errors)
    **dict.fromkeys(("WebService", "WebHTTP", "retry_after_seconds", "http_options"),
                    "web_http"),
    # http_pools.py: the network backends of an httpx2 client's connection pools
    "wrap_network_backends": "http_pools",
    "HTTPWebBackend": "http_backend",
    # net.py: SSRF guards for fetching what the model asks for
    "CheckedURL": "net", "check_url": "net", "is_public_address": "net", "Resolver": "net",
    "system_resolve": "net",
    # fetcher.py: the SSRF-safe fetcher (pinned addresses, re-checked redirects, caps)
    "fetch": "fetcher", "Fetched": "fetcher", "is_text_type": "fetcher",
    # memory_health.py: what the memory manager records of the external provider
    "ProviderHealth": "memory_health", "load_health": "memory_health",
    "save_health": "memory_health", "health_path": "memory_health",
    # sessions.py: the session-store slot
    "SessionStore": "sessions", "SessionRow": "sessions", "MessageRow": "sessions",
    "SearchResult": "sessions", "SessionStoreError": "sessions",
    "TitleConflictError": "sessions", "InvalidArgumentError": "sessions",
    "SearchTimeoutError": "sessions", "SEARCH_BUDGET_S": "sessions",
    "session_store": "sessions",
    # session_values.py and session_query.py: what every session store shares (argument
    # normalising, column values, the search query language)
    **dict.fromkeys(("public_methods_at_edge", "clean_text", "clean_optional",
                     "MAX_STORE_LIMIT", "JSON_PREFIX", "JSON_COLUMNS", "encode_content",
                     "decode_content", "encode_json", "decode_json", "sanitize_title",
                     "tool_call_count", "USAGE_ESTIMATED", "model_config_dict",
                     "usage_estimated"), "session_values"),
    **dict.fromkeys(("SearchQuery", "SearchTerm", "parse_search_query", "sanitize_fts5_query",
                     "manual_snippet", "CJK_CLASS", "SEARCH_CJK", "SEARCH_MAX_QUERY",
                     "SEARCH_MAX_TERMS", "SEARCH_MAX_PREFIX_TERMS", "SEARCH_MIN_PREFIX"),
                    "session_query"),
    # sql_sessions.py, sql_lineage.py, sql_search.py and sql_rows.py: the SQL every SQL
    # session store shares, written once with the dialect as a parameter
    **dict.fromkeys(("SqlDialect", "SessionSql", "SqlSessionMethods", "model_config_text",
                     "write_session_title", "delete_session_rows", "create_error"),
                    "sql_sessions"),
    "like_escape": "sql_lineage",
    **dict.fromkeys(("SearchSql", "search_results", "search_filters"), "sql_search"),
    **dict.fromkeys(("message_values", "insert_message_rows", "insert_session_row",
                     "import_session_records", "tally_import"), "sql_rows"),
    # prompt.py: system-prompt layers
    "LAYERS": "prompt", "LAYER_SEPARATOR": "prompt", "LayerRequest": "prompt",
    "LayerFn": "prompt", "PromptLayers": "prompt", "prompt_layers": "prompt",
    # hook payloads and results (hookspecs)
    "tool_directive": "..hookspecs.results", "join_context": "..hookspecs.results",
    **dict.fromkeys((
        "AllowDirective", "ApiError", "ApprovalChoice", "ApprovalSurface", "ApproveDirective",
        "BlockDirective", "ContextResult", "GatewayDirective", "JSONDict", "Message",
        "MemoryAction", "MemoryTarget", "PreLlmCallResult", "ProviderSlot", "RewriteDirective",
        "SessionBoundaryReason", "ShutdownReason", "SkipDirective", "ToolCallDirective",
        "ToolStatus", "ToolsetKind", "VerifyBlockDirective", "VerifyContinueDirective",
        "VerifyDirective"
    ), "..hookspecs.payloads"),
    # asgi_server.py: serving a platform's HTTP app on the gateway's loop
    **dict.fromkeys(("AsgiServer", "ClientLimits", "client_limits", "BodyRefused",
                     "BodyTooLarge", "BodyIncomplete", "read_body"), "asgi_server"),
    # platforms.py: the platform SDK (adapters, inbound messages, reply splitting)
    **dict.fromkeys(("PlatformAdapter", "InboundMessage", "SendResult", "ChatInfo",
                     "MessageHandler", "PlatformConfig", "split_message", "ReplyStream",
                     "EditedReply", "platform_setting", "config_secret", "id_set", "http_url"),
                    "platforms"),
    # secrets.py
    "mask_url": "secrets", "mask_secrets": "secrets", "SecretMaskingFilter": "secrets",
    "install_log_masking": "secrets", "command_env": "secrets",
    "secret_env_names": "secrets",
    # secret_text.py: secrets in text to store, in setting names, in config.yaml shown
    **dict.fromkeys(("find_secret", "looks_secret", "is_secret_name", "mask_config_text"),
                    "secret_text"),
    # private_process.py: the agent's commands cannot read hermes's environment or memory
    "keep_process_private": "private_process",
    # files.py
    "private_dir": "files", "write_atomic": "files", "set_env_values": "files",
    "unset_env_values": "files",
    "pid_alive": "files",
    # cli.py and text.py: for the CLI commands plugins add
    "cli_kernel": "cli", "reload_cli_kernel": "cli", "report_config_warnings": "cli",
    "ListingGroup": "cli", "confirm_at_terminal": "cli",
    "editor_command": "editor", "run_editor": "editor",
    "first_sentence": "cli", "plural": "text", "ellipsize": "text", "table": "text",
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
