"""The kits the chat platforms share: attachments (images, text, saved files), light markup, and the
settings helpers (secrets from the environment only)."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from hermes_agent.kits.chat_media import Fetched, sniff_media_type, take_attachment
from hermes_agent.kits.chat_text import light_markdown, split_message
from hermes_agent.kits.platform_config import PlatformSettingsError, env_secret, flag

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 20
JPEG = b"\xff\xd8\xff\xe0" + b"\x00" * 20
WEBP = b"RIFF\x10\x00\x00\x00WEBPVP8 "


@pytest.mark.parametrize(("data", "declared", "expected"), [
    (PNG, "application/octet-stream", "image/png"),  # the bytes win over a wrong label
    (JPEG, "", "image/jpeg"), (WEBP, "image/png", "image/webp"),
    (b"%PDF-1.7\n", "", "application/pdf"),
    (b"plain words", "text/plain; charset=utf-8", "text/plain"),
    (b"\x00\x01", "", "application/octet-stream")])
def test_media_types_come_from_the_bytes_first(data, declared, expected):
    assert sniff_media_type(data, declared) == expected


def test_images_become_image_parts_text_files_text_and_the_rest_saved_files(tmp_path):
    got = Fetched()
    take_attachment(got, JPEG, "image/jpeg", "a.jpg", tmp_path / "media")
    take_attachment(got, b"a,b\n1,2", "text/csv", "table.csv", tmp_path / "media")
    assert got.images == [{"type": "image_url", "image": {"name": "a.jpg"}, "image_url": {
        "url": "data:image/jpeg;base64," + base64.b64encode(JPEG).decode()}}]
    assert got.notes == ["[file table.csv]\n```\na,b\n1,2\n```"] and got.files == []
    # a text file too large, or not UTF-8, an SVG (not an image the models take): saved files
    for data, kind, name in ((b"x" * 100_001, "text/plain", "big.txt"),
                             ("café".encode("latin-1"), "text/plain", "old.txt"),
                             (b"<svg/>", "image/svg+xml", "../x.svg")):
        take_attachment(got, data, kind, name, tmp_path / "media")
    big, latin, svg = got.files
    assert Path(latin["path"]).read_bytes() == "café".encode("latin-1")
    assert latin["name"] == "old.txt" and latin["mime_type"] == "text/plain"
    assert big["size"] == 100_001 and svg["mime_type"] == "image/svg+xml"
    assert Path(svg["path"]).parent == tmp_path / "media"  # the name cannot leave the folder
    assert oct(Path(svg["path"]).stat().st_mode & 0o777) == "0o600"
    assert got.notes[-1] == f"[attached file: ../x.svg (image/svg+xml, 6 bytes), saved at {svg['path']}]"


def test_light_markdown_keeps_code_and_converts_the_rest():
    text = "# Plan\n**bold** and ~~old~~, see [docs](https://x.test) `**raw**`\n```\n**x**\n```"
    assert light_markdown(text) == (
        "*Plan*\n*bold* and ~old~, see docs (https://x.test) `**raw**`\n```\n**x**\n```")
    assert light_markdown("## Title\n__b__ [https://a.test](https://a.test)", bold="",
                          strike="") == "Title\nb https://a.test"


def test_split_message_still_closes_code_blocks():
    pieces = split_message("```\n" + "line of code\n" * 40 + "```", 120)
    assert len(pieces) > 3 and all(p.count("```") % 2 == 0 for p in pieces)


def test_secrets_come_from_the_environment_only():
    assert env_secret({}, {"X_TOKEN": " t "}, "X_TOKEN", "token", section="platforms.x") == "t"
    with pytest.raises(PlatformSettingsError, match="do not put the token in config.yaml"):
        env_secret({"token": "t"}, {}, "X_TOKEN", "token", section="platforms.x")
    with pytest.raises(PlatformSettingsError, match="X_TOKEN is not set.*from the portal"):
        env_secret({}, {}, "X_TOKEN", "token", section="platforms.x", required="from the portal")
    assert [flag(v) for v in (True, "yes", "1", "false", "0", False)] == [
        True, True, True, False, False, False]


def test_mattermost_websocket_url_follows_the_server_url():
    from hermes_agent.plugins.platforms.mattermost.settings import load, websocket_url

    assert websocket_url("https://mm.example.com") == "wss://mm.example.com/api/v4/websocket"
    assert websocket_url("http://10.0.0.5:8065/chat") == "ws://10.0.0.5:8065/chat/api/v4/websocket"
    settings = load({}, {"MATTERMOST_URL": "https://mm.example.com/api/v4/",
                         "MATTERMOST_TOKEN": "t", "MATTERMOST_REQUIRE_MENTION": "false"})
    assert settings.url == "https://mm.example.com" and settings.require_mention is False
    assert settings.websocket_url == "wss://mm.example.com/api/v4/websocket"


def test_whatsapp_and_signal_settings_say_what_to_set():
    from hermes_agent.plugins.platforms.signal.settings import load as signal
    from hermes_agent.plugins.platforms.whatsapp.settings import load as whatsapp

    secrets = {"WHATSAPP_CLOUD_ACCESS_TOKEN": "EAA", "WHATSAPP_CLOUD_APP_SECRET": "s",
               "WHATSAPP_CLOUD_VERIFY_TOKEN": "v"}
    with pytest.raises(PlatformSettingsError, match="not the phone number itself"):
        whatsapp({}, {**secrets, "WHATSAPP_CLOUD_PHONE_NUMBER_ID": "+1 555 0100"})
    with pytest.raises(PlatformSettingsError, match="WHATSAPP_CLOUD_APP_SECRET is not set"):
        whatsapp({"phone_number_id": "123"}, {"WHATSAPP_CLOUD_ACCESS_TOKEN": "EAA"})
    with pytest.raises(PlatformSettingsError, match="SIGNAL_ACCOUNT"):
        signal({}, {"SIGNAL_HTTP_URL": "http://127.0.0.1:8080"})
    settings = signal({"group_allowed_users": "*"}, {"SIGNAL_HTTP_URL": "http://h:8080/",
                                                     "SIGNAL_ACCOUNT": "+1555"})
    assert settings.http_url == "http://h:8080" and settings.answers_group("anything")
