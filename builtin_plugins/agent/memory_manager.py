"""The memory manager: drives the providers of the ``memory`` slot for one agent.

The builtin provider (reserved name ``builtin``) comes first, then at most one external one
(``memory.provider``). Every provider call is isolated: an exception is logged and that
provider is skipped for that call. Calls that could hang run on daemon threads with a timeout
(:mod:`.memory_threads`): the in-turn ones (``on_turn_start``, ``prefetch``) on one lane per
provider within ``memory.prefetch_timeout`` (default 3 s), the rest within
``memory.sync_timeout`` (default 10 s). So a slow provider never holds a turn and a hung one
never keeps the process alive. ``sync_turn``, ``queue_prefetch`` and ``on_memory_write`` run
in order on one background worker per manager.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
import weakref
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent import ServiceKey
from hermes_agent.kits.memory_health import ProviderHealth, save_health
from hermes_agent.api import tool_error

from .memory_fence import call_accepting, fence
from .memory_slot import BUILTIN, active_memory
from .memory_threads import Lane, bounded

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.agent.memory")
PREFETCH_TIMEOUT = 3.0
SYNC_TIMEOUT = 10.0
SHUTDOWN_DRAIN = 5.0  # seconds queued syncs may take before the providers' shutdown()
# the agent plugin's own per-kernel state: its agents' memory managers
LIVE_MANAGERS = ServiceKey("memory_managers", weakref.WeakSet)


def provider_name(provider: Any) -> str:
    try:
        return str(provider.name)
    except Exception:  # a broken ``name`` property
        return type(provider).__name__


class MemoryManager:
    """The providers of one agent, in order (builtin first)."""

    def __init__(self, providers: list[Any] = (), *, prefetch_timeout: float = PREFETCH_TIMEOUT,
                 sync_timeout: float = SYNC_TIMEOUT, home: Path | None = None):
        self.providers: list[Any] = []
        self.home = home  # where the providers' health is kept (None: not kept)
        self.health: dict[str, ProviderHealth] = {}
        self.closed = False
        self.prefetch_timeout = prefetch_timeout
        self.sync_timeout = sync_timeout
        self.session_id = ""
        self.initialized = False
        self._busy: set[str] = set()  # calls (or lanes) still running: hung
        self._lanes: dict[str, Lane] = {}
        self._jobs: queue.Queue[tuple[str, Callable[[], Any]] | None] = queue.Queue()
        self._worker: threading.Thread | None = None
        for provider in providers:
            self.add_provider(provider)

    @classmethod
    def from_kernel(cls, kernel: Kernel) -> MemoryManager:
        config = kernel.config
        providers = active_memory(kernel)
        owner = kernel.slots.owner("memory", BUILTIN)
        status = kernel.plugins.get(owner) if owner else None
        if status is not None and status.record.source != "builtin":  # a reserved name
            log.warning("memory provider 'builtin' of plugin %r refused: the name is reserved "
                        "for hermes' own memory", owner)
            providers = [p for p in providers if provider_name(p) != BUILTIN]
        manager = cls(providers,
                   prefetch_timeout=float(config.get("memory.prefetch_timeout")
                                          or PREFETCH_TIMEOUT),
                   sync_timeout=float(config.get("memory.sync_timeout") or SYNC_TIMEOUT),
                   home=kernel.home)
        live_managers(kernel).add(manager)  # the on_memory_write hook finds it there
        return manager

    # --- providers --------------------------------------------------------------------------
    def add_provider(self, provider: Any) -> bool:
        """Add a provider; a second external one is refused with a warning naming both."""
        name = provider_name(provider)
        external = [provider_name(p) for p in self.providers if provider_name(p) != BUILTIN]
        if name != BUILTIN and external:
            log.warning("memory provider %r refused: %r is already the external memory provider "
                        "(only one is allowed; memory.provider selects it)", name, external[0])
            return False
        if name == BUILTIN and any(provider_name(p) == BUILTIN for p in self.providers):
            log.warning("a second builtin memory provider was refused")
            return False
        ok, available = self._call(provider, "is_available", default=True)
        if ok and available is False:
            log.warning("memory provider %r is not available (is_available() is false); "
                        "skipped", name)
            return False
        self.providers.insert(0, provider) if name == BUILTIN else self.providers.append(provider)
        return True

    @property
    def external(self) -> list[Any]:
        return [p for p in self.providers if provider_name(p) != BUILTIN]

    def _call(self, provider: Any, method: str, *args: Any, default: Any = None,
              **kwargs: Any) -> tuple[bool, Any]:
        """Call an optional method with what its signature accepts; ``(False, default)`` when
        it is absent or raised (logged)."""
        fn = getattr(provider, method, None)
        if not callable(fn):
            return False, default
        health = self._health(provider)
        if health is not None:
            health.calls += 1
        try:
            return True, call_accepting(fn, *args, **kwargs)
        except Exception as exc:
            log.warning("memory provider %r: %s failed; skipped for this call",
                        provider_name(provider), method, exc_info=True)
            if health is not None:
                health.failed(method, f"{type(exc).__name__}: {exc}"[:500])
            return False, default

    def _health(self, provider: Any) -> ProviderHealth | None:
        """The health record of an external provider (the builtin one keeps none)."""
        name = provider_name(provider)
        if name == BUILTIN:
            return None
        if name not in self.health:
            self.health[name] = ProviderHealth(name)
        return self.health[name]

    def _timed_out(self, provider: Any, method: str, timeout: float, cancel: Any) -> None:
        health = self._health(provider)
        if health is not None and not (cancel is not None and cancel.is_set()):
            health.failed(method, f"no answer within {timeout:g} s", timeout=True)

    def save_health(self) -> None:
        """Write the health records (``hermes memory status`` shows them)."""
        if self.home is None or not self.health:
            return
        try:
            save_health(self.home, dict(self.health))
        except OSError as exc:
            log.debug("memory provider health not saved: %s", exc)

    def _each(self, method: str, *args: Any, timeout: float | None = None, in_turn: bool = False,
              cancel: Any = None, **kwargs: Any) -> list[Any]:
        """``method`` on every provider that has it, each bounded by ``timeout``; ``in_turn``
        calls run on the provider's lane (one busy lane: the provider is skipped)."""
        results = []
        for provider in list(self.providers):
            if not callable(getattr(provider, method, None)):
                continue
            name = provider_name(provider)
            label, key = f"{name}.{method}", (f"{name}:lane" if in_turn else f"{name}.{method}")
            if key in self._busy:  # its last call never returned: do not pile up threads
                log.warning("memory provider call %s skipped: the previous one still runs", label)
                self._timed_out(provider, method, timeout or self.sync_timeout, cancel)
                continue
            self._busy.add(key)
            lane = self._lanes.setdefault(name, Lane(name)) if in_turn else None

            def run(p: Any = provider, key: str = key) -> tuple[bool, Any]:
                try:
                    return self._call(p, method, *args, **kwargs)
                finally:
                    self._busy.discard(key)

            limit = self.sync_timeout if timeout is None else timeout
            started = time.perf_counter()
            ok, value = bounded(run, limit, label, lane, cancel)
            if not ok:
                self._timed_out(provider, method, limit, cancel)
            elif value[0]:
                results.append((provider, value[1]))
                health = self._health(provider)
                if method == "prefetch" and health is not None:
                    health.last_prefetch_ms = round((time.perf_counter() - started) * 1000, 2)
                    health.last_prefetch_chars = len(value[1]) if isinstance(value[1], str) else 0
                    health.last_prefetch_at = time.time()
        return results

    # --- session ----------------------------------------------------------------------------
    def initialize(self, session_id: str, **kwargs: Any) -> None:
        """``initialize`` of every provider with the keyword arguments it accepts (hermes_home,
        platform, user_id, agent_context, agent_identity, agent_workspace,
        parent_session_id)."""
        self.session_id, self.initialized = session_id, True
        self._each("initialize", session_id, **kwargs)

    def on_turn_start(self, turn_number: int, message: str, *, cancel: Any = None,
                      **kwargs: Any) -> None:
        self._each("on_turn_start", turn_number, message, timeout=self.prefetch_timeout,
                   in_turn=True, cancel=cancel, **kwargs)

    def on_session_switch(self, new_session_id: str, **kwargs: Any) -> None:
        self.session_id = new_session_id
        self._each("on_session_switch", new_session_id, **kwargs)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        self.drain(self.sync_timeout)
        self._each("on_session_end", list(messages))

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Text the providers want in the compression prompt."""
        texts = [v for _, v in self._each("on_pre_compress", list(messages))]
        return "\n\n".join(t.strip() for t in texts if isinstance(t, str) and t.strip())

    def on_delegation(self, task: str, result: str, *, child_session_id: str = "",
                      **kwargs: Any) -> None:
        self._each("on_delegation", task, result, child_session_id=child_session_id, **kwargs)

    # --- prefetch ---------------------------------------------------------------------------
    def prefetch(self, query: str, *, cancel: Any = None) -> str:
        """Recalled context of every provider for ``query``, fenced; a provider that is slow,
        hung (its last call still runs) or failing is left out, and so is everything not in
        yet when ``cancel`` (the turn's interrupt) is set."""
        found = self._each("prefetch", query, timeout=self.prefetch_timeout, in_turn=True,
                           cancel=cancel, session_id=self.session_id)
        texts = [text.strip() for _, text in found if isinstance(text, str) and text.strip()]
        return fence("\n\n".join(texts))

    # --- background worker ------------------------------------------------------------------
    def _submit(self, label: str, job: Callable[[], Any]) -> None:
        if self._worker is None or not self._worker.is_alive():
            self._worker = threading.Thread(target=self._work, name="hermes-memory-worker",
                                            daemon=True)
            self._worker.start()
        self._jobs.put((label, job))

    def _work(self) -> None:
        while True:
            item = self._jobs.get()
            try:
                if item is not None and not bounded(item[1], self.sync_timeout, item[0])[0]:
                    name, _, method = item[0].rpartition(".")
                    if name in self.health:
                        self.health[name].failed(method, f"no answer within "
                                                 f"{self.sync_timeout:g} s", timeout=True)
            finally:
                self._jobs.task_done()

    def drain(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` s) for the queued jobs; True when all are done."""
        done = threading.Event()
        self._submit("drain", done.set)
        return done.wait(timeout)

    def sync_turn(self, user_content: str, assistant_content: str, *,
                  messages: list[dict[str, Any]] | None = None) -> None:
        session_id, snapshot = self.session_id, list(messages or [])
        for provider in list(self.providers):
            if callable(getattr(provider, "sync_turn", None)):
                self._submit(f"{provider_name(provider)}.sync_turn",
                             lambda p=provider: self._synced(p, self._call(
                                 p, "sync_turn", user_content, assistant_content,
                                 session_id=session_id, messages=snapshot)))
        self._submit("health", self.save_health)

    def _synced(self, provider: Any, outcome: tuple[bool, Any]) -> None:
        health = self._health(provider)
        if outcome[0] and health is not None:
            health.last_sync_at = time.time()

    def shutdown(self) -> None:
        """The agent is done: wait (a few seconds at most) for queued syncs, then every
        provider's ``shutdown()`` in reverse order, each bounded; then save the health."""
        if self.closed:
            return
        self.closed = True
        self.drain(min(SHUTDOWN_DRAIN, self.sync_timeout))
        for provider in reversed(self.providers):
            if callable(getattr(provider, "shutdown", None)):
                name = provider_name(provider)
                ok, _ = bounded(lambda p=provider: self._call(p, "shutdown"), self.sync_timeout,
                                f"{name}.shutdown")
                if not ok:
                    self._timed_out(provider, "shutdown", self.sync_timeout, None)
        self.save_health()

    def queue_prefetch(self, query: str) -> None:
        session_id = self.session_id
        for provider in list(self.providers):
            if callable(getattr(provider, "queue_prefetch", None)):
                self._submit(f"{provider_name(provider)}.queue_prefetch",
                             lambda p=provider: self._call(p, "queue_prefetch", query,
                                                           session_id=session_id))

    def on_memory_write(self, action: str, target: str, content: str,
                        metadata: dict[str, Any] | None = None) -> None:
        """Mirror a builtin memory write to the external provider (in the background)."""
        for provider in self.external:
            if callable(getattr(provider, "on_memory_write", None)):
                self._submit(f"{provider_name(provider)}.on_memory_write",
                             lambda p=provider: self._call(p, "on_memory_write", action, target,
                                                           content, metadata))

    # --- tools ------------------------------------------------------------------------------
    def tool_routes(self, taken: set[str]) -> dict[str, Any]:
        """``{tool name: provider}`` of the providers' tools; names in ``taken`` (registered
        tools) are dropped, with a warning for an external provider."""
        routes: dict[str, Any] = {}
        for provider in self.providers:
            ok, schemas = self._call(provider, "get_tool_schemas", default=[])
            for schema in schemas or () if isinstance(schemas, list) else ():
                schema = schema.get("function", schema) if isinstance(schema, dict) else {}
                name = schema.get("name")
                if not isinstance(name, str) or not name:
                    continue
                if name in taken or name in routes:
                    if provider_name(provider) != BUILTIN:
                        log.warning("memory provider %r: tool %r clashes with another tool; "
                                    "dropped", provider_name(provider), name)
                    continue
                routes[name] = (provider, schema)
        return routes

    def handle_tool_call(self, provider: Any, name: str, args: dict[str, Any],
                         **kwargs: Any) -> str:
        """Run a provider's tool; an exception becomes a tool error (the turn goes on)."""
        try:
            result = call_accepting(provider.handle_tool_call, name, args, **kwargs)
        except Exception as exc:
            log.warning("memory provider %r: tool %r failed", provider_name(provider), name,
                        exc_info=True)
            return tool_error(f"memory tool {name!r} failed: {type(exc).__name__}: {exc}")
        return result if isinstance(result, str) else json.dumps(result, default=str)


def live_managers(kernel: Kernel) -> weakref.WeakSet[MemoryManager]:
    """The memory managers of ``kernel``'s agents (one set per kernel, weakly held)."""
    return kernel.service(LIVE_MANAGERS, weakref.WeakSet)


def forward_memory_write(kernel: Kernel, action: str, target: str, content: str,
                         metadata: Any = None, session_id: str | None = None, **_: Any) -> None:
    """The ``on_memory_write`` hook: to the managers of that session (all of this kernel's
    when unknown)."""
    for manager in list(live_managers(kernel)):
        if session_id is None or manager.session_id == session_id:
            manager.on_memory_write(action, target, content, metadata)
