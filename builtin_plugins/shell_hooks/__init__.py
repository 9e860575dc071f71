"""Builtin plugin: shell hooks, config.yaml's ``hooks:`` (docs/hooks.md#shell-hooks).

Once every plugin has loaded (``on_plugins_loaded``), each hook named there gets one callback
on the kernel's hook bus, after the Python plugins' implementations, as in Hermes Agent 0.19.
The callback runs the hook's commands whose ``matcher`` fits, each only if the user approved
that exact command (:mod:`.allowlist`; or ``--accept-hooks``, ``HERMES_ACCEPT_HOOKS=1``,
``hooks_auto_accept: true``), each through the ``sandbox`` service (the OS sandbox of the
agent's commands: core-tools offers it) with its timeout; :mod:`.runner` reads the answers.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .runner import MAX_OUTPUT, ShellHook, answer, configured, payload

if TYPE_CHECKING:
    from hermes_agent import Kernel, PluginContext

    from .allowlist import Allowlist

log = logging.getLogger("hermes_agent.shell_hooks")
PLUGIN = "shell-hooks"
TRUE = ("1", "true", "yes", "on")


def accept_all(kernel: "Kernel") -> str:
    """Why every configured hook may run unapproved ("" when not): ``--accept-hooks`` (which
    sets ``HERMES_ACCEPT_HOOKS``), the variable itself, or ``hooks_auto_accept: true``."""
    if str(kernel.env.get("HERMES_ACCEPT_HOOKS", "")).strip().lower() in TRUE:
        return "HERMES_ACCEPT_HOOKS"
    if kernel.config.get("hooks_auto_accept") is True:
        return "hooks_auto_accept"
    return ""


class ShellHooks:
    """The shell hooks of one kernel."""

    def __init__(self, kernel: "Kernel", plugin: str = PLUGIN):
        self.kernel = kernel
        self.plugin = plugin
        self._allowlist: Allowlist | None = None
        self._warned: set[str] = set()
        self._lock = threading.Lock()

    @property
    def allowlist(self) -> "Allowlist":
        if self._allowlist is None:
            from .allowlist import Allowlist

            self._allowlist = Allowlist(Path(self.kernel.home))
        return self._allowlist

    def subscribe(self, **_: Any) -> None:
        """``on_plugins_loaded``: one callback per hook config.yaml names."""
        hooks, problems = configured(self.kernel.config)
        for problem in problems:
            log.warning("config.yaml %s", problem)
        by_event: dict[str, list[ShellHook]] = {}
        for hook in hooks:
            by_event.setdefault(hook.event, []).append(hook)
        for event, listed in by_event.items():
            self.kernel.hooks.add_callback(event, self._callback(event, listed),
                                           plugin=self.plugin,
                                           description=f"shell hooks of config.yaml ({event})")
        if hooks and not accept_all(self.kernel):
            from .consent import ask_at_chat_start

            ask_at_chat_start(self.allowlist, hooks, self._warned)

    def _callback(self, event: str, hooks: list[ShellHook]) -> Callable[..., Any]:
        def run_shell_hooks(**arguments: Any) -> Any:
            return self.fire(event, hooks, arguments)
        return run_shell_hooks

    def fire(self, event: str, hooks: list[ShellHook], arguments: dict[str, Any]) -> Any:
        """Run the matching, approved hooks of ``event``; the first answer that counts
        (contexts are joined). Nothing here raises into the turn."""
        contexts: list[str] = []
        for hook in hooks:
            try:
                if not hook.matches(arguments.get("tool_name")) or not self.allowed(hook):
                    continue
                result = self.run(hook, arguments)
            except Exception as exc:  # noqa: BLE001 - a hook never breaks the turn
                log.warning("shell hook %s `%s` could not run: %s", event, hook.command, exc)
                continue
            if result is None:
                continue
            if event == "pre_llm_call":
                contexts.append(result["context"])
            else:
                return result
        return {"context": "\n\n".join(contexts)} if contexts else None

    def run(self, hook: ShellHook, arguments: dict[str, Any]) -> Any:
        from hermes_agent.api.services import SANDBOX

        try:
            sandbox = self.kernel.service(SANDBOX)
        except Exception:  # noqa: BLE001 - no core-tools: never run unconfined instead
            self._warn_once(f"nosandbox:{hook.event}", "shell hook %s `%s` did not run: the "
                            "sandbox service (plugin core-tools) is not loaded", hook.event,
                            hook.command)
            return None
        cwd = str(Path(self.kernel.cwd) if self.kernel.cwd else Path.cwd())
        run = sandbox.run(hook.command, cwd=cwd, timeout=hook.timeout, max_output=MAX_OUTPUT,
                          stdin=payload(hook.event, arguments, cwd),
                          env={"HERMES_HOOK_EVENT": hook.event})
        return answer(hook, run)

    def allowed(self, hook: ShellHook) -> bool:
        if accept_all(self.kernel):
            return True
        status = self.allowlist.status(hook.event, hook.command)
        if status == "approved":
            return True
        why = ("its script changed since it was approved" if status == "script-changed"
               else "it is not approved")
        self._warn_once(f"{status}:{hook.event}:{hook.command}",
                        "shell hook %s `%s` did not run: %s. Approve it with `hermes hooks "
                        "approve %s` (or start hermes with --accept-hooks)", hook.event,
                        hook.command, why, hook.event)
        return False

    def _warn_once(self, key: str, message: str, *args: Any) -> None:
        with self._lock:
            if key in self._warned:
                return
            self._warned.add(key)
        log.warning(message, *args)


def register(ctx: "PluginContext") -> None:
    shell = ShellHooks(ctx.kernel, ctx.plugin_name)
    ctx.register_hook("on_plugins_loaded", shell.subscribe,
                      description="subscribe the shell hooks config.yaml names")
