"""text_to_speech and speech to text through the real providers: espeak-ng on this machine
(checked with sox and by the file's header) and the OpenAI-compatible audio endpoints of the
fake media API through the real openai SDK."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from hermes_agent.kits.media import MediaError, audio_format, split_media
from hermes_agent.api.services import SPEECH
from hermes_agent.api.tools import ToolCallContext

from .conftest import needs_espeak, needs_sox


def speak(kernel, context=None, **args):
    return json.loads(kernel.tools.dispatch("text_to_speech", args, context=context))


@needs_espeak
@needs_sox
def test_espeak_writes_a_playable_wav_under_the_audio_cache(home, kernel_with):
    kernel = kernel_with()  # tts.provider defaults to espeak: no key, no download
    result = speak(kernel, text="Hello from Hermes. This is a test of local speech.")
    assert result["success"] is True, result
    path = Path(result["file_path"])
    assert path.parent == home / "cache" / "audio" and result["provider"] == "espeak"
    assert audio_format(path) == "wav" and result["voice_compatible"] is False
    info = subprocess.run(["sox", "--i", "-D", str(path)], capture_output=True, text=True,
                          check=True)
    assert float(info.stdout) > 1.0  # seconds of speech, as sox reads the file
    stats = subprocess.run(["sox", str(path), "-n", "stat"], capture_output=True, text=True)
    amplitude = next(line for line in stats.stderr.splitlines()
                     if line.startswith("Maximum amplitude"))
    assert float(amplitude.split(":")[1]) > 0.05  # not silence
    assert split_media(result["media_tag"])[1][0].path == path


@needs_espeak
def test_speed_voice_and_output_path_reach_espeak(home, kernel_with, tmp_path):
    kernel = kernel_with({"tts": {"espeak": {"voice": "en-us"}}})
    context = ToolCallContext(cwd=tmp_path)
    slow = speak(kernel, context, text="one two three four", speed=0.5, output_path="out/slow.wav")
    fast = speak(kernel, context, text="one two three four", speed=2.0)
    assert slow["file_path"] == str(tmp_path / "out" / "slow.wav")
    assert Path(slow["file_path"]).stat().st_size > 1.5 * Path(fast["file_path"]).stat().st_size
    refused = speak(kernel, context, text="x", output_path="../escape.wav")
    assert refused["success"] is False and "'..'" in refused["error"]
    outside = speak(kernel, context, text="x", output_path=str(tmp_path.parent / "elsewhere.wav"))
    assert "outside the working directory" in outside["error"]
    (tmp_path / "notes.txt").write_text("keep me")
    clobber = speak(kernel, context, text="x", output_path="notes.txt")
    assert "not an audio file" in clobber["error"]
    assert (tmp_path / "notes.txt").read_text() == "keep me"
    wrong = speak(kernel_with({"tts": {"espeak": {"voice": "qqqq"}}}), text="hi")
    assert wrong["success"] is False and "espeak-ng --voices" in wrong["error"]


@needs_espeak
@pytest.mark.skipif(not (shutil.which("ffmpeg") or shutil.which("opusenc")),
                    reason="no Ogg/Opus encoder (apt-get install opus-tools or ffmpeg)")
def test_on_telegram_the_audio_is_ogg_opus_a_voice_message_plays(home, kernel_with):
    result = speak(kernel_with(), ToolCallContext(platform="telegram"), text="a voice note")
    path = Path(result["file_path"])
    assert result["voice_compatible"] is True and audio_format(path) == "ogg-opus"
    assert path.suffix == ".ogg" and result["media_tag"].startswith("[[audio_as_voice]]")
    assert not list(path.parent.glob("*.wav"))  # the WAV it came from is gone


def test_openai_speech_through_the_sdk_with_a_configured_base_url(home, media, kernel_with):
    kernel = kernel_with({"tts": {"provider": "openai", "openai": {
        "base_url": media.openai_base_url, "model": "gpt-4o-mini-tts", "voice": "nova"}}},
        env={"VOICE_TOOLS_OPENAI_KEY": media.key})
    result = speak(kernel, ToolCallContext(platform="telegram"), text="Speak up",
                   instructions="cheerful", speed=1.25)
    assert result["success"] is True, result
    [request] = media.requests("/v1/audio/speech")
    assert request.headers["authorization"] == f"Bearer {media.key}"
    assert request.body == {"model": "gpt-4o-mini-tts", "voice": "nova", "input": "Speak up",
                            "response_format": "opus", "speed": 1.25,
                            "instructions": "cheerful"}  # Opus asked for, for Telegram
    assert result["voice_compatible"] is True and audio_format(Path(result["file_path"])) \
        == "ogg-opus"
    mp3 = speak(kernel, text="for the cli")
    assert Path(mp3["file_path"]).suffix == ".mp3" and mp3["format"] == "mp3"


def test_transcription_through_the_fake_openai_compatible_endpoint(home, media, kernel_with,
                                                                   tmp_path):
    media.transcript = "what is the weather like"
    kernel = kernel_with({"stt": {"provider": "openai", "openai": {
        "base_url": media.openai_base_url, "model": "whisper-1", "language": "en"}}},
        env={"OPENAI_API_KEY": media.key})
    audio = tmp_path / "note.ogg"
    audio.write_bytes(b"OggS fake voice note")
    assert kernel.service(SPEECH).transcribe(audio) == "what is the weather like"
    [upload] = media.uploads()
    assert upload["file"].content == b"OggS fake voice note"
    assert upload["file"].filename == "note.ogg"
    assert (upload["model"].text, upload["language"].text) == ("whisper-1", "en")


def test_speech_to_text_unconfigured_or_original_only_names_the_fix(kernel_with, tmp_path):
    audio = tmp_path / "a.ogg"
    audio.write_bytes(b"OggS")
    with pytest.raises(MediaError, match="stt.provider to openai"):
        kernel_with().service(SPEECH).transcribe(audio)
    with pytest.raises(MediaError, match="'local' is not installed.*does not ship"):
        kernel_with({"stt": {"provider": "local"}}).service(SPEECH).transcribe(audio)
    with pytest.raises(MediaError, match="stt.enabled"):
        kernel_with({"stt": {"enabled": False, "provider": "openai"}}).service(
            SPEECH).transcribe(audio)
    missing = speak(kernel_with({"tts": {"provider": "openai"}}), text="hi")
    assert "VOICE_TOOLS_OPENAI_KEY" in missing["error"]
    edge = speak(kernel_with({"tts": {"provider": "edge"}}), text="hi")
    assert "'edge' is not installed" in edge["error"] and "espeak" in edge["error"]


def test_a_refused_key_and_an_unreachable_server_say_what_to_check(home, media, kernel_with,
                                                                   tmp_path):
    kernel = kernel_with({"tts": {"provider": "openai", "openai": {
        "base_url": media.openai_base_url}}, "stt": {"provider": "openai", "openai": {
            "base_url": media.openai_base_url}}}, env={"OPENAI_API_KEY": "sk-wrong"})
    refused = speak(kernel, text="hi")
    assert refused["error_type"] == "tts_missing_key" and "refused the key" in refused["error"]
    audio = tmp_path / "a.ogg"
    audio.write_bytes(b"OggS")
    with pytest.raises(MediaError, match="refused the key") as err:
        kernel.service(SPEECH).transcribe(audio)
    assert err.value.kind == "missing_key"
    gone = kernel_with({"tts": {"provider": "openai", "openai": {
        "base_url": "http://127.0.0.1:9/v1"}}}, env={"OPENAI_API_KEY": media.key})
    unreachable = speak(gone, text="hi")
    assert unreachable["error_type"] == "tts_unreachable"
    assert "tts.openai.base_url" in unreachable["error"]
