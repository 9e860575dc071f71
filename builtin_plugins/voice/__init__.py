"""Builtin plugin: text to speech and speech to text.

``text_to_speech`` (toolset ``tts``, the original's arguments) speaks text with the provider
``tts.provider`` selects (a plugin in the ``tts`` slot: ``espeak``, local and keyless, is the
default; ``openai`` speaks through an OpenAI-compatible ``/v1/audio/speech``) into
``$HERMES_HOME/cache/audio``. The ``SPEECH`` service transcribes voice notes and audio files
with the ``stt`` slot's provider (``stt.provider``) and speaks replies for the platforms
(``voice.reply_mode``). docs/voice.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from hermes_agent import hookimpl
from hermes_agent.api import with_context
from hermes_agent.api.services import SPEECH

if TYPE_CHECKING:
    from hermes_agent import Kernel, PluginContext


def register(ctx: "PluginContext") -> None:
    from .speech import SpeechService
    from .tool import TTS_SCHEMA, text_to_speech

    kernel = ctx.kernel

    def ready() -> bool:  # offered while the selected provider can speak, as the original
        try:
            SpeechService(kernel).tts()
        except Exception:
            return False
        return True

    ctx.register_service(SPEECH, SpeechService)
    ctx.register_tool(name="text_to_speech", toolset="tts", schema=TTS_SCHEMA,
                      handler=with_context(lambda args, call: text_to_speech(kernel, args, call)),
                      check_fn=ready, description=TTS_SCHEMA["description"], emoji="🔊")


@hookimpl
def doctor_checks(kernel: "Kernel", config: Any, offline: bool) -> list[Any]:
    from .doctor import voice_findings

    return voice_findings(kernel)


@hookimpl
def register_toolsets(register: Any) -> None:
    register("tts", tools=("text_to_speech",), kind="leaf",
             description="Speak text into an audio file (the provider tts.provider selects)")
