"""Builtin plugin: builtin memory (essential, cannot be disabled).

MEMORY.md (the agent's notes) and USER.md (the user profile) live in ``$HERMES_HOME/memories``
(folder 0700, files 0600). The ``memory`` tool changes them (:mod:`.tool`, :mod:`.store`); the
``memory_snapshot`` and ``user_snapshot`` prompt layers show them as they were when the
session's prompt was built (:mod:`.snapshot`). Written content is checked with the agent
plugin's ``injection_scan`` service; each successful write fires ``on_memory_write``.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent import ServiceError, hookimpl
from hermes_agent.api import (INJECTION_SCAN, LayerRequest, ToolCallContext, prompt_layers,
                              with_context)

if TYPE_CHECKING:
    from hermes_agent import Kernel, PluginContext

    from .store import MemoryFile

log = logging.getLogger("hermes_agent.memory")

FOLDER = "memories"
#: name -> (file, prompt title, config key of the limit, default limit), in prompt order
TARGETS: dict[str, tuple[str, str, str, int]] = {
    "memory": ("MEMORY.md", "MEMORY (your personal notes)", "memory.memory_char_limit", 2200),
    "user": ("USER.md", "USER PROFILE (who the user is)", "memory.user_char_limit", 1375),
}


def memory_file(kernel: "Kernel", name: str, home: Path | None = None) -> "MemoryFile":
    """The store of target ``name`` (``memory`` or ``user``) with its configured limit."""
    from .store import MemoryFile, Target

    filename, title, key, default = TARGETS[name]
    try:
        limit = int(kernel.config.get(key) or default)
    except (TypeError, ValueError):
        limit = default
    folder = Path(home if home is not None else kernel.home) / FOLDER
    return MemoryFile(folder, Target(name, filename, title, limit))


class BuiltinMemory:
    """The tool handler and the snapshot layers, bound to one kernel."""

    def __init__(self, kernel: "Kernel"):
        self.kernel = kernel

    def scan(self, text: str) -> list[str]:
        from .tool import Refused

        try:
            scanner = self.kernel.service(INJECTION_SCAN)
        except Exception as exc:  # the agent plugin is not loaded: write nothing unchecked
            log.warning("memory: the injection_scan service is unavailable (%s); writes refused",
                        exc)
            raise Refused("Nothing was saved: the injection scan that checks memory content "
                          "(the agent plugin's injection_scan service) is unavailable. Enable "
                          "the agent plugin (hermes plugins enable agent).") from exc
        return list(scanner.scan(text))

    def handle(self, args: dict[str, Any], ctx: ToolCallContext) -> str:
        from hermes_agent.api import tool_error

        from .tool import run

        target = args.get("target")
        if target not in TARGETS:
            return tool_error("'target' must be 'memory' (your notes) or 'user' (the user "
                              "profile).")
        files = [memory_file(self.kernel, name) for name in TARGETS]  # in prompt order
        store = files[list(TARGETS).index(target)]
        result, outcome = run(store, args, self.scan, files)
        if outcome is not None and outcome.changed:
            self.kernel.hooks.fire("on_memory_write", action=outcome.action, target=target,
                                   content=outcome.content, metadata=outcome.metadata or None,
                                   session_id=ctx.session_id or None,
                                   platform=ctx.platform or "")
        return result

    def layer(self, name: str) -> Any:
        def snapshot(request: LayerRequest) -> str | None:
            from .snapshot import render

            try:
                scan = self.kernel.service(INJECTION_SCAN).scan
            except ServiceError:  # the agent plugin builds prompts; without it nothing to guard
                scan = None
            # both files, in prompt order (TARGETS' order is the layers'): their text is
            # also scanned as the prompt joins it
            names = list(TARGETS)
            stores = [memory_file(self.kernel, each, request.home) for each in names]
            return render(stores, scan)[names.index(name)]
        snapshot.__name__ = f"{name}_snapshot"
        return snapshot


def register(ctx: "PluginContext") -> None:
    from .schema import MEMORY

    memory = BuiltinMemory(ctx.kernel)
    layers = prompt_layers(ctx.kernel)
    layers.add("memory_snapshot", memory.layer("memory"), plugin=ctx.plugin_name)
    layers.add("user_snapshot", memory.layer("user"), plugin=ctx.plugin_name)
    ctx.register_tool(name="memory", toolset="memory", schema=MEMORY,
                      handler=with_context(memory.handle), description=MEMORY["description"],
                      emoji="🧠")
    ctx.register_hook("doctor_checks", _doctor_checks,
                      description="hermes doctor: the memory files and the memory provider")


def _doctor_checks(kernel: "Kernel", config: Any, offline: bool, **_: Any) -> Any:
    from .doctor import memory_findings

    return memory_findings(kernel)


@hookimpl
def register_toolsets(register: Any) -> None:
    register("memory", tools=("memory",), kind="leaf",
             description="Persistent memory across sessions (MEMORY.md and USER.md)")
