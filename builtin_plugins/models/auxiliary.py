"""Auxiliary model calls: side tasks (compression, web_extract, session_search,
title_generation, vision, approval, ...) each routed to their own provider and model.

    models = kernel.service(MODELS)          # from any plugin (hermes_agent.api.MODELS)
    summary = models.call_llm("compression", [...]).content

Per task, each setting comes from (highest first): the call's arguments, the environment
(``AUXILIARY_<TASK>_PROVIDER`` / ``AUXILIARY_<TASK>_MODEL``), config.yaml
``auxiliary.<task>`` (``provider``, ``model``, ``base_url``, ``api_key``, ``timeout``,
``extra_body``), then the main provider with its profile's auxiliary model. Provider
``auto`` (the default) means the main provider.

A call made for a session (``session_id=``) counts toward that session's tokens, model calls
and cost.
"""

from __future__ import annotations

import logging
import threading
import weakref
from typing import TYPE_CHECKING, Any

from hermes_agent.api import CallContext, ChatRequest, ChatResponse, EventCallback

from .client import ModelClient
from .resolve import resolve_fallbacks, resolve_provider
from .runtime import RuntimeProvider

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.models")

# Default timeout (seconds) per task; other tasks get DEFAULT_AUX_TIMEOUT.
TASK_TIMEOUTS = {"vision": 120.0, "web_extract": 360.0, "compression": 120.0, "skills_hub": 30.0,
                 "approval": 30.0, "mcp": 30.0, "title_generation": 30.0,
                 "session_search": 60.0, "triage_specifier": 120.0, "kanban_decomposer": 180.0,
                 "profile_describer": 60.0, "curator": 600.0}
DEFAULT_AUX_TIMEOUT = 60.0

# Resolved providers (each holding its SDK client) per kernel and task settings. The
# ModelClient around one, whose fallback state lasts a call, is new for every call, so side
# tasks running at once on several threads never switch each other's provider.
_resolved: "weakref.WeakKeyDictionary[Any, dict[tuple[Any, ...], tuple[RuntimeProvider, list[Any]]]]" = (
    weakref.WeakKeyDictionary())
_lock = threading.Lock()


def task_settings(kernel: Kernel, task: str) -> dict[str, Any]:
    """The effective ``auxiliary.<task>`` settings after environment overrides."""
    settings = dict((kernel.config.get("auxiliary") or {}).get(task) or {})
    env = getattr(kernel, "env", None) or {}
    prefix = f"AUXILIARY_{task.upper()}_"
    for key in ("provider", "model", "base_url", "api_key"):
        if env.get(prefix + key.upper()):
            settings[key] = env[prefix + key.upper()]
    return settings


def aux_client(kernel: Kernel, task: str, *, provider: str | None = None, model: str | None = None,
               base_url: str | None = None, api_key: str | None = None) -> ModelClient:
    """A client for ``task``, over the provider resolved for it (cached per settings)."""
    settings = task_settings(kernel, task)
    chosen = provider or settings.get("provider") or "auto"
    if chosen == "auto":
        chosen = ""
    wanted_model = model or settings.get("model") or None
    url = base_url or settings.get("base_url") or None
    key = api_key or settings.get("api_key") or None
    cache_key = (task, chosen, wanted_model, url, key)
    with _lock:
        cached = _resolved.setdefault(kernel, {}).get(cache_key)
    if cached is not None:
        return ModelClient(cached[0], kernel=kernel, fallbacks=cached[1])
    runtime = resolve_provider(kernel, provider=chosen or None, model=wanted_model,
                               base_url=url, api_key=key)
    if not wanted_model and runtime.profile.auxiliary_model and runtime.source != "local":
        runtime.model = runtime.profile.auxiliary_model
    runtime.timeout = float(settings.get("timeout") or TASK_TIMEOUTS.get(task, DEFAULT_AUX_TIMEOUT))
    runtime.extra_body = dict(settings.get("extra_body") or {})
    fallbacks = resolve_fallbacks(kernel)
    with _lock:
        _resolved.setdefault(kernel, {}).setdefault(cache_key, (runtime, fallbacks))
    return ModelClient(runtime, kernel=kernel, fallbacks=fallbacks)


def call_llm(task: str, messages: list[dict[str, Any]], *, kernel: Kernel,
             tools: list[dict[str, Any]] | None = None, max_tokens: int | None = None,
             temperature: float | None = None, reasoning_effort: str | None = None,
             extra_body: dict[str, Any] | None = None, timeout: float | None = None,
             stream: bool = False, on_event: EventCallback | None = None,
             interrupt: threading.Event | None = None, provider: str | None = None,
             model: str | None = None, base_url: str | None = None, api_key: str | None = None,
             session_id: str | None = None) -> ChatResponse:
    """Run one side-task call on the provider configured for ``task``."""
    client = aux_client(kernel, task, provider=provider, model=model, base_url=base_url,
                        api_key=api_key)
    request = ChatRequest(messages, tools=tools, max_tokens=max_tokens, temperature=temperature,
                          reasoning_effort=reasoning_effort, extra_body=extra_body,
                          stream=stream, timeout=timeout)
    response = client.chat(request, on_event=on_event, interrupt=interrupt,
                           context=CallContext(session_id=session_id, task=task,
                                               platform="auxiliary"))
    if session_id:
        record_for_session(kernel, session_id, response)
    return response


def record_for_session(kernel: Kernel, session_id: str, response: ChatResponse) -> None:
    """Count a side task's tokens, call and cost toward the session it served, as ``/usage``,
    ``hermes sessions show`` and ``sessions stats`` report them (the session's model and
    labels are left as they are). Nothing when no store is selected or the session is not
    stored."""
    from hermes_agent import HermesError
    from hermes_agent.api import session_store
    from hermes_agent.kits.sql.values import mark_usage_estimated

    usage, cost = response.usage, response.cost
    try:
        store = session_store(kernel)
        store.update_token_counts(
            session_id, input_tokens=usage.input_tokens, output_tokens=usage.output_tokens,
            cache_read_tokens=usage.cache_read_tokens,
            cache_write_tokens=usage.cache_write_tokens, reasoning_tokens=usage.reasoning_tokens,
            api_call_count=1, estimated_cost_usd=cost.amount_usd if cost else None)
        if usage.estimated:
            mark_usage_estimated(store, session_id)
    except HermesError:  # no store selected, or a session id that is not stored
        return
    except Exception as exc:  # noqa: BLE001 - bookkeeping never costs the caller its answer
        log.warning("usage of a %s call not recorded for session %s: %s", response.provider
                    or "side-task", session_id, exc)
