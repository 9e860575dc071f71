"""``hermes doctor``'s voice checks: the selected text-to-speech provider can speak, speech
to text is set up when spoken replies to voice notes are asked for, and voice messages can be
Ogg/Opus (an encoder is installed)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from hermes_agent.api import Finding
from hermes_agent.kits.media import MediaError, opus_converter

from .speech import SpeechService

if TYPE_CHECKING:
    from hermes_agent import Kernel


def voice_findings(kernel: "Kernel") -> list[Finding]:
    service = SpeechService(kernel)
    findings = []
    try:
        engine = service.tts()
        findings.append(Finding("tts", "ok", f"text to speech with {engine.name!r}"))
    except MediaError as exc:
        findings.append(Finding("tts", "warn", f"text_to_speech cannot run: {exc}",
                                "hermes config set tts.provider NAME (docs/voice.md)"))
    mode = service.reply_mode()
    try:
        engine = service.stt()
        findings.append(Finding("stt", "ok", f"voice notes are transcribed with {engine.name!r}"))
    except MediaError as exc:
        status = "problem" if mode == "voice_only" else "ok"
        detail = (f"voice.reply_mode is voice_only but voice notes cannot be transcribed: {exc}"
                  if status == "problem" else
                  "speech to text is not set up: voice notes reach the agent untranscribed")
        findings.append(Finding("stt", status, detail, "hermes config set stt.provider openai"))
    if mode != "off" and not opus_converter():
        findings.append(Finding("voice messages", "warn", "no Ogg/Opus encoder: espeak's replies "
                                "go out as audio files, not voice messages",
                                "apt-get install opus-tools (or ffmpeg)"))
    return findings
