"""The services plugins share: each one's Protocol and its typed key.

A plugin offers a service with ``ctx.register_service(KEY, factory)``; another uses it with
``kernel.service(KEY)``, typed as the key's Protocol (``ServiceError`` when no loaded plugin
offers it). Every Protocol here is ``runtime_checkable``. Contracts only.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from hermes_agent import ServiceKey

from .models import ChatResponse, ModelClient, Usage
from .sessions import SessionStore
from .tools import ToolCallContext

if TYPE_CHECKING:
    import asyncio
    import threading
    from os import PathLike
    from pathlib import Path



# --- agent: the agent factory and the session the gateway and cron drive -------------------
@runtime_checkable
class AgentTurn(Protocol):
    """How one turn ended."""

    final_response: str
    session_id: str
    completed: bool
    interrupted: bool
    failed: bool
    error: str | None
    exit_reason: str
    usage: Usage
    cost_usd: float | None


@runtime_checkable
class AgentSession(Protocol):
    """One conversation, one session at a time; only ``interrupt`` is thread-safe."""

    session_id: str
    history: list[dict[str, Any]]

    @property
    def model(self) -> str:
        """The model in use."""

    @property
    def session_stored(self) -> bool:
        """Whether the session has its row in the store."""

    def run_conversation(self, user_message: str | list[dict[str, Any]], *,
                         on_event: Callable[[dict[str, Any]], None] | None = None,
                         source: str | None = None) -> AgentTurn:
        """Run one user turn to its final answer (or interrupt, failure, spent budget).
        ``user_message``: text, or OpenAI content parts (text and ``image_url``).
        ``source``: the message is untrusted, from there (``platform:<name>:<user>``)."""

    def interrupt(self) -> None:
        """Stop the running model call or tool (from any thread)."""

    def resume(self, session_id: str) -> None:
        """Continue a stored session."""

    def rewind(self, user_turns: int = 1) -> str | None:
        """Drop the last ``user_turns`` turns; the text of the first one dropped."""

    def new_session(self, reason: str = "new_session") -> str:
        """End this session and start another; the new id."""

    def context_fill(self) -> float:
        """How full the model's window is (0.0-1.0+, estimated, no I/O)."""

    def compress(self, focus: str = "") -> bool:
        """Compress the conversation now; whether it shrank."""

    def finalize(self, reason: str = "shutdown") -> None:
        """End the session (the memory provider and ``on_session_end`` told)."""


@runtime_checkable
class AgentFactory(Protocol):
    """Builds agents for every surface, so each drives the same loop and hooks."""

    def create(self, *, session_id: str | None = None, client: ModelClient | None = None,
               store: SessionStore | None = None, **options: Any) -> AgentSession:
        """A new agent; ``options`` are the agent's options (``platform``, ``model``, ...)."""

    def select_tools(self, toolsets: list[str] | None) -> tuple[list[str], list[str]]:
        """The tools a turn gets from ``toolsets`` (None: every toolset), and notes on what
        was left out (``hermes tools`` lists the selection)."""


AGENT = ServiceKey("agent", AgentFactory)


# --- models -------------------------------------------------------------------------------
@runtime_checkable
class Models(Protocol):
    """Model calls for every plugin, without importing the models plugin."""

    def client(self, *, provider: str | None = None, model: str | None = None,
               base_url: str | None = None, api_key: str | None = None,
               retry: Any = None) -> ModelClient:
        """A client (retries, fallback, hooks) for the provider these arguments resolve to."""

    def call_llm(self, task: str, messages: list[dict[str, Any]],
                 **options: Any) -> ChatResponse:
        """One call of an auxiliary task (``auxiliary.<task>`` picks provider and model)."""

    def context_length(self, model: str) -> int:
        """The model's context window in tokens."""


MODELS = ServiceKey("models", Models)


# --- approvals, injection scan, plugin health ---------------------------------------------
@runtime_checkable
class ApprovalVerdict(Protocol):
    """Whether a call may run, the choice behind it and what to tell the model."""

    allowed: bool
    choice: str
    message: str


@runtime_checkable
class ApprovalGate(Protocol):
    """The approvals of one kernel, shared by ``terminal`` and hook-requested approvals."""

    @property
    def mode(self) -> str:
        """``approvals.mode``: ``manual``, ``smart`` or ``off``."""

    def check_command(self, command: str, ctx: ToolCallContext,
                      cwd: Any = None) -> ApprovalVerdict:
        """The verdict for a shell command (hard floor, allowlist, else ask)."""

    def decide(self, subject: str, description: str, keys: tuple[str, ...],
               ctx: ToolCallContext) -> ApprovalVerdict:
        """Ask about ``subject`` unless its ``keys`` are approved already."""


APPROVAL_GATE = ServiceKey("approval_gate", ApprovalGate)


@runtime_checkable
class InjectionScanner(Protocol):
    """The prompt-injection scan of text that later prompts will show."""

    def scan(self, text: str) -> list[str]:
        """The findings (empty when clean)."""


INJECTION_SCAN = ServiceKey("injection_scan", InjectionScanner)


@runtime_checkable
class InactivePlugin(Protocol):
    """A plugin that should be active and is not."""

    @property
    def name(self) -> str:
        """The plugin's name."""

    @property
    def line(self) -> str:
        """One line for a surface: what is wrong and what to run."""


@runtime_checkable
class PluginHealth(Protocol):
    """The plugins of a kernel that should be active and are not."""

    def inactive(self) -> Sequence[InactivePlugin]:
        """Each, once, in load order."""


PLUGIN_HEALTH = ServiceKey("plugin_health", PluginHealth)


# --- cron, gateway, mcp -------------------------------------------------------------------
@runtime_checkable
class CronScheduler(Protocol):
    """The scheduled jobs of this kernel's home."""

    async def serve(self, stop: asyncio.Event, *, label: str = "gateway",
                    interval: float | None = None,
                    occurrence_guard: Callable[[str], bool] | None = None) -> None:
        """Run due jobs until ``stop`` is set (``occurrence_guard``: replicas share them)."""

    def run_now(self, ref: str) -> Any:
        """Run one job (an id or name) now, in this thread; its run record."""


CRON = ServiceKey("cron", CronScheduler)


@runtime_checkable
class GatewayService(Protocol):
    """The one running gateway of this process, if any."""

    runner: Any  # the running gateway, set and cleared by the gateway plugin itself

    def adapter(self, name: str) -> Any:
        """The connected adapter of platform ``name``, or None."""


GATEWAY = ServiceKey("gateway", GatewayService)


@runtime_checkable
class MessageDelivery(Protocol):
    """Sends text to a chat of a connected platform (``send_message``, ``hermes send``, cron):
    through this process's gateway, else the running gateway's control socket."""

    def send(self, target: str, text: str, *, timeout: float = 60.0) -> dict[str, Any]:
        """Deliver ``text`` to ``target`` (``platform`` for its home channel,
        ``platform:chat_id[:thread_id]``, ``platform:#name`` or a configured name), checked
        against the platform's allow-lists: ``{"success": True, "target", "platform",
        "chat_id", "message_id", ...}`` or ``{"success": False, "error": <the fix>}``."""

    def targets(self, platform: str | None = None) -> list[dict[str, Any]]:
        """What may be sent to: home channels, configured names, known chats."""


#: not in ``hermes_agent.api.__all__`` (its budget is full): import it from this module
DELIVERY = ServiceKey("delivery", MessageDelivery)


@runtime_checkable
class McpServers(Protocol):
    """The configured MCP servers and the tools they offer."""

    def refresh(self) -> None:
        """Offer the servers' tools: start, re-list or restart what needs it."""

    def status(self) -> dict[str, dict[str, Any]]:
        """Each server's state, transport, tools and errors."""


MCP = ServiceKey("mcp", McpServers)


# --- sandbox: commands run confined, as the agent's terminal runs them --------------------
@runtime_checkable
class SandboxedRun(Protocol):
    """How one confined command ended (``returncode`` None: killed at its timeout)."""

    stdout: str
    stderr: str
    returncode: int | None
    timed_out: bool
    confined: bool  # False: ``sandbox.mode: off``, or no mechanism works on this machine
    duration_s: float


@runtime_checkable
class Sandbox(Protocol):
    """The OS sandbox of the commands hermes runs for the agent (docs/sandbox.md): the
    session's policy for ``cwd``, an environment without hermes's secrets, its process group
    killed at the timeout and when hermes stops, each stream kept to ``max_output`` bytes."""

    def run(self, command: str, *, cwd: str | PathLike[str], timeout: float,
            stdin: str = "", max_output: int = 65536,
            env: Mapping[str, str] | None = None,
            pass_fds: Sequence[int] = (),
            interrupt: threading.Event | None = None) -> SandboxedRun:
        """Run ``bash -c command`` confined in ``cwd``, ``stdin`` written to it, ``env``
        added to its environment and the descriptors ``pass_fds`` left open in it (a
        socket to talk back to hermes); killed (``returncode`` None) once ``interrupt`` is
        set."""

    def describe(self) -> str:
        """The mechanism in use, or why commands run unconfined (one line)."""


#: not in ``hermes_agent.api.__all__`` (its budget is full): import it from this module
SANDBOX = ServiceKey("sandbox", Sandbox)


@runtime_checkable
class Speech(Protocol):  # the voice plugin's service (docs/voice.md): stt and tts providers
    def transcribe(self, audio_path: Path) -> str: ...  # MediaError names the fix
    def speak(self, text: str, platform: str = "") -> Any: ...  # a kits.media.SpeechFile
    def reply_mode(self) -> str: ...  # voice.reply_mode: off, voice_only or all


SPEECH = ServiceKey("speech", Speech)  # not in hermes_agent.api.__all__: import it from here
