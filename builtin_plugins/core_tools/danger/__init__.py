"""Command danger detection: the command is parsed like bash parses it and judged by what runs
and what it touches. See docs/tools.md ("Approving dangerous commands") for the policy."""

from .verdict import DESCRIPTIONS, HARD_KEYS, Finding, analyse, dangerous, hardline, judge

__all__ = ["DESCRIPTIONS", "HARD_KEYS", "Finding", "analyse", "dangerous", "hardline", "judge"]
