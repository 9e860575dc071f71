"""``gateway.workers: N``: turns run in N worker processes instead of the gateway's threads,
so an instant-model load is no longer bound to one interpreter lock.

The gateway process keeps what it had: the platforms, access control, the inbox, each chat's
queue, questions and replies. Each chat's agent lives in one worker (chosen by the chat's
key, so its agent stays warm there): a worker boots its own kernel on the same
``$HERMES_HOME`` (the same plugins, configuration and session store, which the processes
share as ``hermes chat`` and the gateway always have), builds the agent through the ``agent``
service and runs its turns, so every agent, tool and model hook fires in the worker that runs
the turn. :class:`RemoteAgent` is the gateway's handle on such an agent (the ``AgentSession``
contract): its calls, the turn's streamed events and the agent's approval and clarify
questions (asked in the chat by the gateway) travel over a pipe.

In a worker, ``send_message`` reaches the platforms through the gateway's control socket.
A worker that dies fails its running turns (the chat is told; the inbox keeps nothing of
them) and the gateway starts another for the next turn."""

from __future__ import annotations

import itertools
import logging
import multiprocessing
import resource
import threading
import zlib
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.gateway")
STATE = ("session_id", "session_stored", "model")  # sent back with every call's result


class WorkerGone(RuntimeError):
    """The worker process stopped while a call was waiting for it."""


@dataclass
class TurnResult:
    """A worker's :class:`~hermes_agent.api.AgentTurn`, as plain data."""

    final_response: str
    session_id: str
    completed: bool
    interrupted: bool
    failed: bool
    error: str | None
    exit_reason: str
    usage: Any
    cost_usd: float | None


@dataclass
class _Call:
    done: threading.Event = field(default_factory=threading.Event)
    on_event: Callable[[dict[str, Any]], None] | None = None
    value: Any = None
    error: str | None = None  # what the call raised in the worker
    gone: bool = False  # the worker stopped before answering


class Worker:
    """One worker process and the gateway's side of its pipe."""

    def __init__(self, kernel: Kernel, index: int):
        context = multiprocessing.get_context("spawn")  # no fork of a threaded process
        self.conn, child = context.Pipe()
        self.process = context.Process(target=worker_main, name=f"hermes-gateway-worker-{index}",
                                       args=(str(kernel.home), dict(kernel.env), child),
                                       daemon=True)
        self.process.start()
        child.close()
        self.lock = threading.Lock()
        self.ids = itertools.count(1)
        self.pending: dict[int, _Call] = {}
        self.callbacks: dict[str, dict[str, Callable[..., Any]]] = {}
        self.alive = True
        self.ready = threading.Event()  # its kernel booted (or it stopped trying)
        self.reader = threading.Thread(target=self._read, name=f"gateway-worker-{index}-reader",
                                       daemon=True)
        self.reader.start()

    def call(self, key: str, method: str, *args: Any,
             on_event: Callable[[dict[str, Any]], None] | None = None, **kwargs: Any) -> Any:
        """``method`` of chat ``key``'s agent in the worker, waiting for its result."""
        call = _Call(on_event=on_event)
        call_id = next(self.ids)
        with self.lock:
            if not self.alive:
                raise WorkerGone("the gateway's worker process stopped")
            self.pending[call_id] = call
            self.conn.send(("call", call_id, key, method, args, kwargs))
        call.done.wait()
        if call.gone:
            raise WorkerGone("the gateway's worker process stopped during the call")
        if call.error is not None:
            raise RuntimeError(call.error)
        return call.value

    def notify(self, key: str, method: str) -> None:
        """Call without waiting (``interrupt``, from any thread)."""
        with self.lock:
            if self.alive:
                self.conn.send(("call", 0, key, method, (), {}))

    def _read(self) -> None:
        while True:
            try:
                message = self.conn.recv()
            except (EOFError, OSError):
                break
            kind = message[0]
            if kind == "ready":
                self.ready.set()
            elif kind == "event":
                call = self.pending.get(message[1])
                if call is not None and call.on_event is not None:
                    try:
                        call.on_event(message[2])
                    except Exception as exc:  # the preview only
                        log.debug("gateway: a streamed event failed: %s", exc)
            elif kind == "ask":
                threading.Thread(target=self._answer, args=message[1:], daemon=True).start()
            elif kind in ("result", "error"):
                with self.lock:
                    call = self.pending.pop(message[1], None)
                if call is not None:
                    if kind == "result":
                        call.value = message[2]
                    else:
                        call.error = message[2]
                    call.done.set()
        with self.lock:
            self.alive = False
            pending, self.pending = self.pending, {}
        self.ready.set()
        for call in pending.values():
            call.gone = True
            call.done.set()

    def _answer(self, ask_id: int, key: str, kind: str, args: tuple[Any, ...]) -> None:
        callback = self.callbacks.get(key, {}).get(kind)
        try:
            answer = callback(*args) if callback is not None else None
        except Exception as exc:
            log.warning("gateway: asking %s in %s failed: %s", kind, key, exc)
            answer = None
        with self.lock:
            if self.alive:
                self.conn.send(("answer", ask_id, answer))

    def close(self, timeout: float = 30.0) -> None:
        with self.lock:
            if self.alive:
                try:
                    self.conn.send(("exit",))
                except OSError:
                    pass
        self.process.join(timeout)
        if self.process.is_alive():
            self.process.kill()
            self.process.join(timeout)
        self.conn.close()


class WorkerPool:
    """``count`` worker processes; a chat's agent lives in the one its key hashes to (a
    worker that died is replaced when a chat next needs it)."""

    def __init__(self, kernel: Kernel, count: int):
        self.kernel = kernel
        self.workers = [Worker(kernel, n) for n in range(count)]
        self._lock = threading.Lock()

    def for_chat(self, key: str) -> Worker:
        index = zlib.crc32(key.encode()) % len(self.workers)
        with self._lock:
            worker = self.workers[index]
            if not worker.alive:
                log.warning("gateway: worker %d stopped; starting another", index)
                worker.close(1.0)
                worker = self.workers[index] = Worker(self.kernel, index)
            return worker

    def wait_ready(self, timeout: float = 120.0) -> None:
        """Until every worker booted its kernel; HermesError naming one that did not."""
        for index, worker in enumerate(self.workers):
            if not worker.ready.wait(timeout) or not worker.alive:
                from hermes_agent import HermesError

                raise HermesError(f"gateway worker {index} did not start (exit code "
                                   f"{worker.process.exitcode}); see its error above, or set "
                                   "gateway.workers: 0")

    def cpu_seconds(self) -> float:
        """The CPU time the workers used so far, together."""
        return sum(float(w.call("", "cpu")[0]) for w in self.workers if w.alive)

    @property
    def pids(self) -> list[int]:
        return [w.process.pid or 0 for w in self.workers]

    def close(self) -> None:
        for worker in self.workers:
            worker.close()


class RemoteAgent:
    """A chat's agent in a worker process (the ``AgentSession`` contract). Every call but
    ``interrupt`` blocks: the gateway makes them from its turn threads."""

    def __init__(self, pool: WorkerPool, key: str, *, approval: Callable[..., Any],
                 clarify: Callable[..., Any], **options: Any):
        self.pool, self.key, self.options = pool, key, options
        self.callbacks = {"approval": approval, "clarify": clarify}
        self._state: dict[str, Any] = {}
        self._attach()

    def _attach(self) -> None:
        """Build the agent in the chat's worker (a new one, when the last one died: the
        agent then continues the session it had)."""
        self.worker = self.pool.for_chat(self.key)
        self.worker.callbacks[self.key] = self.callbacks
        known = self.session_id if self.session_stored else ""
        self._state = self.worker.call(self.key, "create", self.options)[1]
        if known:
            self._state = self.worker.call(self.key, "resume", known)[1]

    def _call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        if not self.worker.alive:
            self._attach()
        value, self._state = self.worker.call(self.key, method, *args, **kwargs)
        return value

    @property
    def session_id(self) -> str:
        return str(self._state.get("session_id", ""))

    @property
    def model(self) -> str:
        return str(self._state.get("model", ""))

    @property
    def session_stored(self) -> bool:
        return bool(self._state.get("session_stored"))

    @property
    def history(self) -> list[dict[str, Any]]:
        return list(self._call("history"))

    def run_conversation(self, user_message: str, *,
                         on_event: Callable[[dict[str, Any]], None] | None = None,
                         source: str | None = None) -> TurnResult:
        return self._call("run_conversation", user_message, on_event=on_event,
                          **({"source": source} if source is not None else {}))

    def interrupt(self) -> None:
        self.worker.notify(self.key, "interrupt")

    def resume(self, session_id: str) -> None:
        self._call("resume", session_id)

    def rewind(self, user_turns: int = 1) -> str | None:
        return self._call("rewind", user_turns)

    def new_session(self, reason: str = "new_session") -> str:
        return self._call("new_session", reason)

    def context_fill(self) -> float:
        return float(self._call("context_fill"))

    def compress(self, focus: str = "") -> bool:
        return bool(self._call("compress", focus))

    def finalize(self, reason: str = "shutdown") -> None:
        try:
            if self.worker.alive:  # (a dead worker's agent has nothing left to end)
                self._call("finalize", reason)
        finally:
            self.worker.callbacks.pop(self.key, None)


# --- in the worker process -----------------------------------------------------------------
def worker_main(home: str, env: dict[str, str], conn: Any) -> None:
    """A worker: its own kernel on ``home``, the chats' agents, each call in a thread."""
    from hermes_agent import Kernel
    from hermes_agent.api import AGENT

    kernel = Kernel(Path(home), env=env)
    kernel.boot()
    factory = kernel.service(AGENT)
    conn.send(("ready",))
    agents: dict[str, Any] = {}
    lock = threading.Lock()
    asks: dict[int, list[Any]] = {}  # ask id -> [event, answer]
    ask_ids = itertools.count(1)

    def send(message: tuple[Any, ...]) -> None:
        with lock:
            conn.send(message)

    def ask(key: str, kind: str, *args: Any) -> Any:
        ask_id = next(ask_ids)
        slot = asks[ask_id] = [threading.Event(), None]
        send(("ask", ask_id, key, kind, args))
        slot[0].wait()
        return asks.pop(ask_id)[1]

    def run(call_id: int, key: str, method: str, args: tuple[Any, ...],
            kwargs: dict[str, Any]) -> None:
        try:
            if method == "cpu":  # this process's CPU seconds so far (benchmarks)
                usage = resource.getrusage(resource.RUSAGE_SELF)
                send(("result", call_id, (usage.ru_utime + usage.ru_stime, {})))
                return
            if method == "create":
                agents[key] = factory.create(
                    **args[0], approval_callback=lambda request: ask(key, "approval", request),
                    clarify_callback=lambda q, choices=None: ask(key, "clarify", q, choices))
                value: Any = None
            else:
                agent = agents[key]
                if method == "history":
                    value = list(agent.history)
                elif method == "run_conversation":
                    turn = agent.run_conversation(
                        *args, on_event=lambda event: send(("event", call_id, event)), **kwargs)
                    value = TurnResult(turn.final_response, turn.session_id, turn.completed,
                                       turn.interrupted, turn.failed, turn.error,
                                       turn.exit_reason, turn.usage, turn.cost_usd)
                else:
                    value = getattr(agent, method)(*args, **kwargs)
                    if method == "finalize":
                        agents.pop(key, None)
            state = {} if key not in agents else {
                name: getattr(agents[key], name) for name in STATE}
            send(("result", call_id, (value, state)))
        except Exception as exc:
            send(("error", call_id, f"{type(exc).__name__}: {exc}"))

    pool = ThreadPoolExecutor(max_workers=int(kernel.config.get("gateway.max_concurrent_turns",
                                                                256)),
                              thread_name_prefix="gateway-worker-turn")
    try:
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                break
            if message[0] == "exit":
                break
            if message[0] == "answer":
                slot = asks.get(message[1])
                if slot is not None:
                    slot[1] = message[2]
                    slot[0].set()
                continue
            _, call_id, key, method, args, kwargs = message
            if method == "interrupt":
                if key in agents:
                    agents[key].interrupt()
                continue
            pool.submit(run, call_id, key, method, args, kwargs)
    finally:
        for slot in list(asks.values()):  # questions waiting: nobody answers any more
            slot[0].set()
        for agent in list(agents.values()):
            agent.interrupt()
        pool.shutdown(wait=True)
        kernel.close()
