"""kits.media: MEDIA: lines in and out of text, which files a chat may be sent, audio headers
and the Ogg/Opus conversion (with the encoder this machine has)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from hermes_agent.kits.media import (MediaRef, audio_format, deliverable, media_in_result,
                                     media_tag, ogg_duration, split_media, to_ogg_opus)


def test_media_lines_are_taken_out_and_prose_starting_media_is_kept(tmp_path):
    image, voice = tmp_path / "a.png", tmp_path / "b.ogg"
    text = f"Here it is\nMEDIA:{image}\n`MEDIA:{voice}`\nMEDIA: is a word here\n[[audio_as_voice]]"
    clean, refs = split_media(text)
    assert clean == "Here it is\nMEDIA: is a word here"
    assert refs == [MediaRef(image, "image"), MediaRef(voice, "voice")]
    assert split_media(media_tag([voice]))[1] == [MediaRef(voice, "audio")]  # no marker


def test_only_successful_json_results_with_a_media_tag_count(tmp_path):
    tag = media_tag([tmp_path / "x.png"])
    assert media_in_result(json.dumps({"success": True, "media_tag": tag}))
    assert media_in_result(json.dumps({"success": False, "media_tag": tag})) == []
    assert media_in_result(f"page text says {tag}") == []  # not a tool's own result
    assert media_in_result(json.dumps({"content": tag})) == []


def test_deliverable_files_are_existing_files_under_the_roots(tmp_path):
    cache = tmp_path / "cache"
    (cache / "images").mkdir(parents=True)
    inside = cache / "images" / "a.png"
    inside.write_bytes(b"x")
    outside = tmp_path / "secret.txt"
    outside.write_text("s")
    link = cache / "images" / "link.png"
    link.symlink_to(outside)
    assert deliverable(MediaRef(inside, "image"), [cache])
    assert not deliverable(MediaRef(outside, "file"), [cache])
    assert not deliverable(MediaRef(link, "image"), [cache])  # resolved: it points outside
    assert not deliverable(MediaRef(cache / "images" / ".." / ".." / "secret.txt", "file"),
                           [cache])
    assert not deliverable(MediaRef(cache / "missing.png", "image"), [cache])


def test_audio_headers(tmp_path):
    samples = {"wav": b"RIFF\x00\x00\x00\x00WAVEfmt ", "mp3": b"ID3\x04" + bytes(20),
               "ogg-opus": b"OggS" + bytes(24) + b"OpusHead", "ogg": b"OggS" + bytes(40),
               "flac": b"fLaC" + bytes(8), "m4a": b"\x00\x00\x00\x20ftypM4A ", "": b"hello"}
    for expected, head in samples.items():
        path = tmp_path / f"s{len(expected)}{expected}"
        path.write_bytes(head)
        assert audio_format(path) == expected


@pytest.mark.skipif(not shutil.which("sox") or not (shutil.which("opusenc")
                                                    or shutil.which("ffmpeg")),
                    reason="needs sox and opusenc or ffmpeg (apt-get install sox opus-tools)")
def test_a_wav_converts_to_ogg_opus_that_sox_can_read_back(tmp_path):
    wav = tmp_path / "tone.wav"
    subprocess.run(["sox", "-n", "-r", "16000", "-c", "1", str(wav), "synth", "1", "sine",
                    "440"], check=True)
    ogg = to_ogg_opus(wav)
    assert ogg is not None and ogg.suffix == ".ogg" and audio_format(ogg) == "ogg-opus"
    assert to_ogg_opus(ogg) == ogg  # already Opus
    assert 0.9 < ogg_duration(ogg) < 1.2  # the 1 s tone (plus Opus's pre-skip)
    assert to_ogg_opus(tmp_path / "missing.wav") is None


def test_spoken_text_drops_markdown_code_and_links():
    from hermes_agent.kits.media import spoken_text

    text = ("# Title\n<think>plan</think>**Bold** and _x_ see [the docs](https://x.org).\n"
            "```python\nprint(1)\n```\n- item one\nMEDIA:/tmp/a.png")
    assert spoken_text(text) == "Title\nBold and _x_ see the docs.\n(code omitted)\nitem one"
    assert spoken_text("```\nonly code\n```") == "(code omitted)"
