"""``text_to_speech``: the original's arguments (``text``, ``output_path``, ``speed``,
``instructions``, ``provider``) and result (``success``, ``file_path``, ``media_tag``,
``provider``, ``voice_compatible``). The audio goes to ``$HERMES_HOME/cache/audio`` unless
``output_path`` names another file; on a platform it is Ogg/Opus when the platform's voice
messages need it, and the gateway delivers it (the ``MEDIA:`` line of ``media_tag``)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from hermes_agent.api import ToolCallContext, tool_error, tool_result
from hermes_agent.kits.media import MediaError, audio_format, media_tag

from .speech import SpeechService, audio_dir

if TYPE_CHECKING:
    from hermes_agent import Kernel

TTS_SCHEMA: dict[str, Any] = {
    "name": "text_to_speech",
    "description": (
        "Convert text to speech audio. Returns a MEDIA: path that the platform delivers as "
        "native audio (a voice message on Telegram and Discord). The provider and voice are "
        "configured by the user (tts.provider), not chosen by the model."),
    "parameters": {
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The text to speak."},
            "output_path": {"type": "string", "description": (
                "Optional file to write the audio to. Defaults to "
                "$HERMES_HOME/cache/audio/tts_<timestamp>.<ext>.")},
            "speed": {"type": "number", "description": (
                "Speed multiplier: 1.0 normal, 0.5 slow, 2.0 fast (0.25 to 4.0). Overrides "
                "tts.speed.")},
            "instructions": {"type": "string", "description": (
                "Optional voice direction (tone, pacing, accent), for providers that take it "
                "(OpenAI's gpt-4o-mini-tts); ignored by the others.")},
            "provider": {"type": "string", "description": (
                "Optional provider override (e.g. espeak, openai); tts.provider otherwise.")},
        },
        "required": ["text"],
    },
}


def _output_path(raw: Any, ctx: ToolCallContext, audio_dir: Path) -> Path | None:
    """``output_path`` checked: inside the working directory or the audio cache (the file
    tools' sandbox does not see this write), and never over a file that is not audio."""
    if not raw:
        return None
    path = Path(str(raw)).expanduser()
    if ".." in path.parts:
        raise MediaError(f"output_path {raw!r} holds a '..' component; give an absolute path "
                         "or one relative to the working directory without '..'", "invalid")
    path = path if path.is_absolute() else ctx.cwd / path
    resolved = path.resolve()
    roots = (ctx.cwd.resolve(), audio_dir.resolve())
    if not any(resolved.is_relative_to(root) for root in roots):
        raise MediaError(f"output_path {raw!r} is outside the working directory ({roots[0]}) "
                         f"and the audio cache ({roots[1]}); write there, then move the file "
                         "with the file tools", "invalid")
    if resolved.exists() and (not resolved.is_file() or not audio_format(resolved)):
        raise MediaError(f"output_path {raw!r} exists and is not an audio file; choose a new "
                         "name", "invalid")
    return path


def text_to_speech(kernel: "Kernel", args: dict[str, Any], ctx: ToolCallContext) -> str:
    text = str(args.get("text") or "").strip()
    if not text:
        return tool_error("'text' is required: the words to speak.", success=False,
                          error_type="invalid")
    speed = args.get("speed")
    try:
        speed = max(0.25, min(4.0, float(speed))) if speed is not None else None
    except (TypeError, ValueError):
        return tool_error("'speed' must be a number from 0.25 to 4.0, e.g. 1.0.",
                          success=False, error_type="invalid")
    try:
        spoken = SpeechService(kernel).speak(
            text, ctx.platform,
            output_path=_output_path(args.get("output_path"), ctx, audio_dir(kernel)),
            speed=speed, instructions=str(args.get("instructions") or ""),
            provider=str(args.get("provider") or "") or None)
    except MediaError as exc:
        return tool_error(f"text_to_speech: {exc}", success=False, error_type=f"tts_{exc.kind}")
    except OSError as exc:
        return tool_error(f"text_to_speech could not write the audio: {exc}", success=False,
                          error_type="tts_io")
    answer: dict[str, Any] = {
        "success": True, "file_path": str(spoken.path),
        "media_tag": media_tag([spoken.path], voice=spoken.voice_compatible),
        "provider": spoken.provider, "voice_compatible": spoken.voice_compatible,
        "format": spoken.extra.get("format", "")}
    if spoken.extra.get("note"):
        answer["note"] = spoken.extra["note"]
    return tool_result(answer)
