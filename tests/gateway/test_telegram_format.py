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
