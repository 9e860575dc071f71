"""The loop's call into system-prompt assembly (:mod:`.prompt`): built once per session,
then frozen. The builder's notices (a context file or SOUL.md blocked or truncated, a prompt
layer that failed) are returned with the text; the agent shows them once per session."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from hermes_agent import Kernel


def build_system_prompt(kernel: Kernel, *, session_id: str, platform: str, tool_names: list[str],
                        cwd: Path | None, skip_context_files: bool = False,
                        fence_nonce: str = "") -> tuple[str, list[str]]:
    """``(prompt text, notices for the user)``."""
    from .prompt import build_system_prompt as build

    prompt = build(kernel, session_id=session_id, platform=platform, tool_names=tool_names,
                   cwd=cwd, skip_context_files=skip_context_files, fence_nonce=fence_nonce)
    return prompt.text, list(prompt.notices)
