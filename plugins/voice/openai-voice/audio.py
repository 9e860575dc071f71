"""The two providers over one openai SDK client each: ``audio.speech.create`` (mp3, or Opus
in Ogg when a voice message wants it) and ``audio.transcriptions.create``. SDK errors become
:class:`MediaError`s that name the key, the server or the model to fix."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent.kits.media import MediaError

if TYPE_CHECKING:
    from hermes_agent import Kernel

KEY_ENVS = ("VOICE_TOOLS_OPENAI_KEY", "OPENAI_API_KEY")
DEFAULT_URL = "https://api.openai.com/v1"
TTS_MODEL, TTS_VOICE, STT_MODEL = "gpt-4o-mini-tts", "alloy", "whisper-1"
TIMEOUT = 120.0


class _OpenAIAudio:
    section = ""
    url_env = ""

    def __init__(self, kernel: "Kernel"):
        self.kernel = kernel

    def api_key(self) -> str:
        configured = self.kernel.config.get(f"{self.section}.openai.api_key")
        if configured:
            return str(configured)
        return next((self.kernel.env[n] for n in KEY_ENVS if self.kernel.env.get(n)), "")

    def base_url(self) -> str:
        return str(self.kernel.config.get(f"{self.section}.openai.base_url")
                   or (self.kernel.env.get(self.url_env) if self.url_env else "")
                   or self.kernel.env.get("OPENAI_BASE_URL") or DEFAULT_URL)

    def is_available(self) -> bool:
        return bool(self.api_key())

    def unavailable_reason(self) -> str:
        if self.api_key():
            return ""
        return (f"no key: set VOICE_TOOLS_OPENAI_KEY (or OPENAI_API_KEY) in $HERMES_HOME/.env,"
                f" or {self.section}.openai.api_key in config.yaml")

    def client(self) -> Any:
        import openai  # a core dependency, imported when audio is first made

        return openai.OpenAI(api_key=self.api_key(), base_url=self.base_url(),
                             timeout=TIMEOUT, max_retries=1)

    def failure(self, exc: Exception, what: str) -> MediaError:
        import openai

        where = self.base_url()
        if isinstance(exc, openai.AuthenticationError):
            return MediaError(f"{where} refused the key for {what} (HTTP 401): check "
                              "VOICE_TOOLS_OPENAI_KEY / OPENAI_API_KEY", "missing_key",
                              status=401)
        if isinstance(exc, openai.APIStatusError):
            return MediaError(f"{what} failed at {where} (HTTP {exc.status_code}): "
                              f"{exc.message}", "http", status=exc.status_code)
        if isinstance(exc, openai.APIConnectionError):
            return MediaError(f"cannot reach {where} for {what}: {exc}; check "
                              f"{self.section}.openai.base_url", "unreachable")
        return MediaError(f"{what} failed: {type(exc).__name__}: {exc}", "http")


class OpenAISpeech(_OpenAIAudio):
    name = "openai"
    display_name = "OpenAI text to speech"
    output_format = "mp3"
    native_opus = True
    section = "tts"

    def synthesize(self, text: str, output_path: Path, *, voice: str = "", model: str = "",
                   speed: float | None = None, instructions: str = "") -> Path:
        opus = output_path.suffix in (".ogg", ".opus")
        options: dict[str, Any] = {"model": model or TTS_MODEL, "voice": voice or TTS_VOICE,
                                   "input": text, "response_format": "opus" if opus else "mp3"}
        if speed is not None:
            options["speed"] = speed
        if instructions:
            options["instructions"] = instructions
        try:
            response = self.client().audio.speech.create(**options)
        except Exception as exc:
            raise self.failure(exc, "text to speech") from None
        output_path.write_bytes(response.content)
        return output_path


class OpenAITranscription(_OpenAIAudio):
    name = "openai"
    display_name = "OpenAI speech to text"
    section = "stt"
    url_env = "STT_OPENAI_BASE_URL"

    def transcribe(self, audio_path: Path, *, model: str = "", language: str = "") -> str:
        options: dict[str, Any] = {
            "model": model or self.kernel.env.get("STT_OPENAI_MODEL") or STT_MODEL}
        if language:
            options["language"] = language
        with open(audio_path, "rb") as audio:
            try:
                result = self.client().audio.transcriptions.create(file=audio, **options)
            except Exception as exc:
                raise self.failure(exc, "transcription") from None
        return str(getattr(result, "text", result) or "")
