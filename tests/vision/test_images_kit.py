"""The images kit on real bytes: formats and sizes recognised from headers, the store's
references and limits, paths found in chat text, and request messages whose images survive
the history's repairs (merged user turns, appended plugin context)."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from hermes_agent.builtin_plugins.agent.history import api_messages
from hermes_agent.kits.images import (ImageError, ImageStore, describe, for_model, image_paths,
                                      sniff)

from .support import data_url, png


def jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + sof + b"\xff\xd9"


def test_formats_and_sizes_come_from_the_bytes() -> None:
    assert sniff(png(640, 480)).__dict__ == {"media_type": "image/png", "width": 640,
                                             "height": 480}
    assert (sniff(jpeg(1280, 720)).width, sniff(jpeg(1280, 720)).height) == (1280, 720)
    assert sniff(b"GIF89a" + struct.pack("<HH", 5, 7) + b"\0" * 10).media_type == "image/gif"
    webp = b"RIFF\0\0\0\0WEBPVP8X" + b"\0" * 8 + (99).to_bytes(3, "little") + \
        (49).to_bytes(3, "little")
    assert (sniff(webp).width, sniff(webp).height) == (100, 50)
    assert sniff(b"%PDF-1.7 not an image") is None


def test_the_store_keeps_one_file_per_content_and_checks_references(tmp_path: Path) -> None:
    store = ImageStore(tmp_path, max_bytes=10_000)
    first = store.save(png(2, 2), "a.png")
    assert store.save(png(2, 2), "b.png")["image_url"] == first["image_url"]
    assert len(list((tmp_path / "images").iterdir())) == 1
    assert store.load(first["image_url"]["url"]) == png(2, 2)
    with pytest.raises(ImageError, match="not a stored image reference"):
        store.load("hermes-image:../../etc/passwd.png")
    with pytest.raises(ImageError, match="vision.max_image_bytes"):
        store.save(png(2, 2) + b"\0" * 10_000)
    with pytest.raises(ImageError, match="not a PNG, JPEG, GIF or WebP"):
        store.save(b"<svg/>", "x.svg")
    with pytest.raises(ImageError, match="https URL or a data: URL"):
        store.store_parts([{"type": "image_url", "image_url": {"url": "file:///etc/passwd"}}])


def test_paths_written_in_a_chat_message(tmp_path: Path) -> None:
    (tmp_path / "my shot.png").write_bytes(png())
    (tmp_path / "b.jpg").write_bytes(jpeg(1, 1))
    text = f"compare {tmp_path}/my\\ shot.png with '{tmp_path}/b.jpg', not ./missing.png?"
    assert image_paths(text, tmp_path) == [tmp_path / "my shot.png", tmp_path / "b.jpg"]
    assert image_paths("what about ./b.jpg?", tmp_path) == [tmp_path / "b.jpg"]
    assert image_paths("no paths here", tmp_path) == []


def test_images_survive_merged_turns_and_appended_context(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    stored = store.store_parts([{"type": "text", "text": "look"},
                                {"type": "image_url", "image_url": {"url": data_url(png(3, 1))}}])
    history = [{"role": "user", "content": "first"}, {"role": "user", "content": stored}]
    messages = api_messages("system", history, {1: "recalled memory"})
    [user] = [m for m in messages if m["role"] == "user"]
    assert [p["type"] for p in user["content"]] == ["text", "text", "image_url", "text"]
    assert user["content"][-1]["text"] == "recalled memory"
    [seen] = [p for m in for_model(messages, store, vision=True) if m["role"] == "user"
              for p in m["content"] if p["type"] == "image_url"]
    assert seen["image_url"]["url"] == data_url(png(3, 1))
    [blind] = [m for m in for_model(messages, store, vision=False) if m["role"] == "user"]
    assert "[image: image.png, 3x1, " in str(blind["content"])
    assert describe(stored[1]).startswith("[image: image.png, 3x1, ")


def test_an_image_larger_than_the_api_takes_is_described(tmp_path: Path) -> None:
    store = ImageStore(tmp_path)
    big = png(2, 2) + b"\0" * 4_000_000  # a PNG with trailing bytes: 4 MB
    parts = store.store_parts([{"type": "image_url", "image_url": {"url": data_url(big)}}])
    message = [{"role": "user", "content": parts}]
    [anthropic] = for_model(message, store, vision=True, api_mode="anthropic_messages")
    assert anthropic["content"][0]["type"] == "text"
    assert "too large for this model" in anthropic["content"][0]["text"]
    [chat] = for_model(message, store, vision=True, api_mode="chat_completions")
    assert chat["content"][0]["type"] == "image_url"


def test_a_bare_file_name_in_the_working_directory_counts(tmp_path: Path) -> None:
    (tmp_path / "shot.png").write_bytes(png())
    assert image_paths("what is in shot.png, and in https://x.example/y.png?",
                       tmp_path) == [tmp_path / "shot.png"]


def test_a_dropped_file_url_counts(tmp_path: Path) -> None:
    (tmp_path / "a b.png").write_bytes(png())
    assert image_paths(f"file://{tmp_path}/a%20b.png", tmp_path) == [tmp_path / "a b.png"]


def test_an_image_counts_as_an_image_in_the_context_estimate() -> None:
    from hermes_agent.kits.tokens import IMAGE_TOKENS, estimate_message_tokens

    big = data_url(png(2, 2) + b"\0" * 400_000)  # a long data URL from an older session
    message = {"role": "user", "content": [{"type": "text", "text": "look"},
                                           {"type": "image_url", "image_url": {"url": big}}]}
    assert IMAGE_TOKENS <= estimate_message_tokens(message) < IMAGE_TOKENS + 50
