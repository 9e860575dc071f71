"""The speech service (``kernel.service(SPEECH)``): the selected text-to-speech provider
speaks into ``$HERMES_HOME/cache/audio``, converted to Ogg/Opus for the platforms whose voice
messages need it; the selected speech-to-text provider transcribes. Every failure is a
:class:`MediaError` naming the fix."""

from __future__ import annotations

import logging
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent.kits.media import (MediaError, SpeechFile, audio_format, opus_converter,
                                     spoken_text, to_ogg_opus)

if TYPE_CHECKING:
    from hermes_agent import Kernel

log = logging.getLogger("hermes_agent.voice")
#: platforms whose voice messages play Ogg/Opus only (others get the file as audio)
OPUS_PLATFORMS = frozenset({"telegram", "discord", "whatsapp", "signal", "matrix"})
#: the original's built-in provider names that this version has no plugin for
ORIGINAL_TTS = ("edge", "elevenlabs", "minimax", "mistral", "gemini", "xai", "neutts",
                "kittentts", "piper", "deepinfra")
ORIGINAL_STT = ("local", "groq", "mistral", "gemini", "xai", "deepinfra", "local_command")
STT_FIX = ("set stt.provider to openai (an OpenAI-compatible /v1/audio/transcriptions; the key "
           "in VOICE_TOOLS_OPENAI_KEY or OPENAI_API_KEY, stt.openai.base_url for another "
           "server): `hermes config set stt.provider openai`. No local engine runs here "
           "without downloading model weights (docs/voice.md)")


def audio_dir(kernel: "Kernel") -> Path:
    folder = kernel.home / "cache" / "audio"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def new_audio_path(kernel: "Kernel", suffix: str) -> Path:
    stamp = time.strftime("%Y%m%d_%H%M%S")
    return audio_dir(kernel) / f"tts_{stamp}_{uuid.uuid4().hex[:8]}.{suffix.lstrip('.')}"


class SpeechService:
    def __init__(self, kernel: "Kernel"):
        self.kernel = kernel

    # --- selection ---------------------------------------------------------------------------
    def _provider(self, slot: str, name: str | None) -> Any:
        kernel = self.kernel
        chosen = (name or kernel.slots.selection(slot, kernel.config) or "").strip()
        if not chosen:
            raise MediaError(f"speech to text is not configured: {STT_FIX}.", "not_configured")
        providers = kernel.slots.providers.get(slot, {})
        entry = providers.get(chosen) or next(
            (p for p in providers.values() if p.plugin == chosen), None)
        if entry is None:
            installed = ", ".join(sorted(providers)) or "none"
            key = "tts.provider" if slot == "tts" else "stt.provider"
            original = ORIGINAL_TTS if slot == "tts" else ORIGINAL_STT
            why = (" (a provider of the original Hermes Agent that this version does not ship)"
                   if chosen in original else "")
            raise MediaError(f"{key} {chosen!r} is not installed{why}; installed: {installed}. "
                             f"Choose one with `hermes config set {key} NAME`"
                             f"{'' if slot == 'tts' else '; or ' + STT_FIX}.", "not_configured")
        provider = entry.obj  # a provider written for the original may lack the optional parts
        if not getattr(provider, "is_available", lambda: True)():
            reason = (getattr(provider, "unavailable_reason", lambda: "")()
                      or "its key or program is missing")
            raise MediaError(f"{slot} provider {chosen!r} is not available: {reason}",
                             "missing_dependency")
        return provider

    def tts(self, name: str | None = None) -> Any:
        return self._provider("tts", name)

    def stt(self, name: str | None = None) -> Any:
        if not self.kernel.config.get("stt.enabled", True):
            raise MediaError("speech to text is off (stt.enabled: false); turn it on with "
                             "`hermes config set stt.enabled true`", "not_configured")
        return self._provider("stt", name)

    def _settings(self, section: str, provider: str) -> dict[str, Any]:
        block = self.kernel.config.get(f"{section}.{provider}") or {}
        return block if isinstance(block, dict) else {}

    # --- text to speech ----------------------------------------------------------------------
    def speak(self, text: str, platform: str = "", *, output_path: Path | None = None,
              speed: float | None = None, instructions: str = "",
              provider: str | None = None) -> SpeechFile:
        engine = self.tts(provider)
        text = spoken_text(text)
        if not text:
            raise MediaError("nothing to speak once markdown and code are taken out", "invalid")
        limit = int(self.kernel.config.get("tts.max_text_length", 4000) or 4000)
        if len(text) > limit:
            raise MediaError(f"the text is {len(text)} characters; at most {limit} are spoken "
                             "per call (tts.max_text_length): split it", "invalid")
        settings = self._settings("tts", engine.name)
        if speed is None:
            speed = settings.get("speed", self.kernel.config.get("tts.speed"))
        wants_opus = platform.lower() in OPUS_PLATFORMS
        native = getattr(engine, "output_format", "mp3")
        suffix = "ogg" if wants_opus and getattr(engine, "native_opus", False) else native
        target = output_path or new_audio_path(self.kernel, suffix)
        if target.suffix.lstrip(".") != suffix:
            target = target.with_suffix(f".{suffix}")
        target.parent.mkdir(parents=True, exist_ok=True)
        written = Path(engine.synthesize(
            text, target, voice=str(settings.get("voice") or ""),
            model=str(settings.get("model") or ""),
            speed=float(speed) if speed is not None else None, instructions=instructions))
        if not written.is_file() or written.stat().st_size == 0:
            raise MediaError(f"tts provider {engine.name!r} wrote no audio", "malformed")
        extra: dict[str, Any] = {"format": audio_format(written)}
        if wants_opus and extra["format"] != "ogg-opus":
            converted = to_ogg_opus(written)
            if converted is None:
                extra["note"] = ("sent as an audio file, not a voice message: converting to "
                                 "Ogg/Opus needs ffmpeg or opusenc (apt-get install ffmpeg)"
                                 if not opus_converter() else "the conversion to Ogg/Opus failed")
            else:
                if converted != written:
                    written.unlink(missing_ok=True)
                written, extra["format"] = converted, "ogg-opus"
        return SpeechFile(written, engine.name, extra["format"] == "ogg-opus", extra)

    # --- speech to text ----------------------------------------------------------------------
    def transcribe(self, audio_path: Path) -> str:
        engine = self.stt()
        limit = int(self.kernel.config.get("stt.max_file_bytes", 25 * 1024 * 1024))
        size = audio_path.stat().st_size
        if size > limit:
            raise MediaError(f"the audio is {size} bytes; at most {limit} are transcribed "
                             "(stt.max_file_bytes)", "invalid")
        settings = self._settings("stt", engine.name)
        text = engine.transcribe(audio_path, model=str(settings.get("model") or ""),
                                 language=str(settings.get("language") or ""))
        return str(text or "").strip()

    def reply_mode(self) -> str:
        mode = str(self.kernel.config.get("voice.reply_mode", "off") or "off")
        return mode if mode in ("off", "voice_only", "all") else "off"
