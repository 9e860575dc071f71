"""The loop's call into system-prompt assembly (:mod:`.prompt`): built once per session,
then frozen. Notices (a blocked or truncated context file) are logged for the user."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

log = logging.getLogger("hermes_agent.agent")


def build_system_prompt(kernel: Any, *, session_id: str, platform: str, tool_names: list[str],
                        cwd: Path | None, skip_context_files: bool = False) -> str:
    from .prompt import build_system_prompt as build

    prompt = build(kernel, session_id=session_id, platform=platform, tool_names=tool_names,
                   cwd=cwd, skip_context_files=skip_context_files)
    for notice in prompt.notices:
        log.warning("%s", notice)
    return prompt.text
