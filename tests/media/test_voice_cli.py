"""`hermes voice status | speak | transcribe`: the providers run directly from the command
line (transcription through the fake OpenAI-compatible endpoint)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from hermes_agent.cli.root import main
from hermes_agent.kits.media import audio_format

from .conftest import needs_espeak


def hermes(capsys, *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    out = capsys.readouterr()
    return code, out.out, out.err


def test_status_speak_and_transcribe(home, media, capsys, tmp_path, monkeypatch):
    (home / "config.yaml").write_text(yaml.safe_dump({"stt": {
        "provider": "openai", "openai": {"base_url": media.openai_base_url}}}))
    monkeypatch.setenv("OPENAI_API_KEY", media.key)
    media.transcript = "hello from a file"
    audio = tmp_path / "memo.mp3"
    audio.write_bytes(b"ID3 an audio file")
    code, out, _ = hermes(capsys, "voice", "transcribe", str(audio))
    assert (code, out) == (0, "hello from a file\n")
    code, out, _ = hermes(capsys, "voice", "status", "--json")
    data = json.loads(out)
    assert code == 0 and data["stt"] == "openai (ready)"
    assert data["installed"] == {"tts": ["espeak", "openai"], "stt": ["openai"]}


def test_transcribe_without_a_provider_names_the_fix(home, capsys, tmp_path):
    audio = tmp_path / "memo.ogg"
    audio.write_bytes(b"OggS")
    code, _, err = hermes(capsys, "voice", "transcribe", str(audio))
    assert code == 1 and "hermes config set stt.provider openai" in err


@needs_espeak
def test_speak_writes_the_file_asked_for(home, capsys, tmp_path):
    target = tmp_path / "hello.wav"
    code, out, _ = hermes(capsys, "voice", "speak", "hello", "there", "-o", str(target))
    assert code == 0 and out.startswith(str(target)) and audio_format(target) == "wav"


def test_doctor_says_when_voice_only_replies_cannot_hear_voice_notes(kernel_with):
    from hermes_agent.builtin_plugins.voice.doctor import voice_findings

    findings = {f.check: f for f in voice_findings(kernel_with({"voice": {
        "reply_mode": "voice_only"}}))}
    assert findings["stt"].status == "problem"
    assert findings["stt"].fix == "hermes config set stt.provider openai"
    quiet = {f.check: f for f in voice_findings(kernel_with())}
    assert quiet["stt"].status == "ok" and "voice messages" not in quiet
