"""The voice plugin's keys in config.yaml: ``tts``, ``stt`` and ``voice`` (the original's
sections). The kernel owns ``tts.provider`` and ``stt.provider`` (the slots' selections);
each provider reads its own block (``tts.openai``, ``tts.espeak``, ``stt.openai``).
Imports nothing but pydantic."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field


class TTSSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    speed: float | None = Field(None, ge=0.25, le=4.0)  # playback speed (1.0: normal)
    max_text_length: int = Field(4000, gt=0)  # characters spoken per call; longer is refused


class STTSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    enabled: bool = True  # transcribe voice notes and audio files the platforms receive
    max_file_bytes: int = Field(25 * 1024 * 1024, gt=0)  # larger audio is not transcribed


class VoiceSection(BaseModel):
    model_config = ConfigDict(extra="allow")

    # on the platforms: off (text only), voice_only (a voice note is answered with a voice
    # message too), all (every reply is also spoken)
    reply_mode: Literal["off", "voice_only", "all"] = "off"
