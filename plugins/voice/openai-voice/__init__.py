"""OpenAI's audio endpoints (or any server speaking them) as the ``openai`` provider of both
voice slots: ``tts.provider: openai`` (``tts.openai.model``, ``voice``, ``base_url``) and
``stt.provider: openai`` (``stt.openai.model``, ``language``, ``base_url``)."""

from __future__ import annotations

from typing import Any

from .audio import OpenAISpeech, OpenAITranscription

__all__ = ["OpenAISpeech", "OpenAITranscription", "register"]


def register(ctx: Any) -> None:
    ctx.register_tts_provider(OpenAISpeech(ctx.kernel))
    ctx.register_transcription_provider(OpenAITranscription(ctx.kernel))
