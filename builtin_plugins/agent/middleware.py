"""``ctx.register_middleware`` applied: the four kinds of Hermes Agent 0.19.

Hooks observe; middleware changes what happens. The callbacks of a kind run in registration
order (``kernel.middleware_for(kind)``), each given the payload by keyword plus
``middleware_schema_version`` and ``telemetry_schema_version``:

- ``tool_request`` / ``llm_request`` (:meth:`Middleware.rewrite`): each callback gets its own
  deep copy of the current payload (``args`` / ``request``) and of the original
  (``original_args`` / ``original_request``) and may return ``{"args": {...}}`` /
  ``{"request": {...}}`` to replace it for the next one. Each replacement adds one entry
  (the ``source``, ``reason`` and ``name`` strings the callback returned beside it, else
  ``{"source": "plugin"}``) to the ``middleware_trace`` the hooks report. A callback that
  raises is logged and skipped.
- ``tool_execution`` / ``llm_execution`` (:meth:`Middleware.execute`): each callback wraps
  the rest of the chain, the tool or model call last, and gets ``next_call(payload=None)``.
  ``next_call`` runs once; a second call raises ``RuntimeError``. A callback that raises
  before calling it is logged and the chain goes on with the next one; one that raises after
  it succeeded is logged and the downstream result is kept; an error from downstream (the
  tool, the model call, a later callback's) propagates.

A callback that tries to stop hermes (``sys.exit``, a ``KeyboardInterrupt`` the user did not
press) is skipped like any failure, and its plugin is unloaded for the rest of the session.

The agent's tool executor and the model client (through ``CallContext.middleware``) call
this module; it imports nothing of the agent.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from copy import deepcopy
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from hermes_agent import reraise_shutdown
from hermes_agent.api import ToolCallContext

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.middleware")
MIDDLEWARE_SCHEMA_VERSION = "hermes.middleware.v1"
TELEMETRY_SCHEMA_VERSION = "hermes.observer.v1"
TRACE_KEYS = ("source", "reason", "name")

Payload = dict[str, Any]
Trace = list[dict[str, str]]


def _copy(value: Any) -> Any:
    """A deep copy; a shallow one when something inside cannot be copied (a client object)."""
    try:
        return deepcopy(value)
    except Exception:  # noqa: BLE001 - any object may refuse to be copied
        return dict(value) if isinstance(value, dict) else value


def owner(callback: Callable[..., Any]) -> str:
    """Where a callback comes from: the plugin's module and the function's name (a directory
    plugin's module is ``hermes_plugins.<name>``)."""
    module = getattr(callback, "__module__", None) or "?"
    return f"{module}:{getattr(callback, '__qualname__', repr(callback))}"


def _failed(kernel: Kernel, kind: str, callback: Callable[..., Any], exc: BaseException,
            outcome: str) -> None:
    """Log a callback's failure. One that tried to stop hermes (``SystemExit``, a
    ``KeyboardInterrupt`` the user did not press, any non-``Exception``) gets its plugin
    unloaded, as a hook or a tool doing the same does."""
    reraise_shutdown(exc)  # the user's Ctrl-C is not the plugin's failure
    text = str(exc).strip().splitlines()
    log.warning("middleware %r: callback %s raised %s%s (%s)", kind, owner(callback),
                type(exc).__name__, f": {text[0]}" if text else "", outcome)
    if not isinstance(exc, Exception):
        plugin = next((name for registered, fn, name in kernel.middleware
                       if registered == kind and fn is callback), None)
        if plugin is not None:
            kernel.quarantine(plugin, f"its {kind} middleware", exc)


def trace_entry(result: Payload) -> dict[str, str]:
    """The trace entry of one replacement: the labels the callback returned beside it."""
    entry = {key: result[key] for key in TRACE_KEYS
             if isinstance(result.get(key), str) and result[key]}
    return entry or {"source": "plugin"}


@dataclass
class _Frame:
    """One execution callback's use of its ``next_call``."""

    called: bool = False
    succeeded: bool = False
    result: Any = None


class Middleware:
    """The registered middleware of one kernel, as the agent applies it."""

    def __init__(self, kernel: Kernel):
        self.kernel = kernel

    def callbacks(self, kind: str) -> list[Callable[..., Any]]:
        return list(self.kernel.middleware_for(kind))

    def rewrite(self, kind: str, key: str, payload: Payload, context: Payload
                ) -> tuple[Payload, Trace]:
        """``payload`` after the ``kind`` request middleware (``key`` is ``"args"`` or
        ``"request"``), and the trace of the changes. Unchanged (the same object) when no
        callback is registered."""
        callbacks = self.callbacks(kind)
        if not callbacks:
            return payload, []
        original, current = _copy(payload), _copy(payload)
        trace: Trace = []
        for callback in callbacks:
            try:
                result = callback(**_kwargs(context, {key: _copy(current),
                                                      f"original_{key}": _copy(original)}))
            except BaseException as exc:  # noqa: BLE001 - isolated like a hook's failure
                _failed(self.kernel, kind, callback, exc, "skipped")
                continue
            replaced = result.get(key) if isinstance(result, dict) else None
            if isinstance(replaced, dict):
                current = _copy(replaced)
                trace.append(trace_entry(result))
        return current, trace

    def execute(self, kind: str, key: str, payload: Payload,
                terminal: Callable[[Payload], Any], context: Payload) -> Any:
        """``terminal(payload)`` (the tool or the model call) wrapped by the ``kind`` execution
        middleware; ``original_<key>`` in ``context`` is passed on, else ``payload``."""
        callbacks = self.callbacks(kind)
        if not callbacks:
            return terminal(payload)
        context = {f"original_{key}": payload, **context}

        def call_at(index: int, value: Payload) -> Any:
            if index == len(callbacks):
                return terminal(value)
            callback, frame = callbacks[index], _Frame()

            def next_call(next_value: Payload | None = None) -> Any:
                if frame.called:
                    raise RuntimeError(
                        f"{kind} middleware {owner(callback)} called next_call() twice; the "
                        "call it wraps runs once")
                frame.called = True
                frame.result = call_at(index + 1, value if next_value is None else next_value)
                frame.succeeded = True
                return frame.result

            try:
                return callback(**_kwargs(context, {key: value, "next_call": next_call}))
            except BaseException as exc:  # noqa: BLE001 - the rules below decide
                if frame.called and not frame.succeeded:
                    raise  # downstream failed: its error (or what the callback made of it)
                _failed(self.kernel, kind, callback, exc,
                        "downstream result kept" if frame.succeeded else "skipped")
                return frame.result if frame.succeeded else call_at(index + 1, value)

        return call_at(0, payload)

    # --- the tool executor's two points -------------------------------------------------
    def tool_request(self, name: str, args: Payload, ids: Payload) -> tuple[Payload, Trace]:
        """The arguments ``pre_tool_call`` and the tool get, and the trace of the changes."""
        return self.rewrite("tool_request", "args", args, {"tool_name": name, **ids})

    def tool_execution(self, name: str, args: Payload, run: Callable[[Payload], Any],
                       ids: Payload, original: Payload) -> str:
        """``run(args)`` (the tool) wrapped by ``tool_execution`` middleware; a result that
        is not text becomes JSON text."""
        result = self.execute("tool_execution", "args", args, run,
                              {"tool_name": name, "original_args": original, **ids})
        return result if isinstance(result, str) else json.dumps(result, ensure_ascii=False,
                                                                  default=str)


def tool_ids(context: ToolCallContext, api_request_id: str | None) -> Payload:
    """The ids tool middleware is given, as the tool hooks report them."""
    return {"task_id": context.task_id, "session_id": context.session_id,
            "tool_call_id": context.tool_call_id, "turn_id": context.turn_id,
            "api_request_id": api_request_id}


def _kwargs(context: Payload, payload: Payload) -> Payload:
    return {"telemetry_schema_version": TELEMETRY_SCHEMA_VERSION,
            "middleware_schema_version": MIDDLEWARE_SCHEMA_VERSION, **context, **payload}


class ModelCallMiddleware:
    """``llm_request`` / ``llm_execution`` for the model client (``CallContext.middleware``):
    it calls :meth:`rewrite` once per attempt before ``pre_api_request`` and :meth:`execute`
    around the attempt's call. ``info`` holds the call's ids (``task_id``, ``turn_id``,
    ``api_request_id``, ``session_id``, ``platform``, ``model``, ``provider``, ``base_url``,
    ``api_mode``, ``api_call_count``)."""

    def __init__(self, middleware: Middleware):
        self.middleware = middleware

    def rewrite(self, request: Payload, info: Payload) -> tuple[Payload, Trace]:
        return self.middleware.rewrite("llm_request", "request", request, info)

    def execute(self, request: Payload, send: Callable[[Payload], Any], info: Payload,
                original: Payload | None = None) -> Any:
        context = info if original is None else {**info, "original_request": original}
        return self.middleware.execute("llm_execution", "request", request, send, context)


def model_middleware(kernel: Kernel) -> ModelCallMiddleware | None:
    """What the agent hands the model client: None when no ``llm_*`` middleware is registered
    (the call goes out as built)."""
    middleware = Middleware(kernel)
    if middleware.callbacks("llm_request") or middleware.callbacks("llm_execution"):
        return ModelCallMiddleware(middleware)
    return None
