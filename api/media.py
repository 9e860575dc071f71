"""The media providers' contracts: text to speech (the ``tts`` slot, ``tts.provider``),
speech to text (the ``stt`` slot, ``stt.provider``) and image generation (the ``image_gen``
slot, ``image_gen.provider``), plus the ``SPEECH`` service the platforms use to transcribe a
voice note and to speak a reply. A provider subclasses one of the base classes below and
raises :class:`MediaError` saying what went wrong and how to fix it. No I/O here.
docs/voice.md and docs/image-generation.md.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from hermes_agent import ServiceKey

__all__ = ["MediaError", "TTSProvider", "TranscriptionProvider", "ImageGenProvider",
           "GeneratedImage", "SpeechFile", "Speech", "SPEECH", "ASPECT_RATIOS"]

#: MediaError kinds: what the tool tells the model (and the user) happened.
ERROR_KINDS = ("missing_key", "missing_dependency", "unreachable", "http", "malformed",
               "invalid", "not_configured")
#: image_generate's aspect ratios (the original's three).
ASPECT_RATIOS = ("landscape", "square", "portrait")


class MediaError(Exception):
    """A provider's failure: ``kind`` (one of :data:`ERROR_KINDS`) and a message that
    names the fix."""

    def __init__(self, message: str, kind: str = "http", *, status: int | None = None):
        super().__init__(message)
        self.kind, self.status = kind, status


class TTSProvider(ABC):
    """Turns text into an audio file. ``output_format``: the file's extension as written
    (``mp3``, ``ogg`` for Ogg/Opus, ``wav``); ``voice_compatible``: what it writes plays as a
    voice message (Ogg/Opus) without conversion."""

    name: str = ""
    display_name: str = ""
    output_format: str = "mp3"
    native_opus: bool = False  # writes Ogg/Opus itself when output_path ends in .ogg

    def is_available(self) -> bool:
        return True

    def unavailable_reason(self) -> str:
        """Why :meth:`is_available` is False, with the fix ("" when it is available)."""
        return ""

    @abstractmethod
    def synthesize(self, text: str, output_path: Path, *, voice: str = "", model: str = "",
                   speed: float | None = None, instructions: str = "") -> Path:
        """Write the speech of ``text`` to ``output_path`` (its suffix is
        :attr:`output_format`, or ``.ogg`` for a :attr:`native_opus` provider asked for a
        voice message); return the path written."""


class TranscriptionProvider(ABC):
    """Turns an audio file into text."""

    name: str = ""
    display_name: str = ""

    def is_available(self) -> bool:
        return True

    def unavailable_reason(self) -> str:
        return ""

    @abstractmethod
    def transcribe(self, audio_path: Path, *, model: str = "", language: str = "") -> str:
        """The text spoken in ``audio_path``."""


@dataclass(frozen=True)
class GeneratedImage:
    """One generated image: its bytes (``data``, with ``mime_type``) or a ``url`` to fetch."""

    data: bytes | None = None
    url: str = ""
    mime_type: str = "image/png"
    revised_prompt: str = ""


class ImageGenProvider(ABC):
    """Turns a prompt into images."""

    name: str = ""
    display_name: str = ""

    def is_available(self) -> bool:
        return True

    def unavailable_reason(self) -> str:
        return ""

    def default_model(self) -> str:
        return ""

    @abstractmethod
    def generate(self, prompt: str, aspect_ratio: str = "landscape", *, model: str = "",
                 **options: Any) -> list[GeneratedImage]:
        """Images for ``prompt`` in ``aspect_ratio`` (one of :data:`ASPECT_RATIOS`)."""


@dataclass(frozen=True)
class SpeechFile:
    """Audio written for delivery: ``voice_compatible`` when it is Ogg/Opus (a voice
    message on Telegram and Discord), else an audio attachment."""

    path: Path
    provider: str
    voice_compatible: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class Speech(Protocol):
    """What the voice plugin offers the platforms (``kernel.service(SPEECH)``)."""

    def transcribe(self, audio_path: Path) -> str:
        """The text of a voice note or audio file (``stt.provider``); :class:`MediaError`
        naming the fix when speech to text is off or not configured."""

    def speak(self, text: str, platform: str = "") -> SpeechFile:
        """``text`` as audio for ``platform`` (Ogg/Opus where the platform wants it)."""

    def reply_mode(self) -> str:
        """``voice.reply_mode``: ``off``, ``voice_only`` (speak replies to voice notes) or
        ``all``."""


SPEECH = ServiceKey("speech", Speech)
