"""espeak-ng as a text-to-speech provider: ``tts.provider: espeak`` (``tts.espeak.voice``,
e.g. ``en-us``; ``tts.espeak.speed``). Needs the ``espeak-ng`` (or ``espeak``) program."""

from __future__ import annotations

from typing import Any

from .engine import EspeakTTS

__all__ = ["EspeakTTS", "register"]


def register(ctx: Any) -> None:
    ctx.register_tts_provider(EspeakTTS())
