"""The Telegram plugin's parts that need no network: markdown as Telegram HTML (checked with
the fake Bot API's own HTML reader) and the settings."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hermes_agent.plugins.platforms.telegram.formatting import to_html, visible_length
from hermes_agent.plugins.platforms.telegram.settings import SettingsError, load
from hermes_agent.testing.fake_telegram import html_to_plain

TOKEN = "123:secret-token-value"


@pytest.mark.parametrize(("markdown", "html"), [
    ("**bold** and __bold__", "<b>bold</b> and <b>bold</b>"),
    ("*it* and _it_ but snake_case_name and 2 * 3 * 4", "<i>it</i> and <i>it</i> but "
     "snake_case_name and 2 * 3 * 4"),
    ("~~gone~~", "<s>gone</s>"),
    ("a < b && c > d", "a &lt; b &amp;&amp; c &gt; d"),
    ("use `x < 1 **not bold**`", "use <code>x &lt; 1 **not bold**</code>"),
    ("```python\nif a < b:\n    print('*')\n```", '<pre><code class="language-python">if a &lt; b:'
     "\n    print('*')</code></pre>"),
    ("[the **docs**](https://e.com/?a=1&b=2)",
     '<a href="https://e.com/?a=1&amp;b=2">the <b>docs</b></a>'),
    ("[not a link](javascript:alert(1))", "[not a link](javascript:alert(1))"),
    ("## Heading\ntext", "<b>Heading</b>\ntext"),
    ("**unclosed", "**unclosed"),
])
def test_markdown_becomes_telegram_html(markdown, html):
    assert to_html(markdown) == html
    html_to_plain(html)  # Telegram would accept it


@given(st.text(alphabet=st.characters(blacklist_characters="*_~`[#\x00",
                                      blacklist_categories=("Cs",))))
def test_text_without_markup_reaches_the_user_unchanged(text):
    assert html_to_plain(to_html(text)) == text


def test_lengths_are_counted_as_telegram_counts_them():
    assert visible_length("abc") == 3 and visible_length("\U0001F600") == 2


def test_settings_from_the_environment_and_what_is_refused():
    settings = load({}, {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_ALLOWED_CHATS": "-1, -2",
                         "TELEGRAM_BASE_URL": "http://127.0.0.1:9"})
    assert (settings.mode, settings.base_url, settings.allowed_chats) == (
        "polling", "http://127.0.0.1:9", frozenset({"-1", "-2"}))
    assert TOKEN not in repr(settings)
    hook = load({"webhook_url": "https://bot.example/tg/in"},
                {"TELEGRAM_BOT_TOKEN": TOKEN, "TELEGRAM_WEBHOOK_SECRET": "s3cret"})
    assert (hook.mode, hook.path, hook.port) == ("webhook", "/tg/in", 8443)
    assert "s3cret" not in repr(hook)
    for config, env, fix in [
        ({}, {}, "TELEGRAM_BOT_TOKEN"),
        ({"token": TOKEN}, {"TELEGRAM_BOT_TOKEN": TOKEN}, "TELEGRAM_BOT_TOKEN"),
        ({"mode": "webhook"}, {"TELEGRAM_BOT_TOKEN": TOKEN}, "webhook_url"),
        ({"webhook_url": "https://x/y"}, {"TELEGRAM_BOT_TOKEN": TOKEN},
         "TELEGRAM_WEBHOOK_SECRET"),
        ({"webhook_url": "https://x/y"}, {"TELEGRAM_BOT_TOKEN": TOKEN,
                                          "TELEGRAM_WEBHOOK_SECRET": "has spaces"}, "letters"),
        ({"mode": "carrier-pigeon"}, {"TELEGRAM_BOT_TOKEN": TOKEN}, "polling"),
    ]:
        with pytest.raises(SettingsError, match=fix) as refused:
            load(config, env)
        assert TOKEN not in str(refused.value)


def test_updates_become_inbound_messages():
    from hermes_agent.plugins.platforms.telegram.updates import inbound

    def update(kind: str = "message", **message: object) -> dict[str, object]:
        base = {"message_id": 5, "chat": {"id": 42, "type": "private"},
                "from": {"id": 7, "is_bot": False, "username": "alice"}, "text": "hi"}
        return {"update_id": 1, kind: {**base, **message}}

    dm = inbound(update())
    assert dm is not None
    assert (dm.platform, dm.chat_id, dm.user_id, dm.user_name, dm.text, dm.message_id,
            dm.chat_type, dm.thread_id) == ("telegram", "42", "7", "alice", "hi", "5", "dm", None)
    topic = inbound(update(chat={"id": -100, "type": "supergroup", "is_forum": True},
                           message_thread_id=9, is_topic_message=True))
    assert topic is not None and (topic.chat_type, topic.thread_id) == ("group", "9")
    reply_thread = inbound(update(chat={"id": -100, "type": "supergroup"},
                                  message_thread_id=3))  # a reply chain, not a topic
    assert reply_thread is not None and reply_thread.thread_id is None
    edited = inbound(update("edited_message", text="hi (edited)"))
    assert edited is not None and edited.text == "hi (edited)"
    caption = inbound(update(text=None, caption="look at this"))
    assert caption is not None and caption.text == "look at this"
    channel = inbound(update(chat={"id": -5, "type": "channel"}))
    assert channel is not None and channel.chat_type == "channel"
    assert inbound(update(text=None)) is None  # a sticker
    assert inbound(update(**{"from": {"id": 8, "is_bot": True}})) is None
    assert inbound({"update_id": 2, "poll": {}}) is None
    listed = frozenset({"-100"})
    assert inbound(update(chat={"id": -300, "type": "group"}), listed) is None
    assert inbound(update(chat={"id": -100, "type": "group"}), listed) is not None
    assert inbound(update(), listed) is not None  # private chats are not filtered
